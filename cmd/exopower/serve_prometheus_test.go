package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needTool returns the path of a Prometheus binary that a test needs. It
// skips the test when the binary is missing, except in CI (CI set
// non-empty), where it fails: .ci/run installs Debian's prometheus package,
// and a skip there would let a run that never met Prometheus pass for one
// that did.
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	switch {
	case err == nil:
		return path
	case os.Getenv("CI") != "":
		t.Fatalf("CI is set, and in CI the tests that need %s run, not skip: %v (bash .ci/run installs Debian's prometheus package, which has it)", name, err)
	default:
		t.Skipf("%s not found (Debian's prometheus package has it; bash .ci/run installs it): %v", name, err)
	}
	return ""
}

// startServe runs exopower serve as a real process on a free loopback
// port, over the fake powermetrics with the given profile, and returns its
// address. The serve is stopped, and must end cleanly, when the test ends.
func startServe(t *testing.T, profile string, args ...string) string {
	t.Helper()
	cmd, _ := exopowerCmd(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, "FAKEPM_PROFILE="+profile)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := lines(stderr)
	seen := await(t, out, "listening on http://")
	var rest bytes.Buffer
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for l := range out {
			fmt.Fprintln(&rest, l)
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		// A hang guard only: serve ends at once on SIGTERM.
		kill := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
		defer kill.Stop()
		<-drained
		if err := cmd.Wait(); err != nil {
			t.Errorf("exopower serve on SIGTERM: %v; stderr:\n%s\n%s", err, strings.Join(seen, "\n"), rest.String())
		}
	})
	_, addr, _ := strings.Cut(seen[len(seen)-1], "listening on http://")
	addr, _, _ = strings.Cut(addr, " ")
	return addr
}

// get fetches url with the given Accept header (none when empty) and
// returns the body and its Content-Type.
func get(t *testing.T, url, accept string) ([]byte, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v:\n%s", url, resp.Status, err, body)
	}
	return body, resp.Header.Get("Content-Type")
}

// awaitMetric fetches /metrics until it holds a sample of name, and
// returns that body. The power gauges appear with the first window.
func awaitMetric(t *testing.T, addr, name string) []byte {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a hang guard only
	for {
		body, _ := get(t, "http://"+addr+"/metrics", "")
		if bytes.Contains(body, []byte("\n"+name+" ")) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in /metrics after a minute:\n%s", name, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// promtool check metrics passes on /metrics, in the Prometheus text format
// and in OpenMetrics, which a client asks for with its Accept header (and
// Prometheus does, first of all).
func TestPromtoolChecksMetrics(t *testing.T) {
	t.Parallel()
	promtool := needTool(t, "promtool")
	addr := startServe(t, "0=10,2,0.5", "-i", "100ms")
	awaitMetric(t, addr, "exopower_soc_power_watts")
	tests := []struct {
		name, accept, contentType string
		problems                  func(body []byte, promtool []string) []string
	}{
		{"the text format passes", "", "text/plain; version=0.0.4", func(_ []byte, p []string) []string { return p }},
		{"OpenMetrics passes", "application/openmetrics-text; version=1.0.0", "application/openmetrics-text; version=1.0.0", openMetricsProblems},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, ct := get(t, "http://"+addr+"/metrics", tt.accept)
			if !strings.HasPrefix(ct, tt.contentType) {
				t.Fatalf("Content-Type %q, want %s", ct, tt.contentType)
			}
			if !bytes.Contains(body, []byte("\nexopower_soc_energy_joules_total ")) {
				t.Fatalf("no exopower_soc_energy_joules_total in:\n%s", body)
			}
			for _, p := range tt.problems(body, promtoolCheck(t, promtool, body)) {
				t.Errorf("%s", p)
			}
		})
	}
}

// promtoolCheck runs promtool check metrics on body and returns the
// problems it finds, one a line.
func promtoolCheck(t *testing.T, promtool string, body []byte) []string {
	t.Helper()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	switch code := exitCode(t, err); code {
	case 0:
		return nil
	case 3: // lint problems, one a line
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	default:
		return []string{fmt.Sprintf("promtool check metrics: exit status %d: %s", code, out)}
	}
}

// openMetricsProblems returns what is wrong with an OpenMetrics body:
// promtool's problems, and two rules of OpenMetrics that promtool, which
// reads the text format, does not know. OpenMetrics names a counter's
// family without the _total that its samples carry ("# TYPE x counter",
// then "x_total 1"), so promtool reads the samples as a family of their own
// and says they have no help text: that complaint is dropped for a sample
// whose family does declare its help and type. A family name must be
// unique: Go's default collector has a gauge go_memstats_alloc_bytes and a
// counter go_memstats_alloc_bytes_total, two families of one name in
// OpenMetrics (prometheus/client_golang#829), which strict parsers refuse.
// And the body ends with "# EOF".
func openMetricsProblems(body []byte, promtool []string) []string {
	var problems []string
	for _, p := range promtool {
		family, isCounterSample := strings.CutSuffix(strings.TrimSuffix(p, " no help text"), "_total")
		if isCounterSample && strings.HasSuffix(p, " no help text") &&
			bytes.Contains(body, []byte("\n# TYPE "+family+" counter\n")) && bytes.Contains(body, []byte("# HELP "+family+" ")) {
			continue
		}
		problems = append(problems, p)
	}
	types := map[string]int{}
	for _, l := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(l, "# TYPE "); ok {
			name, _, _ := strings.Cut(rest, " ")
			if types[name]++; types[name] == 2 {
				problems = append(problems, "OpenMetrics: two families named "+name)
			}
		}
	}
	if !bytes.HasSuffix(body, []byte("\n# EOF\n")) {
		problems = append(problems, "OpenMetrics: the body does not end with # EOF")
	}
	return problems
}
