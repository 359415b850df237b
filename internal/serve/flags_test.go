package serve

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"
)

func TestClosingLineSaysWhatServeServed(t *testing.T) {
	soc := sampler.StreamTotals{Energy: power.Values{Total: 34.4}, Covered: 2100 * time.Millisecond, Windows: 5}
	system := soc
	system.Energy.System, system.Has.System = 120, true
	for _, tc := range []struct {
		name string
		sig  os.Signal
		sv   Served
		t    sampler.StreamTotals
		want string
	}{
		{"Ctrl-C, a span left open", os.Interrupt, Served{Requests: 4, Opened: 2, Ended: 1, Open: 1}, soc,
			"exopower serve: stopped (interrupt) after 2.1s: answered 4 requests, 2 spans opened and 1 ended (1 still open, which its client can no longer end); measured 34.40 J (SoC) over 2.1s in 5 windows"},
		{"two left open, the whole Mac measured", syscall.SIGTERM, Served{Requests: 1, Opened: 2, Open: 2}, system,
			"exopower serve: stopped (terminated) after 2.1s: answered 1 request, 2 spans opened and 0 ended (2 still open, which their clients can no longer end); measured 120.00 J (system), 34.40 J (SoC) over 2.1s in 5 windows"},
		{"nothing asked", nil, Served{}, sampler.StreamTotals{Windows: 1}, "exopower serve: stopped after 2.1s: answered 0 requests, 0 spans opened and 0 ended; measured 0.000 J (SoC) over 0s in 1 window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClosingLine(tc.sig, tc.sv, tc.t, 2123*time.Millisecond); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// The roles' flags reach the server as given: --web.span-users not given
// (nil) is every user, given empty is none.
func TestTheRolesFlagsReachTheServerAsGiven(t *testing.T) {
	path := writeWebConfig(t, usersLines(t, "alice", "bob"))
	for _, f := range []Flags{
		{SpanUsers: nil, ProcessUsers: nil},
		{SpanUsers: []string{}, ProcessUsers: []string{"bob"}},
		{SpanUsers: []string{"alice"}, ProcessUsers: []string{"bob"}, ProcessSpansWithoutPassword: true},
	} {
		want := f
		f.Listen, f.WebConfig, f.MaxConns, f.Node = "127.0.0.1:10241", path, 1, "mac1"
		cfg, err := f.Config()
		if err != nil {
			t.Fatal(err)
		}
		if (cfg.SpanUsers == nil) != (want.SpanUsers == nil) || !slices.Equal(cfg.SpanUsers, want.SpanUsers) ||
			!slices.Equal(cfg.ProcessUsers, want.ProcessUsers) || cfg.ProcessSpansWithoutPassword != want.ProcessSpansWithoutPassword {
			t.Errorf("%+v: the server's roles are %q, %q, %v", want, cfg.SpanUsers, cfg.ProcessUsers, cfg.ProcessSpansWithoutPassword)
		}
	}
}

// A node's name that is not plain text (bytes that are not UTF-8, a
// control character) is refused with a hint, not taken into the labels,
// where Prometheus's client would panic at registration.
func TestANodesNameThatIsNotTextIsRefused(t *testing.T) {
	for _, name := range []string{"a\xffb", "mac\x1b[2J", "a\nb"} {
		f := Flags{Listen: "127.0.0.1:10241", MaxConns: 1, Node: name}
		_, err := f.Config()
		var e *cli.Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), "not UTF-8") || !strings.Contains(strings.Join(e.Hints, " "), "--node-name") {
			t.Errorf("--node-name %q: %v, want a refusal naming it, and --node-name", name, err)
		}
	}
}
