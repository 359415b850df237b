package output

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wall"
)

// testClock is the time of a test that moves it: the fake plug and the
// meter read it alike.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// The plug draws 21.37 W, then 79.61 W, 5 s each, its steps half a
// second from its readings (one each second, at t0 + k s), so that each
// reading, held to the midpoints of its neighbours, is the plug's power
// over all the time it is held: each row's wall is the profile exactly,
// within the 0.1 W the Shelly reports its power in.
func TestRowsHoldThePlugsPowerOverEachWindow(t *testing.T) {
	clk := &testClock{t: t0}
	f := fakeplug.New(fakeplug.Config{Kind: fakeplug.ShellyGen2, Now: clk.Now, Start: at(-10),
		Profile: fakeplug.Square(at(-0.5), 21.37, 79.61, 5*time.Second, 5*time.Second)})
	url, stop, err := f.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	target, err := wall.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	plug, err := wall.Open(context.Background(), target, wall.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	defer plug.Close()
	m := wall.NewMeter(plug, time.Second, clk.Now)
	// The plug does not answer from 7 s to 8 s: its readings of 6 s and
	// 9 s are held three quarters of a second at most, and the time
	// from 6.75 s to 8.25 s has no reading.
	for k := -2; k <= 12; k++ {
		if k == 7 || k == 8 {
			continue
		}
		clk.Set(at(float64(k)))
		if err := m.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// The Mac's windows, half a second each, from before the span's
	// start to after its end (10 s), their edges apart from the plug's
	// silence: the windows at its edges are partly held.
	var ws []sampler.Window
	for a := -0.15; a < 10; a += 0.5 {
		ws = append(ws, sampler.Window{Index: len(ws), Start: at(a), End: at(a + 0.5), Power: watts(10)})
	}
	res := sampler.Result{Start: t0, Duration: 10 * time.Second, Energy: watts(10).Scale(10)}
	rows := logOf(ws...).RowsAtWall(res, m.Energy)
	if len(rows) != len(ws) {
		t.Fatalf("%d rows of %d windows", len(rows), len(ws))
	}
	var sum float64
	for i, r := range rows {
		w := ws[i]
		dark := !w.Start.Before(at(6.75)) && !w.End.After(at(8.25))
		// Over the part that a reading held: the profile is steady
		// in the windows at the silence's edges.
		if r.Wall == nil || (r.Wall.PowerWatts == nil) != dark || (r.Wall.EnergyJoules == nil) != dark {
			t.Fatalf("row %d, %.2f s to %.2f s: wall %+v; want figures where a reading was held, and none in the plug's silence", i,
				float64(r.StartSeconds), float64(r.EndSeconds), r.Wall)
		}
		if dark {
			continue
		}
		truth := f.Energy(w.Start, w.End) / 0.5
		if got := float64(*r.Wall.PowerWatts); math.Abs(got-truth) > 0.05 {
			t.Errorf("row %d, %.2f s to %.2f s: %.4f W at the wall, the plug drew %.4f W", i, float64(r.StartSeconds), float64(r.EndSeconds), got, truth)
		}
		sum += float64(*r.Wall.EnergyJoules)
	}
	// The rows' energies are the span's, less the plug's silence.
	if covered := f.Energy(t0, at(10)) - f.Energy(at(6.75), at(8.25)); math.Abs(sum-covered) > 0.05*10 {
		t.Errorf("the rows' energies at the wall add up to %.3f J; the plug drew %.3f J over the time its readings held", sum, covered)
	}
}
