package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/ioreport"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// readSerial reads this Mac's serial number, of which only a digest is
// kept. The tests give a fake (TestMain), which lets calibrate run on
// Linux.
var readSerial = ioreport.PlatformSerial

type calibrateOptions struct {
	commonOptions
	wall   wallOptions
	step   time.Duration
	levels []int
	show   bool
	forget bool
}

func newCalibrateCmd(s *cli.Streams) *cobra.Command {
	var o calibrateOptions
	c := &cobra.Command{
		Use:   "calibrate --wall URL",
		Short: "Fit the wall's power to the Mac's, so that commands estimate the wall without a plug",
		Long: `Run a ladder of loads on this Mac (idle, then the CPU at each of --levels),
read the metered plug of --wall and the Mac's own power side by side, and fit
the wall as a line of the whole system's power (with --source ioreport, the
default where it opens) and of the SoC's. The fit, its error and its steps are
kept for this Mac alone (its model and a digest of its serial number) in the
user's configuration directory; afterwards, with no --wall, run, watch, bench,
llm and serve give a "wall (estimated)" figure from it, marked as an
estimate. The GPU is not loaded: exopower has no GPU load of its own.`,
		Example: `  exopower calibrate --wall shelly://192.168.1.20
  exopower calibrate --wall tasmota://plug.local --step 30s --levels 0,20,40,60,80,100
  exopower calibrate --show
  exopower calibrate --forget`,
		Args: usage.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runCalibrate(c.Context(), s, &o) },
	}
	o.addFlags(c, 250*time.Millisecond)
	o.wall.addFlags(c)
	c.Flags().DurationVar(&o.step, "step", 20*time.Second, "how long each level runs; its first quarter is left to settle, the rest measured")
	c.Flags().IntSliceVar(&o.levels, "levels", []int{0, 25, 50, 100}, "the CPU's load at each step, in percent of every core (0: idle)")
	c.Flags().BoolVar(&o.show, "show", false, "print this user's calibration and exit")
	c.Flags().BoolVar(&o.forget, "forget", false, "remove this user's calibration and exit")
	return c
}

func runCalibrate(ctx context.Context, s *cli.Streams, o *calibrateOptions) error {
	id, err := child.Identify(false, os.Geteuid(), s.Getenv, s.Environ())
	if err != nil {
		return err
	}
	dir, err := calibrationDir(id.Env)
	if err != nil {
		return cli.Fail(err, "set HOME")
	}
	switch {
	case o.show && o.forget:
		return cli.Fail(errors.New("--show and --forget: one at a time"))
	case o.show:
		return showCalibration(s, dir, id, o.json)
	case o.forget:
		return forgetCalibration(s, dir, id)
	}
	if err := o.check(); err != nil {
		return err
	}
	serial, err := readSerial()
	if err != nil {
		return cli.Fail(fmt.Errorf("calibrate: this Mac's serial number could not be read (%w): a fit could not be kept for this Mac alone", err),
			"calibrate on the Mac to be estimated; nothing was run")
	}
	c, err := o.ladder(ctx, s, id, serial)
	if err != nil {
		return err
	}
	if err := calibrate.Save(dir, c, id.Cred); err != nil {
		printCalibration(s.Err, c, "")
		return cli.Wrote(filepath.Join(dir, calibrate.FileName), err, "the calibration above was not saved: check that you may write to "+dir)
	}
	return printOut(s, c, filepath.Join(dir, calibrate.FileName), o.json)
}

