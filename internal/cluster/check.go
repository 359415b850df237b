package cluster

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/wire"
)

// The checks of a node's answers, as the powermetrics decoder checks a
// document: every field exopower uses is there, a number, and within
// what a Mac can do; what is not is an error that names the field. A node
// that answers so is refused at the start (a bad node) or, mid-run,
// lost, with what it answered well before; its numbers never reach the
// sum, where one would make it meaningless or unwritable (1e308 J
// averages to +Inf, which JSON cannot hold). The text in an answer is
// made safe for a terminal here too (clean), so that no output has to.

// maxSamples bounds a span's windows: a billion of the shortest, 10 ms,
// would take four months.
const maxSamples = 1_000_000_000

// checkInterval checks a node's interval, field naming it.
func checkInterval(field string, v wire.Num) error {
	if s := float64(v); !(s >= power.MinInterval.Seconds() && s <= power.MaxInterval.Seconds()) {
		return fmt.Errorf("%s %v is out of the range exopower takes, %v to %v", field, s, power.MinInterval, power.MaxInterval)
	}
	return nil
}

// checkStatus checks GET /v1/status's answer, and cleans its text.
func checkStatus(st *wire.Status) error {
	st.Node, st.Source = clean(st.Node), cleanSource(st.Source)
	if st.Node == "" {
		return errors.New("node, its name, is missing")
	}
	if err := checkHex("instance_id", st.InstanceID); err != nil {
		return err
	}
	if st.BootID != nil {
		if err := checkHex("boot_id", *st.BootID); err != nil {
			return err
		}
	}
	return checkInterval("interval_seconds", st.IntervalSeconds)
}

// checkHex checks an id that serve draws, field naming it: hex digits,
// at most 64 of them, or none (a serve older than the field).
func checkHex(field, id string) error {
	if len(id) > 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return fmt.Errorf("%s %q is not an id as serve draws it (up to 64 hex digits)", field, clean(id))
	}
	return nil
}

// checkOpened checks POST /v1/spans's answer, and cleans its text.
func checkOpened(o *wire.Opened) error {
	o.ID, o.Node, o.URL = clean(o.ID), clean(o.Node), clean(o.URL)
	if o.ID == "" {
		return errors.New("id, the span's, is missing")
	}
	return checkTime("started_at", o.StartedAt)
}

func checkTime(field, s string) error {
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
		return fmt.Errorf("%s %q is no RFC 3339 time", field, clean(s))
	}
	return nil
}

// checkReading checks a span's reading (ended: the answer to its end),
// and cleans its text. Fields that a span's reading never holds (the
// nodes, a command, a bound) are dropped, so that a node cannot slip rows
// into the summary.
func checkReading(r *wire.Reading, ended bool) error {
	r.ID, r.Node = clean(r.ID), clean(r.Node)
	s := r.Summary
	if s == nil {
		return errors.New("its measurement (started_at, duration_seconds, energy_joules...) is missing")
	}
	s.Type, s.Scope, s.Source, s.Warnings = clean(s.Type), clean(s.Scope), cleanSource(s.Source), cleanWarnings(s.Warnings)
	s.Command, s.ExitCode, s.Signal, s.Nodes, s.UncertaintyJoules, s.Title = nil, nil, nil, nil, nil, ""
	if s.SchemaVersion != wire.SchemaVersion {
		return fmt.Errorf("schema_version %d, where this exopower reads %d (is one of them out of date?)", s.SchemaVersion, wire.SchemaVersion)
	}
	if err := checkTime("started_at", s.StartedAt); err != nil {
		return err
	}
	if ended {
		if r.EndedAt == nil {
			return errors.New("ended_at is missing")
		}
		if err := checkTime("ended_at", *r.EndedAt); err != nil {
			return err
		}
	}
	secs := float64(s.DurationSeconds)
	switch {
	case !(secs >= 0 && secs <= power.MaxWindow.Seconds()):
		return fmt.Errorf("duration_seconds %v is implausible: negative, or longer than a week", secs)
	case !(s.Coverage >= 0 && s.Coverage <= 1):
		return fmt.Errorf("coverage %v is outside [0, 1]", float64(s.Coverage))
	case s.Samples < 0 || s.Samples > maxSamples:
		return fmt.Errorf("samples %d is implausible", s.Samples)
	}
	if err := checkInterval("interval_seconds", s.IntervalSeconds); err != nil {
		return err
	}
	if err := checkEnergy("energy_joules", s.EnergyJoules, secs); err != nil {
		return err
	}
	if err := checkPower("avg_power_watts", s.AvgPowerWatts); err != nil {
		return err
	}
	if err := checkRails(s.Rails); err != nil {
		return err
	}
	if err := checkPower("peak_power_watts", s.PeakPowerWatts); err != nil {
		return err
	}
	// An estimate from a calibration is the node's own business: the
	// total sums what was measured.
	s.WallEstimated = nil
	if err := checkWall(s.Wall, secs); err != nil {
		return err
	}
	// Made here from the figures just checked, whatever the node said
	// (a serve older than the field says nothing); energy crowded into a
	// sliver of covered time is power no Mac draws.
	if s.MeasuredAvgPowerWatts = s.MeasuredAverage(); s.MeasuredAvgPowerWatts != nil {
		return checkPower("energy_joules/(duration_seconds×coverage)", *s.MeasuredAvgPowerWatts)
	}
	return nil
}

