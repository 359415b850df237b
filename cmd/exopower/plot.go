package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/plot"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

type plotOptions struct {
	input, output string
	size          plot.Size
}

func newPlotCmd(s *cli.Streams) *cobra.Command {
	var o plotOptions
	c := &cobra.Command{
		Use:   "plot [flags] INPUT -o FILE.svg|FILE.png",
		Short: "Draw a recording, a samples file, a bench or a watch over several Macs",
		Long: `Draw what exopower measured; - reads stdin. The picture's format comes from
the name given to -o: .svg or .png. INPUT is one of:

  a recorded powermetrics -f plist stream, or the windows that --samples wrote
  (CSV or NDJSON): the power of each component (total, CPU, GPU, ANE) over
  time, the measured span shaded, its energy and average power in the title;

  a bench's JSON (bench --json, --export-json): each run's energy as a point
  over a box per command, the idle baseline's energy over the command's mean
  duration as a band (± its uncertainty) when there is a baseline, and the
  command with the least energy and the comparison in the title;

  the lines of watch --node --json: a line per node's power over time, on this
  Mac's clock, and their total.

A summary (run --json, run --node --json) has no time series and is refused.`,
		Example: `  exopower plot trace.plist -o trace.svg
  exopower plot --width 1600 --height 600 windows.csv -o windows.png
  exopower bench --export-json b.json 'gzip -k big' 'zstd -k big' && exopower plot b.json -o b.svg
  exopower watch --json -d 1m --node http://mac1:10241 --node http://mac2:10241 > w.ndjson && exopower plot w.ndjson -o w.svg`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.input = args[0]
			return runPlot(s, &o)
		},
	}
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the plot to `FILE`, .svg or .png (required)")
	c.Flags().IntVar(&o.size.Width, "width", 1000, "the plot's width in `PIXELS`")
	c.Flags().IntVar(&o.size.Height, "height", 500, "the plot's height in `PIXELS`")
	return c
}

func runPlot(s *cli.Streams, o *plotOptions) error {
	if o.output == "" {
		return cli.Fail(errors.New("plot: no file to write the plot to"), "name one with -o, such as -o power.svg or -o power.png")
	}
	if _, err := plot.FormatOf(o.output); err != nil {
		return cli.Fail(fmt.Errorf("-o %w", err))
	}
	if err := o.size.Check(); err != nil {
		return cli.Fail(fmt.Errorf("--width and --height: %w", err))
	}
	if err := output.CheckPath("-o", o.output, nil); err != nil {
		return err
	}
	var r io.Reader = s.In
	if o.input != "-" {
		f, err := os.Open(o.input)
		if err != nil {
			return cli.Fail(err)
		}
		defer f.Close()
		r = f
	}
	name := cli.InputName(o.input)
	draw, err := chartOf(r, "exopower plot: "+name)
	if err != nil {
		var se *cli.Error
		if errors.As(err, &se) {
			se.Err = fmt.Errorf("%s: %w", name, se.Err)
			return se
		}
		return cli.Fail(fmt.Errorf("%s: %w", name, err),
			"plot takes a powermetrics -f plist recording, or the CSV or NDJSON that --samples writes",
			"or a bench's JSON (bench --json, --export-json), or the lines of watch --node --json")
	}
	format, _ := plot.FormatOf(o.output)
	err = output.WriteFile(o.output, func(w io.Writer) error { return draw(w, format, o.size) }, nil)
	return cli.Wrote(o.output, err)
}

// chart draws a picture of what was read, as a format, at a size.
type chart func(w io.Writer, f plot.Format, size plot.Size) error

