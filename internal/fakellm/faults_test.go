package fakellm

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

const streamed = `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`

// faulty serves a fake with fault and sends it a streamed chat request.
func faulty(t *testing.T, fault, body string) (*http.Response, *Server) {
	t.Helper()
	c := quick(t)
	c.Fault = fault
	url, s := serve(t, c)
	return post(context.Background(), t, client(t), url+"/v1/chat/completions", "", body), s
}

// pieces counts the events that carry content.
func pieces(t *testing.T, evs []sse) int {
	t.Helper()
	n := 0
	for _, e := range evs {
		if e.data != "[DONE]" {
			if _, ok := content(t, decode(t, e.data)); ok {
				n++
			}
		}
	}
	return n
}

func TestFaultNoUsageNeverSendsUsage(t *testing.T) {
	t.Parallel()
	resp, _ := faulty(t, "no-usage", streamed)
	evs, err := readEvents(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if strings.Contains(e.data, `"usage"`) {
			t.Errorf("an event with usage: %s", e.data)
		}
	}
	if len(evs) != 4+2 || evs[len(evs)-1].data != "[DONE]" {
		t.Errorf("events %v, want 4 pieces, the finish and [DONE]", evs)
	}
}

func TestFaultNoDoneEndsTheStreamWithoutDone(t *testing.T) {
	t.Parallel()
	resp, _ := faulty(t, "no-done", streamed)
	evs, err := readEvents(t, resp.Body)
	if err != nil {
		t.Fatalf("the body ended with %v, want a clean end", err)
	}
	if len(evs) != 4+2 || !strings.Contains(evs[len(evs)-1].data, `"usage":{`) || !resp.Close {
		t.Errorf("events %v, closing %v; want 4 pieces, the finish, the usage and no [DONE], and the connection closed", evs, resp.Close)
	}
}

// The stalled stream sends nothing more: nothing arrives by the time its
// answer would have ended, and a slot more; then the client gives up.
func TestFaultStallAfterHoldsTheStreamOpen(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := quick(t)
	c.Fault = "stall-after=2"
	url, s := serve(t, c)
	resp := post(ctx, t, client(t), url+"/v1/chat/completions", "", streamed)
	r := bufio.NewReader(resp.Body)
	for range 2 * 2 { // two events, each a line and an empty line
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	more := make(chan string)
	go func() {
		line, _ := r.ReadString('\n')
		more <- line
	}()
	slot := s.Requests()[0].Slot
	select {
	case line := <-more:
		t.Fatalf("after two pieces, %q", line)
	case <-time.After(time.Until(slot.Add(2 * c.Period))):
	}
	cancel()
	if line := <-more; line != "" {
		t.Errorf("after the client gave up, %q", line)
	}
}

func TestFaultMalformedSendsAnEventThatIsNoJSON(t *testing.T) {
	t.Parallel()
	resp, _ := faulty(t, "malformed", streamed)
	evs, err := readEvents(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 2 || evs[1].data != "{not json" {
		t.Errorf("events %v, want the second {not json", evs)
	}
}

func TestFaultStatusAnswersWithAnOpenAIError(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ fault, want string }{
		{"status=503", `{"error":{"message":"fake failure 503","type":"server_error","param":null,"code":null}}`},
		{"status=429", `{"error":{"message":"fake failure 429","type":"invalid_request_error","param":null,"code":null}}`},
	} {
		resp, s := faulty(t, tt.fault, streamed)
		b, _ := io.ReadAll(resp.Body)
		if code := tt.fault[len("status="):]; resp.Status[:3] != code || strings.TrimSpace(string(b)) != tt.want {
			t.Errorf("%s: %s %s", tt.fault, resp.Status, b)
		}
		if !s.Requests()[0].Slot.IsZero() {
			t.Errorf("%s: a failed request took a slot", tt.fault)
		}
	}
}

func TestFaultRedirectSendsTheClientElsewhere(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ to, want string }{
		{"", "/elsewhere"},
		{"http://127.0.0.2:9", "http://127.0.0.2:9/elsewhere"},
		{"http://127.0.0.2:9/v1/chat/completions", "http://127.0.0.2:9/v1/chat/completions"},
	} {
		c := quick(t)
		c.Fault, c.RedirectTo = "redirect", tt.to
		url, s := serve(t, c)
		resp := post(context.Background(), t, client(t), url+"/v1/chat/completions", "", streamed)
		if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != tt.want {
			t.Errorf("RedirectTo %q: %s to %q, want 307 to %q", tt.to, resp.Status, resp.Header.Get("Location"), tt.want)
		}
		if tt.to != "" {
			continue
		}
		// A client that follows it finds no API there, and is recorded.
		follows := &http.Client{Transport: client(t).Transport}
		followed, err := follows.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(streamed))
		if err != nil {
			t.Fatal(err)
		}
		followed.Body.Close()
		if seen := s.Requests(); followed.StatusCode != 404 || len(seen) != 3 || seen[2].Path != "/elsewhere" {
			t.Errorf("followed: %s, seen %+v", followed.Status, seen)
		}
	}
}

