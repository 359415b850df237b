package bench

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
	"time"

	"github.com/exopower/exopower/internal/access"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
)

// Options are exopower bench's flags, hyperfine's and its own, as the
// command line gave them: Validate says what they mean, refusing what
// cannot work before anything runs, and Config makes the runner's
// configuration of them.
type Options struct {
	// Interval is -i, the sample interval; JSON is --json.
	Interval time.Duration
	JSON     bool
	// Runs is -r; MinRuns and MaxRuns -m and -M; MinTime
	// --min-benchmarking-time, in seconds.
	Runs, MinRuns, MaxRuns, Warmup int
	MinTime                        float64
	Prepare, Conclude              []string
	Setup, Cleanup                 string
	Shell                          string
	NoShell                        bool
	IgnoreFailure                  string
	ShowOutput                     bool
	Outputs                        []string
	Input                          string
	Cooldown                       time.Duration
	Baseline                       BaselineFlag
	Reference, ReferenceName       string
	Names                          []string
	Style, Sort, TimeUnit          string
	ExportJSON, ExportCSV          string
	ExportMarkdown, ExportAsciiDoc string
	ExportOrgMode                  string
	Commands                       []string
	Params                         ParameterLists
	// Scan is -P's NAME MIN MAX, Step -D's DELTA.
	Scan ParameterScan
	Step string
	// Units is --units, the units of work of every run; Unit their name;
	// UnitsFrom is --units-from, which reads them from each run's output.
	Units           float64
	Unit, UnitsFrom string
	// Given are the flags given, by their long names.
	Given map[string]bool
	// Made by Validate: the shell's words (nil: none), the failures to
	// ignore, the jobs, each job's output, where the input is, and
	// --units-from compiled.
	shellArgv []string
	failures  Failures
	jobs      []Job
	inputPath string
	unitsRE   *regexp.Regexp
}