// chartOf reads r and returns its picture: a bench's runs, the nodes of a
// watch over several Macs, or the power over time of a recording or a
// samples file. What it is comes from the "type" of its first JSON value;
// anything else is a recording or a samples file.
func chartOf(r io.Reader, title string) (chart, error) {
	head, r := firstJSON(r)
	switch head.Type {
	case "bench":
		var rep bench.Report
		if err := json.NewDecoder(r).Decode(&rep); err != nil {
			return nil, fmt.Errorf("a bench's JSON: %w", err)
		}
		b := benchChart(title, &rep)
		if !slices.ContainsFunc(b.Commands, func(c plot.BenchCommand) bool { return len(c.Energies) > 0 }) {
			return nil, cli.Fail(errors.New("a bench without a run: nothing to plot"), "plot a bench that made at least one run")
		}
		return func(w io.Writer, f plot.Format, size plot.Size) error { return plot.WriteBench(w, f, size, b) }, nil
	case "sample", "total":
		n, err := readNodeLines(r, title)
		if err != nil {
			return nil, err
		}
		if len(n.Series) == 0 {
			return nil, cli.Fail(errors.New("watch --node --json lines without a node's window: nothing to plot"),
				"plot a watch that ran for at least one window of a node (-n, -d)")
		}
		return func(w io.Writer, f plot.Format, size plot.Size) error { return plot.WriteNodes(w, f, size, n) }, nil
	case "summary":
		if len(head.Nodes) > 0 {
			return nil, cli.Fail(errors.New("a summary of several nodes (run --node --json) has no time series to plot"),
				"plot what exopower watch --node --json writes over the same time, or each Mac's own exopower run --samples FILE")
		}
		return nil, cli.Fail(errors.New("a summary has no time series to plot"),
			"plot the windows instead: those of run --samples FILE or of report --samples ndjson, or draw a run at once with run --plot FILE")
	}
	rows, err := readWindows(r)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer, f plot.Format, size plot.Size) error {
		return plot.WritePower(w, f, size, powerOf(title, rows))
	}, nil
}

// benchChart is what the plot of a bench shows: each command's runs, the
// idle Mac's energy over the command's mean duration when there is a
// baseline, and the comparison in the title.
func benchChart(title string, rep *bench.Report) plot.Bench {
	b := plot.Bench{Title: title}
	least := -1
	for i, r := range rep.Results {
		c := plot.BenchCommand{Name: r.Command}
		for _, run := range r.Runs {
			c.Energies = append(c.Energies, float64(run.EnergyJoules.Total))
		}
		if rep.Baseline != nil && r.DurationSeconds != nil {
			c.Idle = &plot.Band{Center: float64(rep.Baseline.PowerWatts) * float64(r.DurationSeconds.Mean)}
			if u := r.NetEnergyUncertaintyJoules; u != nil {
				c.Idle.Error = float64(*u)
			}
		}
		b.Commands = append(b.Commands, c)
		if r.EnergyJoules != nil && (least < 0 || r.EnergyJoules.Mean < rep.Results[least].EnergyJoules.Mean) {
			least = i
		}
	}
	if least >= 0 {
		r := rep.Results[least]
		b.Title += fmt.Sprintf("\nleast energy: %s (%s on average)", r.Command, output.Joules(float64(r.EnergyJoules.Mean)))
	}
	for _, l := range rep.Comparison() {
		b.Title += "\n" + l
	}
	if rep.Baseline == nil {
		b.Title += "\nno idle baseline (--baseline 0): gross energy only"
	}
	if !rep.Complete {
		b.Title += "\ncut short: the runs made by then"
	}
	return b
}

// watchLine is a line of watch --node --json: a node's window, a total,
// or the summary at the end.
type watchLine struct {
	wire.SampleLine
	// The summary's.
	DurationSeconds wire.Num           `json:"duration_seconds"`
	AvgPowerWatts   wire.Components    `json:"avg_power_watts"`
	Nodes           []wire.NodeSummary `json:"nodes"`
}

// nodeLines gathers the lines of watch --node --json: a series per node,
// in the order the nodes first come, times in seconds from base by each
// node's clock.
type nodeLines struct {
	base    time.Time
	series  []*plot.NodeSeries
	byNode  map[string]*plot.NodeSeries
	summary *watchLine
}

// readNodeLines reads the lines of watch --node --json. The totals are
// left out: they are summed again from the nodes' windows.
func readNodeLines(r io.Reader, title string) (plot.Nodes, error) {
	nl := nodeLines{byNode: map[string]*plot.NodeSeries{}}
	dec := json.NewDecoder(r)
	for k := 1; ; k++ {
		var l watchLine
		err := dec.Decode(&l)
		if err == io.EOF {
			return nl.chart(title), nil
		}
		if err != nil {
			return plot.Nodes{}, fmt.Errorf("line %d: not a line of watch --node --json: %v", k, err)
		}
		if err := nl.add(l); err != nil {
			return plot.Nodes{}, fmt.Errorf("line %d: %w", k, err)
		}
	}
}

