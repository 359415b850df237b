package wall_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/wall"
)

// clock is a test's time: it moves only when the test moves it, and the
// fake plug and the meter read it alike.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// The credentials the tests give, long enough and short enough to be
// taken out of texts in each way.
const (
	password = "s3cret-Pa55word"
	token    = "eyJhbGciOiJIUzI1NiJ9.hass-long-lived-token"
)

// start serves a fake plug for the test's life and returns its URL.
func start(t *testing.T, f *fakeplug.Fake) string {
	t.Helper()
	u, stop, err := f.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return u
}

// open opens the plug at raw, closed at the test's end.
func open(t *testing.T, raw string, c wall.Credentials) (wall.Plug, error) {
	t.Helper()
	target, err := wall.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := wall.Open(ctx, target, c)
	if err == nil {
		t.Cleanup(func() { p.Close() })
	}
	return p, err
}

// asHTTP is a fake's URL with http:// for its scheme, for the device to
// be asked what it is.
func asHTTP(u string) string {
	_, rest, _ := strings.Cut(u, "://")
	return "http://" + rest
}

// noSecrets fails the test if s holds a credential or a piece of one.
func noSecrets(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range []string{password, token, "Pa55word", "hass-long", "czNjcmV0LVBhNTV3b3Jk"} {
		if strings.Contains(s, secret) {
			t.Errorf("%s holds a credential (%q): %s", what, secret, s)
		}
	}
}

// info is every text of an Info, to look for what must not be there.
func info(i wall.Info) string {
	return strings.Join([]string{i.Kind, i.Model, i.Firmware, i.Name, i.Address}, "|")
}
