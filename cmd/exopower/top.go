package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wire"
)

// topForget is how long top keeps an app whose processes are all gone,
// with its energy, before it joins the forgotten apps' sum.
const topForget = 10 * time.Minute

type topOptions struct {
	commonOptions
	count int
	once  bool
	wall  wallOptions
}

func newTopCmd(s *cli.Streams) *cobra.Command {
	var o topOptions
	c := &cobra.Command{
		Use:   "top [flags]",
		Short: "Show the Mac's apps by power, live",
		Long: `Show every app of the Mac by power, refreshed at each interval: each app's CPU
power as the kernel measured it for its processes, its GPU power from its
share of the GPU's time, its energy since top started and its processes,
each under the app responsible for it; above them the Mac's power as the
apps' sum and the rest's (what the apps leave out), so that the rows and
the rest add up to the Mac's power. Without root, only your own processes
are read: the others are counted, and their energy is in the rest.

On a terminal it takes the screen: p e c g n sort by power, energy, CPU,
GPU or name, / filters, the arrows and Enter open an app into its
processes, space pauses, Tab goes to watch's charts of the rails, q or
Ctrl-C ends it. Elsewhere, and with -n or --once, it writes a plain table
per refresh; --json a line of JSON per refresh.`,
		Example: `  exopower top
  sudo exopower top --once
  exopower top --json -n 10 > apps.ndjson`,
		Args: usage.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runTop(c.Context(), s, &o) },
	}
	o.addFlags(c, time.Second)
	c.Flags().IntVarP(&o.count, "count", "n", 0, "stop after N refreshes (0: no limit)")
	c.Flags().BoolVar(&o.once, "once", false, "one refresh, after one interval, then exit (as -n 1)")
	o.wall.addFlags(c)
	return c
}

func (o *topOptions) check() error {
	if err := o.validate(); err != nil {
		return err
	}
	if o.count < 0 {
		return cli.Fail(fmt.Errorf("--count %d is out of range: it takes 0 (no limit, the default) or more refreshes", o.count))
	}
	if o.once && o.count > 1 {
		return cli.Fail(fmt.Errorf("--once and --count %d say two things", o.count), "give one of them: --once is -n 1")
	}
	if o.once {
		o.count = 1
	}
	return nil
}

func runTop(ctx context.Context, s *cli.Streams, o *topOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	k, d, err := openAppsKernel("top")
	if err != nil {
		return err
	}
	defer k.Close()
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
	plug, err := o.wall.startAsSelf(startCtx, s)
	if err != nil {
		stopStart()
		return err
	}
	defer plug.Close()
	meter, err := source.Start(startCtx, o.sourceOptions(s.Getenv, "exopower top"))
	stopStart()
	if err != nil {
		return err
	}
	defer meter.Stop()
	return o.follow(s, meter, apps.New(k, d, apps.Config{Forget: topForget, AllUsers: os.Geteuid() == 0}), liveWall(plug))
}

// openAppsKernel opens the kernel's accounting of processes for every
// app's energy (top, serve --apps: what), and refuses a Mac that keeps
// no energy per process.
func openAppsKernel(what string) (attrib.Kernel, attrib.Describer, error) {
	hint := "exopower watch shows the Mac's own power without it"
	switch what {
	case "--apps":
		hint = "serve without --apps publishes the Mac's own energy"
	case "--app":
		hint = "run without --app to measure the whole Mac alone"
	}
	k, err := openKernel()
	if err != nil {
		return nil, nil, cli.Fail(fmt.Errorf("%s: %w", what, err), hint)
	}
	if info := k.Info(); !info.ProcessEnergy {
		k.Close()
		return nil, nil, cli.Fail(fmt.Errorf("%s: this Mac keeps no energy per process (macOS %s, %s): "+
			"it needs macOS 13 or later on Apple Silicon, not in a virtual machine", what, info.MacOS, info.Chip), hint)
	}
	d, err := attrib.AsDescriber(k)
	if err != nil {
		k.Close()
		return nil, nil, cli.Fail(fmt.Errorf("%s: %w", what, err), hint)
	}
	return k, d, nil
}

// topWindow is a window of top's span and the span's totals after it.
type topWindow struct {
	w   sampler.Window
	tot sampler.Totals
}

