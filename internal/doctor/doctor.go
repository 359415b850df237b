// Package doctor checks that exopower can measure on this machine (macOS,
// Apple Silicon, powermetrics, the privileges to run it, one test sample)
// and whether an exopower serve answers, and says how to fix each check
// that fails. Each check reads the machine through a system, so that a
// test can make every one of them fail.
package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// CheckAddr refuses a --serve that names no place to look.
func CheckAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if n, perr := strconv.Atoi(port); err == nil && (perr != nil || n < 1 || n > 65535) {
		err = fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	if err != nil {
		return cli.Fail(fmt.Errorf("--serve %s: %w", addr, err), "give the host:port that exopower serve --listen was given, such as "+wire.DefaultListen)
	}
	return nil
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
	// ioreport takes a test sample from IOReport and the SMC; sideBySide
	// measures with both sources at once, as root.
	ioreport   func(ctx context.Context) check
	sideBySide func(ctx context.Context, path string) check
	// processes opens the kernel's accounting of processes, for run
	// --attribute.
	processes func() (attrib.Kernel, error)
	// serveAddr is where an exopower serve is looked for, and get is how
	// its status is fetched.
	serveAddr string
	get       func(ctx context.Context, url string) (*http.Response, error)
	// wall checks the plug of --wall; nil without it.
	wall func(ctx context.Context) check
	// adapter reads a MacBook's adapter, for information, where there is
	// no --wall; nil but on macOS.
	adapter func(ctx context.Context) check
}

func liveSystem(open source.OpenIOReport, processes func() (attrib.Kernel, error)) system {
	name := "USERNAME"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return system{goos: runtime.GOOS, euid: os.Geteuid(), user: name, lookPath: exec.LookPath, output: runOutput, sample: checkSample,
		ioreport:   func(ctx context.Context) check { return checkIOReport(ctx, open) },
		sideBySide: func(ctx context.Context, path string) check { return compareSources(ctx, path, open, 3*time.Second) },
		serveAddr:  wire.DefaultListen, get: httpGet, processes: processes, adapter: adapterOn(runtime.GOOS)}
}

// adapterOn is plain doctor's look at a MacBook's adapter: on macOS alone.
func adapterOn(goos string) func(context.Context) check {
	if goos != "darwin" {
		return nil
	}
	return checkAdapter
}

// httpGet fetches url directly, never through a proxy: the serve looked
// for is on this machine or one the user named.
func httpGet(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return (&http.Client{Transport: &http.Transport{}}).Do(req)
}

// check is one line of the doctor's report.
type check struct {
	name   string
	ok     bool
	info   bool // ok, and only for information: an optional part is absent
	detail string
	fixes  []string
}

// Run checks that exopower can measure on this machine with the
// powermetrics at path and with IOReport (opened by open; nil is the
// real one), compares the two as root, says whether an exopower serve
// answers at serveAddr, and, with w, reads the plug at the wall. It writes a line per check, with the fixes
// of each that failed, to s.Out, and fails with status 1 when a check
// fails.
func Run(ctx context.Context, s *cli.Streams, serveAddr, path string, open source.OpenIOReport, processes func() (attrib.Kernel, error), w *Wall) error {
	sys := liveSystem(open, processes)
	sys.serveAddr = serveAddr
	if w != nil {
		sys.wall = func(ctx context.Context) check { return checkWall(ctx, *w, wall.DefaultInterval, open) }
	}
	return run(ctx, s, sys, path)
}

