package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files")

// testPanel is a panel after 75 one-second windows of a square wave, so
// that the last minute of the sparkline is full.
func testPanel() *panel {
	origin := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := &panel{source: Source{Tool: "powermetrics", HWModel: "Mac14,14", OSBuild: "23E224"}}
	var tot sampler.Totals
	for i := 0; i < 75; i++ {
		w := powermetrics.Values{CPU: 4, GPU: 1, ANE: 0.5, Total: 5.5}
		if i%10 >= 7 {
			w = powermetrics.Values{CPU: 22, GPU: 9, ANE: 2, Total: 33}
		}
		win := sampler.Window{Start: origin.Add(time.Duration(i) * time.Second), End: origin.Add(time.Duration(i+1) * time.Second),
			Power: w, ThermalPressure: "Nominal"}
		tot.Elapsed += time.Second
		tot.Energy.CPU, tot.Energy.GPU, tot.Energy.ANE, tot.Energy.Total = tot.Energy.CPU+w.CPU, tot.Energy.GPU+w.GPU, tot.Energy.ANE+w.ANE, tot.Energy.Total+w.Total
		tot.Peak = tot.Peak.Max(w)
		tot.Samples++
		p.add(win, tot, origin)
	}
	return p
}

func TestPanelGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {60, 24}, {40, 24}, {120, 24}, {80, 8}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			got := testPanel().render(size[0], size[1], &styles{plain: true})
			for i, l := range strings.Split(got, "\n") {
				if n := utf8.RuneCountInString(l); n > size[0] {
					t.Errorf("line %d is %d columns wide, more than %d: %q", i, n, size[0], l)
				}
				if i >= size[1] {
					t.Errorf("line %d is below the terminal's %d rows", i, size[1])
				}
			}
			if strings.HasSuffix(got, "\n") {
				t.Error("the panel ends in a newline, which scrolls a full terminal")
			}
			golden := filepath.Join("testdata", fmt.Sprintf("panel-%dx%d.golden", size[0], size[1]))
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if !bytes.Equal([]byte(got), want) {
				t.Errorf("panel differs from %s:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// The panel's numbers are the totals': energy 75 windows of the wave,
// average energy over elapsed.
func TestPanelNumbers(t *testing.T) {
	got := testPanel().render(80, 24, &styles{plain: true})
	// 54 windows at 5.5 W, 21 at 33 W: 297 + 693 = 990 J over 75 s.
	for _, want := range []string{"energy     990.00 J", "average     13.20 W", "peak        33.00 W", "elapsed  0:01:15   samples 75   thermal Nominal"} {
		if !strings.Contains(got, want) {
			t.Errorf("panel lacks %q:\n%s", want, got)
		}
	}
}
