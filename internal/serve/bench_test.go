package serve

import (
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/exopower/exopower/internal/power"
)

// drawn is what the in-process sources report: 7.5 W in all.
var drawn = power.Values{CPU: 5, GPU: 2, ANE: 0.5, Total: 7.5}

// sample is document i of a stream, window long, arriving at arrival.
func sample(i int, arrival time.Time, window time.Duration) power.Sample {
	return power.Sample{
		Index: i, Arrival: arrival, Window: window, Power: drawn,
		Has:     power.Reported{CPU: true, GPU: true, ANE: true},
		HWModel: "Mac14,14", OSBuild: "24F74", ThermalPressure: "Nominal",
	}
}

// fed is a Server fed n windows of 100 ms by hand, with spans open, as a
// scrape finds a serve that has run a while.
func fed(b testing.TB, n, spans int) (*Server, http.Handler) {
	c := newClock()
	s, f := offline(b, c, Config{})
	for i := range n {
		c.advance(100 * time.Millisecond)
		f.ch <- sample(i, c.Now(), 100*time.Millisecond)
	}
	for s.meter.Totals().Windows < n {
		time.Sleep(time.Millisecond)
	}
	h := s.Handler()
	for range spans {
		mustOpen(b, h)
	}
	return s, h
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchGet serves GET path b.N times and reports the CPU time per request
// (of the whole process, the garbage collector's included) beside the
// wall time.
func benchGet(b *testing.B, h http.Handler, path, accept string) {
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:10241"+path, nil)
	req.RemoteAddr = "127.0.0.1:50000"
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d", path, rec.Code)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkScrape is one Prometheus scrape of /metrics, with the Go and
// process collectors, in the text format and in OpenMetrics; and of
// exopower's own metrics alone, to tell their part.
func BenchmarkScrape(b *testing.B) {
	s, h := fed(b, 100, 10)
	b.Run("text", func(b *testing.B) { benchGet(b, h, "/metrics", "") })
	b.Run("openmetrics", func(b *testing.B) {
		benchGet(b, h, "/metrics", "application/openmetrics-text;version=1.0.0")
	})
	b.Run("exopower-only", func(b *testing.B) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(newCollector(s))
		benchGet(b, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), "/metrics", "")
	})
}

// BenchmarkStatus is one GET /v1/status.
func BenchmarkStatus(b *testing.B) {
	_, h := fed(b, 100, 10)
	benchGet(b, h, "/v1/status", "")
}
