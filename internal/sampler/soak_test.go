package sampler

import (
	"context"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/heavytest"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
)

// decoderSource is a stream read from a pipe, with no requests.
type decoderSource struct {
	dec *powermetrics.Decoder
	r   *io.PipeReader
}

func (d *decoderSource) Next() (power.Sample, error) { return d.dec.Next() }
func (d *decoderSource) CanRequestSample() bool      { return false }
func (d *decoderSource) RequestSample() error        { return nil }
func (d *decoderSource) Stop() error                 { return d.r.Close() }

// TestHeavySoak runs 10,000 documents through the decoder and the sampler as
// fast as they go, and checks that memory stays flat and the energy exact:
// 10,000 windows of 10 ms at 7.5 W.
func TestHeavySoak(t *testing.T) {
	heavytest.Skip(t)
	const n = 10_000
	const window = 10 * time.Millisecond
	pr, pw := io.Pipe()
	begun := make(chan struct{})
	go func() {
		d := fakepm.Document{
			Elapsed: window, Timestamp: time.Unix(1_700_000_000, 0), Energy: fakepm.Watts{0.05, 0.02, 0.005},
			Layout:   fakepm.Layout{Model: "Mac14,14", Clusters: []fakepm.Cluster{{Name: "E-Cluster", CPUs: 2}}},
			OSBuild:  "24F74",
			Samplers: map[string]bool{"cpu_power": true, "gpu_power": true, "thermal": true},
		}
		buf := d.Append(nil)
		for i := 0; i < n; i++ {
			if i == 1 {
				// The rest come once the span has begun, so that all of
				// them belong to it.
				<-begun
			}
			if i > 0 {
				pw.Write([]byte{0})
			}
			if _, err := pw.Write(buf); err != nil {
				return
			}
		}
		pw.Close()
	}()
	// Each read of the pipe moves the clock a second on, so that no
	// arrival is earlier than its window's end and every window keeps its
	// length; the span starts at the first document's arrival.
	var mu sync.Mutex
	clock := time.Unix(1_800_000_000, 0)
	read := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	var heap []uint64
	var tot Totals
	seen := 0
	s := Start(&decoderSource{dec: powermetrics.NewDecoder(pr, read), r: pr}, Config{Source: "powermetrics",
		Interval: window, Now: now,
	})
	ctx := context.Background()
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	sp := s.Begin(ctx, func(w Window, t Totals) {
		seen++
		tot = t
		if seen == 1000 || seen == n-1 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap = append(heap, ms.HeapInuse)
		}
	})
	close(begun)
	<-s.Done()
	r := s.End(ctx, sp, sp.Start.Add(tot.Elapsed))
	s.Stop()
	if len(heap) != 2 {
		t.Fatalf("saw %d windows", seen)
	}
	t.Logf("heap in use after 1,000 windows: %d KiB; after %d: %d KiB", heap[0]>>10, n-1, heap[1]>>10)
	if heap[1] > heap[0]+512<<10 {
		t.Errorf("heap grew by %d KiB over %d windows: memory must not grow with the run", (heap[1]-heap[0])>>10, n-1000)
	}
	// The first document made Ready; the span holds the n-1 after it.
	if r.Samples != n-1 || relErr(r.Energy.Total, float64(n-1)*0.075) > 1e-9 {
		t.Errorf("%d samples, %.6f J; want %d and %.6f J", r.Samples, r.Energy.Total, n-1, float64(n-1)*0.075)
	}
}
