package ioreport

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/sampler"
)

// ultraRecording writes a recording of 100 readings 100 ms apart of a
// real M1 Ultra's 321 channels, each counter growing by its own random
// amounts (the cores', clusters' and DTL channels by more than the
// totals, as a substring match would count them), and the system's power
// a known smooth curve. It returns the recording and each rail's exact
// energy from the counters, and the system's exact energy.
func ultraRecording(t *testing.T) (*bytes.Buffer, [rails]float64, float64) {
	t.Helper()
	channels := inventory(t, "m1_ultra")
	plan := NewPlan(channels)
	pstr := func(s float64) float64 { return 60 + 12*math.Sin(2*math.Pi*s/9) } // above the SoC and memory, as a Mac's is
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, Header{HWModel: "Mac13,2", OSBuild: "26A428", IntervalSeconds: 0.1}, channels)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	values := make([]int64, len(channels))
	for i := range values {
		values[i] = rng.Int64N(1 << 40) // counters start anywhere
	}
	first := append([]int64(nil), values...)
	origin := time.Unix(1796300000, 0)
	for k := 0; k <= 100; k++ {
		at := origin.Add(time.Duration(k) * 100 * time.Millisecond)
		if k > 0 {
			for i := range values {
				values[i] += rng.Int64N(900) * map[string]int64{"mJ": 1, "uJ": 1000, "nJ": 1000000}[channels[i].Unit]
			}
		}
		s := float64(k) / 10
		if err := rec.Write(Reading{At: at, Unix: at, Values: values, System: pstr(s), HasSystem: true}, origin); err != nil {
			t.Fatal(err)
		}
	}
	var e [rails]float64
	for r := range rails {
		for _, term := range plan.terms[r] {
			e[r] += float64(values[term.index]-first[term.index]) * term.scale
		}
	}
	k := 2 * math.Pi / 9
	system := 60*10 - 12/k*(math.Cos(k*10)-1)
	return &buf, e, system
}

// A recording of a real inventory gives each rail within 0.01 % of its
// counters' own differences and the system's energy within 0.1 % of the
// exact integral of its power.
func TestARecordingOfARealInventoryIsMeasuredExactly(t *testing.T) {
	buf, exact, system := ultraRecording(t)
	if !IsRecording(buf.Bytes()) {
		t.Fatal("the recording does not say what it is")
	}
	rec, err := NewRecording(buf)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sampler.RecordingWindows(rec, Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := [rails]float64{res.Energy.CPU, res.Energy.GPU, res.Energy.ANE, res.Energy.DRAM}
	for r := range rails {
		if e := math.Abs(got[r]-exact[r]) / exact[r]; e > 1e-4 {
			t.Errorf("%s: %.6f J, the counters say %.6f J: off by %.5f%%", Rail(r), got[r], exact[r], 100*e)
		}
	}
	if e := math.Abs(res.Energy.System-system) / system; e > 1e-3 {
		t.Errorf("system: %.6f J, exact %.6f J: off by %.4f%%", res.Energy.System, system, 100*e)
	}
	t.Logf("CPU %.4f J, GPU %.4f J, ANE %.4f J, DRAM %.4f J, system %.4f J (exact %.4f J) over %v in %d windows",
		got[CPU], got[GPU], got[ANE], got[DRAM], res.Energy.System, system, res.Duration, res.Samples)
	if res.Duration != 10*time.Second || res.Samples != 100 || res.Coverage != 1 || !res.Has.System || !res.Has.DRAM || res.HWModel != "Mac13,2" || res.Source != Name {
		t.Errorf("result %+v", res)
	}
}

// A line that cannot be read is refused with its number, and the
// recording goes on; a file that is no recording says so.
func TestARecordingsBadLineIsRefused(t *testing.T) {
	buf, _, _ := ultraRecording(t)
	lines := strings.SplitAfter(buf.String(), "\n")
	lines[5] = `{"mono_ns":400000000,"unix_ns":1,"channels":[["Energy Model","","CPU Energy","mJ",1.5]]}` + "\n"
	rec, err := NewRecording(strings.NewReader(strings.Join(lines, "")))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sampler.RecordingWindows(rec, Name, nil)
	if err != nil || res.Samples != 99 || !strings.Contains(strings.Join(res.Warnings, "\n"), "line 6: channel \"CPU Energy\": 1.5 is not a whole number") {
		t.Errorf("%v: %d windows, warnings %q", err, res.Samples, res.Warnings)
	}
	if _, err := NewRecording(strings.NewReader("<?xml version=\"1.0\"?>\n")); err != ErrNotRecording {
		t.Errorf("a plist: %v", err)
	}
}

// Two recordings joined in one file (cat a.ndjson b.ndjson): the second's
// clock starts again, and its header comes between. Each is measured
// whole, as a chain of its own after the other, with a break between
// them that the result says; none of the second's windows is lost.
func TestTwoRecordingsJoinedAreMeasuredEach(t *testing.T) {
	// Each: 20 readings 100 ms apart, the CPU at 10 W, the system at 40 W.
	one := func(start time.Time) string {
		var buf bytes.Buffer
		channels := []Channel{{Group: Group, Name: "CPU Energy", Unit: "mJ"}}
		rec, err := NewRecorder(&buf, Header{HWModel: "Mac13,2", IntervalSeconds: 0.1}, channels)
		if err != nil {
			t.Fatal(err)
		}
		for k := range 20 {
			at := start.Add(time.Duration(k) * 100 * time.Millisecond)
			if err := rec.Write(Reading{At: at, Unix: at, Values: []int64{int64(k) * 1000}, System: 40, HasSystem: true}, start); err != nil {
				t.Fatal(err)
			}
		}
		return buf.String()
	}
	start := time.Unix(1796300000, 0)
	rec, err := NewRecording(strings.NewReader(one(start) + one(start.Add(-time.Hour))))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sampler.RecordingWindows(rec, Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Samples != 38 || math.Abs(res.Energy.CPU-38) > 1e-9 || math.Abs(res.Energy.System-4*38) > 1e-9 {
		t.Errorf("%d windows, CPU %v J, system %v J; want 38 windows of 1 J and 4 J", res.Samples, res.Energy.CPU, res.Energy.System)
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "ioreport stopped and was started again once") || !strings.Contains(w, "another recording starts at line 23") {
		t.Errorf("warnings %q", res.Warnings)
	}
}
