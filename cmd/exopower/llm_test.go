package main

import (
	"cmp"
	"encoding/json"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakellm"
	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/llm"
	"github.com/exopower/exopower/internal/wire"
)

// The fake model server's pace and power: the idle Mac at idleProfile,
// each served request's prefill and decode at their own powers, which
// the fake powermetrics reads from the same overrides file.
const idleProfile = "0=2,0.5,0.1"

var idleWatts = fakepm.Watts{2, 0.5, 0.1}

func modelServer(t *testing.T, dir string, change func(*fakellm.Config)) (*fakellm.Server, string, fakellm.Config) {
	t.Helper()
	cfg := fakellm.Config{Period: 600 * time.Millisecond, Prefill: 150 * time.Millisecond, Decode: 300 * time.Millisecond, Tokens: 16,
		PrefillWatts: fakepm.Watts{20, 4, 1}, DecodeWatts: fakepm.Watts{9, 6, 0.5}, Overrides: filepath.Join(dir, "overrides"),
		Models: []string{"tiny"}}
	if change != nil {
		change(&cfg)
	}
	srv := fakellm.NewHandler(cfg)
	url, stop, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return srv, url, cfg
}

// llmJSON runs exopower llm --json over the fake powermetrics, reading
// the overrides at path, and returns its report, stderr and status.
func llmJSON(t *testing.T, overrides string, env []string, args ...string) (*llm.Report, string, int) {
	t.Helper()
	cmd, dir := exopowerCmd(t, append([]string{"llm", "--json"}, args...)...)
	cmd.Env = append(cmd.Env, append([]string{"FAKEPM_PROFILE=" + idleProfile, fakepm.OverridesEnv + "=" + overrides}, env...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := exitCode(t, err)
	// A run refused before the source started has no powermetrics to end.
	if pidfile := filepath.Join(dir, "powermetrics.pid"); fileExists(pidfile) {
		if err := fakepm.Gone(pidfile); err != nil {
			t.Error(err)
		}
	}
	if len(out) == 0 {
		return nil, stderr.String(), code
	}
	var rep llm.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v in %s (stderr %s)", err, out, stderr.String())
	}
	return &rep, stderr.String(), code
}

func phaseTruth(t *testing.T, overrides string) fakepm.Power {
	t.Helper()
	prof, err := fakepm.ParseProfile(idleProfile)
	if err != nil {
		t.Fatal(err)
	}
	o, err := fakepm.ReadOverrides(overrides)
	if err != nil {
		t.Fatal(err)
	}
	return fakepm.Power{Profile: prof, Overrides: o}
}

func requestEdges(t *testing.T, q llm.Request) (sent, first, last time.Time) {
	t.Helper()
	sent, err := time.Parse(time.RFC3339Nano, q.StartedAt)
	if err != nil || q.FirstTokenSeconds == nil {
		t.Fatalf("request %d: started_at %q, first token %v (%v)", q.Index, q.StartedAt, q.FirstTokenSeconds, q.Error)
	}
	at := func(s float64) time.Time { return sent.Add(time.Duration(s * 1e9)) }
	return sent, at(float64(*q.FirstTokenSeconds)), at(float64(*q.LastTokenSeconds))
}

// One request at a time: each phase's energy is the exact integral of
// the fake's power between the request's edges, and the net figures are
// the fake's known joules per token, within the edges' bound below.
func TestLLMJoulesPerTokenOfEachPhase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, url, cfg := modelServer(t, dir, nil)
	rep, stderr, code := llmJSON(t, cfg.Overrides, []string{"OPENAI_API_KEY=sk-test-secret"},
		"-r", "4", "--baseline", "1s", "-i", "50ms", "--max-tokens", "16", "--prompt-tokens", "64", "--seed", "7", "--temperature", "0.5", url)
	if code != 0 || rep == nil || len(rep.Results) != 1 {
		t.Fatalf("status %d, stderr %s", code, stderr)
	}
	res := rep.Results[0]
	if res.Attribution != "measured" || len(res.Requests) != 4 || res.Figures.Requests != 4 || !rep.Complete {
		t.Fatalf("result %+v", res)
	}
	power := phaseTruth(t, cfg.Overrides)
	// The net figures' truth between the edges the client saw, and the
	// server's own: on a loaded machine the client sees a phase's edges
	// late by some milliseconds, which the net (a difference) magnifies.
	// And a phase's edge is where the client saw it, the window there
	// ending where the sample asked for then came: on this machine, with
	// the race detector's tests beside, up to some 8 ms later, over which
	// the window's power is spread across the edge. At steps of 9.5 W
	// (prefill to decode) and 12.9 W (decode to idle), that is up to
	// 0.18 J of a decode's 4.6 J: 3 %, where a quiet machine is within
	// 0.2 %.
	const edgePercent = 3
	var seenOut, seenPrompt float64
	for _, q := range res.Requests {
		sent, first, last := requestEdges(t, q)
		within(t, "prefill", float64(q.Prefill.EnergyJoules), power.Energy(sent, first).Total(), edgePercent)
		within(t, "decode", float64(q.Decode.EnergyJoules), power.Energy(first, last).Total(), edgePercent)
		seenPrompt += (power.Energy(sent, first).Total() - idleWatts.Total()*first.Sub(sent).Seconds()) / 64 / 4
		seenOut += (power.Energy(first, last).Total() - idleWatts.Total()*last.Sub(first).Seconds()) / 15 / 4
		if q.Overlapped || q.TokensFrom != "usage" || q.CompletionTokens != 16 || q.PromptTokens == nil || *q.PromptTokens != 64 {
			t.Errorf("request %d: overlapped %v, tokens from %s, %d out, %v in", q.Index, q.Overlapped, q.TokensFrom, q.CompletionTokens, q.PromptTokens)
		}
	}
	soc := res.Figures.SoC
	within(t, "net J per output token", float64(soc.NetJoulesPerOutputToken.Mean), seenOut, edgePercent)
	within(t, "net J per prompt token", float64(soc.NetJoulesPerPromptToken.Mean), seenPrompt, edgePercent)
	within(t, "net J per output token, the server's", float64(soc.NetJoulesPerOutputToken.Mean), cfg.NetDecodeJoules(idleWatts)/15, 3)
	within(t, "net J per prompt token, the server's", float64(soc.NetJoulesPerPromptToken.Mean), cfg.NetPrefillJoules(idleWatts)/64, 3)
	within(t, "idle power", float64(rep.Baseline.PowerWatts), idleWatts.Total(), 0.5)
	var seen []fakellm.Seen
	for _, s := range srv.Requests() {
		if s.Path == "/v1/chat/completions" {
			seen = append(seen, s)
		}
	}
	if len(seen) != 6 { // the check of one token, the warmup and four measured
		t.Fatalf("the server saw %d requests", len(seen))
	}
	if check := seen[0]; check.MaxTokens == nil || *check.MaxTokens != 1 || check.Model != "tiny" || check.Authorization != "Bearer sk-test-secret" {
		t.Errorf("the check of one token: the server saw %+v", check)
	}
	for _, s := range seen[1:] {
		if s.Model != "tiny" || !s.Stream || !s.IncludeUsage || s.MaxTokens == nil || *s.MaxTokens != 16 || s.Seed == nil || *s.Seed != 7 ||
			s.Temperature == nil || *s.Temperature != 0.5 || s.Authorization != "Bearer sk-test-secret" {
			t.Errorf("the server saw %+v", s)
		}
	}
	out, _ := json.Marshal(rep)
	if strings.Contains(string(out)+stderr, "sk-test-secret") {
		t.Error("the key was written out")
	}
}

