package llm

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/heavytest"
)

// An answer's head over MaxHeader is refused, as a request's error,
// however much of it the server would send.
func TestAnAnswersHeadIsBounded(t *testing.T) {
	big := strings.Repeat("h", 1<<20)
	c := serveFunc(t, time.Minute, func(w http.ResponseWriter, r *http.Request) {
		for i := range 9 {
			w.Header().Set(fmt.Sprintf("X-Padding-%d", i), big)
		}
		flushed(w, "data: [DONE]\n\n")
	})
	a := c.Do(context.Background(), "m", Prompt{Text: "x"}, &noEdges{})
	if a.Err == nil || !strings.Contains(a.Err.Error(), fmt.Sprint(MaxHeader)) {
		t.Errorf("answer %+v", a)
	}
}

// tokenCount counts the requests whose first token has come.
type tokenCount struct{ n atomic.Int64 }

func (*tokenCount) Sending(context.Context) {}
func (c *tokenCount) Token()                { c.n.Add(1) }
func (*tokenCount) Ended()                  {}

// MaxInFlightMemory is what docs/llm.md says 1024 requests in flight hold
// at most, against a server that sends each the largest head and event
// it may: 1024 × (MaxHeader × 3 + readBuffer + EventLimit(1024) × 2 +
// 48 KiB for the connection, its buffers and goroutines).
const maxInFlightMemory = 1024 * (MaxHeader*3 + readBuffer + 2*MinEvent + 48<<10)

// At the largest -c, with every request holding the largest head and
// event a server may send it, what the client holds stays within the
// bound the docs give. The server, in the same process, holds its own
// part too; the bound is for both.
func TestHeavyMemoryInFlightAtTheLargestConcurrency(t *testing.T) {
	heavytest.Skip(t)
	const n = 1024
	head := strings.Repeat("v", 1000)
	event := "data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("t", EventLimit(n)-100) + "\"}}]}\n\n"
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Just under the bound: 15 headers of a KB.
		for i := range (MaxHeader - 1024) / len(head) {
			w.Header().Set(fmt.Sprintf("X-Pad-%02d", i), head)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, event)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		chunksOf(w, 0)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/v1/chat/completions")
	c := NewClient(u, Chat, "k", time.Minute, Options{})
	c.InFlight = n
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var edges tokenCount
	var wg sync.WaitGroup
	var finished atomic.Int64
	answers := make([]Answer, n)
	for i := range n {
		wg.Go(func() {
			answers[i] = c.Do(context.Background(), "m", Prompt{Text: "x"}, &edges)
			finished.Add(1)
		})
	}
	// Every request holds its head and its event once its first token has
	// come; one that ends before the release has failed (and the test).
	for edges.n.Load()+finished.Load() < n {
		time.Sleep(10 * time.Millisecond)
	}
	var held runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&held)
	close(release)
	wg.Wait()
	for i, a := range answers {
		if a.Err != nil || a.Pieces != 1 {
			t.Fatalf("request %d: %+v", i, a)
		}
	}
	grew := int64(held.HeapInuse+held.StackInuse) - int64(before.HeapInuse+before.StackInuse)
	t.Logf("%d requests in flight held %.1f MiB (%.0f KiB each), bound %.1f MiB", n, float64(grew)/(1<<20), float64(grew)/n/1024, float64(maxInFlightMemory)/(1<<20))
	if grew > maxInFlightMemory {
		t.Errorf("%d requests in flight held %d bytes, over the bound of %d", n, grew, maxInFlightMemory)
	}
}
