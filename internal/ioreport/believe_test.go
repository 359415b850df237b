package ioreport

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"
)

// believed writes a recording of 31 readings 100 ms apart of the course
// (course(i) in judge_test.go) from an M1 MacBook Pro, with the readings
// spoiled as spoil says, and measures it as exopower report does.
func believed(t *testing.T, spoil func(i int, r *Reading)) sampler.Result {
	t.Helper()
	channels := []Channel{{Group: Group, Name: "CPU Energy", Unit: "mJ"}, {Group: Group, Name: "GPU Energy", Unit: "nJ"},
		{Group: Group, Name: "ANE", Unit: "mJ"}, {Group: Group, Name: "DRAM", Unit: "mJ"}}
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, Header{HWModel: "MacBookPro17,1", OSBuild: "24F74", IntervalSeconds: 0.1}, channels)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= 30; i++ {
		r := course(i)
		r.Unix = r.At
		spoil(i, &r)
		if err := rec.Write(r, t0); err != nil {
			t.Fatal(err)
		}
	}
	recording, err := NewRecording(&buf)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := sampler.RecordingWindows(recording, Name, nil)
	return res
}

// A recording whose readings cannot all be true gives every figure of
// the course it was on, within its bounds: a lone counter at 0 three
// days after boot (what the binding writes where a channel has no simple
// value), a step of 1e15 J, a counter at -9e18, two readings at one
// instant, the clock going back once, a window of 1 ns, and the SMC's
// 0 W (no power information) are each a reading not to believe. Before,
// they gave 1.3 MJ of CPU at a peak of 13 MW, 1e16 W, 9e15 J, 0.25 s
// lost, 0.9 s added, 850 MW, and a system raised to the SoC's.
func TestARecordingOfReadingsThatCannotBeTrueReadsAsItsCourse(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(i int, r *Reading)
	}{
		{"a counter at 0", func(i int, r *Reading) {
			if i == 11 {
				r.Values[0] = 0
			}
		}},
		{"a step of 1e15 J", func(i int, r *Reading) {
			if i == 11 {
				r.Values[0] += 1e18
			}
		}},
		{"a counter at -9e18", func(i int, r *Reading) {
			if i == 11 {
				r.Values[0] = -9e18
			}
		}},
		{"two readings at one instant", func(i int, r *Reading) {
			if i == 11 {
				r.At = course(10).At
			}
		}},
		{"the clock going back once", func(i int, r *Reading) {
			if i == 11 {
				r.At = course(2).At
			}
		}},
		{"a window of 1 ns", func(i int, r *Reading) {
			if i == 11 {
				r.At = course(10).At.Add(time.Nanosecond)
			}
		}},
		{"the SMC at 0 W", func(i int, r *Reading) {
			if i%3 == 0 {
				r.System = 0
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := believed(t, c.spoil)
			if res.Duration != 3*time.Second || res.Coverage != 1 {
				t.Errorf("%v at %v coverage: want the 3 s of the course, covered", res.Duration, res.Coverage)
			}
			want := power.Values{CPU: cpuW * 3, GPU: gpuW * 3, DRAM: dramW * 3, System: systemW * 3}
			for r := range power.NumRails {
				if got := res.Energy.Of(r); math.Abs(got-want.Of(r)) > 3e-3 {
					t.Errorf("%v: %.6g J, the course %.6g J", r, got, want.Of(r))
				}
				if res.Peak.Of(r) > power.BoundsOf("MacBookPro17,1").Of(r) {
					t.Errorf("%v: a peak of %.4g W", r, res.Peak.Of(r))
				}
			}
			for _, w := range res.Warnings {
				if strings.Contains(w, "system's energy from the SMC came out below") || strings.Contains(w, "started again") {
					t.Errorf("warning %q", w)
				}
			}
		})
	}
}

// A window refused before the first one believed counts on its rail too
// (it was said in the warnings and counted nowhere).
func TestARefusalBeforeTheFirstWindowCountsOnItsRail(t *testing.T) {
	res := believed(t, func(i int, r *Reading) {
		if i >= 1 {
			r.Values[1] += 5e18 // the GPU jumps at the second reading and goes on
		}
	})
	if res.Health[power.GPU].Refused != 1 {
		t.Errorf("the GPU's health %+v: want its refused window counted", res.Health[power.GPU])
	}
}