// Three requests in flight: the run's energy is exact, the requests'
// shares are said to be estimates, and their nets add up to the net of
// the phases the server ran.
func TestLLMConcurrencyKeepsTheRunExactAndSaysWhatIsEstimated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, url, cfg := modelServer(t, dir, func(cfg *fakellm.Config) { cfg.Continuous = true })
	rep, stderr, code := llmJSON(t, cfg.Overrides, nil, "-r", "6", "-c", "3", "-w", "0", "--baseline", "1s", "-i", "50ms", "--max-tokens", "16", "--prompt-tokens", "32", url)
	if code != 0 || rep == nil {
		t.Fatalf("status %d, stderr %s", code, stderr)
	}
	res := rep.Results[0]
	if res.Attribution != "estimated" || !strings.Contains(strings.Join(res.Warnings, "\n"), "requests overlapped") {
		t.Errorf("attribution %q, warnings %q", res.Attribution, res.Warnings)
	}
	power := phaseTruth(t, cfg.Overrides)
	sum := res.Run.Summary
	from, to := spanOf(t, sum.StartedAt, float64(sum.DurationSeconds))
	within(t, "the run's energy", float64(sum.EnergyJoules.Total), power.Energy(from, to).Total(), 1)
	var nets float64
	for _, q := range res.Requests {
		nets += float64(*q.Whole.NetEnergyJoules)
	}
	within(t, "the requests' nets, summed", nets, 6*(cfg.NetPrefillJoules(idleWatts)+cfg.NetDecodeJoules(idleWatts)), 1)
	if res.Run.CompletionTokens != 6*16 || res.Run.JoulesPerOutputToken == nil {
		t.Errorf("run %+v", res.Run)
	}
	// The fake serves one request at a time, as a server of one slot
	// does: the others wait in its queue, and each request's estimate is
	// its own phases', not a share of the one being served (the first
	// request, to an idle server, shows how long a prefill takes).
	// 1.5 % and 1.8 % off on a quiet machine; the edges the estimate
	// rests on come late under load, and shift joules between the two
	// phases, one up as the other down (3.6 % seen with the machine's
	// two cores busy with other builds, 5.7 % beside the race
	// detector's tests): 8 %. Their sum is held exactly, above.
	const estimatePercent = 8
	soc := res.Figures.SoC
	within(t, "estimated net J per output token", float64(soc.NetJoulesPerOutputToken.Mean), cfg.NetDecodeJoules(idleWatts)/15, estimatePercent)
	within(t, "estimated net J per prompt token", float64(soc.NetJoulesPerPromptToken.Mean), cfg.NetPrefillJoules(idleWatts)/32, estimatePercent)
}

