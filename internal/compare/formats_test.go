package compare

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/output"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// benchmarkResult is github-action-benchmark's BenchmarkResult (its
// src/extract.ts), the entry of a customSmallerIsBetter file: name,
// value and unit required, range and extra optional strings.
type benchmarkResult struct {
	Name  *string  `json:"name"`
	Value *float64 `json:"value"`
	Range *string  `json:"range"`
	Unit  *string  `json:"unit"`
	Extra *string  `json:"extra"`
}

// bmfMetric is a metric of the Bencher Metric Format's JSON schema
// (bencher.dev/bmf.json): value required, lower_value and upper_value
// optional numbers.
type bmfMetric struct {
	Value      *float64 `json:"value"`
	LowerValue *float64 `json:"lower_value"`
	UpperValue *float64 `json:"upper_value"`
}

func decodeStrict(t *testing.T, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
}

// The pair the format tests render: a command that costs 10 % more for
// 10 % more work (its energy regressed, its energy per token unchanged),
// one unchanged, one in the old export alone.
func formatsPair(t *testing.T) (old, new *Export, rep *Report) {
	units := spread(100, 0)
	old = benchOf{idle: idleWatts, se: 0.0001, unit: "token", commands: []command{
		{name: "gzip -k big", net: spread(2, 0.01), units: units}, {name: "zstd | tee", net: spread(1, 0.01), units: units}, {name: "gone", net: spread(1, 0.01), units: units},
	}}.load(t, "main.json")
	new = benchOf{idle: idleWatts, se: 0.0001, unit: "token", commands: []command{
		{name: "gzip -k big", net: spread(2.2, 0.01), units: spread(110, 0)}, {name: "zstd | tee", net: spread(1, 0.01), units: units},
	}}.load(t, "pr.json")
	rep, err := Compare(old, new, Defaults)
	if err != nil {
		t.Fatal(err)
	}
	return old, new, rep
}

// github-action-benchmark's customSmallerIsBetter: an array of
// BenchmarkResult, each with its name, unit and value (the new mean), its
// range (± σ) and extra; read back by the type the action documents.
func TestGitHubBenchmarkIsCustomSmallerIsBetter(t *testing.T) {
	_, new, rep := formatsPair(t)
	var buf bytes.Buffer
	if err := WriteGitHubBenchmark(&buf, new, rep, 0.05); err != nil {
		t.Fatal(err)
	}
	var got []benchmarkResult
	decodeStrict(t, buf.Bytes(), &got)
	if len(got) != 4 {
		t.Fatalf("%d entries, want the energy and the energy per token of 2 commands:\n%s", len(got), buf.Bytes())
	}
	for _, r := range got {
		if r.Name == nil || r.Value == nil || r.Unit == nil || r.Range == nil || r.Extra == nil {
			t.Fatalf("entry %+v lacks a field", r)
		}
	}
	if *got[0].Name != "gzip -k big (net energy)" || *got[0].Unit != "J" || !nearly(*got[0].Value, 2.2) || !strings.HasPrefix(*got[0].Range, "± ") ||
		!strings.Contains(*got[0].Extra, "against main.json: +10.0 %, regressed") {
		t.Errorf("first entry %s %s %v %s %q", *got[0].Name, *got[0].Unit, *got[0].Value, *got[0].Range, *got[0].Extra)
	}
	if *got[1].Name != "gzip -k big (net energy per token)" || *got[1].Unit != "J/token" || !nearly(*got[1].Value, 0.02) {
		t.Errorf("second entry %s %s %v", *got[1].Name, *got[1].Unit, *got[1].Value)
	}
}

