package main

// The fleet out of the box: deploy/prometheus's rules and alerts,
// deploy/grafana's dashboard, and docs/integration.md's examples, each run
// as an operator or a program would run it, against serves over the fake.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v2"

	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/heavytest"
	"github.com/exopower/exopower/internal/wire"
)

var (
	deployDir     = filepath.Join("..", "..", "deploy")
	rulesFile     = filepath.Join(deployDir, "prometheus", "rules.yml")
	alertsFile    = filepath.Join(deployDir, "prometheus", "alerts.yml")
	rulesTestFile = filepath.Join(deployDir, "prometheus", "rules_test.yml")
	dashboardFile = filepath.Join(deployDir, "grafana", "exopower.json")
	integrationMD = filepath.Join("..", "..", "docs", "integration.md")
)

// promtool check rules and promtool test rules pass on deploy/prometheus:
// the rules parse, and their unit tests (rules_test.yml: input series, the
// alerts that must and must not fire, the recording rules' values) hold.
func TestPrometheusRulesPassPromtool(t *testing.T) {
	t.Parallel()
	promtool := needTool(t, "promtool")
	for _, args := range [][]string{{"check", "rules", rulesFile, alertsFile}, {"test", "rules", rulesTestFile}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// ruleGroups reads a Prometheus rule file.
type ruleGroups struct {
	Groups []struct {
		Name  string
		Rules []struct {
			Record, Alert, Expr string
			Annotations         map[string]string
		}
	}
}

func readRules(t *testing.T, path string) ruleGroups {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g ruleGroups
	if err := yaml.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}

// recordedNames are the names rules.yml records.
func recordedNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, g := range readRules(t, rulesFile).Groups {
		for _, r := range g.Rules {
			names = append(names, r.Record)
		}
	}
	return names
}

// Every alert's description is a runbook: it names what to run on the Mac
// (exopower doctor, curl of /v1/status) and where serve runs from (the
// LaunchDaemon or the LaunchAgent), and its runbook_url is a heading of
// docs/fleet.md.
func TestEveryAlertSaysWhatToCheckAndDo(t *testing.T) {
	t.Parallel()
	fleet, err := os.ReadFile(filepath.Join("..", "..", "docs", "fleet.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range readRules(t, alertsFile).Groups {
		for _, r := range g.Rules {
			n++
			d := r.Annotations["description"]
			if !strings.Contains(d, "curl -s localhost:10241/v1/status") {
				t.Errorf("%s: its description does not say to ask serve for its status (curl -s localhost:10241/v1/status)", r.Alert)
			}
			if !strings.Contains(d, "LaunchDaemon") && !strings.Contains(d, "launchctl") {
				t.Errorf("%s: its description says nothing of the LaunchDaemon or the LaunchAgent", r.Alert)
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("%s: no summary", r.Alert)
			}
			anchor := "https://github.com/exopower/exopower/blob/main/docs/fleet.md#" + strings.ToLower(r.Alert)
			if r.Annotations["runbook_url"] != anchor {
				t.Errorf("%s: runbook_url %q, want %s", r.Alert, r.Annotations["runbook_url"], anchor)
			}
			if !bytes.Contains(fleet, []byte("\n### "+r.Alert+"\n")) {
				t.Errorf("%s: docs/fleet.md has no heading ### %s", r.Alert, r.Alert)
			}
		}
	}
	if n < 4 {
		t.Fatalf("%d alerts in %s, want at least 4", n, alertsFile)
	}
	if !bytes.Contains(mustRead(t, alertsFile), []byte("exopower doctor")) {
		t.Error("no alert names exopower doctor")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dashboard is what the test reads of a Grafana dashboard.
type dashboard struct {
	UID        string
	Title      string
	Panels     []panel
	Templating struct {
		List []struct {
			Name, Type string
			Query      any
			AllValue   string
			IncludeAll bool
		}
	}
}

type panel struct {
	ID         int
	Type       string
	Title      string
	Repeat     string
	Datasource *struct{ Type, UID string }
	GridPos    struct{ X, Y, W, H int }
	Targets    []struct {
		Expr       string `json:"expr"`
		RefID      string `json:"refId"`
		Datasource *struct{ Type, UID string }
	}
	Panels []panel // a collapsed row's
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(mustRead(t, dashboardFile)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// dashboardQuery is one PromQL query of the dashboard, where it is.
type dashboardQuery struct{ where, expr string }

func (d dashboard) queries() []dashboardQuery {
	var qs []dashboardQuery
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				qs = append(qs, dashboardQuery{fmt.Sprintf("panel %q, query %s", p.Title, tg.RefID), tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return qs
}

// The dashboard imports into Grafana as it is: one JSON object with a uid,
// a data source variable that every panel and query uses (so that no
// Prometheus of the author's is named), the variables job and node
// (several values, and all), panels with ids of their own on the 24
// columns of the grid, none over another, and a query in every target.
func TestTheDashboardIsImportable(t *testing.T) {
	t.Parallel()
	d := readDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("uid %q, title %q: Grafana needs both", d.UID, d.Title)
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if v.Type == "query" && (!v.IncludeAll || v.AllValue == "") {
			t.Errorf("variable %s: includeAll %v, allValue %q; want All, as a regex", v.Name, v.IncludeAll, v.AllValue)
		}
	}
	for _, want := range []string{"datasource", "job", "node"} {
		if !vars[want] {
			t.Errorf("no variable %s", want)
		}
	}
	ids := map[int]string{}
	type cell struct{ x, y int }
	taken := map[cell]string{}
	var check func([]panel)
	check = func(ps []panel) {
		for _, p := range ps {
			if prev, ok := ids[p.ID]; ok || p.ID == 0 {
				t.Errorf("panel %q: id %d, taken by %q or none", p.Title, p.ID, prev)
			}
			ids[p.ID] = p.Title
			g := p.GridPos
			if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
				t.Errorf("panel %q: gridPos %+v outside Grafana's 24 columns", p.Title, g)
			}
			for x := g.X; x < g.X+g.W; x++ {
				for y := g.Y; y < g.Y+g.H; y++ {
					if other, ok := taken[cell{x, y}]; ok {
						t.Errorf("panel %q lies over %q at %d,%d", p.Title, other, x, y)
					}
					taken[cell{x, y}] = p.Title
				}
			}
			if p.Type != "row" {
				if p.Datasource == nil || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
					t.Errorf("panel %q: data source %+v, %d queries; want ${datasource}, and queries", p.Title, p.Datasource, len(p.Targets))
				}
			}
			for _, tg := range p.Targets {
				if tg.Expr == "" || tg.RefID == "" || tg.Datasource == nil || tg.Datasource.UID != "${datasource}" {
					t.Errorf("panel %q: a query %+v without an expr, a refId or ${datasource}", p.Title, tg)
				}
			}
			if p.Repeat != "" && !vars[p.Repeat] {
				t.Errorf("panel %q repeats over %s, no variable", p.Title, p.Repeat)
			}
			check(p.Panels)
		}
	}
	check(d.Panels)
	if len(d.queries()) < 10 {
		t.Errorf("%d queries", len(d.queries()))
	}
}

var (
	promQuoted     = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promMatchers   = regexp.MustCompile(`\{[^}]*\}`)
	promRanges     = regexp.MustCompile(`\[[^\]]*\]`)
	promLabelLists = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promWords      = regexp.MustCompile(`\.?[0-9][0-9A-Za-z_.]*|[A-Za-z_:][A-Za-z0-9_:]*`)
	promKeywords   = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "by": true, "without": true,
		"on": true, "ignoring": true, "group_left": true, "group_right": true, "atan2": true, "inf": true, "nan": true}
)

// metricNames are the metric names a PromQL expression selects: its words
// less the functions (a word before "("), the keywords, the numbers and
// durations, the label names (inside {}, and the lists of by, on and the
// like) and the strings.
func metricNames(expr string) []string {
	e := promQuoted.ReplaceAllString(expr, `""`)
	e = promMatchers.ReplaceAllString(e, " ")
	e = promRanges.ReplaceAllString(e, " ")
	e = promLabelLists.ReplaceAllString(e, " ")
	var names []string
	for _, loc := range promWords.FindAllStringIndex(e, -1) {
		w := e[loc[0]:loc[1]]
		rest := strings.TrimLeft(e[loc[1]:], " \t\n")
		if w[0] == '.' || (w[0] >= '0' && w[0] <= '9') || promKeywords[strings.ToLower(w)] || strings.HasPrefix(rest, "(") {
			continue
		}
		if !slices.Contains(names, w) {
			names = append(names, w)
		}
	}
	return names
}

// unknownMetrics are the names expr selects that are not in known, and a
// complaint when it selects no known metric at all.
func unknownMetrics(expr string, known map[string]bool) []string {
	var unknown []string
	some := false
	for _, n := range metricNames(expr) {
		if !known[n] {
			unknown = append(unknown, n)
		}
		some = some || known[n]
	}
	if !some {
		unknown = append(unknown, "(no known metric)")
	}
	return unknown
}

// The test's reading of PromQL finds the metric names of an expression and
// no other word, so that a query naming a metric exopower does not export
// (a typo, a name from another exporter) fails the dashboard's test.
func TestAQueryNamingAMetricExopowerDoesNotExportIsFound(t *testing.T) {
	t.Parallel()
	known := map[string]bool{"exopower_energy_joules_total": true, "exopower_soc_energy_joules_total": true, "exopower_covered_seconds_total": true,
		"exopower_source_restarts_total": true, "exopower_source_info": true, "up": true}
	for _, tc := range []struct {
		name, expr string
		want       []string
	}{
		{"a metric by its name", `sum by (component) (rate(exopower_energy_joules_total{job=~".+", instance=~"mac.*"}[4s]))`, nil},
		{"an aggregation's clause before its argument, a number with an exponent",
			`1e-3 * sum without (instance) (exopower_soc_energy_joules_total offset 5m)`, nil},
		{"a binary operator's matching, a string holding words",
			`(increase(exopower_source_restarts_total[15m]) > 2.5) * on (job, instance) group_left (tool) exopower_source_info{tool!="by (x) or y"}`, nil},
		{"label_replace's strings", `label_replace(rate(exopower_soc_energy_joules_total[1m]), "scope", "system", "", "")`, nil},
		{"Prometheus's up", `sum(up{job=~".+"})`, nil},
		{"a name misspelled", `rate(exopower_soc_energy_joule_total[5m])`, []string{"exopower_soc_energy_joule_total", "(no known metric)"}},
		{"a name exopower never had", `sum(rate(exopower_cpu_energy_joules_total[5m])) / exopower_soc_energy_joules_total`, []string{"exopower_cpu_energy_joules_total"}},
		{"another exporter's", `node_cpu_seconds_total - on (instance) exopower_covered_seconds_total`, []string{"node_cpu_seconds_total"}},
		{"no metric at all", `vector(1)`, []string{"(no known metric)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unknownMetrics(tc.expr, known); !slices.Equal(got, tc.want) {
				t.Errorf("unknownMetrics(%s) = %q, want %q", tc.expr, got, tc.want)
			}
		})
	}
}

// grafanaVars stands in for Grafana: its variables, as they are when the
// dashboard shows every job and every Mac, and its intervals, as Grafana
// sets them for a scrape interval of 1 s ($__rate_interval is at least four
// scrape intervals) over the range the test scraped.
func grafanaVars(expr string, rangeSeconds int) string {
	return strings.NewReplacer(
		"$__rate_interval", "4s", "${__rate_interval}", "4s",
		"$__range", fmt.Sprintf("%ds", rangeSeconds), "${__range}", fmt.Sprintf("%ds", rangeSeconds),
		"$__interval", "1s", "${__interval}", "1s",
		"${job}", ".+", "$job", ".+", "${node}", ".+", "$node", ".+", "${instance}", ".+", "$instance", ".+",
	).Replace(expr)
}

// serveMetricNames are the metric names a serve's /metrics lists.
func serveMetricNames(t *testing.T, url string, into map[string]bool) {
	t.Helper()
	body, _ := get(t, url+"/metrics", "")
	for _, l := range strings.Split(string(body), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, _, _ := strings.Cut(l, "{")
		name, _, _ = strings.Cut(name, " ")
		into[name] = true
	}
}

// The rules and the dashboard against a real Prometheus (Debian's, 2.42)
// scraping two serves every second, one over powermetrics at 12.5 W (CPU 10,
// GPU 2, ANE 0.5), behind a metered plug at 30 W, and one over IOReport at 4.25 W of SoC, with the memory's
// and the whole Mac's power, and its apps' energy (--apps), and evaluating
// rules.yml and alerts.yml every second:
//   - every rule is healthy (Prometheus evaluated it without an error, such
//     as two series on one side of a match), every recording rule gives
//     data, and no alert fires;
//   - every query of the dashboard, with Grafana's variables and intervals
//     put in, returns data, and names only metrics that serve exports (as
//     its /metrics lists them), rules.yml's, or Prometheus's up; the
//     variables' label_values list both serves;
//   - the fleet's SoC power is the two serves' 16.75 W, within 10 % (a rate
//     over 4 s of scrapes whose phase against the windows is free).
func TestHeavyDashboardAndRulesAgainstARealPrometheus(t *testing.T) {
	t.Parallel()
	heavytest.Skip(t) // its time goes to Prometheus or Python and to exopower's processes: .ci/run runs it without the race detector
	prometheus := needTool(t, "prometheus")
	const rangeSeconds = 6
	// mac1 is behind a metered plug (--wall), for the wall's rules.
	_, plugURL := plug(t, fakeplug.ShellyGen2, func(c *fakeplug.Config) { c.Profile = fakeplug.Constant(30) })
	pm := startServe(t, "0=10,2,0.5", nil, "-i", "100ms", "--node-name", "mac1", "--wall", plugURL)
	// mac2 counts its apps, over the fake Mac's processes (serve --apps).
	io := startServe(t, "0=3,1,0.25", []string{"EXOPOWER_FAKE_IOREPORT=1", fakepm.ProcessesEnv + "=mac"}, "--source", "ioreport", "-i", "100ms", "--node-name", "mac2", "--apps")
	awaitMetric(t, pm.addr, "exopower_soc_power_watts")
	awaitMetric(t, pm.addr, "exopower_wall_power_watts")
	awaitMetric(t, io.addr, "exopower_system_power_watts")
	awaitMetric(t, io.addr, `exopower_app_energy_joules_total{app="other",component="cpu",node_name="mac2"}`)
	known := map[string]bool{"up": true}
	serveMetricNames(t, pm.url, known)
	serveMetricNames(t, io.url, known)
	records := recordedNames(t)
	for _, r := range records {
		known[r] = true
	}
	// The rules' own names, checked as the dashboard's are.
	for _, f := range []string{rulesFile, alertsFile} {
		for _, g := range readRules(t, f).Groups {
			for _, r := range g.Rules {
				if u := unknownMetrics(r.Expr, known); len(u) != 0 {
					t.Errorf("%s: %s%s names what exopower does not export: %q", f, r.Record, r.Alert, u)
				}
			}
		}
	}

	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"+
		"rule_files: ['%s', '%s']\nscrape_configs:\n  - job_name: exopower\n    static_configs:\n      - targets: ['%s', '%s']\n",
		abs(rulesFile), abs(alertsFile), pm.addr, io.addr)
	base := startPrometheusWith(t, prometheus, config)

	// Wait for the range's scrapes of both serves and for every rule's
	// evaluation on them.
	var at float64
	deadline := time.Now().Add(2 * time.Minute) // a hang guard only
	for {
		at = float64(time.Now().Add(-1500*time.Millisecond).UnixMilli()) / 1e3
		scraped := 0
		for _, s := range promQuery(t, base, fmt.Sprintf("exopower_covered_seconds_total[%ds]", rangeSeconds), at) {
			if len(s.Samples) >= rangeSeconds {
				scraped++
			}
		}
		missing := ""
		for _, r := range records {
			if len(promQuery(t, base, r, at)) == 0 {
				missing = r
				break
			}
		}
		if scraped == 2 && missing == "" && rulesEvaluated(t, base) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("two minutes on, Prometheus has %d of 2 serves scraped for %d s, and no %s", scraped, rangeSeconds, missing)
		}
		time.Sleep(200 * time.Millisecond)
	}

	for _, r := range prometheusRules(t, base) {
		if r.Health != "ok" || r.LastError != "" {
			t.Errorf("rule %s: health %q: %s", r.Name, r.Health, r.LastError)
		}
		if r.Type == "alerting" && r.State == "firing" {
			t.Errorf("alert %s fires over two healthy serves", r.Name)
		}
	}

	d := readDashboard(t)
	for _, q := range d.queries() {
		expr := grafanaVars(q.expr, rangeSeconds)
		if strings.Contains(expr, "$") {
			t.Errorf("%s: a variable the test does not know: %s", q.where, expr)
			continue
		}
		if u := unknownMetrics(expr, known); len(u) != 0 {
			t.Errorf("%s names what exopower does not export: %q in %s", q.where, u, q.expr)
		}
		res := promQuery(t, base, expr, at)
		if len(res) == 0 {
			t.Errorf("%s returns no data: %s", q.where, expr)
			continue
		}
		t.Logf("%s: %d series, first %v = %v", q.where, len(res), res[0].Metric, res[0].Samples)
	}
	fleet := promQuery(t, base, grafanaVars(d.queries()[0].expr, rangeSeconds), at)
	if len(fleet) != 1 || !strings.Contains(d.queries()[0].expr, "exopower_soc_energy_joules_total") {
		t.Fatalf("the first query, %s, is not the fleet's SoC power: %v", d.queries()[0].expr, fleet)
	}
	if got := fleet[0].Samples[0].V; percentOff(got, 16.75) > 10 || percentOff(got, 16.75) < -10 {
		t.Errorf("the fleet's SoC power %.3f W, true 16.75 W", got)
	} else {
		t.Logf("the fleet's SoC power %.4f W, true 16.75 W (%+.3f %%)", got, percentOff(got, 16.75))
	}

	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)["query"].(string)
		m := regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`).FindStringSubmatch(q)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(SELECTOR, LABEL)", v.Name, q)
			continue
		}
		if u := unknownMetrics(grafanaVars(m[1], rangeSeconds), known); len(u) != 0 {
			t.Errorf("variable %s names what exopower does not export: %q", v.Name, u)
		}
		body, _ := get(t, base+"/api/v1/label/"+m[2]+"/values?"+url.Values{"match[]": {grafanaVars(m[1], rangeSeconds)}}.Encode(), "")
		var r struct{ Data []string }
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{"job": {"exopower"}, "instance": {io.addr, pm.addr}}[m[2]]
		sort.Strings(want)
		if !slices.Equal(r.Data, want) {
			t.Errorf("variable %s: %s gives %q, want %q", v.Name, q, r.Data, want)
		}
	}
}

// promRule is a rule as Prometheus's /api/v1/rules tells of it.
type promRule struct {
	Name, Type, Health, LastError, State string
}

func prometheusRules(t *testing.T, base string) []promRule {
	t.Helper()
	body, _ := get(t, base+"/api/v1/rules", "")
	var r struct {
		Data struct{ Groups []struct{ Rules []promRule } }
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	var rules []promRule
	for _, g := range r.Data.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}

// rulesEvaluated says that Prometheus has evaluated every rule at least once.
func rulesEvaluated(t *testing.T, base string) bool {
	t.Helper()
	rules := prometheusRules(t, base)
	for _, r := range rules {
		if r.Health == "unknown" {
			return false
		}
	}
	return len(rules) > 0
}

// startPrometheusWith runs a Prometheus server with config on a free
// loopback port and a storage of its own, and returns its URL once it is
// ready. It is stopped when the test ends.
func startPrometheusWith(t *testing.T, prometheus, config string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	var log syncBuffer
	cmd := exec.Command(prometheus, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(time.Minute): // a hang guard only
			cmd.Process.Kill()
			<-exited
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(time.Minute) // a hang guard only
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("prometheus ended before it was ready: %v\n%s", err, log.String())
		default:
		}
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after a minute:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer that a process's output goroutine writes
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// docExample is the code block that follows the line <!-- example: name -->
// in the document at path (docs/integration.md, docs/llm.md), as it
// stands.
func docExample(t *testing.T, path, name string) string {
	t.Helper()
	doc := string(mustRead(t, path))
	marker := "\n<!-- example: " + name + " -->\n"
	if strings.Count(doc, marker) != 1 {
		t.Fatalf("%s: %d lines %q, want one", path, strings.Count(doc, marker), strings.TrimSpace(marker))
	}
	_, after, _ := strings.Cut(doc, marker)
	fence, rest, _ := strings.Cut(after, "\n")
	if !strings.HasPrefix(fence, "```") {
		t.Fatalf("%s: the line after %q is %q, not a code block's fence", path, strings.TrimSpace(marker), fence)
	}
	code, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatalf("%s: the code block after %q never ends", path, strings.TrimSpace(marker))
	}
	return code + "\n"
}

