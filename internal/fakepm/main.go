package fakepm

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/powermetrics"
)

// Usage lists the environment variables that steer the fake.
const Usage = `fake powermetrics: takes powermetrics's -f -b -i -n -s -o flags and writes
the -f plist format with the power of a known profile, to stdout or to the
file of -o (--output-file). Like powermetrics, it writes a line of noise to
stderr as it starts ("proc_pidpath() for pid 1 failed with 3"): no error.

Environment:
  FAKEPM_PROFILE   power profile (default "` + DefaultProfile + `")
  FAKEPM_OVERRIDES file of spans at other powers, read again for each
                   window: lines of FROM_UNIX_NS TO_UNIX_NS cpu,gpu,ane
                   (the later line wins where spans overlap)
  FAKEPM_LAYOUT    cluster layout: m1, pro or ultra (default m1)
  FAKEPM_INDENT    1: indent the XML
  FAKEPM_SEED      seed of the uneven window lengths (default 1)
  FAKEPM_OFFLINE   1: simulate time and write the documents at once
  FAKEPM_PIDFILE   write the process id here
  FAKEPM_ARGSFILE  write the command line here
  FAKEPM_WRITE_BENCH_DOCS  write the benchmark documents to this folder and exit
  FAKEPM_MODE      comma-separated faults: notroot, needroot, empty, silent,
                   vm, ignore-signal, truncate-on-exit, die-after=N,
                   exit-after=N, garbage-after=N, stall-after=N (write
                   nothing more after N documents, yet stay running)
                   (needroot refuses unless root or FAKEPM_SUDOED=1, which a
                   stand-in sudo sets)
`

// Main runs the fake with args (the program name left out) and returns its
// exit status. It answers the sample signal (SIGINFO on macOS, SIGUSR1
// elsewhere) with a sample at once, and stops on SIGINT, SIGTERM or SIGHUP.
func Main(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	return run(args, stdout, stderr, getenv, os.Geteuid())
}

// run is Main for a process whose effective user id is euid, so that tests,
// which run as root in CI, can see needroot refuse an ordinary user.
func run(args []string, stdout, stderr io.Writer, getenv func(string) string, euid int) int {
	fl, ok := parseFlags(args, stderr)
	if !ok {
		return 64
	}
	if fl.help {
		fmt.Fprint(stdout, Usage)
		return 0
	}
	f, err := newFake(fl, stdout, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "fake powermetrics:", err)
		return 64
	}
	if dir := getenv("FAKEPM_WRITE_BENCH_DOCS"); dir != "" {
		if err := WriteBenchDocuments(dir); err != nil {
			fmt.Fprintln(stderr, "fake powermetrics:", err)
			return 1
		}
		return 0
	}
	offline := getenv("FAKEPM_OFFLINE") == "1"
	var sample, stop chan os.Signal
	if !offline {
		// Before the pid file: whoever reads it may signal the fake at
		// once, and a sample signal must not find it unprepared (SIGUSR1
		// would end it).
		sample, stop = f.signals()
	}
	if p := getenv("FAKEPM_PIDFILE"); p != "" {
		writePid(p)
	}
	if p := getenv("FAKEPM_ARGSFILE"); p != "" {
		os.WriteFile(p, []byte(strings.Join(args, " ")+"\n"), 0o644)
	}
	if f.notRoot || (f.needRoot && euid != 0 && getenv("FAKEPM_SUDOED") != "1") {
		fmt.Fprintln(stderr, "powermetrics must be invoked as the superuser")
		return 1
	}
	if fl.output != "" {
		// Made once the fake would write, as powermetrics makes it:
		// a fake that refuses leaves no file behind.
		file, err := os.Create(fl.output)
		if err != nil {
			fmt.Fprintln(stderr, "fake powermetrics:", err)
			return 1
		}
		defer file.Close()
		f.out = file
	}
	if f.empty {
		return 0
	}
	// Real powermetrics writes noise like this to stderr as it runs.
	fmt.Fprintln(stderr, "proc_pidpath() for pid 1 failed with 3")
	if offline {
		return f.offline(stderr)
	}
	return f.loop(sample, stop, stderr)
}

// flags are the powermetrics flags that the fake heeds.
type flags struct {
	interval time.Duration
	count    int
	samplers string
	output   string // a file to write to instead of stdout
	help     bool   // -h: the usage asked for, nothing else
}

