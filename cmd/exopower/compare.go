package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/exopower/exopower/internal/access"
	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/compare"
	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/output"
)

// compareOptions are compare's flags.
type compareOptions struct {
	compare.Options
	cost                                                    costOptions
	json                                                    bool
	exportJSON, exportMarkdown, exportGitHub, exportBencher string
}

func newCompareCmd(s *cli.Streams) *cobra.Command {
	o := compareOptions{Options: compare.Defaults}
	c := &cobra.Command{
		Use:   "compare [flags] OLD.json NEW.json",
		Short: "Compare two exports of bench or llm: what regressed, for people and for CI",
		Long: `Compare two JSON exports of exopower bench (or two of exopower llm), made at
different times: each command (or each model and concurrency) is matched by
name, or by position with --by-position, and each of its figures compared:
the net energy (the gross where an export has no baseline), the energy per
unit of work with bench's --unit, J per output and per prompt token for llm.
Each figure's change is the ratio of the new mean to the old with its
confidence interval (Fieller's), tested by Welch's t-test over each run's
value. A change counts only when it is significant (p below --alpha) and
beyond --threshold: the figure then regressed or improved, and is unchanged
otherwise. A benchmark that one export lacks is listed, never guessed at.

Exit status: 0; 1 when a figure regressed (or, with --fail-on changed, changed
either way); 125 when the exports cannot be read or measure different
things (a bench and an llm run, other units of work, the same export twice).
Warnings say where the two cannot be compared fairly: another Mac, source,
macOS, interval, or an idle power that differs beyond its error.

With NEW alone, compare compares nothing: it writes NEW's figures for
--export-github-benchmark and --export-bencher, which keep a history and
compare it themselves.`,
		Example: `  exopower compare main.json pr.json
  exopower compare --export-markdown energy.md --threshold 3% main.json pr.json
  exopower compare --json --fail-on changed main.json pr.json
  exopower compare --export-bencher bmf.json pr.json`,
		Args: compareArgs,
		RunE: func(c *cobra.Command, args []string) error { return runCompare(s, &o, args) },
	}
	f := c.Flags()
	addVerdictFlags(f, &o.Options)
	addJSONFlag(c, &o.json)
	f.StringVar(&o.exportJSON, "export-json", "", "write the comparison as JSON to `FILE` (- is stdout)")
	f.StringVar(&o.exportMarkdown, "export-markdown", "", "write the comparison as Markdown for a pull request's comment to `FILE` (- is stdout): the verdicts, then the details folded")
	f.StringVar(&o.exportGitHub, "export-github-benchmark", "", "write NEW's figures as github-action-benchmark's customSmallerIsBetter JSON to `FILE` (- is stdout)")
	f.StringVar(&o.exportBencher, "export-bencher", "", "write NEW's figures as Bencher's BMF JSON to `FILE` (- is stdout), each with its confidence interval as lower and upper values")
	o.cost.addFlags(c)
	f.Lookup("price").Usage = "give the cost of each figure's change at `PRICE` a kWh, with its currency's ISO 4217 code, such as 0.30EUR (default $" + cost.EnvPrice + ", else NEW's, as its run was given it)"
	f.Lookup("carbon-intensity").Usage = "give the CO2e of each figure's change at `G` grams of CO2e a kWh (default $" + cost.EnvIntensity + ", else NEW's)"
	return c
}

// addVerdictFlags gives a command the flags that make the verdicts:
// compare's, and bench's for --compare.
func addVerdictFlags(f *pflag.FlagSet, o *compare.Options) {
	f.Float64Var(&o.Alpha, "alpha", compare.Defaults.Alpha, "the significance level: a change counts only where Welch's t-test gives a p-value below `P`")
	f.Var((*percentValue)(&o.Threshold), "threshold", "a change counts only beyond `PERCENT` of the old mean, either way, such as 5% or 2.5")
	f.StringVar(&o.FailOn, "fail-on", compare.Defaults.FailOn, "exit with 1 when a figure `VERDICT`: regressed, changed (regressed or improved) or never")
	f.BoolVar(&o.ByPosition, "by-position", false, "match the benchmarks by their order in each export rather than by name")
}

// percentValue is a fraction given as a percentage: 5, 5% or 5 %.
type percentValue float64

func (p *percentValue) String() string {
	return strconv.FormatFloat(float64(*p)*100, 'f', -1, 64) + "%"
}

func (p *percentValue) Set(s string) error {
	x, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil {
		return errors.New("not a percentage, such as 5% or 2.5")
	}
	*p = percentValue(x / 100)
	return nil
}

func (p *percentValue) Type() string { return "percent" }

// compareArgs takes OLD and NEW, or NEW alone for the history exports.
func compareArgs(c *cobra.Command, args []string) error {
	switch len(args) {
	case 1, 2:
		return nil
	case 0:
		return usage.Fail(c, fmt.Errorf("%s takes two exports, OLD and NEW, and got none", c.CommandPath()))
	}
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return usage.Fail(c, fmt.Errorf("%s takes two exports, OLD and NEW, and got %d: %s", c.CommandPath(), len(args), strings.Join(q, " ")),
		"compare two at a time: the saved export first, the new one second")
}