// check refuses flags that cannot make a fit, before anything starts.
func (o *calibrateOptions) check() error {
	if o.wall.url == "" {
		return cli.Fail(errors.New("calibrate: no plug: the wall is what is fitted"), "name the plug the Mac is plugged into with --wall URL (docs/wall.md)")
	}
	if o.wall.url == wall.KindAdapter {
		return cli.Fail(errors.New("calibrate --wall adapter: the adapter's own figures are an estimate of macOS's, not a measurement to fit to"), "calibrate against a metered plug")
	}
	var distinct []int
	for _, l := range o.levels {
		if l < 0 || l > 100 {
			return cli.Fail(fmt.Errorf("--levels %d: a load is 0 to 100 percent", l))
		}
		if !slices.Contains(distinct, l) {
			distinct = append(distinct, l)
		}
	}
	if len(distinct) < 3 {
		return cli.Fail(fmt.Errorf("--levels %s: %d distinct levels, and a line needs three to show it is one", joinInts(o.levels), len(distinct)), "give three or more, such as 0,25,50,100")
	}
	if o.step < 100*time.Millisecond {
		return cli.Fail(fmt.Errorf("--step %v: too short to measure", o.step), "a plug refreshes about once a second: 20s suits most")
	}
	return o.validate()
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// calibrationDir is exopower's folder in the configuration directory of
// the user whose environment env is (under sudo, the user who ran sudo,
// as child.Identify sets it), as os.UserConfigDir finds it.
func calibrationDir(env []string) (string, error) {
	get := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	home := get("HOME")
	var dir string
	switch {
	case runtime.GOOS == "darwin" && home != "":
		dir = filepath.Join(home, "Library", "Application Support")
	case runtime.GOOS != "darwin" && filepath.IsAbs(get("XDG_CONFIG_HOME")):
		dir = get("XDG_CONFIG_HOME")
	case runtime.GOOS != "darwin" && home != "":
		dir = filepath.Join(home, ".config")
	default:
		return "", errors.New("no configuration directory: $HOME is not set")
	}
	return filepath.Join(dir, "exopower"), nil
}

// ladder opens the plug and the Mac's source, runs the ladder with the
// CPU's load, stopped on every path, and fits it.
func (o *calibrateOptions) ladder(ctx context.Context, s *cli.Streams, id child.Identity, serial string) (*calibrate.Calibration, error) {
	plug, err := o.wall.start(ctx, s, id)
	if err != nil {
		return nil, err
	}
	defer plug.Close()
	ctx, stop := cli.CancelOnSignal(ctx, s.Signals)
	defer stop()
	meter, err := o.startSource(ctx, s)
	if err != nil {
		return nil, err
	}
	defer meter.Stop()
	load := &calibrate.CPULoad{Cores: runtime.NumCPU()}
	defer load.Stop()
	cfg := calibrate.Config{Levels: o.levels, Step: o.step, Settle: o.step / 4}
	fmt.Fprintf(s.Err, "exopower: calibrate: %d steps of %v (the first %v of each to settle) on %d cores, with %s; the GPU is not loaded\n",
		len(o.levels), o.step, cfg.Settle, load.Cores, plug.Info().Address)
	lm := &ladderMeter{mac: meter, plug: plug}
	steps, err := calibrate.Run(ctx, cfg, load, lm, func(i int, st calibrate.Step) {
		fmt.Fprintf(s.Err, "exopower: step %d/%d: %s\n", i+1, len(o.levels), stepText(st))
	})
	load.Stop()
	if ctx.Err() != nil {
		return nil, cli.Fail(fmt.Errorf("interrupted after %d of %d steps: nothing was fitted nor saved", len(steps), len(o.levels)))
	}
	if err != nil {
		return nil, cli.Fail(fmt.Errorf("calibrate: %w; nothing was saved", err), "check that the plug is read (exopower doctor --wall URL) and run calibrate again")
	}
	fits, err := calibrate.FitSteps(steps)
	if err != nil {
		return nil, cli.Fail(fmt.Errorf("calibrate: the fit cannot be trusted: %w; nothing was saved", err),
			"plug the Mac alone into the plug, leave it be while it runs, and run calibrate again, with longer --step")
	}
	mac, err := calibrate.Identify(lm.model, serial)
	if err != nil {
		return nil, cli.Fail(err)
	}
	info := plug.Info()
	return &calibrate.Calibration{SchemaVersion: calibrate.SchemaVersion, Type: calibrate.TypeCalibration,
		CalibratedAt: time.Now().UTC().Format(time.RFC3339), Mac: mac, Plug: calibrate.Plug{Kind: info.Kind, Model: info.Model},
		Source: meter.Source(), LevelsPercent: o.levels, StepSeconds: o.step.Seconds(), SettleSeconds: cfg.Settle.Seconds(),
		GPU: calibrate.NoGPU, Steps: steps, System: fits.System, SoC: fits.SoC, SoCRefused: fits.SoCRefused}, nil
}

// startSource starts the Mac's source: IOReport first where --source is
// auto, for the SMC's system power, which powermetrics does not read.
func (o *calibrateOptions) startSource(ctx context.Context, s *cli.Streams) (*sampler.Sampler, error) {
	opts := o.sourceOptions(s.Getenv, "exopower calibrate --wall "+o.wall.url)
	if opts.Kind == source.Auto || opts.Kind == "" {
		opts.Kind = source.IOReport
		if meter, err := source.Start(ctx, opts); err == nil || ctx.Err() != nil {
			return meter, err
		}
		fmt.Fprintln(s.Err, "exopower: note: IOReport did not open: powermetrics reads the SoC alone, and the fit is the SoC's")
		opts.Kind = source.Powermetrics
	}
	return source.Start(ctx, opts)
}

// ladderMeter reads the Mac's source and the plug over each step: a span
// of each, over the same start and end.
type ladderMeter struct {
	mac   *sampler.Sampler
	plug  *wall.Session
	model string // the Mac's model, as its source names it
}

func (m *ladderMeter) Begin(ctx context.Context) (time.Time, func(context.Context, time.Time) (calibrate.Reading, error)) {
	span := m.mac.Begin(ctx, nil)
	m.plug.Mark()
	return span.Start, func(ctx context.Context, at time.Time) (calibrate.Reading, error) {
		res := m.mac.End(ctx, span, at)
		w := m.plug.Span(ctx, span.Start, at)
		secs := at.Sub(span.Start).Seconds()
		if res.Ended {
			return calibrate.Reading{}, fmt.Errorf("%s stopped: %s", res.Source, strings.Join(res.Warnings, "; "))
		}
		m.model = cmp.Or(res.HWModel, m.model)
		// Each side's average over the time its readings covered: what is
		// not covered counts no energy, and a step too little covered is
		// refused whole (calibrate.Run).
		r := calibrate.Reading{WallCoverage: w.Coverage, MacCoverage: res.Coverage, HasSystem: res.Has.System, Warnings: w.Warnings}
		if w.Coverage > 0 {
			r.Wall = w.Joules / (secs * w.Coverage)
		}
		if res.Coverage > 0 {
			r.SoC, r.System = res.Energy.Total/(secs*res.Coverage), res.Energy.System/(secs*res.Coverage)
		}
		return r, nil
	}
}

func stepText(st calibrate.Step) string {
	text := fmt.Sprintf("CPU %d %%: wall %s", st.LevelPercent, output.Watts(st.WallWatts))
	if st.SystemWatts != nil {
		text += ", system " + output.Watts(*st.SystemWatts)
	}
	return text + ", SoC " + output.Watts(st.SoCWatts) + " over " + output.Seconds(st.Seconds)
}

// printOut writes the calibration to stdout: JSON, or for people.
func printOut(s *cli.Streams, c *calibrate.Calibration, path string, asJSON bool) error {
	var err error
	if asJSON {
		err = calibrate.Encode(s.Out, c)
	} else {
		err = printCalibration(s.Out, c, path)
	}
	if err != nil && !cli.BrokenPipe(err) {
		return cli.Wrote("stdout", err)
	}
	return nil
}

// printCalibration writes c for people; path, where not "", is where it
// is kept.
func printCalibration(w io.Writer, c *calibrate.Calibration, path string) error {
	var b strings.Builder
	plug := c.Plug.Kind
	if c.Plug.Model != "" {
		plug = c.Plug.Model + " (" + c.Plug.Kind + ")"
	}
	fmt.Fprintf(&b, "exopower calibration of a %s, %s, with %s, read by %s\n", c.Mac.HWModel, c.Date(), plug, c.Source)
	line := func(name string, f *calibrate.Fit) {
		if f != nil {
			fmt.Fprintf(&b, "  %-9s wall = %s + %.3f × %s   RMS %s, largest %s, R² %.4f, over %d steps of %s to %s\n", name,
				output.Watts(f.InterceptWatts), f.Slope, name, output.Watts(f.RMSWatts), output.Watts(f.MaxResidualWatts), f.RSquared, f.Points,
				output.Watts(f.MinWatts), output.Watts(f.MaxWatts))
		}
	}
	line("system", c.System)
	line("SoC", c.SoC)
	if c.SoCRefused != "" {
		fmt.Fprintf(&b, "  %-9s no fit: %s\n", "SoC", c.SoCRefused)
	}
	fmt.Fprintf(&b, "  %-9s %s\n", "steps", fmt.Sprintf("%d of %s (the first %s of each to settle)", len(c.Steps), output.Seconds(c.StepSeconds), output.Seconds(c.SettleSeconds)))
	for _, st := range c.Steps {
		fmt.Fprintf(&b, "  %-9s %s\n", "", stepText(st))
	}
	fmt.Fprintf(&b, "  %-9s %s\n", "GPU", c.GPU)
	fmt.Fprintf(&b, "  %-9s %s\n", "scope", "the Mac and whatever was on the plug then, at that display brightness, not charging a battery (or charging it as it was)")
	if path != "" {
		fmt.Fprintf(&b, "  %-9s %s\n", "file", path)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// showCalibration prints the user's calibration.
func showCalibration(s *cli.Streams, dir string, id child.Identity, asJSON bool) error {
	c, err := calibrate.Load(dir, id.Cred)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return cli.Fail(fmt.Errorf("no calibration in %s", dir), "make one with: exopower calibrate --wall URL")
	case err != nil:
		return cli.Fail(fmt.Errorf("calibration: %w", err), "remove it with exopower calibrate --forget, and calibrate again")
	}
	return printOut(s, c, filepath.Join(dir, calibrate.FileName), asJSON)
}

// forgetCalibration removes the user's calibration.
func forgetCalibration(s *cli.Streams, dir string, id child.Identity) error {
	err := calibrate.Remove(dir, id.Cred)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(s.Err, "exopower: no calibration in %s: nothing to forget\n", dir)
		return nil
	case err != nil:
		return cli.Fail(fmt.Errorf("calibrate --forget: %w", err))
	}
	fmt.Fprintf(s.Err, "exopower: removed %s\n", filepath.Join(dir, calibrate.FileName))
	return nil
}

// addWallEstimate gives sum the wall estimated from this Mac's
// calibration, where there is one and no plug was read: res is the
// span's measurement, id the user whose calibration it is. A calibration
// that is not this Mac's, or does not fit the source, is said once in
// the warnings, and not used.
func addWallEstimate(sum *wire.Summary, res sampler.Result, id child.Identity) {
	if sum.Wall != nil {
		return
	}
	c, why := findCalibration(id, readSerial).forMac(res.HWModel, res.Has.System)
	if why != "" {
		sum.Warnings = append(sum.Warnings, why)
	}
	output.EstimateWall(sum, c)
}

// macCalibration is a user's calibration as a command found it, and
// this Mac's serial number, to hold it to the Mac once the source has
// named the Mac's model.
type macCalibration struct {
	// file is where the calibration is looked for; "" where the user
	// has no configuration directory.
	file   string
	cal    *calibrate.Calibration
	serial string
	// unusable says why the calibration found cannot be used, whatever
	// the Mac; "" where it may be, or there is none.
	unusable string
}

// findCalibration reads the calibration of the user id (under sudo, the
// user who ran sudo, as the file is read as them), and, where there is
// one, this Mac's serial number with serial.
func findCalibration(id child.Identity, serial func() (string, error)) macCalibration {
	dir, err := calibrationDir(id.Env)
	if err != nil {
		return macCalibration{}
	}
	m := macCalibration{file: filepath.Join(dir, calibrate.FileName)}
	m.cal, err = calibrate.Load(dir, id.Cred)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return m
	case err != nil:
		m.unusable = "the calibration cannot be read: " + err.Error()
		return m
	}
	if m.serial, err = serial(); err != nil {
		m.unusable = "this Mac's serial number could not be read, to tell its calibration from another Mac's: " + err.Error()
	}
	return m
}

// forMac is the calibration where it is that of the Mac of model (as
// its source names it) and fits the source, which reads the system's
// power where hasSystem. Otherwise it is nil, with the warning that says
// why ("" where there is no calibration at all: nothing to say).
func (m macCalibration) forMac(model string, hasSystem bool) (*calibrate.Calibration, string) {
	const no = "no wall (estimated): "
	switch {
	case m.unusable != "":
		return nil, no + m.unusable
	case m.cal == nil:
		return nil, ""
	}
	mac, err := calibrate.Identify(model, m.serial)
	if err == nil {
		err = m.cal.For(mac)
	}
	if err != nil {
		return nil, no + err.Error() + ": a fit of another Mac is never used; calibrate this one with exopower calibrate --wall URL"
	}
	if _, _, err := m.cal.Pick(hasSystem); err != nil {
		return nil, no + err.Error() + ": give --source ioreport"
	}
	return m.cal, ""
}
