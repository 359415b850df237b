package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/heavytest"
	"github.com/exopower/exopower/internal/llm"
)

// A model server that is hostile: what it may set (headers, a redirect's
// address, a line the transport quotes, every field of a chunk, its list
// of models) it sets to what it was sent, the key and the URL's query.

// hostile answers the n-th completion request (from 0) with answer(n),
// and every list of models with models; it says nothing else.
func hostile(t *testing.T, models string, answer func(n int, w http.ResponseWriter, r *http.Request)) string {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, models)
			return
		}
		answer(int(n.Add(1)-1), w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// chunks streams the pieces of text, the finish_reason and usage, then
// [DONE].
func chunks(w http.ResponseWriter, pieces int, finish, usage string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for range pieces {
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n")
	}
	fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":%q}]}\n\n", finish)
	if usage != "" {
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":%s}\n\n", usage)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// echo is what the server was sent that it should never have anyone
// print: the bearer key, and the query the URL carried.
func echo(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + " " + r.URL.RawQuery
}

// Each way a server can send the key back, one request each, between
// requests that end well (so that no five fail in a row).
var echoes = []func(w http.ResponseWriter, r *http.Request){
	// A Content-Type that is not a stream, holding the key.
	func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; "+echo(r))
		w.WriteHeader(http.StatusOK)
	},
	// A finish_reason that is the key.
	func(w http.ResponseWriter, r *http.Request) { chunks(w, 3, echo(r), "") },
	// A redirect whose address holds the key in its path, user and query.
	func(w http.ResponseWriter, r *http.Request) {
		k := strings.Fields(echo(r))[0]
		w.Header().Set("Location", "http://"+k+"@elsewhere.example/"+k+"/v1?key="+k+"&"+r.URL.RawQuery)
		w.WriteHeader(http.StatusTemporaryRedirect)
	},
	// A malformed header line, which the transport quotes in its error.
	func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nBearer %s\r\n\r\n", echo(r))
		buf.Flush()
	},
	// An error whose message puts the key across the 512th rune.
	func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"message": strings.Repeat("a", 500) + echo(r)}})
	},
	// An error sent mid-stream.
	func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n")
		b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": "overloaded: " + echo(r)}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	},
	// An event that is no JSON.
	func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\ndata: {%s\n\n", echo(r))
	},
	// A status whose message is the key cut in two by control characters.
	func(w http.ResponseWriter, r *http.Request) {
		k := strings.Fields(echo(r))[0]
		http.Error(w, k[:12]+"\x1b[2J"+k[12:], http.StatusServiceUnavailable)
	},
}

// pieces are every piece of secret of pieceLen bytes.
func pieces(secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		for i := 0; i+8 <= len(s); i++ {
			out = append(out, s[i:i+8])
		}
	}
	return out
}

// leaks are the pieces of a secret that text holds.
func leaks(text string, ps []string) []string {
	var out []string
	for _, p := range ps {
		if strings.Contains(text, p) {
			out = append(out, p)
		}
	}
	return out
}

// The key and the URL's query never leave: not through stderr, stdout,
// the JSON, any export or the picture, whatever the server sends back,
// and not through the refusal of a URL that holds a user.
func TestLLMTheKeyNeverLeaves(t *testing.T) {
	t.Parallel()
	const key, query = "sk-proj-Zq8XwV2mN4pL7rT1yB6cK0hJ", "qk-9fD3sA5gH1jK7lM2nB4v"
	// Request 0 is the check before measuring; of the measured ones
	// after it, every other one echoes.
	server := func() string {
		return hostile(t, `{"data":[{"id":"tiny"}]}`, func(n int, w http.ResponseWriter, r *http.Request) {
			if m := n - 1; m%2 == 1 && m/2 < len(echoes) {
				echoes[m/2](w, r)
				return
			}
			chunks(w, 3, "stop", `{"prompt_tokens":5,"completion_tokens":3}`)
		})
	}
	dir := t.TempDir()
	files := []string{"r.json", "s.csv", "q.csv", "t.md", "p.svg"}
	for i, f := range files {
		files[i] = filepath.Join(dir, f)
	}
	ps := pieces(key, query)
	env := []string{"OPENAI_API_KEY=" + key}
	endpoint := "/v1/chat/completions?api_key=" + query
	args := []string{"-m", "tiny", "-r", fmt.Sprint(2 * len(echoes)), "-w", "0", "--baseline", "0", "--style", "basic"}
	exports := []string{"--export-json", files[0], "--export-csv", files[1], "--export-requests", files[2], "--export-markdown", files[3], "--plot", files[4]}
	rep, stderr, code := llmJSON(t, dir+"/overrides", env, append(append(args, exports...), server()+endpoint)...)
	if code != 0 || rep == nil {
		t.Fatalf("status %d, stderr %s", code, stderr)
	}
	out, _ := json.Marshal(rep)
	all := string(out) + stderr
	for _, f := range files {
		all += readFile(t, f)
	}
	// The text, as a person reads it, too.
	cmd, _ := exopowerCmd(t, append(append([]string{"llm"}, args...), server()+endpoint)...)
	cmd.Env = append(cmd.Env, env...)
	text, _ := cmd.CombinedOutput()
	all += string(text)
	if l := leaks(all, ps); len(l) > 0 {
		t.Errorf("pieces of the key or the query written out: %q", l)
	}
	failed := 0
	for _, q := range rep.Results[0].Requests {
		if q.Error != nil {
			failed++
		}
	}
	if failed != len(echoes)-1 || !strings.Contains(all, "[the key]") || !strings.Contains(rep.Endpoint, "api_key=[redacted]") {
		t.Errorf("%d requests failed, want %d (each echo but the finish_reason); endpoint %s", failed, len(echoes)-1, rep.Endpoint)
	}
	// Refused URLs: a user in it, and one that does not parse.
	for _, u := range []string{"http://" + key + "@127.0.0.1:1/v1", "http://" + key + ":x@[::1/v1?k=" + query} {
		_, stderr, code := llmJSON(t, dir+"/overrides", nil, "-m", "tiny", u)
		if code != 125 || len(leaks(stderr, ps)) > 0 {
			t.Errorf("%s: status %d, stderr %s", u, code, stderr)
		}
	}
	// A list of models that names the key, without -m.
	listing := hostile(t, `{"data":[{"id":"a"},{"id":"`+key+`"},{"id":"c"}]}`, func(int, http.ResponseWriter, *http.Request) {})
	_, stderr, code = llmJSON(t, dir+"/overrides", env, listing)
	if code != 125 || !strings.Contains(stderr, "lists 3 models: a, [the key], c") || len(leaks(stderr, ps)) > 0 {
		t.Errorf("a list naming the key: status %d, stderr %s", code, stderr)
	}
}