func runCompare(s *cli.Streams, o *compareOptions, args []string) error {
	if err := o.Check(); err != nil {
		return err
	}
	if err := o.cost.resolve(s.Getenv); err != nil {
		return err
	}
	outs := o.exports()
	for _, e := range outs {
		if e.path != "-" {
			if err := output.CheckPath(e.flag, e.path, nil); err != nil {
				return err
			}
		}
	}
	if len(args) == 1 {
		return o.history(s, args[0])
	}
	if err := distinct(args[0], args[1]); err != nil {
		return err
	}
	old, err := loadExport(s, args[0], nil)
	if err != nil {
		return err
	}
	new, err := loadExport(s, args[1], nil)
	if err != nil {
		return err
	}
	rep, err := compare.Compare(old, new, o.Options)
	if err != nil {
		return err
	}
	rep.Price(o.cost.rates, new)
	var werr error
	if o.json {
		werr = cli.Wrote("stdout", output.WriteJSON(s.Out, rep))
	} else {
		werr = cli.Wrote("stdout", compare.WriteText(s.Out, s.Err, rep, output.NewStyles(s.Out, s.OutTTY, s.Getenv), output.NewStyles(s.Err, s.ErrTTY, s.Getenv)))
	}
	var files []output.Export
	for _, e := range outs {
		write := e.write
		files = append(files, output.Export{Path: e.path, Write: func(w io.Writer) error { return write(w, new, rep) }})
	}
	if err := output.WriteExports(s, nil, werr, files); err != nil {
		return err
	}
	return rep.Verdict()
}

// history writes the figures of one export for the history services,
// comparing nothing.
func (o *compareOptions) history(s *cli.Streams, name string) error {
	if o.exportGitHub == "" && o.exportBencher == "" {
		return cli.Fail(errors.New("compare takes two exports, OLD and NEW, and got one"),
			"compare the saved export with the new one: exopower compare OLD.json NEW.json",
			"or, with NEW alone, write its figures for a history service: --export-github-benchmark FILE or --export-bencher FILE")
	}
	if o.json || o.exportJSON != "" || o.exportMarkdown != "" {
		return cli.Fail(errors.New("--json, --export-json and --export-markdown are the comparison's, and one export compares nothing"),
			"give the saved export too: exopower compare OLD.json NEW.json")
	}
	e, err := loadExport(s, name, nil)
	if err != nil {
		return err
	}
	var files []output.Export
	for _, x := range o.exports() {
		write := x.write
		files = append(files, output.Export{Path: x.path, Write: func(w io.Writer) error { return write(w, e, nil) }})
	}
	return output.WriteExports(s, nil, nil, files)
}

// compareExport is one of compare's files: its flag, its path, and what
// writes it from the new export and the comparison (nil with one
// export).
type compareExport struct {
	flag, path string
	write      func(w io.Writer, new *compare.Export, rep *compare.Report) error
}

func (o *compareOptions) exports() []compareExport {
	var outs []compareExport
	for _, e := range []compareExport{
		{"--export-json", o.exportJSON, func(w io.Writer, _ *compare.Export, rep *compare.Report) error { return output.WriteJSON(w, rep) }},
		{"--export-markdown", o.exportMarkdown, func(w io.Writer, _ *compare.Export, rep *compare.Report) error { return compare.WriteMarkdown(w, rep) }},
		{"--export-github-benchmark", o.exportGitHub, func(w io.Writer, e *compare.Export, rep *compare.Report) error {
			return compare.WriteGitHubBenchmark(w, e, rep, o.Alpha)
		}},
		{"--export-bencher", o.exportBencher, func(w io.Writer, e *compare.Export, _ *compare.Report) error {
			return compare.WriteBencher(w, e, o.Alpha)
		}},
	} {
		if e.path != "" {
			outs = append(outs, e)
		}
	}
	return outs
}

// distinct refuses the same file as OLD and NEW: a run compared with
// itself tells nothing (compare refuses two files of the same content
// too).
func distinct(a, b string) error {
	if a == "-" && b == "-" {
		return cli.Fail(errors.New("OLD and NEW are both stdin: one of them must be a file"))
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil && os.SameFile(fa, fb) {
		return cli.Fail(fmt.Errorf("%s and %s are the same file: a run compared with itself tells nothing", a, b),
			"compare the saved export with a new one: bench --export-json NEW.json, then compare OLD.json NEW.json")
	}
	return nil
}

// loadExport reads the export name (- is stdin), as the user cred where
// exopower runs under sudo (nil: as itself).
func loadExport(s *cli.Streams, name string, cred *syscall.Credential) (*compare.Export, error) {
	var r io.ReadCloser
	var err error
	if cred != nil && name != "-" {
		var f *os.File
		f, err = access.Open(name, cred)
		if err != nil {
			err = cli.Fail(err, "name an export that the user who ran sudo may read")
		}
		r = f
	} else {
		r, err = s.Open(name)
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxExportRead))
	if err != nil {
		return nil, cli.Fail(fmt.Errorf("read %s: %w", cli.InputName(name), err))
	}
	return compare.Load(cli.InputName(name), data)
}

