package output

import (
	"fmt"
	"io"
	"time"

	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// Sink shows the windows of a span as they come. A Sink is used from one
// goroutine.
type Sink interface {
	// Window shows one window and the totals after it; tot.Elapsed is
	// the time from the span's start to the window's end.
	Window(w sampler.Window, tot sampler.Totals) error
	// Resize redraws after the terminal changed size. It does nothing
	// for a sink that does not draw on a terminal.
	Resize() error
	// Close leaves the terminal as it was before the sink. It may be
	// called more than once; the panel draws nothing after it.
	Close() error
}

// Format is a way of showing the windows of a span.
type Format int

const (
	// Lines is one line for people per window: for a pipe or a file.
	Lines Format = iota
	// NDJSON is one JSON object per window, a SampleLine.
	NDJSON
	// Panel is a panel redrawn in place on the terminal's alternate
	// screen.
	Panel
)

func (f Format) String() string {
	switch f {
	case Lines:
		return "lines"
	case NDJSON:
		return "ndjson"
	case Panel:
		return "panel"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ChooseFormat is the format exopower watch shows its windows in: NDJSON
// when JSON was asked for, else the panel on a terminal, else lines.
func ChooseFormat(json, tty bool) Format {
	switch {
	case json:
		return NDJSON
	case tty:
		return Panel
	}
	return Lines
}

// Terminal is where a sink writes.
type Terminal struct {
	// Out takes the sink's output.
	Out io.Writer
	// TTY says whether Out is a terminal.
	TTY bool
	// Size returns the size of the terminal, in columns and rows. When
	// it is nil, fails or gives no width, the panel takes 80x24.
	Size func() (width, height int, err error)
}

// size is the terminal's size in columns and rows, 80x24 when unknown.
func (t Terminal) size() (width, height int) {
	if t.Size == nil {
		return 80, 24
	}
	w, h, err := t.Size()
	if err != nil || w <= 0 {
		return 80, 24
	}
	return w, h
}

// SinkConfig says how to show the windows of a span.
type SinkConfig struct {
	Format   Format
	Terminal Terminal
	// Getenv reads the environment (NO_COLOR, CI, TERM, and what lipgloss
	// reads to choose colours). Nil reads as an empty environment.
	Getenv func(string) string
	// Origin is the start of the span, on the windows' clock.
	Origin time.Time
	// Source names the machine, for the panel's title. The panel asks
	// for it at the first window, by when the stream's first document
	// has named the machine, and again at later ones while it names no
	// Tool. Nil leaves the title without it.
	Source func() wire.Source
	// Wall gives the metered plug's live figures (watch --wall), asked
	// for at each window. Nil: no plug.
	Wall func() *wire.SampleWall
	// Apps says whether the panel shows the apps (top) or the rails
	// (watch) first, and NoApps why the apps cannot be shown ("" where
	// they can); Keys that the keys are read (the panel says which).
	Apps   View
	NoApps string
	Keys   bool
}

// View is one of the live screen's views.
type View int

// The views: watch's rails, top's apps.
const (
	StartOnRails View = iota
	StartOnApps
)

// NewSink returns the sink for c.Format, writing to c.Terminal. The panel
// enters the terminal's alternate screen at once; the caller must Close
// it to leave.
func NewSink(c SinkConfig) (Sink, error) {
	switch c.Format {
	case Lines:
		return &linesSink{out: c.Terminal.Out, wall: c.Wall}, nil
	case NDJSON:
		return &ndjsonSink{out: c.Terminal.Out, wall: c.Wall}, nil
	case Panel:
		return newPanelSink(c)
	}
	return nil, fmt.Errorf("no sink for %v", c.Format)
}

// NewSampleLine describes window w and the totals tot after it.
func NewSampleLine(w sampler.Window, tot sampler.Totals) wire.SampleLine {
	return wire.SampleLine{
		SchemaVersion:   wire.SchemaVersion,
		Type:            "sample",
		Time:            w.End.UTC().Format(time.RFC3339Nano),
		WindowSeconds:   wire.Num(w.End.Sub(w.Start).Seconds()),
		PowerWatts:      wire.NewComponents(w.Power, w.Has),
		EnergyJoules:    wire.NewComponents(tot.Energy, tot.Has),
		ThermalPressure: w.ThermalPressure,
	}
}

// ndjsonSink writes a SampleLine per window, put together in a buffer kept
// from one window to the next.
type ndjsonSink struct {
	out  io.Writer
	buf  []byte
	wall func() *wire.SampleWall
}

func (s *ndjsonSink) Window(w sampler.Window, tot sampler.Totals) error {
	l := NewSampleLine(w, tot)
	if s.wall != nil {
		l.Wall = s.wall()
	}
	b, err := appendSampleLine(s.buf[:0], &l)
	if err != nil {
		// A value JSON cannot hold: encoding/json's own error says so.
		return WriteJSON(s.out, l)
	}
	s.buf = b
	_, err = s.out.Write(b)
	return err
}

func (s *ndjsonSink) Resize() error { return nil }
func (s *ndjsonSink) Close() error  { return nil }

// linesSink writes a line for people per window, unstyled: it is for
// pipes and files. The line is put together in a buffer kept from one
// window to the next: a meter's work at every sample adds to what it
// measures.
type linesSink struct {
	out  io.Writer
	buf  []byte
	wall func() *wire.SampleWall
}

func (s *linesSink) Window(w sampler.Window, tot sampler.Totals) error {
	b := w.End.AppendFormat(s.buf[:0], "15:04:05.000")
	var wall *wire.SampleWall
	if s.wall != nil {
		// The wall leads, as in the summary.
		wall = s.wall()
		b = append(b, "  wall "...)
		if wall.PowerWatts == nil {
			b = append(b, "n/a"...)
		} else {
			b = appendWatts(b, float64(*wall.PowerWatts))
		}
	}
	if w.Has.System {
		b = appendWatts(append(b, "  system "...), w.Power.System)
	}
	b = appendWatts(append(b, "  total "...), w.Power.Total)
	b = appendWatts(append(b, "  CPU "...), w.Power.CPU)
	b = appendWatts(append(b, "  GPU "...), w.Power.GPU)
	b = appendWatts(append(b, "  ANE "...), w.Power.ANE)
	if w.Has.DRAM {
		b = appendWatts(append(b, "  DRAM "...), w.Power.DRAM)
	}
	if w.Has.System {
		b = appendJoules(append(b, "  system energy "...), tot.Energy.System)
	}
	b = appendJoules(append(b, "  energy "...), tot.Energy.Total)
	if wall != nil {
		b = appendJoules(append(b, "  wall energy "...), float64(wall.EnergyJoules))
	}
	b = append(append(append(b, "  thermal "...), or(w.ThermalPressure, "n/a")...), '\n')
	s.buf = b
	_, err := s.out.Write(b)
	return err
}

func (s *linesSink) Resize() error { return nil }
func (s *linesSink) Close() error  { return nil }

// or is s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