// What a server does wrong is said, with its own message, and every
// request measured is kept.
func TestLLMWhatAServerDoesWrong(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fault, stall string
		code         int
		want         string
	}{
		{"status=500", "", 125, "fake failure 500"},
		{"no-usage", "", 0, "gave no token counts"},
		{"no-done", "", 0, "without data: [DONE]"},
		{"stall-after=2", "300ms", 125, "the server sent no data for 300ms"},
		{"malformed", "", 125, "an event that is not JSON"},
		{"huge", "", 125, "over 1024 KiB"},
		{"drop-after=3", "", 125, "ended before its last chunk"},
	} {
		t.Run(c.fault, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			_, url, cfg := modelServer(t, dir, func(cfg *fakellm.Config) {
				// The check of one token before measuring is served well;
				// the measured requests meet the fault.
				cfg.Fault, cfg.FaultAfter, cfg.Period, cfg.Prefill, cfg.Decode = c.fault, 1, 200*time.Millisecond, 20*time.Millisecond, 100*time.Millisecond
			})
			args := []string{"-r", "2", "-w", "0", "--baseline", "0", "--style", "basic", url}
			if c.stall != "" {
				args = append([]string{"--stall", c.stall}, args...)
			}
			rep, stderr, code := llmJSON(t, cfg.Overrides, nil, args...)
			if code != c.code || rep == nil || len(rep.Results[0].Requests) != 2 {
				t.Fatalf("status %d (want %d), report %v, stderr %s", code, c.code, rep != nil, stderr)
			}
			text := stderr + strings.Join(rep.Results[0].Warnings, "\n")
			for _, q := range rep.Results[0].Requests {
				text += strings.Join(q.Warnings, "\n")
				if q.Error != nil {
					text += *q.Error
				}
			}
			if !strings.Contains(text, c.want) {
				t.Errorf("no %q in %s", c.want, text)
			}
		})
	}
}

