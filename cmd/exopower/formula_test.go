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