// parseFlags reads powermetrics's flags. It reports false, having said why
// on stderr, for a command line that real powermetrics would take but the
// fake cannot serve, as well as for one neither would take.
func parseFlags(args []string, stderr io.Writer) (flags, bool) {
	fs := flag.NewFlagSet("powermetrics", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// The usage is printed below: to stdout when -h asks for it (no error,
	// status 0), to stderr after what is wrong with a bad command line.
	fs.Usage = func() {}
	format := fs.String("f", "text", "output format")
	fs.Int("b", 0, "buffer size")
	intervalMS := fs.Int("i", 5000, "sample interval in ms")
	count := fs.Int("n", 0, "number of samples (0: endless)")
	samplers := fs.String("s", "cpu_power,gpu_power,thermal", "samplers")
	output := fs.String("o", "", "output file")
	fs.StringVar(output, "output-file", "", "output file")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return flags{help: true}, true
	} else if err != nil {
		fmt.Fprint(stderr, Usage)
		return flags{}, false
	}
	if *format != "plist" {
		fmt.Fprintf(stderr, "fake powermetrics writes -f plist only, not %q\n", *format)
		return flags{}, false
	}
	if *intervalMS <= 0 {
		fmt.Fprintln(stderr, "fake powermetrics: -i 0 (samples on demand only) is not supported")
		return flags{}, false
	}
	return flags{interval: time.Duration(*intervalMS) * time.Millisecond, count: *count, samplers: *samplers, output: *output}, true
}