// The key goes to the server it was given for and nowhere else: a
// redirect is named, not followed; a wrong key and a server that does
// not answer are said before anything is measured.
func TestLLMKeyAndReach(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	other, otherURL, _ := modelServer(t, t.TempDir(), nil)
	_, url, cfg := modelServer(t, dir, func(cfg *fakellm.Config) { cfg.Fault, cfg.RedirectTo = "redirect", otherURL })
	key := []string{"OPENAI_API_KEY=sk-secret-1"}
	// Refused by the check of one token, before anything is measured.
	rep, stderr, code := llmJSON(t, cfg.Overrides, key, "-r", "1", "-w", "0", "--baseline", "0", url)
	if code != 125 || rep != nil || !strings.Contains(stderr, "follows no redirect") || !strings.Contains(stderr, "before anything is measured") || len(other.Requests()) != 0 {
		t.Errorf("redirect: status %d, stderr %s, the other server saw %d requests", code, stderr, len(other.Requests()))
	}
	_, locked, _ := modelServer(t, t.TempDir(), func(cfg *fakellm.Config) { cfg.APIKey = "sk-right" })
	_, stderr, code = llmJSON(t, cfg.Overrides, key, "-r", "1", locked)
	if code != 125 || !strings.Contains(stderr, "Incorrect API key") || !strings.Contains(stderr, "OPENAI_API_KEY") || strings.Contains(stderr, "sk-secret-1") {
		t.Errorf("wrong key: status %d, stderr %s", code, stderr)
	}
	_, stderr, code = llmJSON(t, cfg.Overrides, nil, "-r", "1", "http://127.0.0.1:1")
	if code != 125 || !strings.Contains(stderr, "does not answer") {
		t.Errorf("no server: status %d, stderr %s", code, stderr)
	}
}