func run(ctx context.Context, s *cli.Streams, sys system, path string) error {
	checks := []check{sys.checkMacOS(ctx), sys.checkAppleSilicon(ctx), sys.checkPowermetrics(path), sys.checkPrivileges(ctx, path), sys.sample(ctx, path),
		sys.ioreport(ctx), sys.compare(ctx, path), sys.checkProcesses(), sys.checkServe(ctx)}
	switch {
	case sys.wall != nil:
		checks = append(checks, sys.wall(ctx))
	case sys.adapter != nil:
		checks = append(checks, sys.adapter(ctx))
	}
	st := output.NewStyles(s.Out, s.OutTTY, s.Getenv)
	failed := 0
	for _, c := range checks {
		mark := st.Render(st.Total, "ok  ")
		switch {
		case !c.ok:
			mark = st.Render(st.Warn, "FAIL")
			failed++
		case c.info:
			mark = st.Render(st.Label, "info")
		}
		fmt.Fprintf(s.Out, "%s  %-14s %s\n", mark, c.name, c.detail)
		for _, f := range c.fixes {
			fmt.Fprintf(s.Out, "      %-14s %s\n", "", "fix: "+f)
		}
	}
	if failed > 0 {
		return &cli.Error{Status: 1, Err: fmt.Errorf("%d of %d checks failed", failed, len(checks))}
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
	meter, err := source.Start(ctx, source.Options{Kind: source.Powermetrics, Path: path, Interval: interval, Rerun: "exopower doctor"})
	if err != nil {
		c.detail = err.Error()
		c.fixes = cli.HintsOf(err)
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

// serveTimeout bounds the wait for a serve's status, which it answers at
// once: what takes longer is not an exopower serve.
const serveTimeout = time.Second

// checkServe says whether an exopower serve answers at sys.serveAddr. A
// serve is optional: none there is information. Something else there is a
// failure, since it keeps a serve from listening there.
func (sys system) checkServe(ctx context.Context) check {
	c := check{name: "serve"}
	ctx, cancel := context.WithTimeout(ctx, serveTimeout)
	defer cancel()
	_, port, _ := net.SplitHostPort(sys.serveAddr)
	lsof := "see what listens there: sudo lsof -nP -iTCP:" + port + " -sTCP:LISTEN"
	resp, err := sys.get(ctx, "http://"+sys.serveAddr+"/v1/status")
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		c.ok, c.info = true, true
		c.detail = "not running: nothing listens at " + sys.serveAddr + " (optional: sudo exopower serve publishes energy counters for Prometheus)"
		return c
	case errors.Is(err, context.DeadlineExceeded):
		c.detail = fmt.Sprintf("something at %s took connections but gave no answer within %v", sys.serveAddr, serveTimeout)
		c.fixes = []string{lsof}
		return c
	case err != nil:
		c.detail = fmt.Sprintf("something at %s is no exopower serve: %v", sys.serveAddr, err)
		c.fixes = []string{lsof}
		return c
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	st, ok := readServeStatus(resp, body)
	if !ok {
		c.detail = fmt.Sprintf("something else answers at %s: %s", sys.serveAddr, describeAnswer(resp, body))
		c.fixes = []string{"exopower serve listens there by default: stop that program, or give exopower serve --listen (and exopower doctor --serve) another address", lsof}
		return c
	}
	up := time.Duration(float64(st.UptimeSeconds) * float64(time.Second)).Round(time.Second)
	c.ok, c.detail = true, fmt.Sprintf("exopower serve answers at %s: node %s, up %v", sys.serveAddr, st.Node, up)
	if st.RestartError != nil {
		c.detail += fmt.Sprintf(", powermetrics started again %d times, last: %s", st.Restarts, *st.RestartError)
	}
	return c
}

// readServeStatus reads an answer as exopower serve's status, and says
// whether it is one.
func readServeStatus(resp *http.Response, body []byte) (wire.Status, bool) {
	var st wire.Status
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || media != "application/json" || json.Unmarshal(body, &st) != nil {
		return st, false
	}
	return st, st.Node != "" && st.Source.Tool != ""
}

// describeAnswer names what answered: its status, server, type and the
// start of its body.
func describeAnswer(resp *http.Response, body []byte) string {
	parts := []string{"HTTP " + resp.Status}
	if v := resp.Header.Get("Server"); v != "" {
		parts = append(parts, "Server "+v)
	}
	if v := resp.Header.Get("Content-Type"); v != "" {
		parts = append(parts, v)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
	if r := []rune(first); len(r) > 60 {
		first = string(r[:60]) + "..."
	}
	return strings.Join(append(parts, strconv.Quote(first)), ", ")
}

// checkIOReport takes a test sample from IOReport and the SMC, which need
// no root. Where they do not answer, powermetrics still measures: that is
// information, not a failure.
func checkIOReport(ctx context.Context, open source.OpenIOReport) check {
	c := check{name: "ioreport"}
	interval := 200 * time.Millisecond
	meter, err := source.Start(ctx, source.Options{Kind: source.IOReport, IOReport: open, Interval: interval})
	if err != nil {
		c.ok, c.info = true, true
		c.detail = "not available (" + err.Error() + "): exopower measures with powermetrics, as root"
		return c
	}
	span := meter.Begin(ctx, nil)
	res := meter.Finish(ctx, span, span.Start.Add(interval))
	c.ok = res.Samples > 0
	c.detail = fmt.Sprintf("no root needed: SoC %s", output.Watts(res.Average.Total))
	if res.Has.DRAM {
		c.detail += ", DRAM " + output.Watts(res.Average.DRAM)
	}
	if res.Has.System {
		c.detail += ", system " + output.Watts(res.Average.System) + " (the SMC's PSTR)"
	} else {
		c.detail += "; no SMC answers (a virtual machine?): no system power"
	}
	return c
}

// compare runs compareSources as root, where both sources can run.
func (sys system) compare(ctx context.Context, path string) check {
	if sys.euid != 0 {
		return check{name: "side by side", ok: true, info: true, detail: "as root (sudo exopower doctor), the two sources are compared"}
	}
	return sys.sideBySide(ctx, path)
}

// tolerance is how far the two sources' energies may differ: they read
// the same counters, but powermetrics rounds to whole millijoules and
// places its windows by their arrival.
const tolerance = 0.10

// compareSources measures the same span with powermetrics and IOReport
// at once, for d, and holds their CPU, GPU and ANE energies against each
// other; it names the system's power beside the SoC's.
func compareSources(ctx context.Context, path string, open source.OpenIOReport, d time.Duration) check {
	c := check{name: "side by side"}
	interval := 100 * time.Millisecond
	pm, err := source.Start(ctx, source.Options{Kind: source.Powermetrics, Path: path, Interval: interval, Rerun: "exopower doctor"})
	if err != nil {
		c.ok, c.info, c.detail = true, true, "powermetrics did not start: nothing to compare"
		return c
	}
	io, err := source.Start(ctx, source.Options{Kind: source.IOReport, IOReport: open, Interval: interval})
	if err != nil {
		pm.Stop()
		c.ok, c.info, c.detail = true, true, "IOReport is not available: nothing to compare"
		return c
	}
	a, b := pm.Begin(ctx, nil), io.Begin(ctx, nil)
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	end := time.Now()
	rb, ra := io.Finish(ctx, b, end), pm.Finish(ctx, a, end)
	return compared(ra, rb)
}

// compared says how far the two sources' energies are apart.
func compared(pm, io sampler.Result) check {
	c := check{name: "side by side", ok: true}
	var parts []string
	for _, p := range []struct {
		name   string
		pm, io float64
	}{{"CPU", pm.Energy.CPU, io.Energy.CPU}, {"GPU", pm.Energy.GPU, io.Energy.GPU}, {"ANE", pm.Energy.ANE, io.Energy.ANE}} {
		part := fmt.Sprintf("%s %s / %s", p.name, output.Joules(p.pm), output.Joules(p.io))
		// Below a tenth of a joule, the millijoules' rounding alone
		// makes a ratio.
		if p.pm >= 0.1 || p.io >= 0.1 {
			ratio := p.io / p.pm
			part += fmt.Sprintf(" (%.3f)", ratio)
			if math.Abs(ratio-1) > tolerance {
				c.ok = false
			}
		}
		parts = append(parts, part)
	}
	c.detail = "powermetrics / ioreport over " + output.Seconds(pm.Duration.Seconds()) + ": " + strings.Join(parts, ", ")
	if io.Has.System {
		c.detail += fmt.Sprintf("; the system draws %s beside the SoC's %s", output.Watts(io.Average.System), output.Watts(io.Average.Total))
	}
	if !c.ok {
		c.fixes = []string{fmt.Sprintf("the sources read the same counters and should agree within %.0f%%: run exopower record and report the readings with the output of this doctor", 100*tolerance)}
	}
	return c
}