// recorder is a proxy in front of a serve that keeps what the serve
// answered to each span's end: the truth the examples' printed figures are
// held to.
type recorder struct {
	url  string
	mu   sync.Mutex
	ends []endAnswer
}

type endAnswer struct {
	body    []byte
	reading wire.Reading
}

func startRecorder(t *testing.T, target string) *recorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if !strings.HasSuffix(resp.Request.URL.Path, "/end") {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		var end endAnswer
		end.body = b
		if err := json.Unmarshal(b, &end.reading); err != nil {
			return fmt.Errorf("the end's answer %q: %v", b, err)
		}
		r.mu.Lock()
		r.ends = append(r.ends, end)
		r.mu.Unlock()
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *recorder) endAnswers() []endAnswer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ends)
}

// inference stands in for an inference server: each request takes 0.8 s
// and is answered with JSON, or with 500 when failing is set; it keeps when
// each request began and ended.
type inference struct {
	url     string
	failing bool
	mu      sync.Mutex
	times   [][2]time.Time
}

func startInference(t *testing.T, failing bool) *inference {
	t.Helper()
	inf := &inference{failing: failing}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		io.Copy(io.Discard, r.Body)
		time.Sleep(800 * time.Millisecond) // the request's work, not a wait for something
		inf.mu.Lock()
		inf.times = append(inf.times, [2]time.Time{began, time.Now()})
		inf.mu.Unlock()
		if inf.failing {
			http.Error(w, `{"error":"out of memory"}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"text":"Rayleigh scattering."}]}`)
	}))
	t.Cleanup(srv.Close)
	inf.url = srv.URL + "/v1/completions"
	return inf
}

