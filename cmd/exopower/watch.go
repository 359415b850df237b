package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
)

type watchOptions struct {
	commonOptions
	count    int
	duration time.Duration
	from     string
}

func newWatchCmd(s *streams) *cobra.Command {
	var o watchOptions
	c := &cobra.Command{
		Use:   "watch [flags]",
		Short: "Show the SoC's power live",
		Long: `Show the SoC's power as powermetrics samples it: a panel redrawn in place on
a terminal, one line per sample otherwise, NDJSON with --json. Ctrl-C, --count
or --duration end it with the same summary as exopower run.`,
		Example: `  sudo exopower watch
  sudo exopower watch --json --duration 10m > power.ndjson
  sudo powermetrics -f plist -i 1000 -s cpu_power,gpu_power,thermal | exopower watch --from -`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runWatch(c.Context(), s, &o) },
	}
	o.addFlags(c, time.Second)
	c.Flags().IntVarP(&o.count, "count", "n", 0, "stop after N samples (0: no limit)")
	c.Flags().DurationVarP(&o.duration, "duration", "d", 0, "stop after D, such as 30s or 10m (0: no limit)")
	c.Flags().StringVar(&o.from, "from", "", "read a powermetrics -f plist stream from `FILE` (- for stdin) instead of starting powermetrics")
	return c
}

// sampleLine is one line of exopower watch --json.
type sampleLine struct {
	SchemaVersion int `json:"schema_version"`
	// Type is "sample"; the last line, the summary, has "summary".
	Type string `json:"type"`
	// Time is the end of the window, RFC 3339 with nanoseconds, UTC.
	Time          string     `json:"time"`
	WindowSeconds num        `json:"window_seconds"`
	PowerWatts    Components `json:"power_watts"`
	// EnergyJoules is cumulative since the start.
	EnergyJoules    Components `json:"energy_joules"`
	ThermalPressure string     `json:"thermal_pressure"`
}

type update struct {
	w   sampler.Window
	tot sampler.Totals
}

func runWatch(ctx context.Context, s *streams, o *watchOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	if o.count < 0 || o.duration < 0 {
		return fail(errors.New("--count and --duration cannot be negative (0, the default, means no limit)"))
	}
	updates := make(chan update, 64)
	startCtx, stopStart := cancelOnSignal(ctx, s.Signals)
	smp, err := startSource(startCtx, s, o)
	stopStart()
	if err != nil {
		return err
	}
	span := smp.Begin(ctx, func(w sampler.Window, tot sampler.Totals) {
		updates <- update{w, tot}
	})
	t0 := span.Start

	mode := "lines"
	switch {
	case o.json:
		mode = "json"
	case s.OutTTY:
		mode = "panel"
	}
	st := newStyles(s.Out, s.OutTTY, s.Getenv)
	pan := &panel{}
	var winch <-chan os.Signal
	leave := func() {}
	if mode == "panel" {
		// The alternate screen keeps the panel from scrolling the
		// terminal and gives the terminal back as it was on the way out.
		// Leaving it twice would move the cursor back to where it was on
		// the way in, over whatever was printed since: leave exactly once.
		io.WriteString(s.Out, "\x1b[?1049h\x1b[?25l")
		var once sync.Once
		leave = func() { once.Do(func() { io.WriteString(s.Out, "\x1b[?25h\x1b[?1049l") }) }
		defer leave()
		winch = s.Resized
	}
	draw := func() {
		w, h, err := s.TermSize()
		if err != nil || w <= 0 {
			w, h = 80, 24
		}
		io.WriteString(s.Out, "\x1b[H"+clearLines(pan.render(w, h, st))+"\x1b[J")
	}
	var timeout <-chan time.Time
	if o.duration > 0 {
		timer := time.NewTimer(o.duration - time.Since(t0))
		defer timer.Stop()
		timeout = timer.C
	}
	var end, last time.Time
	n := 0
loop:
	for {
		select {
		case u := <-updates:
			n++
			last = u.w.End
			if pan.source.Tool == "" {
				hw, build := smp.Source()
				pan.source = Source{Tool: "powermetrics", HWModel: hw, OSBuild: build}
			}
			if o.duration > 0 && !u.w.End.Before(t0.Add(o.duration)) {
				end = t0.Add(o.duration)
				break loop
			}
			if err := emit(s, mode, u, pan, t0, st); err != nil {
				end = u.w.End
				break loop
			}
			if mode == "panel" {
				draw()
			}
			if o.count > 0 && n >= o.count {
				end = u.w.End
				break loop
			}
		case <-smp.Done():
			// The stream ended (powermetrics exited, or the input
			// closed): show what it handed over, then sum up.
			for drained := false; !drained; {
				select {
				case u := <-updates:
					emit(s, mode, u, pan, t0, st)
					last = u.w.End
				default:
					drained = true
				}
			}
			end = last
			if end.IsZero() {
				end = time.Now()
			}
			break loop
		case <-winch:
			draw()
		case <-timeout:
			end = t0.Add(o.duration)
			break loop
		case <-s.Signals:
			end = time.Now()
			break loop
		}
	}
	// Windows that come while the span is closed are not shown, but the
	// sampler must not block handing them over.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for range updates {
		}
	}()
	// A further signal cuts the wait for the last window short.
	endCtx, stop := cancelOnSignal(context.Background(), s.Signals)
	defer stop()
	res := smp.End(endCtx, span, end)
	if err := smp.Stop(); err != nil {
		res.Warnings = append(res.Warnings, "powermetrics: "+err.Error())
	}
	close(updates)
	<-drained
	leave()
	sum := newSummary(res, t0, o.interval)
	sum.title = "watch"
	if o.json {
		return writeJSON(s.Out, sum)
	}
	writeText(s.Err, sum, newStyles(s.Err, s.ErrTTY, s.Getenv))
	return nil
}