// The exports: a CSV row per setting and per request, a Markdown table
// and a picture, all of the same report.
func TestLLMExports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, url, cfg := modelServer(t, dir, func(cfg *fakellm.Config) {
		cfg.Period, cfg.Prefill, cfg.Decode = 300*time.Millisecond, 50*time.Millisecond, 150*time.Millisecond
	})
	files := map[string]string{}
	for _, f := range []string{"set.csv", "req.csv", "t.md", "p.png"} {
		files[f] = filepath.Join(dir, f)
	}
	rep, stderr, code := llmJSON(t, cfg.Overrides, nil, "-r", "2", "-c", "1,2", "-w", "0", "--baseline", "300ms",
		"--export-csv", files["set.csv"], "--export-requests", files["req.csv"], "--export-markdown", files["t.md"], "--plot", files["p.png"], url)
	if code != 0 || len(rep.Results) != 2 {
		t.Fatalf("status %d, stderr %s", code, stderr)
	}
	if rows := strings.Split(strings.TrimSpace(readFile(t, files["set.csv"])), "\n"); len(rows) != 3 || !strings.HasPrefix(rows[1], "tiny,1,2,0,measured,") || !strings.HasPrefix(rows[2], "tiny,2,2,0,estimated,") {
		t.Errorf("settings CSV %q", rows)
	}
	if rows := strings.Split(strings.TrimSpace(readFile(t, files["req.csv"])), "\n"); len(rows) != 5 {
		t.Errorf("requests CSV %q", rows)
	}
	if md := readFile(t, files["t.md"]); !strings.Contains(md, "| `tiny` | 2 | 2 |") || !strings.Contains(md, "net of idle") {
		t.Errorf("markdown %s", md)
	}
	if b, err := os.ReadFile(files["p.png"]); err != nil || len(b) < 1000 || string(b[1:4]) != "PNG" {
		t.Errorf("picture: %d bytes, %v", len(b), err)
	}
	if math.IsNaN(float64(rep.Results[1].Figures.SoC.JoulesPerRequest.Mean)) {
		t.Error("no figures at concurrency 2")
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Ctrl-C ends the requests in flight: what was measured is reported,
// the status is 128 + SIGINT, and nothing is left running.
func TestLLMInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, url, cfg := modelServer(t, dir, func(cfg *fakellm.Config) {
		cfg.Period, cfg.Prefill, cfg.Decode = 300*time.Millisecond, 50*time.Millisecond, 150*time.Millisecond
	})
	cmd, pmdir := exopowerCmd(t, "llm", "--json", "-r", "100", "-c", "2", "-w", "0", "--baseline", "200ms", url)
	cmd.Env = append(cmd.Env, "FAKEPM_PROFILE="+idleProfile, fakepm.OverridesEnv+"="+cfg.Overrides)
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for served := 0; served < 4; time.Sleep(20 * time.Millisecond) {
		served = 0
		for _, s := range srv.Requests() {
			if !s.LastToken.IsZero() {
				served++
			}
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	code := exitCode(t, cmd.Wait())
	var rep llm.Report
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		t.Fatalf("status %d: %v in %q", code, err, out.String())
	}
	if code != 130 || rep.Complete || len(rep.Results) != 1 || rep.Results[0].Figures.Requests < 2 || !strings.Contains(strings.Join(rep.Results[0].Warnings, "\n"), "cut short by the interrupt") {
		t.Errorf("status %d, complete %v, results %s", code, rep.Complete, out.String())
	}
	if err := fakepm.Gone(filepath.Join(pmdir, "powermetrics.pid")); err != nil {
		t.Error(err)
	}
}

// Over two Macs whose power both step with the server's phases (a model
// split across them): each node's part of each phase, and the cluster's
// sum, against the exact joules; the run's span exact on both.
func TestLLMOverTwoNodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, url, cfg := modelServer(t, dir, nil)
	env := []string{fakepm.OverridesEnv + "=" + cfg.Overrides}
	// Each node's serve reads its own plug: the run at the wall is
	// their sum.
	f1, plug1 := plug(t, fakeplug.ShellyGen2, func(c *fakeplug.Config) { c.Profile = fakeplug.Constant(30) })
	f2, plug2 := plug(t, fakeplug.Tasmota, func(c *fakeplug.Config) { c.Profile = fakeplug.Constant(50) })
	nodes := []*served{
		startServe(t, idleProfile, env, "-i", "20ms", "--node-name", "mac1", "--wall", plug1),
		startServe(t, idleProfile, env, "-i", "20ms", "--node-name", "mac2", "--wall", plug2),
	}
	rep, stderr, code := llmJSON(t, cfg.Overrides, nil, "--node", nodes[0].url, "--node", nodes[1].url, "-r", "3", "--baseline", "1s", "-i", "20ms", url)
	if code != 0 || rep == nil || len(rep.Nodes) != 2 || rep.Baseline == nil || len(rep.Baseline.Nodes) != 2 {
		t.Fatalf("status %d, report %+v, stderr %s", code, rep, stderr)
	}
	res := rep.Results[0]
	if len(res.Figures.Nodes) != 2 || res.Run.Summary == nil || len(res.Run.Summary.Nodes) != 2 {
		t.Fatalf("figures %+v, run %+v", res.Figures, res.Run)
	}
	// A node's windows are not cut at a request's edges: where the power
	// steps inside the window at an edge, the phase gains or loses up to
	// that window's length times the step. Each phase is held to that
	// bound, from the fake's powers and the nodes' 20 ms windows.
	const window = 0.020
	pi, pp, pd := idleWatts.Total(), cfg.PrefillWatts.Total(), cfg.DecodeWatts.Total()
	prefillBound := window * (math.Abs(pp-pi) + math.Abs(pp-pd))
	decodeBound := window * (math.Abs(pp-pd) + math.Abs(pd-pi))
	power := phaseTruth(t, cfg.Overrides)
	for _, q := range res.Requests {
		sent, first, last := requestEdges(t, q)
		if len(q.Prefill.Nodes) != 2 {
			t.Fatalf("request %d: %d nodes", q.Index, len(q.Prefill.Nodes))
		}
		withinJoules(t, "prefill on mac1", float64(q.Prefill.Nodes[0].EnergyJoules), power.Energy(sent, first).Total(), prefillBound)
		withinJoules(t, "decode on mac2", float64(q.Decode.Nodes[1].EnergyJoules), power.Energy(first, last).Total(), decodeBound)
		withinJoules(t, "prefill, summed", float64(q.Prefill.EnergyJoules), 2*power.Energy(sent, first).Total(), 2*prefillBound)
	}
	withinJoules(t, "net J per output token, cluster", float64(res.Figures.SoC.NetJoulesPerOutputToken.Mean), 2*cfg.NetDecodeJoules(idleWatts)/15, 2*decodeBound/15)
	var wall float64
	for i, ns := range res.Run.Summary.Nodes {
		within(t, "the run on "+ns.Node, float64(ns.EnergyJoules.Total), nodeSpanTruth(t, power, ns), 1)
		wall += []*fakeplug.Fake{f1, f2}[i].Energy(mustTime(t, ns.StartedAt), mustTime(t, ns.EndedAt))
	}
	if w := res.Run.Summary.Wall; w == nil || res.Run.Wall == nil || res.Run.Wall.JoulesPerOutputToken == nil {
		t.Fatalf("the run over two nodes with plugs: wall %+v, %+v", w, res.Run.Wall)
	}
	within(t, "the run at the wall, both plugs", float64(res.Run.Summary.Wall.EnergyJoules), wall, 1)
	// The idle power at the wall is the plugs' too, each once: 30 W and
	// 50 W; and so the run's net there, at a constant draw nothing but
	// what the spans' edges leave (the plugs' readings of a second
	// against a run of a few).
	if b := rep.Baseline.Wall; b == nil || res.Run.Wall.NetEnergyJoules == nil || res.Run.Wall.NetJoulesPerOutputToken == nil {
		t.Fatalf("no idle power at the wall over two nodes with plugs: %+v, run %+v", b, res.Run.Wall)
	}
	within(t, "the idle power at the wall, both plugs", float64(rep.Baseline.Wall.PowerWatts), 30+50, 1)
	withinJoules(t, "the run's net energy at the wall", float64(*res.Run.Wall.NetEnergyJoules), 0, 0.02*wall)
}

