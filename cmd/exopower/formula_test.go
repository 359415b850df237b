package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// formulaPath is the Homebrew formula, where a tap keeps it.
var formulaPath = filepath.Join("..", "..", "Formula", "exopower.rb")

// TestFormulaText holds the formula to what Homebrew needs of it: a Go
// build from source with the version stamped in, the completions, the man
// pages, a service that runs exopower serve as root, and a test block.
func TestFormulaText(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(formulaPath)
	if err != nil {
		t.Fatal(err)
	}
	f := string(b)
	for _, want := range []string{
		"class Exopower < Formula",
		`depends_on "go" => :build`,
		`system "go", "build", *std_go_args(ldflags:), "./cmd/exopower"`,
		"-X main.version=v#{version}",
		`generate_completions_from_executable(bin/"exopower", "completion")`,
		`man1.install Dir["man/*.1"]`,
		"service do",
		`run [opt_bin/"exopower", "serve"]`,
		"require_root true",
		"log_path var/",
		"error_log_path var/",
		"test do",
	} {
		if !strings.Contains(f, want) {
			t.Errorf("the formula has no %s", want)
		}
	}
	test := f[strings.Index(f, "test do"):]
	for _, never := range []string{"sudo", "powermetrics\"", "serve"} {
		if strings.Contains(test, never) {
			t.Errorf("the formula's test block uses %s: it runs without root or powermetrics", never)
		}
	}
	if m, _ := filepath.Glob(filepath.Join("..", "..", "man", "*.1")); len(m) == 0 {
		t.Error("man/ holds no pages for the formula to install: run scripts/man.sh")
	}
}

// The formula installs deploy/'s Prometheus rules, alerts and their tests,
// and the Grafana dashboard, under share/exopower (pkgshare): every file
// it names is there, and every file there is named.
func TestFormulaInstallsTheRulesAndTheDashboard(t *testing.T) {
	t.Parallel()
	f := string(mustRead(t, formulaPath))
	for _, want := range []string{`(pkgshare/"prometheus").install`, `(pkgshare/"grafana").install`, "def caveats"} {
		if !strings.Contains(f, want) {
			t.Errorf("the formula has no %s", want)
		}
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(deploy/[^"]+)"`).FindAllStringSubmatch(f, -1) {
		named[m[1]] = true
		if _, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(m[1]))); err != nil {
			t.Errorf("the formula installs %s: %v", m[1], err)
		}
	}
	there, err := filepath.Glob(filepath.Join("..", "..", "deploy", "*", "*"))
	if err != nil || len(there) == 0 {
		t.Fatalf("deploy/ holds nothing: %v", err)
	}
	for _, p := range there {
		rel := filepath.ToSlash(strings.TrimPrefix(p, filepath.Join("..", "..")+string(filepath.Separator)))
		if !named[rel] {
			t.Errorf("the formula does not install %s", rel)
		}
	}
}

// The formula's test block expects of exopower report --json what it
// writes: the same two windows as the block writes (CPU 5 W and GPU 2 W
// for 100 ms each), reported here, hold the block's expected text. The
// block runs only under brew test, or TestFormulaRuns where ruby is; this
// test runs everywhere. It expected the energy without dram and system
// after report had begun to write them.
func TestTheFormulasTestBlockExpectsWhatReportWrites(t *testing.T) {
	t.Parallel()
	f := string(mustRead(t, formulaPath))
	m := regexp.MustCompile(`assert_match '(\{?"energy_joules"[^']*)', output`).FindStringSubmatch(f)
	if m == nil {
		t.Fatal(`the formula's test block has no assert_match '"energy_joules":...', output`)
	}
	window := func(second int) string {
		return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict>" +
			"<key>elapsed_ns</key><integer>100000000</integer>" +
			fmt.Sprintf("<key>timestamp</key><date>2026-01-01T00:00:0%dZ</date>", second) +
			"<key>processor</key><dict><key>cpu_energy</key><integer>500</integer>" +
			"<key>gpu_energy</key><integer>200</integer><key>ane_energy</key><integer>0</integer></dict>" +
			"</dict></plist>\n\x00"
	}
	cmd, dir := exopowerCmd(t)
	two := filepath.Join(dir, "two.plist")
	if err := os.WriteFile(two, []byte(window(1)+window(2)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Args = append(cmd.Args, "report", "--json", two)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exopower report --json: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), m[1]) {
		t.Errorf("the formula's test block expects %s; exopower report --json writes:\n%s", m[1], out)
	}
}
