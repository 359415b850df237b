package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/wall"
)

// doctor --wall says what the plug is, its counter's resolution and what
// its readings give, or, where it cannot read it, why and what to do.
func TestTheWallCheckReadsThePlug(t *testing.T) {
	f := fakeplug.New(fakeplug.Config{Kind: fakeplug.ShellyGen2, Profile: fakeplug.Constant(42), Password: "s3cret-plug-pass"})
	url, stop, err := f.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	target, err := wall.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	dead, _ := wall.Parse("shelly://127.0.0.1:1")
	for _, c := range []struct {
		name       string
		w          Wall
		ok         bool
		want, hint string
	}{
		{"a plug read", Wall{target, wall.Credentials{Password: "s3cret-plug-pass"}}, true, "shelly-gen2 SNPL-00112EU", ""},
		{"no credentials", Wall{Target: target}, false, "asks for", "--wall-credentials"},
		{"no plug there", Wall{Target: dead}, false, "127.0.0.1:1", "reachable"},
	} {
		got := checkWall(context.Background(), c.w, wall.MinInterval)
		text := got.detail + strings.Join(got.fixes, " ")
		if got.ok != c.ok || !strings.Contains(text, c.want) || !strings.Contains(text, c.hint) || strings.Contains(text, "s3cret-p") {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
	got := checkWall(context.Background(), Wall{target, wall.Credentials{Password: "s3cret-plug-pass"}}, wall.MinInterval)
	for _, want := range []string{"counts of 3.600 J", "now 42.00 W", "4 readings", "ten counts (36.00 J)"} {
		if !strings.Contains(got.detail, want) {
			t.Errorf("no %q in %s", want, got.detail)
		}
	}
}