// nodeSpanTruth is the fake's exact energy over a node's span, by its
// own clock (the same machine's here).
func nodeSpanTruth(t *testing.T, p fakepm.Power, ns wire.NodeSummary) float64 {
	t.Helper()
	start, err1 := time.Parse(time.RFC3339Nano, ns.StartedAt)
	end, err2 := time.Parse(time.RFC3339Nano, ns.EndedAt)
	if err1 != nil || err2 != nil {
		t.Fatalf("node %s: started_at %q, ended_at %q", ns.Node, ns.StartedAt, ns.EndedAt)
	}
	return p.Energy(start, end).Total()
}

// Prompts from a file, in turn, on /v1/completions, to the one model the
// server lists; and requests for a time rather than a count.
func TestLLMPromptsFileCompletionsAndDuration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, url, cfg := modelServer(t, dir, func(cfg *fakellm.Config) {
		cfg.Period, cfg.Prefill, cfg.Decode = 200*time.Millisecond, 20*time.Millisecond, 100*time.Millisecond
	})
	prompts := filepath.Join(dir, "prompts.jsonl")
	os.WriteFile(prompts, []byte(`"one two three"`+"\n\n"+`{"prompt": "a b c d e"}`+"\n"+
		`{"messages": [{"role": "system", "content": "x y"}, {"role": "user", "content": "p q r"}]}`+"\n"), 0o644)
	rep, stderr, code := llmJSON(t, cfg.Overrides, nil, "--completions", "--prompts", prompts, "-r", "3", "-w", "0", "--baseline", "0", url)
	if code != 0 || rep == nil || rep.API != "completions" || rep.Results[0].Model != "tiny" {
		t.Fatalf("status %d, stderr %s", code, stderr)
	}
	var got []int
	for _, q := range rep.Results[0].Requests {
		got = append(got, *q.PromptTokens)
	}
	if len(got) != 3 || got[0] != 3 || got[1] != 5 || got[2] != 5 {
		t.Errorf("prompt tokens %v, want [3 5 5]", got)
	}
	for _, s := range srv.Requests() {
		if s.Path != "/v1/models" && s.Path != "/v1/completions" {
			t.Errorf("a request to %s", s.Path)
		}
	}
	// The end of --duration cuts the request in flight short (the one of
	// -c 1), and says so.
	rep, stderr, code = llmJSON(t, cfg.Overrides, nil, "-r", "0", "--duration", "1s", "-w", "0", "--baseline", "0", url)
	if code != 0 || rep == nil || rep.Results[0].Figures.Requests < 3 || rep.Results[0].Figures.Failed > 1 {
		t.Fatalf("--duration 1s: status %d, %+v, stderr %s", code, rep.Results[0].Figures, stderr)
	}
	if f := rep.Results[0].Figures.Failed; f == 1 && !strings.Contains(strings.Join(rep.Results[0].Warnings, "\n"), "1 request in flight when --duration ended, cut short there") {
		t.Errorf("--duration 1s: %d cut short, warnings %q", f, rep.Results[0].Warnings)
	}
}

