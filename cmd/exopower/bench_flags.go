package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/exopower/exopower/internal/access"
	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
)

// parameterLists are the -L flags, as a flag value that takes NAME and
// VALUES joined by a NUL (which no argument can hold):
// joinMultiWordFlags turns hyperfine's two words into that one.
type parameterLists []bench.ParameterList

func (p *parameterLists) String() string {
	var s []string
	for _, l := range *p {
		s = append(s, l.Name+" "+strings.Join(l.Values, ","))
	}
	return strings.Join(s, "; ")
}

func (p *parameterLists) Type() string { return "NAME VALUES" }

func (p *parameterLists) Set(v string) error {
	name, values, ok := strings.Cut(v, "\x00")
	if !ok {
		return errors.New("it takes a NAME and its VALUES, two words, such as -L n 1,2,3")
	}
	if err := checkParameterName(name, "-L n 1,2,3"); err != nil {
		return err
	}
	// A name given twice is refused with the plan, as hyperfine refuses
	// it, naming every such name.
	*p = append(*p, bench.ParameterList{Name: name, Values: bench.SplitValues(values)})
	return nil
}

func checkParameterName(name, example string) error {
	if name == "" || strings.ContainsAny(name, "{}") {
		return fmt.Errorf("%q is no parameter name: name it in letters, such as %s, and write {n} where it goes", name, example)
	}
	return nil
}

// parameterScan is -P NAME MIN MAX, its words joined by NULs.
type parameterScan struct{ name, min, max string }

func (p *parameterScan) String() string {
	if p.name == "" {
		return ""
	}
	return p.name + " " + p.min + " " + p.max
}

func (p *parameterScan) Type() string { return "NAME MIN MAX" }

func (p *parameterScan) Set(v string) error {
	w := strings.Split(v, "\x00")
	switch {
	case len(w) != 3:
		return errors.New("it takes a NAME, MIN and MAX, three words, such as -P n 1 8")
	case p.name != "":
		return errors.New("it is given twice: give one range, or -L's lists for every combination")
	}
	if err := checkParameterName(w[0], "-P n 1 8"); err != nil {
		return err
	}
	p.name, p.min, p.max = w[0], w[1], w[2]
	return nil
}

// multiWord are the flags of several words, as hyperfine takes them, and
// how many.
var multiWord = map[string]struct {
	long  string
	words int
	usage string
}{
	"-L": {"--parameter-list", 2, "a NAME and its VALUES, comma-separated, such as -L n 1,2,3"},
	"-P": {"--parameter-scan", 3, "a NAME, the least value and the most, such as -P n 1 8"},
}

// joinMultiWordFlags makes each -L NAME VALUES and -P NAME MIN MAX
// (hyperfine's forms, which a flag cannot take) one flag, its words
// joined by NULs. What follows -- is left as it is.
func joinMultiWordFlags(args []string) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		f, ok := multiWord[a]
		if !ok {
			for short, g := range multiWord {
				if a == g.long {
					f, ok, a = g, true, short
				}
			}
		}
		if !ok {
			out = append(out, a)
			continue
		}
		if i+f.words >= len(args) {
			return nil, fmt.Errorf("%s takes %s", a, f.usage)
		}
		out = append(out, f.long+"="+strings.Join(args[i+1:i+1+f.words], "\x00"))
		i += f.words
	}
	return out, nil
}

// refused are hyperfine's flags that exopower cannot honour, and why:
// they are refused, not taken and ignored.
var refused = []struct {
	long, short, why string
}{
	{"debug-mode", "", "--debug-mode: hyperfine's mode that fakes the times of sleep commands; exopower measures what runs, and has no such mode"},
	{"version", "V", "-V/--version: exopower bench has no version of its own; exopower version prints exopower's"},
}

func addRefusedFlags(c *cobra.Command) {
	for _, r := range refused {
		c.Flags().BoolP(r.long, r.short, false, r.why)
		c.Flags().MarkHidden(r.long)
	}
}

