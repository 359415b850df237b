package llm

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's CPU time so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// streamOf is a whole answer of n tokens as OpenAI streams it, usage
// and all.
func streamOf(n int) string {
	var s strings.Builder
	for i := range n {
		fmt.Fprintf(&s, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764849600,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok%d\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n", i)
	}
	s.WriteString("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764849600,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"length\"}],\"usage\":null}\n\n")
	fmt.Fprintf(&s, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764849600,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":128,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", n, n+128)
	s.WriteString("data: [DONE]\n\n")
	return s.String()
}

// BenchmarkClientRequest is the client's own cost of one request of 128
// output tokens, sent, read and parsed to its end, from a server that
// writes the whole answer at once. The CPU time is the whole process's,
// the server's writes included, so it bounds the client's from above;
// cpu-%-at-20/s is that as a share of one core at 20 requests a second.
func BenchmarkClientRequest(b *testing.B) {
	body := []byte(streamOf(128))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/v1/chat/completions")
	c := NewClient(u, Chat, "key", time.Minute, Options{MaxTokens: 128})
	p := Generated(128, 1)
	var e noEdges
	first, _ := p.Next(0)
	c.Do(context.Background(), "m", first, &e) // the connection, opened once
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for i := 0; b.Loop(); i++ {
		prompt, _ := p.Next(i)
		if a := c.Do(context.Background(), "m", prompt, &e); a.Err != nil || a.CompletionTokens != 128 {
			b.Fatalf("answer %+v", a)
		}
	}
	cpu := cpuTime(b) - cpu0
	perRequest := cpu.Seconds() / float64(b.N)
	b.ReportMetric(perRequest*1e6, "cpu-µs/request")
	b.ReportMetric(perRequest*20*100, "cpu-%-at-20/s")
}
