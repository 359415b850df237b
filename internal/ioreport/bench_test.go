package ioreport

import (
	"testing"
	"time"
)

// BenchmarkAReadingBecomesAWindow turns one reading of an M5 Max's 364
// Energy Model channels into a window: the work of each interval once the
// bindings have handed the counters over.
func BenchmarkAReadingBecomesAWindow(b *testing.B) {
	channels := inventory(b, "m5_max")
	plan := NewPlan(channels)
	w := newWindows(&plan, "Mac16,5")
	bufs := [2][]int64{make([]int64, len(channels)), make([]int64, len(channels))}
	at := time.Now()
	w.next(Reading{At: at, Values: bufs[0], System: 40, HasSystem: true})
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		v := bufs[(i+1)%2]
		for k := range v {
			v[k] += int64(k + 1)
		}
		at = at.Add(100 * time.Millisecond)
		if _, ok, err := w.next(Reading{At: at, Values: v, System: 40, HasSystem: true}); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
