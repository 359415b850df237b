package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"howett.net/plist"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/heavytest"
	"github.com/spf13/cobra"
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
		t.Fatalf("CI is set, and in CI the tests that need %s run, not skip: %v (bash .ci/run installs the Debian package that has it)", name, err)
	default:
		t.Skipf("%s not found (bash .ci/run installs the Debian package that has it): %v", name, err)
	}
	return ""
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
// Prometheus does, first of all): over powermetrics, and over IOReport,
// whose metrics add the memory's and the system's, and every app's.
func TestPromtoolChecksMetrics(t *testing.T) {
	t.Parallel()
	promtool := needTool(t, "promtool")
	pm := startServe(t, "0=10,2,0.5", nil, "-i", "100ms").addr
	// Over IOReport, with every app's counters (--apps) of the fake Mac,
	// whose names are hostile.
	io := startServe(t, "0=10,2,0.5", []string{"EXOPOWER_FAKE_IOREPORT=1", fakepm.ProcessesEnv + "=mac"}, "--source", "ioreport", "-i", "100ms", "--apps", "--node-name", "mac2").addr
	awaitMetric(t, pm, "exopower_soc_power_watts")
	awaitMetric(t, io, "exopower_system_power_watts")
	awaitMetric(t, io, `exopower_app_energy_joules_total{app="Safari",component="cpu",node_name="mac2"}`)
	tests := []struct {
		name, addr, accept, contentType string
		problems                        func(body []byte, promtool []string) []string
	}{
		{"the text format passes", pm, "", "text/plain; version=0.0.4", func(_ []byte, p []string) []string { return p }},
		{"OpenMetrics passes", pm, "application/openmetrics-text; version=1.0.0", "application/openmetrics-text; version=1.0.0", openMetricsProblems},
		{"the text format passes over ioreport", io, "", "text/plain; version=0.0.4", func(_ []byte, p []string) []string { return p }},
		{"OpenMetrics passes over ioreport", io, "application/openmetrics-text; version=1.0.0", "application/openmetrics-text; version=1.0.0", openMetricsProblems},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, ct := get(t, "http://"+tt.addr+"/metrics", tt.accept)
			if !strings.HasPrefix(ct, tt.contentType) {
				t.Fatalf("Content-Type %q, want %s", ct, tt.contentType)
			}
			if !bytes.Contains(body, []byte("\nexopower_soc_energy_joules_total ")) {
				t.Fatalf("no exopower_soc_energy_joules_total in:\n%s", body)
			}
			// The fake Mac's hostile name, its escapes written out.
			if tt.addr == io && !bytes.Contains(body, []byte(`exopower_app_energy_joules_total{app="\\x1b]0;pwned\\x07`)) {
				t.Errorf("no app of the hostile name, escaped, in:\n%.2000s", body)
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

// A real Prometheus server scrapes two exopower serves of different, known,
// constant powers every second, one as 127.0.0.1:PORT and one as
// localhost:PORT, without passwords, and what it stores adds up to the
// truth, within the 2 %.
//
// The truth. A serve's energy counter at a scrape is the energy of the
// windows that ended before it: the power times the time those windows
// cover, which exopower_covered_seconds_total gives at the same scrape.
// Between two scrapes of one serve, Δenergy = P × Δcovered exactly (the
// fake reports each window's exact average of its profile, constant here),
// whatever the phase of the windows against the scrapes. Over the range of
// increase(), the truth is P × the range: the fake runs throughout and its
// windows are chained, so the range is covered. increase() takes the first
// and last samples in the range and extrapolates them to its edges; each
// lags its scrape by less than a window (100 ms here), so it errs by at
// most about a window (0.1 s) over the range of 12 s, under 1 %.
func TestHeavyPrometheusSumsTwoServes(t *testing.T) {
	t.Parallel()
	heavytest.Skip(t) // its time goes to Prometheus or Python and to exopower's processes: .ci/run runs it without the race detector
	prometheus := needTool(t, "prometheus")
	const rangeSeconds = 12
	watts := map[string]float64{} // by instance: the serve's address
	var targets []string
	for i, profile := range []string{"0=10,2,0.5", "0=3,1,0.25"} {
		prof, err := fakepm.ParseProfile(profile)
		if err != nil {
			t.Fatal(err)
		}
		addr := startServe(t, profile, nil, "-i", "100ms", "--node-name", fmt.Sprintf("node-%d", i)).addr
		if i == 1 {
			// Scraped as localhost, as a Prometheus on the same Mac may
			// be told to: a Host that names this machine, which serve
			// answers without passwords.
			_, port, _ := net.SplitHostPort(addr)
			addr = "localhost:" + port
		}
		watts[addr] = prof.At(time.Now()).Total()
		targets = append(targets, addr)
	}
	base := startPrometheus(t, prometheus, targets)
	at, covered := awaitScrapes(t, base, len(targets), rangeSeconds)
	sel := fmt.Sprintf("[%ds]", rangeSeconds)
	energy := promQuery(t, base, "exopower_soc_energy_joules_total"+sel, at)
	var sumEnergy, sumTruth, sumPower float64
	for _, e := range energy {
		inst := e.Metric["instance"]
		c := covered[inst]
		if len(c) != len(e.Samples) || c[0].T != e.Samples[0].T || c[len(c)-1].T != e.Samples[len(c)-1].T {
			t.Fatalf("%s: the energy and covered samples are not of the same scrapes:\n%v\n%v", inst, e.Samples, c)
		}
		dE := e.Samples[len(c)-1].V - e.Samples[0].V
		dC := c[len(c)-1].V - c[0].V
		p := watts[inst]
		t.Logf("%s: %.4f J over %.4f s covered in %.3f s of scrapes: %.5f W, true %.5f W (%+.4f %%)",
			inst, dE, dC, c[len(c)-1].T-c[0].T, dE/dC, p, percentOff(dE/dC, p))
		if off := percentOff(dE/dC, p); math.Abs(off) > 2 {
			t.Errorf("%s: Δenergy / Δcovered = %.4f W, true %.4f W: off by %.3f %%", inst, dE/dC, p, off)
		}
		sumEnergy, sumTruth, sumPower = sumEnergy+dE, sumTruth+p*dC, sumPower+p
	}
	if len(energy) != len(targets) {
		t.Fatalf("%d energy series, want %d: %v", len(energy), len(targets), energy)
	}
	t.Logf("sum of Δenergy %.4f J, true %.4f J (%+.4f %%)", sumEnergy, sumTruth, percentOff(sumEnergy, sumTruth))
	if off := percentOff(sumEnergy, sumTruth); math.Abs(off) > 2 {
		t.Errorf("sum of Δenergy %.4f J, true %.4f J: off by %.3f %%", sumEnergy, sumTruth, off)
	}
	inc := promQuery(t, base, "sum(increase(exopower_soc_energy_joules_total"+sel+"))", at)
	if len(inc) != 1 {
		t.Fatalf("sum(increase(...)) gave %d values, want 1: %v", len(inc), inc)
	}
	got, truth := inc[0].Samples[0].V, sumPower*rangeSeconds
	t.Logf("sum(increase(exopower_soc_energy_joules_total%s)) = %.4f J, true %.4f J (%+.4f %%)", sel, got, truth, percentOff(got, truth))
	if off := percentOff(got, truth); math.Abs(off) > 2 {
		t.Errorf("sum(increase(exopower_soc_energy_joules_total%s)) = %.4f J, true %.4f J: off by %.3f %%", sel, got, truth, off)
	}
}

func percentOff(got, want float64) float64 { return (got - want) / want * 100 }

// startPrometheus runs a Prometheus server on a free loopback port with a
// storage of its own, scraping targets every second, and returns its URL.
// It is stopped when the test ends.
func startPrometheus(t *testing.T, prometheus string, targets []string) string {
	t.Helper()
	return startPrometheusWith(t, prometheus, fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: exopower\n    static_configs:\n      - targets: ['%s']\n",
		strings.Join(targets, "', '")))
}

// freeAddr returns a loopback address with a port that was free a moment
// ago, for a program that opens its own listener.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// awaitScrapes waits until Prometheus holds, for each of n serves, a full
// range of scrapes, the first of them more than 2 s into the serve's
// measurement (so that the range starts after the counters did), and
// returns the query time and the covered seconds in that range, by
// instance. The query time lies 1.5 s in the past: every scrape stamped
// before it (the scrape timeout is 1 s) is stored, so each later query at
// that time sees the same samples.
func awaitScrapes(t *testing.T, base string, n, rangeSeconds int) (float64, map[string][]promSample) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a hang guard only
	for {
		at := float64(time.Now().Add(-1500*time.Millisecond).UnixMilli()) / 1e3
		covered := map[string][]promSample{}
		for _, s := range promQuery(t, base, fmt.Sprintf("exopower_covered_seconds_total[%ds]", rangeSeconds), at) {
			if len(s.Samples) >= rangeSeconds && s.Samples[0].V > 2 {
				covered[s.Metric["instance"]] = s.Samples
			}
		}
		if len(covered) == n {
			return at, covered
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not hold %d s of scrapes of %d serves after two minutes: %v", rangeSeconds, n, covered)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type promSample struct{ T, V float64 }

type promSeries struct {
	Metric  map[string]string
	Samples []promSample
}

// promQuery asks Prometheus's HTTP API for the value of a PromQL
// expression at a time (seconds since the epoch): a range vector's raw
// samples, or an instant vector's single one.
func promQuery(t *testing.T, base, query string, at float64) []promSeries {
	t.Helper()
	u := base + "/api/v1/query?" + url.Values{"query": {query}, "time": {strconv.FormatFloat(at, 'f', 3, 64)}}.Encode()
	body, _ := get(t, u, "")
	var r struct {
		Status string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  []any
				Values [][]any
			}
		}
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		t.Fatalf("%s: %v:\n%s", query, err, body)
	}
	var out []promSeries
	for _, res := range r.Data.Result {
		s := promSeries{Metric: res.Metric}
		if res.Value != nil {
			res.Values = append(res.Values, res.Value)
		}
		for _, v := range res.Values {
			ts, _ := v[0].(float64)
			str, _ := v[1].(string)
			val, err := strconv.ParseFloat(str, 64)
			if err != nil {
				t.Fatalf("%s: sample %v: %v", query, v, err)
			}
			s.Samples = append(s.Samples, promSample{ts, val})
		}
		out = append(out, s)
	}
	return out
}

// launchd is what a launchd plist of exopower serve holds.
type launchd struct {
	Label                              string
	ProgramArguments                   []string
	RunAtLoad, KeepAlive               *bool
	StandardOutPath, StandardErrorPath string
	UserName                           string
	// serve is serve's command with the flags after "serve" parsed.
	serve *cobra.Command
}

// readLaunchd reads scripts/NAME.plist: an XML plist, named after its
// label, that runs an absolute exopower serve with flags that serve
// takes, at load and again whenever it ends, its output to one file.
func readLaunchd(t *testing.T, name string) launchd {
	t.Helper()
	path := filepath.Join("..", "..", "scripts", name+".plist")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d launchd
	if format, err := plist.Unmarshal(b, &d); err != nil || format != plist.XMLFormat {
		t.Fatalf("%s: not an XML plist of launchd's keys (format %d): %v", path, format, err)
	}
	if d.Label != name {
		t.Errorf("Label %q; want %s, the file's name", d.Label, name)
	}
	if len(d.ProgramArguments) < 2 || !filepath.IsAbs(d.ProgramArguments[0]) || filepath.Base(d.ProgramArguments[0]) != "exopower" || d.ProgramArguments[1] != "serve" {
		t.Fatalf("ProgramArguments %q; want an absolute path to exopower, then serve", d.ProgramArguments)
	}
	d.serve = newServeCmd(&cli.Streams{Getenv: func(string) string { return "" }})
	if err := d.serve.ParseFlags(d.ProgramArguments[2:]); err != nil || len(d.serve.Flags().Args()) != 0 {
		t.Errorf("ProgramArguments %q: not flags of exopower serve: %v %q", d.ProgramArguments, err, d.serve.Flags().Args())
	}
	if d.RunAtLoad == nil || !*d.RunAtLoad || d.KeepAlive == nil || !*d.KeepAlive {
		t.Errorf("RunAtLoad %v, KeepAlive %v; want both true", d.RunAtLoad, d.KeepAlive)
	}
	if !filepath.IsAbs(d.StandardOutPath) || d.StandardErrorPath != d.StandardOutPath {
		t.Errorf("output to %q and %q; want both to one file", d.StandardOutPath, d.StandardErrorPath)
	}
	return d
}

// scripts/com.exopower.serve.plist is a LaunchDaemon: as root, its output
// to /var/log/exopower.log.
func TestLaunchDaemonPlist(t *testing.T) {
	d := readLaunchd(t, "com.exopower.serve")
	if d.StandardOutPath != "/var/log/exopower.log" {
		t.Errorf("output to %q; want /var/log/exopower.log", d.StandardOutPath)
	}
	if d.UserName != "" && d.UserName != "root" {
		t.Errorf("UserName %q: powermetrics needs root", d.UserName)
	}
}

// The LaunchAgent runs serve as the user, over IOReport, which needs no
// root: --source ioreport, and no other user named.
func TestLaunchAgentPlist(t *testing.T) {
	d := readLaunchd(t, "com.exopower.serve.agent")
	if d.UserName != "" {
		t.Errorf("UserName %q; want none: the agent runs as the user logged in", d.UserName)
	}
	if src, _ := d.serve.Flags().GetString("source"); src != "ioreport" {
		t.Errorf("--source %q; want ioreport, which needs no root", src)
	}
}
