// Command cpu-bench measures exopower watch's CPU as a ratio to the least
// a live meter can do (scripts/read-floor), on one source, on a shared and
// noisy machine, precisely enough to tell a change of 10 %.
//
// Each consumer reads a source of its own at the same interval: the floor,
// exopower watch --json and, with -vs, a second exopower build. Each one's
// CPU is read from /proc/PID/task/*/schedstat (the kernel's run time of
// each of its threads, in ns: no perf needed, nothing added to the process
// measured) after its first -skip windows and again -windows later, so
// that start-up and exit are left out, and divided by the lines it wrote
// meanwhile: a line is a window, on every consumer.
//
// A round runs the consumers at once, their starts spread over an interval
// (in a turning order) so that their wake-ups interleave rather than fall
// together, and reads all of them at the same instants: the ratio to the
// floor is taken block by block, over the same 10 windows of time, where
// the machine was the same for both, and the round's ratio is the median
// of its blocks'. A burst of other work on a shared machine slows every
// process on it for a while; paired this closely, it moves the ratio
// little. With -in-turn the consumers run one after the other instead
// (the ratio of adjacent runs), which measured too noisy here to tell
// 10 %, and is kept for machines where they disturb each other.
//
// Reported: the median of the rounds' ratios, the interval that holds the
// true median at 95 % or more (order statistics, which assume no shape of
// the noise), and the extremes. With -vs, the second build's ratio to the
// first too: against a build of the same code it should hold 1.
//
// Usage:
//
//	cpu-bench -source powermetrics -exopower BIN -fake FAKE -floor FLOOR [flags]
//	cpu-bench -source ioreport -exopower TESTBIN -floor FLOOR [flags]
//
// With -source ioreport, -exopower is cmd/exopower's test binary (go test
// -c), which runs as exopower when its argv[0] is exopower and reads the
// fake IOReport when EXOPOWER_FAKE_IOREPORT is set.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// config is the command line.
type config struct {
	source, exopower, vs, fake, floor, layout string
	interval                                  time.Duration
	rounds, windows, skip                     int
	inTurn                                    bool
}

func main() {
	var c config
	flag.StringVar(&c.source, "source", "powermetrics", "powermetrics (through -fake) or ioreport (its fake)")
	flag.StringVar(&c.exopower, "exopower", "", "the exopower binary (with -source ioreport: cmd/exopower's test binary)")
	flag.StringVar(&c.vs, "vs", "", "a second exopower build, measured as a third consumer and against the first")
	flag.StringVar(&c.fake, "fake", "", "the fake powermetrics (scripts/fake-powermetrics)")
	flag.StringVar(&c.floor, "floor", "", "scripts/read-floor")
	flag.StringVar(&c.layout, "layout", "m1", "the fake's chip (FAKEPM_LAYOUT): m1, pro or ultra")
	flag.DurationVar(&c.interval, "interval", 20*time.Millisecond, "the source's interval")
	flag.IntVar(&c.rounds, "rounds", 30, "rounds (30 or so tell a change of 10 % on a shared machine)")
	flag.IntVar(&c.windows, "windows", 250, "windows measured in each run")
	flag.IntVar(&c.skip, "skip", 20, "windows left out at the start of each run")
	flag.BoolVar(&c.inTurn, "in-turn", false, "run the consumers of a round one after the other, not at once")
	flag.Parse()
	if err := run(c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cpu-bench:", err)
		os.Exit(1)
	}
}

func run(c config, out io.Writer) error {
	consumers, err := c.consumers()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s, %d rounds of %d windows at %v (after %d left out), %s\n",
		c.source, c.rounds, c.windows, c.interval, c.skip, c.layoutWords())
	var rounds []round
	for r := range c.rounds {
		rd, err := c.round(consumers, r)
		if err != nil {
			return err
		}
		rounds = append(rounds, rd)
	}
	report(out, consumers, rounds)
	return nil
}

// round is what one round measured: each consumer's CPU a window, in ns,
// and each one's ratio to the floor (the first consumer), by consumer.
type round struct{ perWindow, ratio []float64 }

// round runs one round: all consumers at once, the r-th started first,
// or with -in-turn each consumer in turn, the r-th first.
func (c config) round(cs []consumer, r int) (round, error) {
	rd := round{perWindow: make([]float64, len(cs)), ratio: make([]float64, len(cs))}
	if !c.inTurn {
		var err error
		if rd.perWindow, err = measureTogether(cs, r, c.skip, c.windows, c.interval); err != nil {
			return rd, err
		}
	} else {
		for k := range cs {
			i := (k + r) % len(cs)
			ns, err := measure(cs[i], c.skip, c.windows)
			if err != nil {
				return rd, fmt.Errorf("%s: %w", cs[i].name, err)
			}
			rd.perWindow[i] = ns
		}
	}
	for i := range cs {
		rd.ratio[i] = rd.perWindow[i] / rd.perWindow[0]
	}
	return rd, nil
}

