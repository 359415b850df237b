package llm

import (
	"testing"

	"github.com/exopower/exopower/internal/wire"
)

// The picture's title gives the first setting's energy per output token,
// at the wall first where it was measured there, net of idle where there
// is a baseline, and says where a figure is gross or not resolved; the
// title of a benchmark without the wall is as it was.
func TestThePicturesTitleLeadsWithTheWall(t *testing.T) {
	n := func(v float64) *wire.Num { x := wire.Num(v); return &x }
	soc := func(gross, net float64) *Figures {
		s := &Scope{JoulesPerOutputToken: &Spread{Mean: wire.Num(gross)}}
		if net > 0 {
			s.NetJoulesPerOutputToken = &Spread{Mean: wire.Num(net)}
		}
		return &Figures{SoC: s}
	}
	at := func(gross, net float64, resolved bool) *RunTotals {
		w := &RunWall{JoulesPerOutputToken: n(gross), Resolved: resolved}
		if net > 0 {
			w.NetJoulesPerOutputToken = n(net)
		}
		return &RunTotals{Wall: w}
	}
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"no wall, net", Result{Figures: soc(0.5, 0.3)}, "m, 2 in flight: 300 mJ per output token, net of idle (SoC)"},
		{"no wall, gross", Result{Figures: soc(0.5, 0)}, "m, 2 in flight: 500 mJ per output token (SoC)"},
		{"both net", Result{Figures: soc(0.5, 0.3), Run: at(2.5, 1.25, true)},
			"m, 2 in flight, per output token: 1.25 J at the wall, 300 mJ (SoC), net of idle"},
		{"both gross", Result{Figures: soc(0.5, 0), Run: at(2.5, 0, true)},
			"m, 2 in flight, per output token: 2.5 J at the wall, 500 mJ (SoC)"},
		{"no idle power at the wall", Result{Figures: soc(0.5, 0.3), Run: at(2.5, 0, true)},
			"m, 2 in flight, per output token: 2.5 J at the wall, 300 mJ (SoC); the SoC's net of idle, at the wall gross"},
		{"a run the plug cannot resolve", Result{Figures: soc(0.5, 0.3), Run: at(2.5, 1.25, false)},
			"m, 2 in flight, per output token: 1.25 J at the wall (not resolved), 300 mJ (SoC), net of idle"},
	} {
		tc.r.Model, tc.r.Concurrency = "m", 2
		rep := Report{Results: []Result{tc.r}}
		if got := rep.headline(); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
