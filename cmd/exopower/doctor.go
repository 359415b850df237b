package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/output"
)

type doctorOptions struct {
	powermetrics string
}

func newDoctorCmd(s *streams) *cobra.Command {
	var o doctorOptions
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check that exopower can measure on this machine, and say how to fix what is missing",
		Long: `Check the macOS version, Apple Silicon, powermetrics, the privileges to run it
(root, or sudo -n) and one test sample, with the fix for each failure. Exits 0
when every check passes and 1 when one fails.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := cancelOnSignal(c.Context(), s.Signals)
			defer stop()
			return runDoctor(ctx, s, liveSystem(), powermetricsPath(o.powermetrics, s.Getenv))
		},
	}
	addPowermetricsFlag(c, &o.powermetrics)
	return c
}

// system is what the doctor asks of the machine, so that a test can make
// each check fail.
type system struct {
	goos     string
	euid     int
	user     string // the user's name, for the sudoers line
	lookPath func(string) (string, error)
	// output runs a command and returns its trimmed stdout.
	output func(ctx context.Context, name string, args ...string) (string, error)
	// sample takes a test sample from the powermetrics at path.
	sample func(ctx context.Context, path string) check
}

func liveSystem() system {
	name := "USERNAME"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return system{goos: runtime.GOOS, euid: os.Geteuid(), user: name, lookPath: exec.LookPath, output: runOutput, sample: checkSample}
}

// check is one line of the doctor's report.
type check struct {
	name   string
	ok     bool
	detail string
	fixes  []string
}

func runDoctor(ctx context.Context, s *streams, sys system, path string) error {
	checks := []check{sys.checkMacOS(ctx), sys.checkAppleSilicon(ctx), sys.checkPowermetrics(path), sys.checkPrivileges(ctx, path), sys.sample(ctx, path)}
	st := output.NewStyles(s.Out, s.OutTTY, s.Getenv)
	failed := 0
	for _, c := range checks {
		mark := st.Render(st.Total, "ok  ")
		if !c.ok {
			mark = st.Render(st.Warn, "FAIL")
			failed++
		}
		fmt.Fprintf(s.Out, "%s  %-14s %s\n", mark, c.name, c.detail)
		for _, f := range c.fixes {
			fmt.Fprintf(s.Out, "      %-14s %s\n", "", "fix: "+f)
		}
	}
	if failed > 0 {
		return &statusError{code: 1, err: fmt.Errorf("%d of %d checks failed", failed, len(checks))}
	}
	fmt.Fprintln(s.Out, "exopower can measure on this machine")
	return nil
}

func runOutput(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	return strings.TrimSpace(string(out)), err
}

func (sys system) checkMacOS(ctx context.Context) check {
	c := check{name: "macOS"}
	if sys.goos != "darwin" {
		c.detail = "this is " + sys.goos
		c.fixes = []string{"exopower measures on macOS; on " + sys.goos + ", exopower report reads a recording made on a Mac"}
		return c
	}
	v, err := sys.output(ctx, "sw_vers", "-productVersion")
	if err != nil {
		c.detail = fmt.Sprintf("sw_vers failed: %v", err)
		c.fixes = []string{"check that /usr/bin/sw_vers runs: exopower reads the macOS version from it"}
		return c
	}
	build, _ := sys.output(ctx, "sw_vers", "-buildVersion")
	c.ok, c.detail = true, fmt.Sprintf("%s (%s)", v, build)
	if major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0]); major < 13 {
		c.detail += "; older than macOS 13, whose powermetrics exopower is tested against"
	}
	return c
}

func (sys system) checkAppleSilicon(ctx context.Context) check {
	c := check{name: "Apple Silicon"}
	if sys.goos != "darwin" {
		c.detail = "not a Mac"
		c.fixes = []string{"run exopower on an Apple Silicon Mac (M1 or later)"}
		return c
	}
	brand, _ := sys.output(ctx, "sysctl", "-n", "machdep.cpu.brand_string")
	translated, _ := sys.output(ctx, "sysctl", "-n", "sysctl.proc_translated")
	switch {
	case translated == "1":
		c.detail = brand + ", but exopower runs under Rosetta"
		c.fixes = []string{"install the arm64 build: GOARCH=arm64 go install ./cmd/exopower"}
	case strings.HasPrefix(brand, "Apple"):
		c.ok, c.detail = true, brand
	default:
		c.detail = brand + ": an Intel Mac"
		c.fixes = []string{"exopower measures Apple Silicon only: Intel Macs report package power in another format"}
	}
	return c
}

func (sys system) checkPowermetrics(path string) check {
	c := check{name: "powermetrics"}
	abs, err := sys.lookPath(path)
	if err != nil {
		c.detail = fmt.Sprintf("not found at %s", path)
		c.fixes = []string{"macOS keeps it at /usr/bin/powermetrics; elsewhere, point --powermetrics or EXOPOWER_POWERMETRICS at a stand-in"}
		return c
	}
	c.ok, c.detail = true, abs
	return c
}

// checkPrivileges: root runs powermetrics itself; anyone else needs sudoers
// to let them run it without a password, which sudo -n -l answers without
// running it and without a prompt.
func (sys system) checkPrivileges(ctx context.Context, path string) check {
	c := check{name: "privileges"}
	if sys.euid == 0 {
		c.ok, c.detail = true, "root: exopower can run powermetrics and ask it for samples at the edges of a run"
		return c
	}
	abs, err := sys.lookPath(path)
	if err != nil {
		abs = path
	}
	if _, err := sys.output(ctx, "sudo", "-n", "-l", abs); err != nil {
		c.detail = fmt.Sprintf("not root, and sudo -n will not run %s without a password", abs)
		c.fixes = []string{"run exopower with sudo: sudo exopower ...",
			"or let your user run it through sudo without a password: add this line with sudo visudo -f /etc/sudoers.d/powermetrics:",
			"  " + sys.user + " ALL=(root) NOPASSWD: " + abs}
		return c
	}
	c.ok, c.detail = true, "not root: exopower runs powermetrics through sudo -n, which sudoers allows without a password"
	return c
}

func checkSample(ctx context.Context, path string) check {
	c := check{name: "test sample"}
	interval := 100 * time.Millisecond
	meter, err := startMeasuring(ctx, path, interval, "exopower doctor")
	if err != nil {
		c.detail = err.Error()
		var hinted interface{ Hints() []string }
		if errors.As(err, &hinted) {
			c.fixes = hinted.Hints()
		}
		return c
	}
	span := meter.Begin(ctx, nil)
	res := meter.End(ctx, span, span.Start.Add(interval))
	stopErr := meter.Stop()
	c.ok = res.Samples > 0 && stopErr == nil
	c.detail = fmt.Sprintf("%s over %v from %s, macOS build %s", output.Watts(res.Average.Total), res.Duration.Round(time.Millisecond), res.HWModel, res.OSBuild)
	if stopErr != nil {
		c.detail += "; powermetrics: " + stopErr.Error()
	}
	return c
}