// parseBenchFlags parses bench's arguments itself (cobra's parsing is off,
// for -L's two words and -P's three) into o; help is true for --help.
func parseBenchFlags(c *cobra.Command, args []string, o *benchOptions) (help bool, err error) {
	args, err = joinMultiWordFlags(args)
	if err != nil {
		return false, cli.Fail(err, "usage: exopower bench [flags] COMMAND...")
	}
	if err := c.Flags().Parse(args); err != nil {
		var hints []string
		if strings.Contains(err.Error(), "'i' in -i") || strings.Contains(err.Error(), "-i, --interval") {
			hints = append(hints, "here -i is the sample interval, as in every exopower command; hyperfine's -i is --ignore-failure")
		}
		return false, flagFail(c, flagError(err), hints...)
	}
	if help, _ := c.Flags().GetBool("help"); help {
		return true, nil
	}
	o.set = map[string]bool{}
	c.Flags().Visit(func(f *pflag.Flag) { o.set[f.Name] = true })
	for _, r := range refused {
		if o.set[r.long] {
			return false, cli.Fail(errors.New(r.why), "exopower bench --help lists the flags it takes")
		}
	}
	o.commands = c.Flags().Args()
	o.unitsSet = o.set["units"]
	o.unitSet = o.set["unit"]
	return false, nil
}

// flagError is err, from parsing bench's flags, with hyperfine's words
// for a number it cannot read, and -L's and -P's words shown as they
// were given, not as the one value that joinMultiWordFlags made of them.
func flagError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
		return err
	}
	f, v := bad.GetFlag(), bad.GetValue()
	what := "is not a number"
	if ne := (*strconv.NumError)(nil); errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		what = "is out of range"
	}
	switch f.Value.Type() {
	case "int":
		if what == "is not a number" {
			what = "is not a whole number"
		}
		return &bench.HyperfineError{Sentence: fmt.Sprintf("Could not read numeric integer argument to '--%s'", f.Name), Detail: fmt.Sprintf(": %q %s", v, what)}
	case "float64":
		return &bench.HyperfineError{Sentence: fmt.Sprintf("Could not read numeric floating point argument to '--%s'", f.Name), Detail: fmt.Sprintf(": %q %s", v, what)}
	}
	if strings.Contains(v, "\x00") {
		return fmt.Errorf("-%s %s: %w", f.Shorthand, output.ShellQuote(strings.Split(v, "\x00")), errors.Unwrap(err))
	}
	return err
}

// validateRuns refuses run counts that cannot be kept, as hyperfine
// does.
func (o *benchOptions) validateRuns() error {
	const hint = "give --runs alone, or --min-runs and --max-runs"
	switch {
	case o.set["runs"] && (o.set["min-runs"] || o.set["max-runs"]):
		return cli.Fail(errors.New("--runs gives the count of runs: give it without --min-runs and --max-runs"), hint)
	case o.set["runs"] && o.runs < 1:
		return cli.Fail(fmt.Errorf("--runs %d: it takes at least 1", o.runs), "10 runs, the least by default, give a fair mean and spread")
	case o.set["min-runs"] && o.minRuns < 1:
		return cli.Fail(fmt.Errorf("--min-runs %d: it takes at least 1", o.minRuns), hint)
	case o.set["max-runs"] && o.maxRuns < 1:
		return cli.Fail(fmt.Errorf("--max-runs %d: it takes at least 1", o.maxRuns), hint)
	case o.set["min-runs"] && o.set["max-runs"] && o.minRuns > o.maxRuns:
		return cli.Fail(&bench.HyperfineError{Sentence: "Conflicting requirements for the number of runs (empty range, min is larger than max)",
			Detail: fmt.Sprintf(": --min-runs %d, --max-runs %d", o.minRuns, o.maxRuns)}, hint)
	case !(o.minTime >= 0) || math.IsInf(o.minTime, 1):
		return cli.Fail(fmt.Errorf("--min-benchmarking-time %v: it takes seconds, 0 or more", o.minTime), "3, the default, is hyperfine's")
	}
	return nil
}