// startSource starts powermetrics, or reads the stream named by --from.
func startSource(ctx context.Context, s *streams, o *watchOptions) (*sampler.Sampler, error) {
	if o.from == "" {
		return startMeasuring(ctx, o.powermetricsPath(s.Getenv), o.interval, "exopower watch")
	}
	f, err := openInput(o.from, s)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		f.Close()
		// A file is read at once: arrival times would say nothing of
		// when its windows were.
		return nil, fail(fmt.Errorf("--from %s is a recorded file, not a live stream", inputName(o.from)),
			"summarise a recording with: exopower report "+o.from)
	}
	smp := sampler.Start(powermetrics.NewReader(f, time.Now), sampler.Config{Interval: o.interval})
	if err := smp.Ready(ctx); err != nil {
		smp.Stop()
		return nil, fail(fmt.Errorf("%s: %w", inputName(o.from), err),
			"give a stream of: sudo powermetrics -f plist -i 1000 -s cpu_power,gpu_power,thermal")
	}
	return smp, nil
}

// emit writes one sample: an NDJSON line, or a line for people when the
// output is not a terminal. The panel is drawn by the caller.
func emit(s *streams, mode string, u update, pan *panel, origin time.Time, st *styles) error {
	pan.add(u.w, u.tot, origin)
	switch mode {
	case "json":
		return writeJSON(s.Out, sampleLine{
			SchemaVersion:   schemaVersion,
			Type:            "sample",
			Time:            u.w.End.UTC().Format(time.RFC3339Nano),
			WindowSeconds:   num(u.w.End.Sub(u.w.Start).Seconds()),
			PowerWatts:      components(u.w.Power),
			EnergyJoules:    components(u.tot.Energy),
			ThermalPressure: u.w.ThermalPressure,
		})
	case "lines":
		_, err := fmt.Fprintf(s.Out, "%s  total %s  CPU %s  GPU %s  ANE %s  energy %s  thermal %s\n",
			u.w.End.Format("15:04:05.000"), watts(u.w.Power.Total), watts(u.w.Power.CPU), watts(u.w.Power.GPU),
			watts(u.w.Power.ANE), joules(u.tot.Energy.Total), or(u.w.ThermalPressure, "n/a"))
		return err
	}
	return nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// clearLines ends every line of a drawing with erase-to-end-of-line, so a
// shorter line leaves nothing of the one it replaces.
func clearLines(s string) string {
	out := make([]byte, 0, len(s)+64)
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, "\x1b[K"...)
		}
		out = append(out, s[i])
	}
	return string(append(out, "\x1b[K"...))
}

// openInput opens FILE, or stdin for "-". Stdin is read through a
// non-blocking duplicate, so that closing it ends a read in progress.
func openInput(name string, s *streams) (*os.File, error) {
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, fail(err)
		}
		return f, nil
	}
	fd, err := syscall.Dup(s.InFd)
	if err != nil {
		return nil, fail(fmt.Errorf("stdin: %w", err))
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, fail(fmt.Errorf("stdin: %w", err))
	}
	return os.NewFile(uintptr(fd), "stdin"), nil
}

func inputName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}