func (inf *inference) requests() [][2]time.Time {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return slices.Clone(inf.times)
}

// exampleServes are the examples' two Macs: mac1 over IOReport, whose
// spans give the whole Mac's energy, and mac2 over powermetrics at a
// stepped profile, the SoC's only.
func exampleServes(t *testing.T) (io, pm *served) {
	t.Helper()
	io = startServe(t, ioProfile, []string{"EXOPOWER_FAKE_IOREPORT=1"}, "--source", "ioreport", "-i", "100ms", "--node-name", "mac1")
	pm = startServe(t, fleetStepped, nil, "-i", "100ms", "--node-name", "mac2")
	return io, pm
}

// fleetStepped is mac2's power: steps that a span's edges placed wrong
// would show.
const fleetStepped = "period=0.9 0=5,2,1 0.5=14,6,2.5"

// holdSpan holds a span's end, as serve answered it to an example, to the
// fake's exact energy over the span (the whole Mac's over IOReport, the
// SoC's over powermetrics, within 0.5 %), and checks that the request
// lies inside it. It returns the energy the example should print and its
// scope.
func holdSpan(t *testing.T, end wire.Reading, request [2]time.Time) (float64, string) {
	t.Helper()
	if end.Summary == nil || end.Open || end.Coverage != 1 || len(end.Warnings) != 0 {
		t.Fatalf("%s's span: %+v; want it ended, covered, without warnings", end.Node, end)
	}
	from, to := spanOf(t, end.StartedAt, float64(end.DurationSeconds))
	if !from.Before(request[0]) || !to.After(request[1]) {
		t.Errorf("%s's span %s – %s does not hold the request, %s – %s", end.Node,
			from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), request[0].Format(time.RFC3339Nano), request[1].Format(time.RFC3339Nano))
	}
	t.Logf("%s: the span began %v before the request and ended %v after it", end.Node, request[0].Sub(from), to.Sub(request[1]))
	if end.EnergyJoules.System != nil {
		holdIO(t, end.Node+"'s span", end.Summary, 0.5)
		return float64(*end.EnergyJoules.System), "system"
	}
	prof, err := fakepm.ParseProfile(fleetStepped)
	if err != nil {
		t.Fatal(err)
	}
	// 1 %, as run_accuracy.txtar holds a run: powermetrics's windows are
	// placed by their arrival, which a loaded machine delays, and the
	// profile steps within the span (0.79 % off once, under load).
	within(t, end.Node+"'s span: SoC energy", float64(end.EnergyJoules.Total), prof.Energy(from, to).Total(), 1)
	return float64(end.EnergyJoules.Total), "soc"
}