// Usage that cannot be true of the answer (prompt tokens of 1 and 1e11
// in turn, counts that overflow, no tokens for many pieces) is not used:
// those requests are counted from their pieces, with a warning, and
// every figure is a number the JSON can hold, at -c 1 and -c 2.
func TestLLMUsageThatCannotBeTrueLosesNothing(t *testing.T) {
	t.Parallel()
	usages := []string{
		`{"prompt_tokens":1,"completion_tokens":4}`,
		`{"prompt_tokens":100000000000,"completion_tokens":4}`,
		`{"prompt_tokens":3,"completion_tokens":9223372036854775807}`,
		`{"prompt_tokens":3,"completion_tokens":0}`,
		`{"prompt_tokens":3,"completion_tokens":1e300}`,
		`{"prompt_tokens":-1,"completion_tokens":4}`,
	}
	url := hostile(t, `{"data":[{"id":"tiny"}]}`, func(n int, w http.ResponseWriter, r *http.Request) {
		pieces := 4
		if n%len(usages) == 3 {
			pieces = 60
		}
		chunks(w, pieces, "stop", usages[n%len(usages)])
	})
	dir := t.TempDir()
	csv, md := filepath.Join(dir, "s.csv"), filepath.Join(dir, "t.md")
	rep, stderr, code := llmJSON(t, dir+"/overrides", nil, "-m", "tiny", "-c", "1,2", "-r", "12", "-w", "0", "--baseline", "300ms",
		"--export-csv", csv, "--export-markdown", md, url)
	if code != 0 || rep == nil || len(rep.Results) != 2 {
		t.Fatalf("status %d, stderr %s", code, stderr)
	}
	text := readFile(t, csv) + readFile(t, md) + stderr
	if strings.Contains(strings.ToLower(text), "nan") || strings.Contains(strings.ToLower(text), "inf") {
		t.Errorf("a figure that is no number: %s", text)
	}
	for _, res := range rep.Results {
		fromPieces := 0
		for _, q := range res.Requests {
			if q.TokensFrom == "pieces" {
				fromPieces++
			}
			if q.CompletionTokens < 0 || q.CompletionTokens > 60 {
				t.Errorf("request %d: %d completion tokens", q.Index, q.CompletionTokens)
			}
		}
		// Two of six usages can be true: the first, and none other.
		if fromPieces != 10 || !strings.Contains(strings.Join(res.Warnings, "\n"), "the server's usage cannot be true") {
			t.Errorf("-c %d: %d requests counted from their pieces, warnings %q", res.Concurrency, fromPieces, res.Warnings)
		}
		if res.Run == nil || res.Run.CompletionTokens <= 0 || res.Run.JoulesPerOutputToken == nil || res.Figures.SoC == nil {
			t.Errorf("-c %d: run %+v, figures %+v", res.Concurrency, res.Run, res.Figures)
		}
	}
	var again llm.Report
	if b, err := json.Marshal(rep); err != nil || json.Unmarshal(b, &again) != nil {
		t.Errorf("the report does not make JSON again: %v", err)
	}
}