// runBounds are the least and most runs of each command (0: no most),
// as hyperfine reads -r, -m and -M: -r gives both; without -m the least
// is 10, or -M when that is fewer.
func (o *benchOptions) runBounds() (least, most int) {
	if o.runs > 0 {
		return o.runs, o.runs
	}
	least, most = o.minRuns, o.maxRuns
	if least == 0 {
		least = defaultMinRuns
		if most > 0 {
			least = min(least, most)
		}
	}
	return least, most
}

// defaultMinRuns is hyperfine's least count of runs.
const defaultMinRuns = 10

// validateShell reads -S and -N, as hyperfine does: a shell's command
// line is split into words, "default" is sh, and "none" (-N) runs each
// command as its words.
func (o *benchOptions) validateShell() error {
	switch {
	case o.noShell && o.set["shell"]:
		return cli.Fail(errors.New("-N and --shell: give one of them (-N is --shell=none)"))
	case o.noShell || o.shell == "none":
		o.shellArgv = nil
	case o.shell == "default":
		o.shellArgv = []string{"sh"}
	default:
		words, err := bench.SplitWords(o.shell)
		if err != nil {
			return cli.Fail(&bench.HyperfineError{Sentence: "Failed to parse '--shell <command>' expression as command line",
				Detail: fmt.Sprintf(": %s: %v", output.ShellQuote([]string{o.shell}), err)}, `give the shell as a command line, such as --shell "bash --norc"`)
		}
		if len(words) == 0 || words[0] == "" {
			return cli.Fail(&bench.HyperfineError{Sentence: "An empty command has been specified for the '--shell <command>' option",
				Detail: fmt.Sprintf(": %s names no program", output.ShellQuote([]string{o.shell}))}, "give a shell, such as --shell bash, or --shell=none for none")
		}
		o.shellArgv = words
	}
	return nil
}

// argv is the command line that runs the command c: the shell's words
// with -c and c, or without a shell c's words.
func (o *benchOptions) argv(c string) ([]string, error) {
	if o.shellArgv != nil {
		return append(slices.Clip(o.shellArgv), "-c", c), nil
	}
	words, err := bench.SplitWords(c)
	if err != nil {
		return nil, cli.Fail(&bench.HyperfineError{Sentence: fmt.Sprintf("Failed to parse command '%s'", c),
			Detail: fmt.Sprintf(": %v (--shell=none splits it into words as a shell would)", err)},
			"close the quote, or escape it with a backslash, as in a shell")
	}
	return words, nil
}

// validateFailures reads --ignore-failure[=CODES].
func (o *benchOptions) validateFailures() error {
	o.failures = bench.Failures{}
	switch {
	case !o.set["ignore-failure"]:
		return nil
	case o.ignoreFailure == "" || o.ignoreFailure == "all-non-zero":
		o.failures.All = true
		return nil
	}
	for _, c := range strings.Split(o.ignoreFailure, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(c), 10, 32)
		if err != nil {
			return cli.Fail(&bench.HyperfineError{Sentence: "Could not read numeric integer argument to '--ignore-failure'",
				Detail: fmt.Sprintf(": %q is no exit status", c)},
				"give statuses, such as --ignore-failure=1,2, or none: --ignore-failure ignores any")
		}
		o.failures.Codes = append(o.failures.Codes, int(n))
	}
	return nil
}