// openSpans is how many spans a serve holds open now.
func openSpans(t *testing.T, s *served) float64 {
	t.Helper()
	return scrapeMetrics(t, s.url)["exopower_open_spans"]
}

// docs/integration.md's Python example, run as it stands with python3
// against two serves through recording proxies, around one request to a
// stand-in inference server: each Mac's line is the energy its serve
// answered (the whole Mac's where it reads the SMC, else the SoC's),
// within the example's four decimals, and the total their sum; each span
// is the fake's exact energy over it and holds the request. A request that
// fails still ends both spans, and the example exits with Python's error.
func TestThePythonExampleMeasuresEachRequest(t *testing.T) {
	t.Parallel()
	python := needTool(t, "python3")
	script := filepath.Join(t.TempDir(), "joules.py")
	if err := os.WriteFile(script, []byte(docExample(t, integrationMD, "python")), 0o644); err != nil {
		t.Fatal(err)
	}
	io, pm := exampleServes(t)
	serves := map[string]*served{"mac1": io, "mac2": pm}
	rio, rpm := startRecorder(t, io.url), startRecorder(t, pm.url)
	run := func(inf *inference) ([]byte, error) {
		cmd := exec.Command(python, script)
		cmd.Env = append(os.Environ(), "EXOPOWER_NODES="+rio.url+" "+rpm.url, "INFERENCE_URL="+inf.url)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			err = fmt.Errorf("%v: %s", err, stderr.Bytes())
		}
		return out, err
	}

	inf := startInference(t, false)
	out, err := run(inf)
	if err != nil {
		t.Fatalf("python3 %s: %v\n%s", script, err, out)
	}
	t.Logf("the example printed:\n%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 || len(inf.requests()) != 1 {
		t.Fatalf("%d lines and %d requests, want a line per Mac and the total, and one request:\n%s", len(lines), len(inf.requests()), out)
	}
	node := regexp.MustCompile(`^(\S+): ([0-9.]+) J \((system|soc)\) in ([0-9.]+) s, coverage 1\.000$`)
	var printedSum, trueSum float64
	for i, rec := range []*recorder{rio, rpm} {
		ends := rec.endAnswers()
		if len(ends) != 1 {
			t.Fatalf("%d ends through the proxy of serve %d, want 1", len(ends), i)
		}
		end := ends[0].reading
		want, scope := holdSpan(t, end, inf.requests()[0])
		m := node.FindStringSubmatch(lines[i])
		if m == nil || m[1] != end.Node || m[3] != scope {
			t.Fatalf("line %q; want %s's energy (%s) in the form %s", lines[i], end.Node, scope, node)
		}
		got, _ := strconv.ParseFloat(m[2], 64)
		if diff := got - want; diff > 5e-5 || diff < -5e-5 {
			t.Errorf("%s: printed %s J, serve answered %v J", end.Node, m[2], want)
		}
		printedSum += got
		trueSum += want
	}
	total := regexp.MustCompile(`^([0-9.]+) J per request over 2 Macs$`).FindStringSubmatch(lines[2])
	if total == nil {
		t.Fatalf("last line %q, want the total per request over 2 Macs", lines[2])
	}
	if got, _ := strconv.ParseFloat(total[1], 64); got-trueSum > 5e-5 || trueSum-got > 5e-5 {
		t.Errorf("printed %s J per request; the serves' spans sum to %v J (the lines to %.4f)", total[1], trueSum, printedSum)
	}

	// A request that fails ends the spans all the same.
	failing := startInference(t, true)
	out, err = run(failing)
	if err == nil || !strings.Contains(err.Error(), "HTTP Error 500") {
		t.Errorf("the example over a failing request: %v, printed %q; want Python's HTTP Error 500", err, out)
	}
	for name, s := range serves {
		if n := openSpans(t, s); n != 0 {
			t.Errorf("%s holds %v spans open after a request that failed", name, n)
		}
	}
	if len(rio.endAnswers()) != 2 || len(rpm.endAnswers()) != 2 {
		t.Errorf("%d and %d spans ended, want 2 on each", len(rio.endAnswers()), len(rpm.endAnswers()))
	}

}