// follow reads the processes at the span's start, then again at each
// window, and shows each refresh, until --count, a key or a signal, or
// the end of the stream.
func (o *topOptions) follow(s *cli.Streams, meter *sampler.Sampler, p *apps.Poller, wall func() *wire.SampleWall) error {
	feed := output.NewFeed[topWindow]()
	span := meter.Begin(context.Background(), func(w sampler.Window, tot sampler.Totals) { feed.Put(topWindow{w, tot}) })
	if err := p.Start(apps.Reading{At: span.Start}); err != nil {
		return cli.Fail(fmt.Errorf("top: reading the processes: %w", err))
	}
	view, err := o.view(s, output.SinkConfig{Origin: span.Start, Source: func() wire.Source { return streamSource(meter) }, Wall: wall})
	if err != nil {
		return cli.Wrote("stdout", err)
	}
	// Deferred as well, for a panic: the terminal is given back on
	// every way out. A second Close does nothing.
	defer view.Close()
	n := 0
	live := output.Live{Signals: s.Signals, Resized: s.Resized, Resize: view.Resize, Ended: meter.Done()}
	view.takeKeys(&live)
	_, err = output.Follow(live, feed, func(u topWindow) (bool, error) {
		r := apps.Reading{At: u.w.End, Energy: u.tot.Energy, Has: u.tot.Has, Wall: appsWall(wall)}
		if err := p.Round(r); errors.Is(err, attrib.ErrUnsupported) {
			return true, cli.Fail(fmt.Errorf("top: %w", err))
		}
		if err := view.Window(u.w, u.tot); err != nil {
			return true, err
		}
		n++
		return n == o.count, view.Show(p.Snapshot())
	})
	if cerr := view.Close(); err == nil {
		err = cerr
	}
	var failed *cli.Error
	if err != nil && !errors.As(err, &failed) {
		return cli.Wrote("stdout", err)
	}
	return err
}

// appsWall is the plug's figures now, for a refresh; nil without one.
func appsWall(wall func() *wire.SampleWall) *apps.Wall {
	if wall == nil {
		return nil
	}
	w := wall()
	a := &apps.Wall{EnergyJoules: float64(w.EnergyJoules)}
	if w.PowerWatts != nil {
		a.PowerWatts, a.HasPower = float64(*w.PowerWatts), true
	}
	return a
}

// topView shows top's refreshes: Window takes each of the source's
// windows (the screen's rails), Show a refresh of the apps, takeKeys hands
// the view's keys to the wait loop where it takes any , Resize redraws
// after the terminal changed size, Close ends the view.
type topView interface {
	Window(w sampler.Window, tot sampler.Totals) error
	Show(apps.Snapshot) error
	takeKeys(l *output.Live)
	Resize() error
	Close() error
}

// view is where top shows its refreshes: a line of JSON each with
// --json, the live screen on a terminal (openScreen), else a plain
// table each.
func (o *topOptions) view(s *cli.Streams, c output.SinkConfig) (topView, error) {
	switch {
	case o.json:
		return topJSON{s: s}, nil
	case s.OutTTY && o.count == 0:
		// -n and --once are for scripts, and a screen left at once
		// would show nothing: they write the table.
		c.Apps = output.StartOnApps
		return openScreen(s, c)
	}
	return topTable{s: s}, nil
}

// plainView is what the table and the JSON do not do: draw the rails,
// take keys, redraw or leave a screen.
type plainView struct{}

func (plainView) Window(sampler.Window, sampler.Totals) error { return nil }
func (plainView) takeKeys(*output.Live)                       {}
func (plainView) Resize() error                               { return nil }
func (plainView) Close() error                                { return nil }

// topTable writes a plain table per refresh.
type topTable struct {
	plainView
	s *cli.Streams
}

func (t topTable) Show(sn apps.Snapshot) error {
	if sn.Seq > 1 {
		if _, err := fmt.Fprintln(t.s.Out); err != nil {
			return err
		}
	}
	return output.WriteAppsTable(t.s.Out, sn)
}

// topJSON writes a line of JSON per refresh.
type topJSON struct {
	plainView
	s *cli.Streams
}

func (t topJSON) Show(sn apps.Snapshot) error {
	l := apps.NewLine(sn)
	if n := wire.Finite(&l); n > 0 {
		l.Warnings = append(l.Warnings, fmt.Sprintf("%s could not be written in JSON (not finite): written as 0 or null", output.Count(n, "figure")))
	}
	return output.WriteJSON(t.s.Out, l)
}
