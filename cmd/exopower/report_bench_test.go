package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/fakepm"
)

// BenchmarkReport reads an IOReport recording of one channel, 100 ms
// apart, made at the start (1M readings are 118 MB, not kept in the
// repository), as exopower report does, with each output. Beside the
// time it reports the bytes allocated per reading and the peak of the
// heap in use while the report ran, in all and per reading: flat in the
// number of readings, the peak stays where it is from 100,000 readings
// to 1,000,000. scripts/bench-report.sh measures the process's RSS and
// wall time on the same input.
func BenchmarkReport(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			path := benchRecording(b, n)
			for _, args := range [][]string{{}, {"--json"}, {"--samples", "csv"}, {"--samples", "ndjson"}} {
				b.Run(formatName(args), func(b *testing.B) { benchReport(b, n, append(append([]string{"report"}, args...), path)) })
			}
		})
	}
}

func formatName(args []string) string {
	switch len(args) {
	case 0:
		return "summary"
	case 1:
		return "json"
	}
	return "samples-" + args[1]
}

func benchReport(b *testing.B, n int, args []string) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	peak := watchHeap()
	for range b.N {
		s := &cli.Streams{Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}
		if code := run(context.Background(), args, s); code != 0 {
			b.Fatalf("%v: exit status %d", args, code)
		}
	}
	highest := peak()
	runtime.ReadMemStats(&after)
	readings := float64(n) * float64(b.N)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/readings, "B/reading")
	b.ReportMetric(float64(highest)/float64(n), "peak-heap-B/reading")
	b.ReportMetric(float64(highest)/(1<<20), "peak-heap-MiB")
}

// watchHeap samples the bytes of live and not yet swept heap objects
// every millisecond until the returned function is called, which gives
// the highest seen.
func watchHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var highest atomic.Uint64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > highest.Load() {
				highest.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return highest.Load()
	}
}

// benchRecording writes a recording of n readings, removed once b ends.
func benchRecording(b *testing.B, n int) string {
	path := filepath.Join(b.TempDir(), fmt.Sprintf("%d.ndjson", n))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	prof, _ := fakepm.ParseProfile(fakepm.DefaultProfile)
	if err := fakepm.WriteBenchRecording(f, prof, 100*time.Millisecond, n); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}