func (nl *nodeLines) add(l watchLine) error {
	switch {
	case l.Type == "total":
	case l.Type == "summary":
		nl.summary = &l
	case l.Type == "sample" && l.Node == "":
		return errors.New("a watch --json line of this Mac alone; plot takes the lines of watch --node --json")
	case l.Type == "sample":
		end, err := time.Parse(time.RFC3339Nano, l.Time)
		if err != nil {
			return fmt.Errorf("its time %q is not RFC 3339", l.Time)
		}
		s := nl.byNode[l.Node]
		if s == nil {
			s = &plot.NodeSeries{Name: l.Node}
			nl.byNode[l.Node] = s
			nl.series = append(nl.series, s)
		}
		if nl.base.IsZero() {
			nl.base = end
		}
		// In whole nanoseconds, as the lines give them, so that the end of
		// a window and the start of the next are the same number.
		e := end.Sub(nl.base)
		d := e - time.Duration(math.Round(float64(l.WindowSeconds)*1e9))
		s.Windows = append(s.Windows, plot.Step{Start: d.Seconds(), End: e.Seconds(), Watts: float64(l.PowerWatts.Total)})
	default:
		return fmt.Errorf("a line of type %q, not one of watch --node --json", l.Type)
	}
	return nil
}

// chart puts every node's windows on this Mac's clock, by the offset the
// summary measured (none without a summary), in seconds from the first
// window's start, and titles them with the summary's energy.
func (nl *nodeLines) chart(title string) plot.Nodes {
	offsets := map[string]float64{}
	if nl.summary != nil {
		for _, n := range nl.summary.Nodes {
			offsets[n.Node] = float64(n.ClockOffsetSeconds)
		}
		title += fmt.Sprintf("\nwatch: %d nodes, %s over %.4g s, %s on average", len(nl.summary.Nodes),
			output.Joules(float64(nl.summary.EnergyJoules.Total)), float64(nl.summary.DurationSeconds),
			output.Watts(float64(nl.summary.AvgPowerWatts.Total)))
	} else {
		title += "\nno summary line: the watch did not end"
	}
	t0 := math.Inf(1)
	for _, s := range nl.series {
		off := offsets[s.Name]
		for i := range s.Windows {
			s.Windows[i].Start -= off
			s.Windows[i].End -= off
			t0 = min(t0, s.Windows[i].Start)
		}
	}
	n := plot.Nodes{Title: title}
	for _, s := range nl.series {
		for i := range s.Windows {
			s.Windows[i].Start -= t0
			s.Windows[i].End -= t0
		}
		slices.SortFunc(s.Windows, func(a, b plot.Step) int { return cmp.Compare(a.Start, b.Start) })
		n.Series = append(n.Series, *s)
	}
	return n
}

// jsonHead is what tells one JSON input of exopower's from another.
type jsonHead struct {
	Type  string            `json:"type"`
	Nodes []json.RawMessage `json:"nodes"`
}

// firstJSON reads the first JSON value of r, if r starts with one, and
// returns it with r whole again. A value that does not decode has no type.
func firstJSON(r io.Reader) (jsonHead, io.Reader) {
	br := bufio.NewReader(r)
	var head jsonHead
	peek, _ := br.Peek(64)
	if !bytes.HasPrefix(bytes.TrimLeft(peek, " \t\r\n"), []byte("{")) {
		return head, br
	}
	var read bytes.Buffer
	if err := json.NewDecoder(io.TeeReader(br, &read)).Decode(&head); err != nil {
		head = jsonHead{}
	}
	return head, io.MultiReader(&read, br)
}

// readWindows reads the rows of a samples file, or those of a recording's
// windows: a samples file starts with its CSV header or with '{'.
func readWindows(r io.Reader) ([]output.SampleRow, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(len(output.SamplesHeader[0]) + 1)
	head = bytes.TrimLeft(head, " \t\r\n")
	if bytes.HasPrefix(head, []byte("{")) || bytes.HasPrefix(head, []byte(output.SamplesHeader[0]+",")) {
		return output.ReadSamples(br)
	}
	var windows output.WindowLog
	res, err := sampler.RecordingWindows(powermetrics.NewRecording(br), windows.Add)
	if err != nil {
		return nil, err
	}
	return windows.Rows(res), nil
}

