package main

import (
	"os"
	"time"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
)

// watchView is where watch shows its windows: lines, NDJSON, or on a
// terminal the live screen, whose apps (top's view, a key away) it
// feeds too where the processes can be read.
type watchView struct {
	sink   output.Sink
	screen *screenView // nil off a terminal
	apps   *apps.Poller
	kernel attrib.Kernel
}

// openWatchView opens watch's view for c (its origin, source and plug).
func openWatchView(s *cli.Streams, asJSON bool, c output.SinkConfig) (*watchView, error) {
	format := output.ChooseFormat(asJSON, s.OutTTY)
	if format != output.Panel {
		c.Format, c.Getenv = format, s.Getenv
		c.Terminal = output.Terminal{Out: s.Out, TTY: s.OutTTY, Size: s.TermSize}
		sink, err := output.NewSink(c)
		return &watchView{sink: sink}, err
	}
	v := &watchView{}
	if c.NoApps == "" {
		c.NoApps = v.startApps(c.Origin)
	}
	screen, err := openScreen(s, c)
	if err != nil {
		v.closeApps()
		return nil, err
	}
	v.sink, v.screen = screen.sc, screen
	return v, nil
}

// startApps reads the processes from at, for the apps' view; it says
// why not where it cannot.
func (v *watchView) startApps(at time.Time) (whyNot string) {
	k, d, err := openAppsKernel("apps")
	if err != nil {
		return err.Error()
	}
	p := apps.New(k, d, apps.Config{Forget: topForget, AllUsers: os.Geteuid() == 0})
	if err := p.Start(apps.Reading{At: at}); err != nil {
		k.Close()
		return "reading the processes: " + err.Error()
	}
	v.apps, v.kernel = p, k
	return ""
}

// window shows a window, and the apps' refresh over it.
func (v *watchView) window(w sampler.Window, tot sampler.Totals) error {
	if err := v.sink.Window(w, tot); err != nil || v.apps == nil {
		return err
	}
	// A failed read of the processes gives the window to the rest, and
	// the refresh says so: the rails go on.
	_ = v.apps.Round(apps.Reading{At: w.End, Energy: tot.Energy, Has: tot.Has})
	return v.screen.Show(v.apps.Snapshot())
}

func (v *watchView) closeApps() {
	if v.kernel != nil {
		v.kernel.Close()
		v.kernel, v.apps = nil, nil
	}
}

// Close ends the view and gives the terminal back.
func (v *watchView) Close() error {
	defer v.closeApps()
	if v.screen != nil {
		return v.screen.Close()
	}
	return v.sink.Close()
}