// What cannot work is refused before anything is measured (no source is
// started, no baseline taken): a server whose certificate this Mac does
// not trust, a key no header can carry, a model the server does not
// serve.
func TestLLMChecksBeforeMeasuring(t *testing.T) {
	t.Parallel()
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { chunks(w, 2, "stop", "") }))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused are the test
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	var served atomic.Int64
	plain := hostile(t, `{"data":[{"id":"tiny"}]}`, func(n int, w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		if !strings.Contains(readBody(r), `"model":"tiny"`) {
			http.Error(w, `{"error":{"message":"The model does not exist."}}`, http.StatusNotFound)
			return
		}
		chunks(w, 2, "stop", "")
	})
	for _, c := range []struct {
		name, url, key, model, want string
	}{
		{"an untrusted certificate", tlsSrv.URL, "", "tiny", "certificate"},
		{"a key with a control character", plain, "sk-ab\x01cd", "tiny", "byte 6 of the key is 0x01"},
		{"a key with a space", plain, "sk-ab cd", "tiny", "byte 6 of the key is 0x20"},
		{"a model the server does not serve", plain, "", "huge", "The model does not exist."},
	} {
		cmd, dir := exopowerCmd(t, "llm", "-m", c.model, "-r", "1", c.url)
		cmd.Env = append(cmd.Env, "OPENAI_API_KEY="+c.key)
		out, err := cmd.CombinedOutput()
		if code := exitCode(t, err); code != 125 || !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "hint:") {
			t.Errorf("%s: status %d, output %s", c.name, code, out)
		}
		if fileExists(filepath.Join(dir, "powermetrics.pid")) {
			t.Errorf("%s: the source was started", c.name)
		}
	}
	if n := served.Load(); n != 1 {
		t.Errorf("the server was sent %d requests, want 1 (the check of the model it does not serve)", n)
	}
}

func readBody(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

// The end of --duration ends the requests in flight, however long a
// server would go on: the run ends, keeps what it measured and says
// which requests it cut short.
func TestLLMDurationEndsTheRequestsInFlight(t *testing.T) {
	t.Parallel()
	url := hostile(t, `{"data":[{"id":"tiny"}]}`, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			chunks(w, 1, "stop", "")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
	})
	rep, stderr, code := llmJSON(t, t.TempDir()+"/overrides", nil, "-m", "tiny", "-c", "2", "-r", "0", "--duration", "1s", "-w", "0", "--baseline", "0", url)
	if code != 125 || rep == nil || len(rep.Results[0].Requests) != 2 || !strings.Contains(stderr, "no request of tiny, 2 in flight, ended as it should") {
		t.Fatalf("status %d, stderr %s, report %v", code, stderr, rep != nil)
	}
	res := rep.Results[0]
	for _, q := range res.Requests {
		if q.Error == nil || *q.Error != llm.ErrDurationOver.Error() || q.Pieces == 0 {
			t.Errorf("request %d: error %v, %d pieces", q.Index, q.Error, q.Pieces)
		}
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "2 requests in flight when --duration ended, cut short there") || res.Run == nil || res.Run.Summary == nil {
		t.Errorf("warnings %q, run %+v", w, res.Run)
	}
}

// A prompts file is read as the run takes its prompts: a run of one
// request over a file of 256 MiB holds one prompt, not the file (which
// took three times its size, and 46 s for a GB, before the first
// request).
func TestHeavyLLMPromptsFileIsNotHeldWhole(t *testing.T) {
	heavytest.Skip(t)
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "prompts.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(`{"prompt": "` + strings.Repeat("word ", 200) + `"}` + "\n")
	for range (256 << 20) / len(line) {
		f.Write(line)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	url := hostile(t, `{"data":[{"id":"tiny"}]}`, func(n int, w http.ResponseWriter, r *http.Request) { chunks(w, 2, "stop", "") })
	cmd, _ := exopowerCmd(t, "llm", "--json", "-m", "tiny", "-r", "1", "-w", "0", "--baseline", "0", "--prompts", path, url)
	out, err := cmd.Output()
	if code := exitCode(t, err); code != 0 || !strings.Contains(string(out), `"requests":1`) {
		t.Fatalf("status %d, output %.300s", code, out)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	t.Logf("a run of one request over a prompts file of 256 MiB: %d MiB of memory at most (heap and all)", rss>>20)
	if rss > 96<<20 {
		t.Errorf("%d MiB of memory at most: the file was held", rss>>20)
	}
}

// --duration 0 is no duration: the default count of requests stands (it
// sent requests for ever).
func TestLLMDurationZeroIsNoDuration(t *testing.T) {
	t.Parallel()
	url := hostile(t, `{"data":[{"id":"tiny"}]}`, func(n int, w http.ResponseWriter, r *http.Request) { chunks(w, 2, "stop", "") })
	rep, stderr, code := llmJSON(t, t.TempDir()+"/overrides", nil, "-m", "tiny", "--duration", "0", "-w", "0", "--baseline", "0", url)
	if code != 0 || rep == nil || len(rep.Results[0].Requests) != 10 {
		t.Errorf("status %d, stderr %s, report %v", code, stderr, rep != nil)
	}
}