// Over one Mac, as most first runs are, the Python example's total is
// "over 1 Mac", and the Mac's own energy.
func TestThePythonExampleCountsOneMac(t *testing.T) {
	t.Parallel()
	python := needTool(t, "python3")
	script := filepath.Join(t.TempDir(), "joules.py")
	if err := os.WriteFile(script, []byte(docExample(t, integrationMD, "python")), 0o644); err != nil {
		t.Fatal(err)
	}
	pm := startServe(t, fleetStepped, nil, "-i", "100ms", "--node-name", "mac2")
	cmd := exec.Command(python, script)
	cmd.Env = append(os.Environ(), "EXOPOWER_NODES="+pm.url, "INFERENCE_URL="+startInference(t, false).url)
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 2 {
		t.Fatalf("%v, printed\n%s\nwant a line for the Mac and the total", err, out)
	}
	m := regexp.MustCompile(`^mac2: ([0-9.]+) J \(soc\) in `).FindStringSubmatch(lines[0])
	if m == nil || lines[1] != m[1]+" J per request over 1 Mac" {
		t.Errorf("the example printed\n%s\nwant the Mac's energy, then %q", out, "... J per request over 1 Mac")
	}
}

// docs/integration.md's curl example, run as it stands with sh (no jq)
// against each serve through a recording proxy: it prints the energy the
// serve answered, as serve wrote it (the whole Mac's over IOReport, the
// SoC's over powermetrics), and the span's length; the span is the fake's
// exact energy and holds the request. A request that fails ends the span
// all the same, and the example exits with curl's status for it (22).
func TestTheCurlExampleMeasuresARequest(t *testing.T) {
	t.Parallel()
	sh := needTool(t, "sh")
	needTool(t, "curl")
	script := filepath.Join(t.TempDir(), "joules.sh")
	if err := os.WriteFile(script, []byte(docExample(t, integrationMD, "curl")), 0o644); err != nil {
		t.Fatal(err)
	}
	io, pm := exampleServes(t)
	printed := regexp.MustCompile(`^(\S+) J per request \((system|soc)\) in ([0-9.]+) s$`)
	for _, s := range []*served{io, pm} {
		rec := startRecorder(t, s.url)
		inf := startInference(t, false)
		cmd := exec.Command(sh, script)
		// No jq on the path the example runs with: sed does without.
		cmd.Env = append(os.Environ(), "EXOPOWER_NODE="+rec.url, "INFERENCE_URL="+inf.url)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() != 0 {
			t.Fatalf("sh %s: %v\n%s%s", script, err, out, stderr.Bytes())
		}
		t.Logf("the example printed: %s", out)
		ends := rec.endAnswers()
		if len(ends) != 1 || len(inf.requests()) != 1 {
			t.Fatalf("%d ends, %d requests; want one each", len(ends), len(inf.requests()))
		}
		want, scope := holdSpan(t, ends[0].reading, inf.requests()[0])
		m := printed.FindStringSubmatch(strings.TrimSpace(string(out)))
		if m == nil || m[2] != scope {
			t.Fatalf("printed %q; want the %s energy in the form %s", out, scope, printed)
		}
		if got, err := strconv.ParseFloat(m[1], 64); err != nil || got != want {
			t.Errorf("printed %s J, serve answered %v J (%s)", m[1], want, ends[0].body)
		}
		if got, _ := strconv.ParseFloat(m[3], 64); got != float64(ends[0].reading.DurationSeconds) {
			t.Errorf("printed %s s, serve answered %v s", m[3], ends[0].reading.DurationSeconds)
		}
	}

	rec := startRecorder(t, pm.url)
	failing := startInference(t, true)
	cmd := exec.Command(sh, script)
	cmd.Env = append(os.Environ(), "EXOPOWER_NODE="+rec.url, "INFERENCE_URL="+failing.url)
	out, err := cmd.Output()
	if code := exitCode(t, err); code != 22 {
		t.Errorf("the example over a failing request exited %d (%s); want curl's 22", code, out)
	}
	if len(rec.endAnswers()) != 1 || openSpans(t, pm) != 0 {
		t.Errorf("%d spans ended and %v open after a request that failed; want its span ended", len(rec.endAnswers()), openSpans(t, pm))
	}
}
