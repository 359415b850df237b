package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/plot"
	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
)

type plotOptions struct {
	input, output string
	size          plot.Size
}

func newPlotCmd(s *streams) *cobra.Command {
	var o plotOptions
	c := &cobra.Command{
		Use:   "plot [flags] INPUT -o FILE.svg|FILE.png",
		Short: "Draw the power of a recording or a samples file over time",
		Long: `Draw the power of each component (total, CPU, GPU, ANE) over time, from a
recorded powermetrics -f plist stream or from the windows that --samples wrote
(CSV or NDJSON); - reads stdin. The measured span is shaded, and its energy and
average power are written in the title. The picture's format comes from the
name given to -o: .svg or .png.`,
		Example: `  exopower plot trace.plist -o trace.svg
  exopower plot --width 1600 --height 600 windows.csv -o windows.png`,
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

func runPlot(s *streams, o *plotOptions) error {
	if o.output == "" {
		return fail(errors.New("plot: no file to write the plot to"), "name one with -o, such as -o power.svg or -o power.png")
	}
	if _, err := plot.FormatOf(o.output); err != nil {
		return fail(fmt.Errorf("-o %w", err))
	}
	if err := o.size.Check(); err != nil {
		return fail(fmt.Errorf("--width and --height: %w", err))
	}
	if err := output.CheckPath("-o", o.output, nil); err != nil {
		return err
	}
	var r io.Reader = s.In
	if o.input != "-" {
		f, err := os.Open(o.input)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		r = f
	}
	rows, err := readWindows(r)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", inputName(o.input), err),
			"plot takes a powermetrics -f plist recording, or the CSV or NDJSON that --samples writes")
	}
	return writePlot(o.output, o.size, "exopower plot: "+inputName(o.input), rows, nil)
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

func valuesOf(c output.Components) powermetrics.Values {
	return powermetrics.Values{CPU: float64(c.CPU), GPU: float64(c.GPU), ANE: float64(c.ANE), Total: float64(c.Total)}
}

// writePlot writes the plot of rows to path, as the user who ran sudo
// when owner says so.
func writePlot(path string, size plot.Size, title string, rows []output.SampleRow, owner *child.Identity) error {
	format, err := plot.FormatOf(path)
	if err != nil {
		return fail(fmt.Errorf("-o %w", err))
	}
	err = output.WriteFile(path, func(w io.Writer) error {
		return plot.WritePower(w, format, size, powerOf(title, rows))
	}, credOf(owner))
	return wroteFile(path, err)
}

// wroteFile is wrote for a file that err may already name.
func wroteFile(path string, err error, hints ...string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	return wrote(path, err, hints...)
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
		return fail(err)
	}
	if f.samplesFormat != "" && f.samples == "" {
		return fail(errors.New("--samples-format without --samples"), "name the file with --samples FILE")
	}
	if _, err := plot.FormatOf(f.plot); f.plot != "" && err != nil {
		return fail(fmt.Errorf("--plot %w", err))
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
		first = wroteFile(f.samples, err, "choose a path you can write to with --samples")
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
	var se *statusError
	switch {
	case err == nil:
		return &statusError{code: status, err: saved, hints: hintsOf(saved)}
	case errors.As(err, &se) && se.err == nil:
		return &statusError{code: se.code, err: saved, hints: hintsOf(saved)}
	}
	return err
}