func TestFaultHugeSendsAnEventOf8MiB(t *testing.T) {
	t.Parallel()
	resp, _ := faulty(t, "huge", streamed)
	evs, err := readEvents(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := content(t, decode(t, evs[0].data))
	if len(text) != HugePiece || len(evs) != 4+3 {
		t.Errorf("first piece of %d bytes in %d events, want %d bytes in 7", len(text), len(evs), HugePiece)
	}
}

func TestFaultDropAfterClosesTheConnection(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		fault string
		want  int
	}{{"drop-after=2", 2}, {"drop-after=0", 0}, {"drop-after=99", 4}} {
		resp, _ := faulty(t, tt.fault, streamed)
		evs, err := readEvents(t, resp.Body)
		if !isUnexpectedEnd(err) || pieces(t, evs) != tt.want || len(evs) != tt.want {
			t.Errorf("%s: %d events, %d pieces, ended with %v; want %d pieces and an unexpected end", tt.fault, len(evs), pieces(t, evs), err, tt.want)
		}
	}
}

// An answer that is not streamed meets the faults as well.
func TestFaultsOfAWholeAnswer(t *testing.T) {
	t.Parallel()
	const whole = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	resp, _ := faulty(t, "malformed", whole)
	if b, _ := io.ReadAll(resp.Body); string(b) != "{not json\n" {
		t.Errorf("malformed: %q", b)
	}
	resp, _ = faulty(t, "no-usage", whole)
	if b, _ := io.ReadAll(resp.Body); strings.Contains(string(b), "usage") || !strings.Contains(string(b), "tok4") {
		t.Errorf("no-usage: %s", b)
	}
	c := quick(t)
	c.Fault = "drop-after=1"
	url, _ := serve(t, c)
	if resp, err := client(t).Post(url+"/v1/chat/completions", "application/json", strings.NewReader(whole)); err == nil {
		resp.Body.Close()
		t.Errorf("drop-after: %s, want no answer", resp.Status)
	}
}

// Stop ends every request, a stalled one too, and leaves no goroutine of
// the server's or its handlers'.
func TestStopLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	c := quick(t)
	c.Fault = "stall-after=1"
	s := NewHandler(c)
	url, stop, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	cl := &http.Client{Transport: tr}
	resp, err := cl.Post(url+"/v1/models", "application/json", nil)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err = cl.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(streamed))
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(resp.Body)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	stop()
	if rest, _ := io.ReadAll(r); strings.Contains(string(rest), "[DONE]") {
		t.Errorf("the stalled stream went on after stop: %q", rest)
	}
	resp.Body.Close()
	tr.CloseIdleConnections()
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(10 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	if after > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before, %d after stop:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}