// maxExportRead is one byte more than compare.Load takes, so that it
// tells a file too large from one that fits.
const maxExportRead = 1<<30 + 1

// benchCompare is bench's --compare: the saved export, the verdicts'
// flags, and the export once read.
type benchCompare struct {
	file string
	compare.Options
	old *compare.Export
	// rates price the changes: bench's own --price and
	// --carbon-intensity.
	rates cost.Rates
}

func (bc *benchCompare) addFlags(f *pflag.FlagSet) {
	bc.Options = compare.Defaults
	f.StringVar(&bc.file, "compare", "", "compare the results with a saved export of bench, `FILE` (--export-json), as exopower compare does: the verdicts at the end, and exit with 1 when one regressed")
	addVerdictFlags(f, &bc.Options)
}

// validate refuses the verdicts' flags without --compare.
func (bc *benchCompare) validate(given map[string]bool) error {
	if bc.file != "" {
		return bc.Check()
	}
	for _, f := range []string{"alpha", "threshold", "fail-on", "by-position"} {
		if given[f] {
			return cli.Fail(fmt.Errorf("--%s is for --compare, which is not given", f), "exopower bench --compare SAVED.json --"+f+" ... compares with a saved export")
		}
	}
	return nil
}

// checkFiles refuses, before anything runs, the exports and the files
// that bench cannot write or read (bench.Options.CheckFiles), and a
// saved export of --compare that cannot be compared: each stops the
// bench before its first run.
func (o *benchOptions) checkFiles(s *cli.Streams, id child.Identity) error {
	if err := o.CheckFiles(id); err != nil {
		return err
	}
	return o.cmp.load(s, id.Cred)
}

// load reads the saved export before anything runs, as the user cred
// (nil: exopower itself), and refuses one that is not a bench's.
func (bc *benchCompare) load(s *cli.Streams, cred *syscall.Credential) error {
	if bc.file == "" {
		return nil
	}
	old, err := loadExport(s, bc.file, cred)
	if err != nil {
		return err
	}
	if old.Kind != "bench" {
		return cli.Fail(fmt.Errorf("--compare %s: an %s's JSON, and bench compares with a bench's", bc.file, old.Kind), "exopower compare compares two llm exports")
	}
	bc.old = old
	return nil
}

// finish compares the finished bench with the saved export and writes
// the comparison: after the bench's text where it has one, else (with
// --json) to stderr, and not at all with --style none. benchErr is the
// bench's own outcome: a failed command's status, or a bench cut short,
// is the exit status whatever the verdicts; otherwise they give it.
func (bc *benchCompare) finish(s *cli.Streams, rep *bench.Report, style string, asJSON bool, benchErr error) error {
	if bc.old == nil {
		return benchErr
	}
	data, err := jsonOf(rep)
	if err != nil {
		return errors.Join(benchErr, cli.Fail(fmt.Errorf("--compare: %w", err)))
	}
	new, err := compare.Load("this bench", data)
	if err == nil {
		var cmp *compare.Report
		if cmp, err = compare.Compare(bc.old, new, bc.Options); err == nil {
			cmp.Price(bc.rates, new)
			err = bc.write(s, cmp, style, asJSON)
			if err == nil && benchErr == nil {
				return cmp.Verdict()
			}
		}
	}
	if benchErr != nil {
		if err != nil {
			fmt.Fprintf(s.Err, "exopower: warning: --compare: %v\n", err)
		}
		return benchErr
	}
	return err
}

func (bc *benchCompare) write(s *cli.Streams, cmp *compare.Report, style string, asJSON bool) error {
	switch {
	case style == "none":
		return nil
	case asJSON:
		st := bench.Styles(style, s.Err, s.ErrTTY, s.Getenv)
		return cli.Wrote("stderr", compare.WriteText(s.Err, s.Err, cmp, st, st))
	}
	// A blank line after the bench's summary, as between its blocks.
	if _, err := io.WriteString(s.Out, "\n"); err != nil {
		return cli.Wrote("stdout", err)
	}
	return cli.Wrote("stdout", compare.WriteText(s.Out, s.Err, cmp, bench.Styles(style, s.Out, s.OutTTY, s.Getenv), bench.Styles(style, s.Err, s.ErrTTY, s.Getenv)))
}

// jsonOf is v's JSON as exopower writes it.
func jsonOf(v any) ([]byte, error) {
	var b bytes.Buffer
	err := output.WriteJSON(&b, v)
	return b.Bytes(), err
}