// validateStyle checks the choices of --style, --sort and --time-unit,
// and the flags that cannot go together.
func (o *benchOptions) validateStyle() error {
	for _, c := range []struct {
		flag, value string
		allowed     []string
	}{
		{"--style", o.style, []string{"", "auto", "basic", "full", "nocolor", "color", "none"}},
		{"--sort", o.sort, []string{"", bench.SortAuto, bench.SortCommand, "mean-time", bench.SortMean}},
		{"--time-unit", o.timeUnit, []string{"", bench.TimeMicrosecond, bench.TimeMillisecond, bench.TimeSecond}},
	} {
		if !slices.Contains(c.allowed, c.value) {
			return cli.Fail(fmt.Errorf("%s %s: it takes %s", c.flag, c.value, strings.Join(slices.DeleteFunc(c.allowed, func(s string) bool { return s == "" }), ", ")))
		}
	}
	switch {
	case o.showOutput && o.set["style"]:
		return cli.Fail(errors.New("--show-output and --style: give one of them, as for hyperfine"), "the commands' output would break the progress line and the colours")
	case o.showOutput && len(o.outputs) > 0:
		return cli.Fail(errors.New("--show-output and --output: give one of them (--show-output is --output=inherit)"))
	}
	for _, e := range o.exports() {
		if e.path == "-" && o.json {
			return cli.Fail(fmt.Errorf("--json and %s -: both write to stdout", e.flag), "give the export a file, or leave out --json")
		}
	}
	return nil
}

// progress says whether the style lets the progress line be drawn
// (on a terminal): not where a command's output goes to the terminal.
func (o *benchOptions) progress() bool {
	switch o.style {
	case "basic", "color", "none":
		return false
	}
	return !slices.ContainsFunc(o.jobs, func(j bench.Job) bool { return j.Output.Kind == bench.OutputInherit })
}

// styles are the styles of text written to w (tty: a terminal) as
// --style says: auto colours a terminal unless NO_COLOR or CI; full and
// color, as in hyperfine, colour w whatever it is (in the colours TERM
// allows); basic and nocolor never.
func (o *benchOptions) styles(w io.Writer, tty bool, getenv func(string) string) *output.Styles {
	switch o.style {
	case "basic", "nocolor":
		return output.NewStyles(w, false, getenv)
	case "full", "color":
		return output.NewStyles(w, true, func(k string) string {
			if k == "NO_COLOR" || k == "CI" {
				return ""
			}
			return getenv(k)
		})
	}
	return output.NewStyles(w, tty, getenv)
}

// sortOrder is --sort for the report: hyperfine's mean-time is the mean
// energy's order here.
func (o *benchOptions) sortOrder() string {
	if o.sort == "mean-time" {
		return bench.SortMean
	}
	return o.sort
}

// makeJobs makes the jobs from the commands, -L or -P, -n, the hooks and
// --output, with hyperfine's rules of counts and order.
func (o *benchOptions) makeJobs() error {
	lists := []bench.ParameterList(o.params)
	switch {
	case o.set["parameter-scan"] && len(lists) > 0:
		return cli.Fail(errors.New("-P and -L: give one of them, as for hyperfine"), "-L's lists give every combination; -L n 1,2,3 is -P n 1 3")
	case o.set["parameter-scan"]:
		values, err := bench.ScanValues(o.scan.min, o.scan.max, o.step)
		if err != nil {
			return cli.Fail(err)
		}
		lists = []bench.ParameterList{{Name: o.scan.name, Values: values}}
	case o.set["parameter-step-size"]:
		return cli.Fail(errors.New("-D is the step of -P's range: give -P too"), "such as -P t 0.1 0.5 -D 0.1")
	}
	outputs, err := o.outputPolicies()
	if err != nil {
		return err
	}
	plan := bench.Plan{Commands: o.commands, Reference: o.reference, ReferenceName: o.referenceName, Names: o.names,
		Lists: lists, Setup: o.setup, Cleanup: o.cleanup, Prepare: o.prepare, Conclude: o.conclude, Outputs: outputs}
	if o.jobs, err = plan.Jobs(); err != nil {
		return cli.Fail(err, "exopower bench --help says what each flag takes")
	}
	if o.input != "null" {
		o.inputPath = o.input // "" too: the null device
	}
	return nil
}

