package sampler

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/powermetrics"
)

// BenchmarkPipeline puts b.N documents of an M1's cpu_power, gpu_power and
// thermal samplers through the decoder and the sampler, as exopower run
// does: the cost per sample of everything but powermetrics itself.
func BenchmarkPipeline(b *testing.B) {
	doc := fakepm.BenchDocuments()["m1-cpu_gpu_thermal"]
	benchStream(b, doc, b.N)
}

// BenchmarkMillionWindows puts 1,000,000 small documents through decoder
// and sampler and reports the heap in use after the first 10,000 and at
// the end: memory does not grow with the length of a run.
func BenchmarkMillionWindows(b *testing.B) {
	d := fakepm.Document{
		Elapsed: 10 * time.Millisecond, Timestamp: time.Unix(1_700_000_000, 0), Energy: fakepm.Watts{0.05, 0.02, 0.005},
		Layout:   fakepm.Layout{Model: "Mac14,14"},
		Samplers: map[string]bool{"cpu_power": true, "gpu_power": true, "thermal": true},
	}
	doc := d.Append(nil)
	for i := 0; i < b.N; i++ {
		benchStream(b, doc, 1_000_000)
	}
}

// benchStream runs n copies of doc through a Decoder and a Sampler, with a
// clock that keeps every window its length, and reports the heap.
func benchStream(b *testing.B, doc []byte, n int) {
	pr, pw := io.Pipe()
	go func() {
		// Writes of about 64 KB, as a pipe delivers them.
		var buf bytes.Buffer
		for i := 0; i < n; i++ {
			if i > 0 {
				buf.WriteByte(0)
			}
			buf.Write(doc)
			if buf.Len() >= 64<<10 || i == n-1 {
				if _, err := pw.Write(buf.Bytes()); err != nil {
					return
				}
				buf.Reset()
			}
		}
		pw.Close()
	}()
	clock := time.Unix(1_800_000_000, 0)
	read := func() time.Time { clock = clock.Add(time.Hour); return clock }
	var heap [2]uint64
	seen := 0
	mark := min(10_000, n/2)
	s := Start(&decoderSource{dec: powermetrics.NewDecoder(pr, read), r: pr}, Config{Source: "powermetrics",
		Interval: 10 * time.Millisecond, Now: func() time.Time { return time.Unix(1_700_000_000, 0) },
	})
	b.ResetTimer()
	s.Begin(context.Background(), func(w Window, tot Totals) {
		seen++
		if seen == mark || seen == n {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap[min(seen/n, 1)] = ms.HeapInuse
		}
	})
	<-s.Done()
	b.StopTimer()
	s.Stop()
	b.ReportMetric(float64(heap[0])/1024, "KiB-heap-early")
	b.ReportMetric(float64(heap[1])/1024, "KiB-heap-end")
	if seen != n {
		b.Fatalf("saw %d windows of %d", seen, n)
	}
}