// layoutWords says which documents the fake wrote.
func layoutWords(source, layout string) string {
	if source == "ioreport" {
		return "the fake IOReport"
	}
	return "the fake powermetrics's " + layout + " documents"
}

func (c config) layoutWords() string { return layoutWords(c.source, c.layout) }

// consumer is a process to measure: the first is always the floor.
type consumer struct {
	name string
	cmd  func() *exec.Cmd
}

// consumers are the floor, exopower watch and, with -vs, the second build.
func (c config) consumers() ([]consumer, error) {
	if c.exopower == "" || c.floor == "" || (c.source == "powermetrics" && c.fake == "") {
		return nil, fmt.Errorf("-exopower, -floor and (with -source powermetrics) -fake are needed")
	}
	ms := fmt.Sprint(c.interval.Milliseconds())
	env := append(os.Environ(), "FAKEPM_PROFILE=0=8,3,0.5", "FAKEPM_LAYOUT="+c.layout)
	var floorArgs, watchArgs []string
	switch c.source {
	case "powermetrics":
		// The floor starts the fake with the arguments exopower gives
		// powermetrics, and exopower starts it as powermetrics.
		floorArgs = append([]string{c.fake}, "-f", "plist", "-b", "0", "-i", ms, "-s", "cpu_power,gpu_power,thermal")
		watchArgs = []string{"watch", "-i", ms + "ms", "--json"}
		env = append(env, "EXOPOWER_POWERMETRICS="+c.fake, "SUDO_UID=0", "SUDO_GID=0")
	case "ioreport":
		floorArgs = []string{"-ioreport", ms + "ms"}
		watchArgs = []string{"watch", "--source", "ioreport", "-i", ms + "ms", "--json"}
		env = append(env, "EXOPOWER_FAKE_IOREPORT=1")
	default:
		return nil, fmt.Errorf("-source %q: want powermetrics or ioreport", c.source)
	}
	mk := func(bin string, args []string) func() *exec.Cmd {
		return func() *exec.Cmd {
			cmd := exec.Command(bin, args...)
			if c.source == "ioreport" && bin != c.floor {
				cmd.Args[0] = "exopower" // the test binary runs as exopower by this name
			}
			cmd.Env = env
			return cmd
		}
	}
	cs := []consumer{{"read-floor (the floor)", mk(c.floor, floorArgs)}, {"exopower watch", mk(c.exopower, watchArgs)}}
	if c.vs != "" {
		cs = append(cs, consumer{"exopower watch (-vs)", mk(c.vs, watchArgs)})
	}
	return cs, nil
}

// report prints each consumer's CPU a window and its ratio to the floor
// (and, with -vs, the second build's to the first).
func report(out io.Writer, cs []consumer, rounds []round) {
	column := func(f func(round) float64) []float64 {
		xs := make([]float64, len(rounds))
		for r, rd := range rounds {
			xs[r] = f(rd)
		}
		return xs
	}
	fmt.Fprintf(out, "%-24s %22s  %s\n", "", "µs a window", "ratio: median [95% interval of the median] (min-max)")
	for i, c := range cs {
		us := spreadOf(column(func(rd round) float64 { return rd.perWindow[i] / 1e3 }))
		fmt.Fprintf(out, "%-24s %7.1f (%5.1f-%5.1f)", c.name, us.median, us.min, us.max)
		if i > 0 {
			fmt.Fprintf(out, "  x the floor %s", ratioWords(column(func(rd round) float64 { return rd.ratio[i] })))
		}
		fmt.Fprintln(out)
	}
	if len(cs) == 3 {
		vs := column(func(rd round) float64 { return rd.ratio[2] / rd.ratio[1] })
		fmt.Fprintf(out, "%-24s %22s  x the first build %s\n", cs[2].name, "", ratioWords(vs))
	}
}

func ratioWords(rs []float64) string {
	s := spreadOf(rs)
	interval := fmt.Sprintf("[%.3f-%.3f at %.1f%%]", s.lo, s.hi, 100*s.coverage)
	if s.coverage == 0 {
		interval = "[too few rounds for 95%]"
	}
	return fmt.Sprintf("%.3f %s (%.3f-%.3f)", s.median, interval, s.min, s.max)
}