// newFake makes the fake that flags and the FAKEPM_ variables ask for.
func newFake(fl flags, stdout io.Writer, getenv func(string) string) (*fake, error) {
	f := &fake{
		out:      stdout,
		interval: fl.interval,
		count:    fl.count,
		samplers: map[string]bool{},
		layout:   Layouts["m1"],
		indent:   getenv("FAKEPM_INDENT") == "1",
		dieAfter: -1, exitAfter: -1, garbage: -1, stallAfter: -1,
	}
	for _, s := range strings.Split(fl.samplers, ",") {
		f.samplers[strings.TrimSpace(s)] = true
	}
	var err error
	if f.live.Profile, err = ParseProfile(or(getenv("FAKEPM_PROFILE"), DefaultProfile)); err != nil {
		return nil, err
	}
	f.live.Overrides = getenv(OverridesEnv)
	// A file that cannot be read is refused at the start, not after the
	// first window.
	if f.power, err = f.live.Read(); err != nil {
		return nil, err
	}
	if name := getenv("FAKEPM_LAYOUT"); name != "" {
		l, ok := Layouts[name]
		if !ok {
			return nil, fmt.Errorf("no layout %q (m1, pro, ultra)", name)
		}
		f.layout = l
	}
	seed, _ := strconv.ParseUint(or(getenv("FAKEPM_SEED"), "1"), 10, 64)
	f.rng = rand.New(rand.NewPCG(seed, 7))
	if err := f.modes(getenv("FAKEPM_MODE")); err != nil {
		return nil, err
	}
	return f, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

type fake struct {
	out      io.Writer
	interval time.Duration
	count    int
	samplers map[string]bool
	layout   Layout
	indent   bool
	// live is the power over time; power is it as of the last window
	// written.
	live      LivePower
	power     Power
	rng       *rand.Rand
	written   int
	buf       []byte
	notRoot   bool
	needRoot  bool
	empty     bool
	garbage   int
	silent    bool
	ignoreSig bool
	truncate  bool
	dieAfter  int
	exitAfter int
	// stallAfter: a powermetrics that hangs mid-stream, alive but silent.
	stallAfter int
}

func (f *fake) modes(s string) error {
	for _, m := range strings.Split(s, ",") {
		name, arg, _ := strings.Cut(strings.TrimSpace(m), "=")
		n, _ := strconv.Atoi(arg)
		switch name {
		case "":
		case "notroot":
			f.notRoot = true
		case "needroot":
			f.needRoot = true
		case "empty":
			f.empty = true
		case "garbage-after":
			f.garbage = n
		case "silent":
			f.silent = true
		case "vm":
			f.samplers = map[string]bool{}
		case "ignore-signal":
			f.ignoreSig = true
		case "truncate-on-exit":
			f.truncate = true
		case "die-after":
			f.dieAfter = n
		case "stall-after":
			f.stallAfter = n
		case "exit-after":
			f.exitAfter = n
		default:
			return fmt.Errorf("unknown FAKEPM_MODE %q", name)
		}
	}
	return nil
}

// windowLength returns the next window's length: a little longer than the
// interval, as real windows are, uneven, and shorter while power is high,
// so that a meter cannot get away with assuming even windows. The power
// is as of the last window written: a span added since then changes the
// energy of the next window, not its length.
func (f *fake) windowLength(at time.Time) time.Duration {
	k := 1.08 * (0.8 + 0.4*f.rng.Float64())
	if f.power.At(at).Total() > 20 {
		k *= 0.6
	}
	return time.Duration(float64(f.interval) * k)
}

// emit writes the document of the window [from, to]. It reports whether
// the fake should go on.
func (f *fake) emit(from, to time.Time, elapsed time.Duration, stderr io.Writer) (bool, int) {
	// The overrides are read once the window has closed, so that a span
	// added during the window counts.
	var err error
	if f.power, err = f.live.Read(); err != nil {
		fmt.Fprintln(stderr, "fake powermetrics:", err)
		return false, 1
	}
	d := Document{
		Elapsed:   elapsed,
		Timestamp: to,
		Energy:    f.power.Energy(from, to),
		Layout:    f.layout,
		OSBuild:   "23E224",
		Samplers:  f.samplers,
		Indent:    f.indent,
		GPUIdle:   1 - math.Min(1, f.power.At(from)[1]/10),
	}
	if f.written%4 == 3 {
		d.GPUIdle = math.NaN()
	}
	f.buf = f.buf[:0]
	if f.written > 0 {
		f.buf = append(f.buf, 0)
	}
	f.buf = d.Append(f.buf)
	if _, err := f.out.Write(f.buf); err != nil {
		return false, 1
	}
	f.written++
	if f.written == f.garbage {
		// Bytes that are no plist, ended as a document would be.
		f.out.Write([]byte("\x00\x01\xfe\xffnot a plist\x00garbage</plist>\n"))
	}
	if f.written == f.stallAfter {
		f.silent = true
	}
	switch {
	case f.written == f.dieAfter:
		fmt.Fprintln(stderr, "powermetrics: IOReportCreateSubscription failed (fake failure)")
		return false, 3
	case f.written == f.exitAfter, f.count > 0 && f.written >= f.count:
		return false, 0
	}
	return true, 0
}

// signals catches the signals that the online fake answers, as
// powermetrics does: the sample signal and the ones that stop it.
func (f *fake) signals() (sample, stop chan os.Signal) {
	sample, stop = make(chan os.Signal, 1), make(chan os.Signal, 1)
	if f.ignoreSig {
		signal.Ignore(powermetrics.SampleSignal)
	} else {
		signal.Notify(sample, powermetrics.SampleSignal)
	}
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	return sample, stop
}

// loop writes a document at the end of each window, or at once when asked
// on sample, until stop or the end that the flags and modes set. It takes
// the signals as channels so that tests can send them in-process.
func (f *fake) loop(sample, stop <-chan os.Signal, stderr io.Writer) int {
	prev := time.Now()
	for {
		var timer <-chan time.Time
		if !f.silent {
			timer = time.After(time.Until(prev.Add(f.windowLength(prev))))
		}
		select {
		case <-timer:
		case <-sample:
			if f.silent {
				continue
			}
		case <-stop:
			if f.truncate && !f.silent {
				f.writeTruncated()
			}
			return 0
		}
		now := time.Now()
		ok, code := f.emit(prev, now, now.Sub(prev), stderr)
		if !ok {
			return code
		}
		prev = now
	}
}

// writeTruncated writes the first half of a document, as powermetrics
// may when it is stopped in the middle of one.
func (f *fake) writeTruncated() {
	d := Document{Elapsed: f.interval, Timestamp: time.Now(), Layout: f.layout, Samplers: f.samplers}
	b := d.Append(nil)
	f.out.Write(append([]byte{0}, b[:len(b)/2]...))
}

// offlineStart is when an offline stream begins: fixed, so that fixtures
// come out the same every time.
var offlineStart = time.Date(2025, 7, 8, 5, 36, 24, 0, time.UTC)

func (f *fake) offline(stderr io.Writer) int {
	if f.count == 0 {
		f.count = 10
	}
	prev := offlineStart
	for {
		l := f.windowLength(prev)
		now := prev.Add(l)
		ok, code := f.emit(prev, now, l, stderr)
		if !ok {
			return code
		}
		prev = now
	}
}