// checkRails checks the rails' health a node gives: counts no lower
// than zero, nor more than a span could hold, and stillness no longer
// than a window may last.
func checkRails(rails wire.Rails) error {
	for i, r := range rails.List() {
		name := "rails." + power.Rail(i).Label()
		switch {
		case r.RefusedWindows < 0 || r.RefusedWindows > maxSamples:
			return fmt.Errorf("%s.refused_windows %d is implausible", name, r.RefusedWindows)
		case r.Glitches < 0 || r.Glitches > maxSamples:
			return fmt.Errorf("%s.glitches %d is implausible", name, r.Glitches)
		case !(r.StillSeconds >= 0 && float64(r.StillSeconds) <= power.MaxWindow.Seconds()):
			return fmt.Errorf("%s.still_seconds %v is implausible: negative, or longer than a week", name, float64(r.StillSeconds))
		}
	}
	return nil
}

// checkLine checks a line of a stream of windows that began since ago,
// and cleans its text.
func checkLine(l *wire.SampleLine, since time.Duration) error {
	l.Type, l.Node, l.ThermalPressure = clean(l.Type), clean(l.Node), clean(l.ThermalPressure)
	// The label is the client's to give, among the nodes it watches.
	l.Label = ""
	switch {
	case l.SchemaVersion != wire.SchemaVersion:
		return fmt.Errorf("schema_version %d, where this exopower reads %d (is one of them out of date?)", l.SchemaVersion, wire.SchemaVersion)
	case l.Type != "sample":
		return fmt.Errorf("type %q, where a window's is \"sample\"", l.Type)
	case !(l.WindowSeconds >= 0 && float64(l.WindowSeconds) <= power.MaxWindow.Seconds()):
		return fmt.Errorf("window_seconds %v is implausible: negative, or longer than a week", float64(l.WindowSeconds))
	}
	if err := checkTime("time", l.Time); err != nil {
		return err
	}
	if err := checkPower("power_watts", l.PowerWatts); err != nil {
		return err
	}
	// The energy is cumulative from the stream's start, which was at
	// most since ago, give or take the clocks' rates.
	return checkEnergy("energy_joules", l.EnergyJoules, (since + EndSlack).Seconds())
}

// checkPower checks the components of field, powers: each a number from
// 0 to power.MaxWatts, the most exopower believes of any Mac (a node's
// own source has held each of its windows to its Mac's own bounds).
func checkPower(field string, c wire.Components) error {
	return checkComponents(field, c, power.MaxWatts, fmt.Sprintf("over %d kW", power.MaxWatts/1000))
}

// checkEnergy checks the components of field, energies over secs: each
// a number from 0 to what power.MaxWatts gives over secs.
func checkEnergy(field string, c wire.Components, secs float64) error {
	return checkComponents(field, c, power.MaxWatts*secs, fmt.Sprintf("over %d kW for %.3g s", power.MaxWatts/1000, secs))
}

func checkComponents(field string, c wire.Components, most float64, over string) error {
	for _, v := range []struct {
		name string
		v    *wire.Num
	}{{"total", &c.Total}, {"cpu", &c.CPU}, {"gpu", &c.GPU}, {"ane", &c.ANE}, {"dram", c.DRAM}, {"system", c.System}} {
		if v.v == nil {
			continue
		}
		switch x := float64(*v.v); {
		case !(x >= 0):
			return fmt.Errorf("%s.%s %v is implausible: negative, or not a number", field, v.name, x)
		case x > most*(1+1e-9)+1e-9:
			return fmt.Errorf("%s.%s %v is implausible: %s", field, v.name, x, over)
		}
	}
	return nil
}