// outputPolicies read --output (or --show-output): once for all, or once
// for each job.
func (o *benchOptions) outputPolicies() ([]bench.Output, error) {
	switch {
	case o.showOutput:
		return []bench.Output{{Kind: bench.OutputInherit}}, nil
	case len(o.outputs) == 0:
		return []bench.Output{{Kind: bench.OutputNull}}, nil
	}
	var out []bench.Output
	for _, w := range o.outputs {
		switch w {
		case "null":
			out = append(out, bench.Output{Kind: bench.OutputNull})
		case "pipe":
			out = append(out, bench.Output{Kind: bench.OutputPipe})
		case "inherit":
			out = append(out, bench.Output{Kind: bench.OutputInherit})
		default:
			// As hyperfine: a file is named with a directory, so that
			// a misspelt way is not taken for a file.
			if !strings.Contains(strings.TrimRight(w, "/"), "/") {
				return nil, cli.Fail(&bench.HyperfineError{Sentence: fmt.Sprintf("Unknown output policy '%s'. Use './%s' to output to a file named '%s'.", w, w, w),
					Detail: " --output takes null, pipe, inherit or a file named with its directory"})
			}
			out = append(out, bench.Output{Kind: bench.OutputFile, Path: w})
		}
	}
	return out, nil
}

// checkFiles refuses, before anything runs, an export or --output file
// that cannot be written and an --input that cannot be read, by the user
// the commands run as.
func (o *benchOptions) checkFiles(id child.Identity) error {
	for _, e := range o.exports() {
		if e.path == "-" {
			continue
		}
		if err := output.CheckPath(e.flag, e.path, id.Cred); err != nil {
			return err
		}
	}
	for _, j := range o.jobs {
		if j.Output.Kind == bench.OutputFile {
			if err := output.CheckPath("--output", j.Output.Path, id.Cred); err != nil {
				return err
			}
		}
	}
	if o.inputPath == "" {
		return nil
	}
	f, err := access.Open(o.inputPath, id.Cred)
	const hint = "name a file that the commands' user may read, or null"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return cli.Fail(&bench.HyperfineError{Sentence: fmt.Sprintf("The file '%s' specified as '--input' does not exist", o.inputPath)}, hint)
	case err != nil:
		return cli.Fail(fmt.Errorf("--input: %w", err), hint)
	}
	return f.Close()
}

// validateUnits refuses units of work that cannot be counted, and
// compiles --units-from.
func (o *benchOptions) validateUnits() error {
	const hint = "--units 512 --unit token, or --units-from 'generated ([0-9]+) tokens' --unit token"
	switch {
	case o.unitsSet && !(o.units > 0):
		return cli.Fail(fmt.Errorf("--units %v: it takes the count of units of work in one run, above 0", o.units), hint)
	case o.unitsSet && o.unitsFrom != "":
		return cli.Fail(errors.New("--units and --units-from: give one of them"), hint)
	case o.unit == "" || strings.ContainsAny(o.unit, "\n|"):
		return cli.Fail(fmt.Errorf("--unit %q: it takes a name, such as token", o.unit), hint)
	case o.unitSet && !o.unitsSet && o.unitsFrom == "":
		return cli.Fail(fmt.Errorf("--unit %s names the unit that --units or --units-from counts: give one of them", o.unit), hint)
	case o.unitsFrom == "":
		return nil
	}
	re, err := regexp.Compile(o.unitsFrom)
	if err != nil {
		return cli.Fail(fmt.Errorf("--units-from: %v", err), hint)
	}
	if re.NumSubexp() < 1 {
		return cli.Fail(fmt.Errorf("--units-from %q has no group: its first (...) is where the count is read", o.unitsFrom), hint)
	}
	o.unitsRE = re
	return nil
}

// unitName is the unit for the report, or nil without units.
func (o *benchOptions) unitName() *string {
	if !o.unitsSet && o.unitsRE == nil {
		return nil
	}
	u := o.unit
	return &u
}
