package ioreport

import (
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/sampler"
)

// counting is a Library of the given channels whose every counter grows
// by 1000 units a reading.
type counting struct {
	channels []Channel
	n        int64
}

func (c *counting) Subscribe() ([]Channel, error) { return c.channels, nil }
func (c *counting) Read(values []int64) error {
	c.n++
	for i := range values {
		values[i] = 1000 * c.n
	}
	return nil
}
func (c *counting) SystemPower() (float64, bool) { return 0, false }
func (c *counting) Machine() (string, string)    { return "Mac14,14", "24F74" }
func (c *counting) Close() error                 { return nil }
func (c *counting) Select([]int)                 {}

// doubled are channels with the CPU's and a die's named twice, as a
// subscription that lists a channel again would give them.
var doubled = []Channel{
	{Group: Group, Name: "CPU Energy", Unit: "mJ"},
	{Group: Group, Name: "GPU Energy", Unit: "mJ"},
	{Group: Group, Subgroup: "again", Name: "CPU Energy", Unit: "mJ"},
	{Group: Group, Name: "ANE0_0", Unit: "mJ"},
	{Group: Group, Name: "ANE0_1", Unit: "mJ"},
	{Group: Group, Name: "ANE0_1", Unit: "mJ"},
	{Group: Group, Name: "CPU Energy", Unit: "uJ"},
}

// wantDoubled checks warnings for the CPU's and the ANE's channel named
// more than once, each once.
func wantDoubled(t *testing.T, what string, warnings []string) {
	t.Helper()
	w := strings.Join(warnings, "\n")
	for _, want := range []string{
		`IOReport channel "CPU Energy" is in the Energy Model group more than once: the first is counted in the CPU's energy, the others left out`,
		`IOReport channel "ANE0_1" is in the Energy Model group more than once: the first is counted in the ANE's energy, the others left out`,
	} {
		if strings.Count(w, want) != 1 {
			t.Errorf("%s: warnings\n%s\nwant once: %s", what, w, want)
		}
	}
}

// A rail's channel named twice (the same group and name) is counted
// once, the first, with a warning that names it: summing every channel
// that matches counted the CPU twice (three times here).
func TestAChannelNamedTwiceIsCountedOnce(t *testing.T) {
	p := NewPlan(doubled)
	before := make([]int64, len(doubled))
	after := []int64{1000, 2000, 1000, 500, 500, 500, 1_000_000}
	e, _, back := p.Energy(before, after)
	if back != [rails]bool{} || e != [rails]float64{CPU: 1, GPU: 2, ANE: 1} {
		t.Errorf("energy %v, want the CPU's 1 J once, the GPU's 2 J and the ANE's two dies' 1 J", e)
	}
	wantDoubled(t, "the plan", p.Warnings)
}

// The live stream and a recording count such a channel once too, and
// carry the warning to what they measured.
func TestAStreamAndARecordingCountAChannelNamedTwiceOnce(t *testing.T) {
	lib := &counting{channels: doubled}
	s, err := NewStream(lib, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The first window, 100 ms on: the fake's counters step by 1 J a
	// reading, which a reading asked for at once would make 1 J in some
	// microseconds, no power a Mac draws.
	smp, err := s.Next()
	s.Stop()
	if err != nil || smp.Energy.CPU != 1 || smp.Energy.ANE != 2 {
		t.Errorf("the stream: %v, CPU %v J, ANE %v J; want 1 J and 2 J", err, smp.Energy.CPU, smp.Energy.ANE)
	}
	wantDoubled(t, "the stream", s.Warnings())

	var b strings.Builder
	r, _ := NewRecorder(&b, Header{IntervalSeconds: 0.1}, doubled)
	start := time.Unix(1796300000, 0)
	values := make([]int64, len(doubled))
	for k := range 3 {
		lib.Read(values)
		at := start.Add(time.Duration(k) * 100 * time.Millisecond)
		r.Write(Reading{At: at, Unix: at, Values: values}, start)
	}
	rec, err := NewRecording(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sampler.RecordingWindows(rec, Name, nil)
	if err != nil || res.Energy.CPU != 2 {
		t.Errorf("the recording: %v, CPU %v J; want 2 J", err, res.Energy.CPU)
	}
	wantDoubled(t, "the recording", rec.Warnings())
}