// Validate refuses, before anything runs, options that cannot work, and
// makes the jobs.
func (o *Options) Validate() error {
	usage := "usage: exopower bench [flags] COMMAND..."
	switch {
	case len(o.Commands) == 0 && o.Reference == "":
		return cli.Fail(errors.New("bench: no command to measure"), usage)
	case o.Warmup < 0:
		return cli.Fail(fmt.Errorf("--warmup %d: it takes 0 or more", o.Warmup))
	case o.Baseline.d < 0:
		return cli.Fail(fmt.Errorf("--baseline %v: it takes auto, 0 (none) or a duration", o.Baseline.d), "auto, the default, measures as long as the runs need")
	case o.Cooldown < 0:
		return cli.Fail(fmt.Errorf("--cooldown %v: it takes 0 or a duration", o.Cooldown))
	case o.Given["reference-name"] && o.Reference == "":
		return cli.Fail(errors.New("--reference-name names --reference's command: give --reference too"))
	}
	for _, c := range o.Commands {
		if strings.TrimSpace(c) == "" || o.Reference != "" && strings.TrimSpace(o.Reference) == "" {
			return cli.Fail(errors.New("bench: an empty command"), usage)
		}
	}
	for _, check := range []func() error{o.validateRuns, o.validateShell, o.validateFailures, o.validateStyle, o.validateUnits, o.makeJobs} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// Config is what the runner runs and how, as the user id runs it.
func (o *Options) Config(s *cli.Streams, id child.Identity) Config {
	least, most := o.runBounds()
	cfg := Config{
		Jobs: o.jobs, Runs: least, MaxRuns: most, MinTime: time.Duration(o.MinTime * float64(time.Second)),
		Warmup: o.Warmup, Cooldown: o.Cooldown, Baseline: o.Baseline.d, AutoBaseline: o.Baseline.auto, Interval: o.Interval,
		IgnoreFailure: o.failures, Argv: o.argv, Identity: id, Input: o.inputPath,
		UnitsFrom: o.unitsRE, Unit: o.unitName(), Signals: s.Signals, Messages: s.Err,
		// The output of the jobs that --output=inherit (or
		// --show-output) lets through; with --json, stdout is the JSON's.
		Stdout: s.Out, Stderr: s.Err,
	}
	if o.JSON {
		cfg.Stdout = s.Err
	}
	if o.Given["units"] {
		cfg.Units = &o.Units
	}
	var w io.Writer
	if s.ErrTTY && o.progress() {
		w = s.Err
	}
	// With the runs counted from the first one's pace, the least is what
	// is known beforehand.
	tail := o.Baseline.d
	if o.Baseline.auto {
		tail = IdlePiece(o.Interval)
	}
	cfg.Progress = NewProgress(w, len(cfg.Jobs)*least, tail)
	return cfg
}

// Deliver finishes the report and writes it to stdout (the rest of
// text, or the JSON) and the exports, each file as the user id.
func (o *Options) Deliver(s *cli.Streams, rep *Report, id child.Identity, text *Text) error {
	ref := -1
	if o.Reference != "" {
		ref = 0
	}
	rep.TimeUnit, rep.Sort = o.TimeUnit, o.sortOrder()
	rep.Finish(ref)
	var summary func() error
	if text != nil {
		summary = func() error { return text.Summary(rep) }
	}
	var outs []output.Export
	for _, e := range o.exports() {
		outs = append(outs, output.Export{Path: e.path, Write: func(w io.Writer) error { return e.write(w, rep) }})
	}
	return output.Deliver(s, id.Cred, o.JSON, rep, summary, outs)
}

// NewText is the text that bench writes as it goes, on the streams of
// s as --style says; nil with --json or --style none.
func (o *Options) NewText(s *cli.Streams) *Text {
	if o.JSON || o.Style == "none" {
		return nil
	}
	text := NewText(s.Out, s.Err, Styles(o.Style, s.Out, s.OutTTY, s.Getenv), Styles(o.Style, s.Err, s.ErrTTY, s.Getenv))
	text.TimeUnit = o.TimeUnit
	return text
}

// export is one --export-* flag: its name, its file and its writer.
type export struct {
	flag, path string
	write      func(io.Writer, *Report) error
}

func (o *Options) exports() []export {
	return []export{
		{"--export-json", o.ExportJSON, func(w io.Writer, r *Report) error { return output.WriteJSON(w, r) }},
		{"--export-csv", o.ExportCSV, WriteCSV},
		{"--export-markdown", o.ExportMarkdown, WriteMarkdown},
		{"--export-asciidoc", o.ExportAsciiDoc, WriteAsciiDoc},
		{"--export-orgmode", o.ExportOrgMode, WriteOrgMode},
	}
}

// validateRuns refuses run counts that cannot be kept, as hyperfine
// does.
func (o *Options) validateRuns() error {
	const hint = "give --runs alone, or --min-runs and --max-runs"
	switch {
	case o.Given["runs"] && (o.Given["min-runs"] || o.Given["max-runs"]):
		return cli.Fail(errors.New("--runs gives the count of runs: give it without --min-runs and --max-runs"), hint)
	case o.Given["runs"] && o.Runs < 1:
		return cli.Fail(fmt.Errorf("--runs %d: it takes at least 1", o.Runs), "10 runs, the least by default, give a fair mean and spread")
	case o.Given["min-runs"] && o.MinRuns < 1:
		return cli.Fail(fmt.Errorf("--min-runs %d: it takes at least 1", o.MinRuns), hint)
	case o.Given["max-runs"] && o.MaxRuns < 1:
		return cli.Fail(fmt.Errorf("--max-runs %d: it takes at least 1", o.MaxRuns), hint)
	case o.Given["min-runs"] && o.Given["max-runs"] && o.MinRuns > o.MaxRuns:
		return cli.Fail(&HyperfineError{Sentence: "Conflicting requirements for the number of runs (empty range, min is larger than max)",
			Detail: fmt.Sprintf(": --min-runs %d, --max-runs %d", o.MinRuns, o.MaxRuns)}, hint)
	case !(o.MinTime >= 0) || math.IsInf(o.MinTime, 1):
		return cli.Fail(fmt.Errorf("--min-benchmarking-time %v: it takes seconds, 0 or more", o.MinTime), "3, the default, is hyperfine's")
	}
	return nil
}

// runBounds are the least and most runs of each command (0: no most),
// as hyperfine reads -r, -m and -M: -r gives both; without -m the least
// is 10, or -M when that is fewer.
func (o *Options) runBounds() (least, most int) {
	if o.Runs > 0 {
		return o.Runs, o.Runs
	}
	least, most = o.MinRuns, o.MaxRuns
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
func (o *Options) validateShell() error {
	switch {
	case o.NoShell && o.Given["shell"]:
		return cli.Fail(errors.New("-N and --shell: give one of them (-N is --shell=none)"))
	case o.NoShell || o.Shell == "none":
		o.shellArgv = nil
	case o.Shell == "default":
		o.shellArgv = []string{"sh"}
	default:
		words, err := SplitWords(o.Shell)
		if err != nil {
			return cli.Fail(&HyperfineError{Sentence: "Failed to parse '--shell <command>' expression as command line",
				Detail: fmt.Sprintf(": %s: %v", output.ShellQuote([]string{o.Shell}), err)}, `give the shell as a command line, such as --shell "bash --norc"`)
		}
		if len(words) == 0 || words[0] == "" {
			return cli.Fail(&HyperfineError{Sentence: "An empty command has been specified for the '--shell <command>' option",
				Detail: fmt.Sprintf(": %s names no program", output.ShellQuote([]string{o.Shell}))}, "give a shell, such as --shell bash, or --shell=none for none")
		}
		o.shellArgv = words
	}
	return nil
}

// argv is the command line that runs the command c: the shell's words
// with -c and c, or without a shell c's words.
func (o *Options) argv(c string) ([]string, error) {
	if o.shellArgv != nil {
		return append(slices.Clip(o.shellArgv), "-c", c), nil
	}
	words, err := SplitWords(c)
	if err != nil {
		return nil, cli.Fail(&HyperfineError{Sentence: fmt.Sprintf("Failed to parse command '%s'", c),
			Detail: fmt.Sprintf(": %v (--shell=none splits it into words as a shell would)", err)},
			"close the quote, or escape it with a backslash, as in a shell")
	}
	return words, nil
}

// validateFailures reads --ignore-failure[=CODES].
func (o *Options) validateFailures() error {
	o.failures = Failures{}
	switch {
	case !o.Given["ignore-failure"]:
		return nil
	case o.IgnoreFailure == "" || o.IgnoreFailure == "all-non-zero":
		o.failures.All = true
		return nil
	}
	for _, c := range strings.Split(o.IgnoreFailure, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(c), 10, 32)
		if err != nil {
			return cli.Fail(&HyperfineError{Sentence: "Could not read numeric integer argument to '--ignore-failure'",
				Detail: fmt.Sprintf(": %q is no exit status", c)},
				"give statuses, such as --ignore-failure=1,2, or none: --ignore-failure ignores any")
		}
		o.failures.Codes = append(o.failures.Codes, int(n))
	}
	return nil
}

// validateStyle checks the choices of --style, --sort and --time-unit,
// and the flags that cannot go together.
func (o *Options) validateStyle() error {
	for _, c := range []struct {
		flag, value string
		allowed     []string
	}{
		{"--style", o.Style, []string{"", "auto", "basic", "full", "nocolor", "color", "none"}},
		{"--sort", o.Sort, []string{"", SortAuto, SortCommand, "mean-time", SortMean}},
		{"--time-unit", o.TimeUnit, []string{"", TimeMicrosecond, TimeMillisecond, TimeSecond}},
	} {
		if !slices.Contains(c.allowed, c.value) {
			return cli.Fail(fmt.Errorf("%s %s: it takes %s", c.flag, c.value, strings.Join(slices.DeleteFunc(c.allowed, func(s string) bool { return s == "" }), ", ")))
		}
	}
	switch {
	case o.ShowOutput && o.Given["style"]:
		return cli.Fail(errors.New("--show-output and --style: give one of them, as for hyperfine"), "the commands' output would break the progress line and the colours")
	case o.ShowOutput && len(o.Outputs) > 0:
		return cli.Fail(errors.New("--show-output and --output: give one of them (--show-output is --output=inherit)"))
	}
	for _, e := range o.exports() {
		if e.path == "-" && o.JSON {
			return cli.Fail(fmt.Errorf("--json and %s -: both write to stdout", e.flag), "give the export a file, or leave out --json")
		}
	}
	return nil
}

// progress says whether the style lets the progress line be drawn
// (on a terminal): not where a command's output goes to the terminal.
func (o *Options) progress() bool {
	switch o.Style {
	case "basic", "color", "none":
		return false
	}
	return !slices.ContainsFunc(o.jobs, func(j Job) bool { return j.Output.Kind == OutputInherit })
}

// Styles are the styles of text written to w (tty: a terminal) as
// --style says (bench's and llm's): auto colours a terminal unless NO_COLOR or CI; full and
// color, as in hyperfine, colour w whatever it is (in the colours TERM
// allows); basic and nocolor never.
func Styles(style string, w io.Writer, tty bool, getenv func(string) string) *output.Styles {
	switch style {
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
func (o *Options) sortOrder() string {
	if o.Sort == "mean-time" {
		return SortMean
	}
	return o.Sort
}

// makeJobs makes the jobs from the commands, -L or -P, -n, the hooks and
// --output, with hyperfine's rules of counts and order.
func (o *Options) makeJobs() error {
	lists := []ParameterList(o.Params)
	switch {
	case o.Given["parameter-scan"] && len(lists) > 0:
		return cli.Fail(errors.New("-P and -L: give one of them, as for hyperfine"), "-L's lists give every combination; -L n 1,2,3 is -P n 1 3")
	case o.Given["parameter-scan"]:
		values, err := ScanValues(o.Scan.min, o.Scan.max, o.Step)
		if err != nil {
			return cli.Fail(err)
		}
		lists = []ParameterList{{Name: o.Scan.name, Values: values}}
	case o.Given["parameter-step-size"]:
		return cli.Fail(errors.New("-D is the step of -P's range: give -P too"), "such as -P t 0.1 0.5 -D 0.1")
	}
	outputs, err := o.outputPolicies()
	if err != nil {
		return err
	}
	plan := Plan{Commands: o.Commands, Reference: o.Reference, ReferenceName: o.ReferenceName, Names: o.Names,
		Lists: lists, Setup: o.Setup, Cleanup: o.Cleanup, Prepare: o.Prepare, Conclude: o.Conclude, Outputs: outputs}
	if o.jobs, err = plan.Jobs(); err != nil {
		return cli.Fail(err, "exopower bench --help says what each flag takes")
	}
	if o.Input != "null" {
		o.inputPath = o.Input // "" too: the null device
	}
	return nil
}

// outputPolicies read --output (or --show-output): once for all, or once
// for each job.
func (o *Options) outputPolicies() ([]Output, error) {
	switch {
	case o.ShowOutput:
		return []Output{{Kind: OutputInherit}}, nil
	case len(o.Outputs) == 0:
		return []Output{{Kind: OutputNull}}, nil
	}
	var out []Output
	for _, w := range o.Outputs {
		switch w {
		case "null":
			out = append(out, Output{Kind: OutputNull})
		case "pipe":
			out = append(out, Output{Kind: OutputPipe})
		case "inherit":
			out = append(out, Output{Kind: OutputInherit})
		default:
			// As hyperfine: a file is named with a directory, so that
			// a misspelt way is not taken for a file.
			if !strings.Contains(strings.TrimRight(w, "/"), "/") {
				return nil, cli.Fail(&HyperfineError{Sentence: fmt.Sprintf("Unknown output policy '%s'. Use './%s' to output to a file named '%s'.", w, w, w),
					Detail: " --output takes null, pipe, inherit or a file named with its directory"})
			}
			out = append(out, Output{Kind: OutputFile, Path: w})
		}
	}
	return out, nil
}

// CheckFiles refuses, before anything runs, an export or --output file
// that cannot be written and an --input that cannot be read, by the user
// the commands run as.
func (o *Options) CheckFiles(id child.Identity) error {
	for _, e := range o.exports() {
		if e.path == "-" {
			continue
		}
		if err := output.CheckPath(e.flag, e.path, id.Cred); err != nil {
			return err
		}
	}
	for _, j := range o.jobs {
		if j.Output.Kind == OutputFile {
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
		return cli.Fail(&HyperfineError{Sentence: fmt.Sprintf("The file '%s' specified as '--input' does not exist", o.inputPath)}, hint)
	case err != nil:
		return cli.Fail(fmt.Errorf("--input: %w", err), hint)
	}
	return f.Close()
}

// validateUnits refuses units of work that cannot be counted, and
// compiles --units-from.
func (o *Options) validateUnits() error {
	const hint = "--units 512 --unit token, or --units-from 'generated ([0-9]+) tokens' --unit token"
	switch {
	case o.Given["units"] && !(o.Units > 0):
		return cli.Fail(fmt.Errorf("--units %v: it takes the count of units of work in one run, above 0", o.Units), hint)
	case o.Given["units"] && o.UnitsFrom != "":
		return cli.Fail(errors.New("--units and --units-from: give one of them"), hint)
	case o.Unit == "" || strings.ContainsAny(o.Unit, "\n|"):
		return cli.Fail(fmt.Errorf("--unit %q: it takes a name, such as token", o.Unit), hint)
	case o.Given["unit"] && !o.Given["units"] && o.UnitsFrom == "":
		return cli.Fail(fmt.Errorf("--unit %s names the unit that --units or --units-from counts: give one of them", o.Unit), hint)
	case o.UnitsFrom == "":
		return nil
	}
	re, err := regexp.Compile(o.UnitsFrom)
	if err != nil {
		return cli.Fail(fmt.Errorf("--units-from: %v", err), hint)
	}
	if re.NumSubexp() < 1 {
		return cli.Fail(fmt.Errorf("--units-from %q has no group: its first (...) is where the count is read", o.UnitsFrom), hint)
	}
	o.unitsRE = re
	return nil
}

// unitName is the unit for the report, or nil without units.
func (o *Options) unitName() *string {
	if !o.Given["units"] && o.unitsRE == nil {
		return nil
	}
	u := o.Unit
	return &u
}