// powerOf is what the plot shows of rows: the span runs from 0 to the end
// of the last row's part inside it, and its energy is the rows' sum.
func powerOf(title string, rows []output.SampleRow) plot.Power {
	p := plot.Power{Title: title}
	for _, r := range rows {
		p.Windows = append(p.Windows, plot.Window{Start: float64(r.StartSeconds), End: float64(r.EndSeconds), Power: valuesOf(r.PowerWatts)})
		p.Energy = p.Energy.Add(valuesOf(r.EnergyJoules))
	}
	if len(rows) > 0 {
		last := rows[len(rows)-1]
		p.SpanEnd = max(0, float64(last.StartSeconds)) + float64(last.InsideSeconds)
	}
	if p.SpanEnd > 0 {
		p.Average = p.Energy.Scale(1 / p.SpanEnd)
	}
	return p
}

func valuesOf(c wire.Components) power.Values {
	return power.Values{CPU: float64(c.CPU), GPU: float64(c.GPU), ANE: float64(c.ANE), Total: float64(c.Total)}
}

// writePlot writes the plot of rows to path, as the user who ran sudo
// when owner says so.
func writePlot(path string, size plot.Size, title string, rows []output.SampleRow, owner *child.Identity) error {
	format, err := plot.FormatOf(path)
	if err != nil {
		return cli.Fail(fmt.Errorf("-o %w", err))
	}
	err = output.WriteFile(path, func(w io.Writer) error {
		return plot.WritePower(w, format, size, powerOf(title, rows))
	}, credOf(owner))
	return cli.Wrote(path, err)
}

// windowFiles are the files run writes of its windows: --samples and
// --plot.
type windowFiles struct {
	samples, samplesFormat, plot string
	format                       output.SamplesFormat
}

func (f *windowFiles) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&f.samples, "samples", "", "write every window of the run to `FILE`, as CSV or NDJSON by its extension (.csv, .ndjson, .jsonl)")
	c.Flags().StringVar(&f.samplesFormat, "samples-format", "", "the `FORMAT` of --samples, csv or ndjson, whatever its extension")
	c.Flags().StringVar(&f.plot, "plot", "", "draw the power of the run over time to `FILE`, .svg or .png")
}

func (f *windowFiles) given() bool { return f.samples != "" || f.plot != "" }

// check refuses, before the command starts, files that could not be
// written or whose format is unknown.
func (f *windowFiles) check(id child.Identity) error {
	var err error
	switch {
	case f.samplesFormat != "":
		f.format, err = output.ParseSamplesFormat(f.samplesFormat)
		err = wrapIf("--samples-format: ", err)
	case f.samples != "":
		f.format, err = output.SamplesFormatOf(f.samples)
		err = wrapIf("--samples ", err)
	}
	if err != nil {
		return cli.Fail(err)
	}
	if f.samplesFormat != "" && f.samples == "" {
		return cli.Fail(errors.New("--samples-format without --samples"), "name the file with --samples FILE")
	}
	if _, err := plot.FormatOf(f.plot); f.plot != "" && err != nil {
		return cli.Fail(fmt.Errorf("--plot %w", err))
	}
	if err := output.CheckPath("--samples", f.samples, id.Cred); err != nil {
		return err
	}
	return output.CheckPath("--plot", f.plot, id.Cred)
}

func wrapIf(prefix string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s%w", prefix, err)
}

// write writes the windows of the run, res, to the files asked for. The
// first failure is returned; the other file is still written.
func (f *windowFiles) write(log *output.WindowLog, res sampler.Result, title string, id child.Identity) error {
	if !f.given() {
		return nil
	}
	rows := log.Rows(res)
	var first error
	if f.samples != "" {
		err := output.WriteFile(f.samples, func(w io.Writer) error { return output.WriteSamples(w, f.format, rows) }, id.Cred)
		first = cli.Wrote(f.samples, err, "choose a path you can write to with --samples")
	}
	if f.plot != "" {
		if err := writePlot(f.plot, plot.Size{Width: 1000, Height: 500}, title, rows, &id); first == nil {
			first = err
		}
	}
	return first
}

// credOf is whom to write as: the user who ran sudo, if anyone.
func credOf(id *child.Identity) *syscall.Credential {
	if id == nil {
		return nil
	}
	return id.Cred
}

// withFileError is err, what became of the summary and the command, with
// saved, a file of the windows that could not be written, in it: the
// status stays the command's, as for a summary that could not be written.
func withFileError(err, saved error, status int) error {
	if saved == nil {
		return err
	}
	var se *cli.Error
	switch {
	case err == nil:
		return &cli.Error{Status: status, Err: saved, Hints: cli.HintsOf(saved)}
	case errors.As(err, &se) && se.Err == nil:
		return &cli.Error{Status: se.Status, Err: saved, Hints: cli.HintsOf(saved)}
	}
	return err
}