// A server that fails every request is not hammered: the setting stops
// after five in a row, and says why.
func TestLLMGivesUpOnAServerThatFailsEveryRequest(t *testing.T) {
	t.Parallel()
	_, url, cfg := modelServer(t, t.TempDir(), func(cfg *fakellm.Config) { cfg.Fault, cfg.FaultAfter = "status=503", 1 })
	rep, stderr, code := llmJSON(t, cfg.Overrides, nil, "-r", "50", "-w", "0", "--baseline", "0", url)
	if code != 125 || rep == nil || len(rep.Results[0].Requests) != 5 {
		t.Fatalf("status %d, stderr %s, report %v", code, stderr, rep != nil)
	}
	w := strings.Join(rep.Results[0].Warnings, "\n")
	if !strings.Contains(w, "stopped after 5 requests in a row failed") || !strings.Contains(w, "fake failure 503 (5 requests)") {
		t.Errorf("warnings %q", w)
	}
}

// withinJoules holds got to want within bound joules.
func withinJoules(t *testing.T, what string, got, want, bound float64) {
	t.Helper()
	t.Logf("%s %.5f, true %.5f (%.2f%%; bound %.2f%%)", what, got, want, 100*(got-want)/want, 100*bound/want)
	if math.Abs(got-want) > bound {
		t.Errorf("%s %.5f, true %.5f: off by more than %.4f J", what, got, want, bound)
	}
}

// goStandIn is go as docs/llm.md's way to try llm calls it: what it
// builds or runs is this test's binary under the name it answers to
// ($BIN/exopower, $BIN/fake-openai, $BIN/fake-powermetrics), and go run
// runs it as go run does, as a child that a signal to go does not reach.
const goStandIn = `#!/bin/sh
case "$1 $2 $4" in
"build -o ./scripts/fake-powermetrics" | "build -o ./scripts/fake-openai") exec ln -sf "$BIN/${4##*/}" "$3" ;;
esac
case "$1 $2" in
"run ./cmd/exopower" | "run ./scripts/fake-openai") name=${2##*/}; shift 2; "$BIN/$name" "$@"; exit ;;
esac
echo "go $*: not a command this test stands in for" >&2
exit 2
`

// docs/llm.md's way to try llm with no model, run as it stands with sh
// (its files in a folder of the test's rather than /tmp), go's builds
// and runs standing in as this test's binary: it measures the fake
// model's requests, and leaves nothing running; the fake server no longer
// answers at the URL it printed. (Its go run of the fake server, ended by
// kill %1, killed go run and left the server serving.)
func TestTheLLMDocsWayToTryItLeavesNothingRunning(t *testing.T) {
	t.Parallel() // its baselines wait on the fake in real time
	sh := needTool(t, "sh")
	dir := t.TempDir()
	example := docExample(t, filepath.Join("..", "..", "docs", "llm.md"), "fake-openai")
	if !strings.Contains(example, "/tmp/") {
		t.Fatalf("the example writes nothing to /tmp/, where the test finds its files:\n%s", example)
	}
	script := filepath.Join(dir, "try.sh")
	if err := os.WriteFile(script, []byte(strings.ReplaceAll(example, "/tmp/", dir+"/")), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fake := cmp.Or(fakepm.Plain(), self)
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"exopower": self, "fake-openai": self, "fake-powermetrics": fake} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(goStandIn), 0o755); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(sh, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(filepath.ListSeparator)+os.Getenv("PATH"), "BIN="+bin, "TMPDIR="+dir)
	// Its own process group, so that whatever it leaves running is
	// ended with the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t.Cleanup(func() {
		if cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	// Its output goes to files, not pipes: a server left running would
	// hold a pipe open, and the test would wait for it for ever.
	stdout, stderr := filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")
	for path, to := range map[string]*io.Writer{stdout: &cmd.Stdout, stderr: &cmd.Stderr} {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		*to = f
	}
	err = cmd.Run()
	out := readFile(t, stdout)
	if err != nil || !strings.Contains(out, "Whole run:") || !strings.Contains(out, "Net of idle 1: tiny") {
		t.Fatalf("sh %s: %v\n%s%s", script, err, out, readFile(t, stderr))
	}
	printed, err := os.ReadFile(filepath.Join(dir, "fake-openai.txt"))
	if err != nil {
		t.Fatal(err)
	}
	url, _, _ := strings.Cut(string(printed), "\n")
	host := strings.TrimPrefix(url, "http://")
	if !strings.HasPrefix(host, "127.0.0.1:") {
		t.Fatalf("the fake server printed %q first, not its URL", printed)
	}
	if c, err := net.Dial("tcp", host); err == nil {
		c.Close()
		t.Errorf("the fake server still answers at %s after the example: it was left running", url)
	}
}
