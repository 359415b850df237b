//go:build release

// The builds of the release script and the formula take the CPU for
// tens of seconds: .ci/run runs them as a step of their own (go test
// -tags release), not inside the race-detected suite.

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFormulaRuns checks the formula's Ruby, where ruby is installed: its
// syntax, the service it declares, and its test block run against an
// exopower stamped with the formula's version, as brew test would.
func TestFormulaRuns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ruby"); err != nil {
		t.Skip("no ruby to check the formula with")
	}
	if b, err := exec.Command("ruby", "-c", formulaPath).CombinedOutput(); err != nil {
		t.Fatalf("ruby -c: %v\n%s", err, b)
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7", "-o", filepath.Join(dir, "exopower"), ".")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	shim := filepath.Join(dir, "shim.rb")
	if err := os.WriteFile(shim, []byte(formulaShim), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command("ruby", shim, formulaPath)
	run.Env = append(os.Environ(), "BIN="+dir)
	b, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the formula's test block: %v\n%s", err, b)
	}
	out := string(b)
	for _, want := range []string{
		"service run /opt/homebrew/opt/exopower/bin/exopower serve\n",
		"service require_root true\n",
		"service log_path /opt/homebrew/var/log/exopower.log\n",
		"test passed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// formulaShim loads a formula outside Homebrew: the class-level DSL is
// ignored but for the service block, whose calls are printed, and the
// test block runs against the exopower in BIN.
const formulaShim = `
require "pathname"
require "tmpdir"
class Formula
  class << self
    attr_reader :service_block, :test_block
    def service(&blk) = @service_block = blk
    def test(&blk) = @test_block = blk
    def method_missing(*) = nil
    def respond_to_missing?(*) = true
  end
  Version = Struct.new(:to_s) do
    def head? = false
  end
  attr_reader :testpath
  def initialize(testpath) = @testpath = testpath
  def bin = Pathname(ENV.fetch("BIN"))
  def opt_bin = Pathname("/opt/homebrew/opt/exopower/bin")
  def var = Pathname("/opt/homebrew/var")
  def version = Version.new("9.8.7")
  def shell_output(cmd, status = 0)
    out = ` + "`#{cmd}`" + `
    raise "#{cmd}: exit #{$?.exitstatus}, want #{status}" unless $?.exitstatus == status
    out
  end
  def assert_match(want, got)
    raise "#{want.inspect} does not match #{got.inspect}" unless want.is_a?(Regexp) ? want.match?(got) : got.include?(want)
  end
end
class ServiceCalls
  def method_missing(name, *args) = puts("service #{name} #{args.flatten.map(&:to_s).join(" ")}")
  def respond_to_missing?(*) = true
  def opt_bin = Pathname("/opt/homebrew/opt/exopower/bin")
  def var = Pathname("/opt/homebrew/var")
end
load ARGV[0]
ServiceCalls.new.instance_exec(&Exopower.service_block)
Dir.mktmpdir { |d| Exopower.new(Pathname(d)).instance_exec(&Exopower.test_block) }
puts "test passed"
`