// Bencher's BMF: benchmark, then measure slug, then {value, lower_value,
// upper_value}: the new mean and its 95 % interval; read back by the
// format's schema, each measure's slug within Bencher's 64 characters.
func TestBencherIsBMF(t *testing.T) {
	_, new, _ := formatsPair(t)
	var buf bytes.Buffer
	if err := WriteBencher(&buf, new, 0.05); err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]bmfMetric
	decodeStrict(t, buf.Bytes(), &got)
	m, ok := got["gzip -k big"]["net-energy"]
	if !ok || len(got) != 2 || len(got["zstd | tee"]) != 2 {
		t.Fatalf("got %s", buf.Bytes())
	}
	lo, hi := MeanInterval(*new.Benchmarks[0].Figures[0].Net, 0.05)
	if m.Value == nil || !nearly(*m.Value, 2.2) || m.LowerValue == nil || !nearly(*m.LowerValue, lo) || !nearly(*m.UpperValue, hi) || !(lo < 2.2 && 2.2 < hi) {
		t.Errorf("net-energy %+v, want 2.2 within [%v, %v]", m, lo, hi)
	}
	for name, ms := range got {
		for slug, m := range ms {
			if len(slug) > 64 || m.Value == nil || *m.LowerValue > *m.Value || *m.Value > *m.UpperValue {
				t.Errorf("%s: %s %+v", name, slug, m)
			}
		}
	}
	if _, ok := got["gzip -k big"]["net-energy-per-token"]; !ok {
		t.Errorf("no net-energy-per-token: %s", buf.Bytes())
	}
}

// The history formats keep one measure per figure: the net one where
// the export has a baseline, the gross one where it has none.
func TestHistoriesAreGrossWithoutABaseline(t *testing.T) {
	e := benchOf{commands: []command{{name: "a", net: spread(1, 0.01)}}}.load(t, "a.json")
	var buf bytes.Buffer
	if err := WriteBencher(&buf, e, 0.05); err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]bmfMetric
	decodeStrict(t, buf.Bytes(), &got)
	if m, ok := got["a"]["energy"]; !ok || !nearly(*m.Value, 1+idleWatts) || len(got["a"]) != 1 {
		t.Errorf("got %s, want the gross energy alone", buf.Bytes())
	}
}

// The Markdown for a pull request leads with the verdicts, regressed
// first, and folds the details; a command's pipe does not break its
// table.
func TestMarkdownLeadsWithTheVerdicts(t *testing.T) {
	_, _, rep := formatsPair(t)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	golden(t, "compare.md", md)
	details := strings.Index(md, "<details>")
	if !strings.HasPrefix(md, "### exopower compare: 1 regressed, 3 unchanged\n") || details < 0 || !strings.HasSuffix(md, "</details>\n") {
		t.Fatalf("markdown:\n%s", md)
	}
	verdicts := md[:details]
	if i, j := strings.Index(verdicts, "**regressed**"), strings.Index(verdicts, "| unchanged"); i < 0 || j < 0 || i > j {
		t.Errorf("the regression does not lead the verdicts:\n%s", verdicts)
	}
	if !strings.Contains(verdicts, "`zstd \\| tee`") || !strings.Contains(verdicts, "Only in `main.json`, not compared: `gone`.") {
		t.Errorf("verdicts:\n%s", verdicts)
	}
}

// The text is bench's: a block per figure, then the summary.
func TestTextIsBenchsStyle(t *testing.T) {
	_, _, rep := formatsPair(t)
	rep.Warnings = []string{"the Macs differ"}
	var out, errw bytes.Buffer
	if err := WriteText(&out, &errw, rep, &output.Styles{Plain: true}, &output.Styles{Plain: true}); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.txt", out.String())
	if errw.String() != "exopower: warning: the Macs differ\n" {
		t.Errorf("stderr %q", errw.String())
	}
}

// golden holds got to testdata/NAME, which -update rewrites.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from what was written (go test -update rewrites it):\n%s", path, got)
	}
}

// Where compare judged the gross energy, OLD's net being too near idle,
// the history keeps the net figure, and its extra says the change and
// the verdict of the gross one it compared.
func TestAHistoryOfANetNearIdleSaysTheGrossVerdict(t *testing.T) {
	old := benchOf{idle: idleWatts, se: 0.001, commands: []command{{name: "sleep", net: spread(0, 0.002)}}}
	new := benchOf{idle: idleWatts, se: 0.001, commands: []command{{name: "sleep", net: spread(0.001, 0.002)}}}
	oe, ne := old.load(t, "old.json"), new.load(t, "new.json")
	rep, err := Compare(oe, ne, Defaults)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteGitHubBenchmark(&buf, ne, rep, 0.05); err != nil {
		t.Fatal(err)
	}
	var got []benchmarkResult
	decodeStrict(t, buf.Bytes(), &got)
	if len(got) != 1 || *got[0].Name != "sleep (net energy)" || !strings.Contains(*got[0].Extra, "against old.json: +0.0 %, unchanged (of the gross energy: the old net could not be told from idle)") {
		t.Errorf("%s", buf.Bytes())
	}
}
