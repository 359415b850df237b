package main

import (
	"os"
	"path/filepath"
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
