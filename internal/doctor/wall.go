package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wall"
)

// Wall is the plug of doctor --wall: checked, and read for a few seconds.
type Wall struct {
	Target      wall.Target
	Credentials wall.Credentials
}

// wallReadings is how many times the plug is read, a second apart.
const wallReadings = 4

// checkWall opens the plug and reads it wallReadings times: what it is,
// its counter's resolution, its power, and the energy its counter and
// its power readings give over those seconds, side by side; and holds it
// against the Mac's own power over the same seconds, from IOReport and
// the SMC opened by open (nil: the real ones), where they answer.
func checkWall(ctx context.Context, w Wall, interval time.Duration, open source.OpenIOReport) check {
	c := check{name: "wall"}
	p, err := wall.Open(ctx, w.Target, w.Credentials)
	var ae *wall.AuthError
	var ue *wall.UnsupportedError
	switch {
	case errors.As(err, &ae):
		c.detail, c.fixes = err.Error(), []string{"give the plug's credentials in --wall-credentials FILE or $EXOPOWER_WALL_PASSWORD ($EXOPOWER_WALL_TOKEN for Home Assistant)"}
		return c
	case errors.As(err, &ue):
		c.detail, c.fixes = err.Error(), []string{adapterFix}
		return c
	case err != nil:
		c.detail, c.fixes = err.Error(), []string{"check that the plug is on and reachable from this Mac, and its URL (docs/wall.md)"}
		return c
	}
	defer p.Close()
	m := wall.NewMeter(p, interval, nil)
	mac := startMac(ctx, open)
	defer mac.close()
	from := time.Now()
	for i := range wallReadings {
		if i > 0 {
			select {
			case <-ctx.Done():
				c.detail = "interrupted"
				return c
			case <-time.After(interval):
			}
		}
		m.Poll(ctx)
	}
	st := m.Stats()
	if st.Failures > 0 {
		c.detail = fmt.Sprintf("%s: %d of %d readings failed, the last with: %s", describe(p.Info()), st.Failures, st.Polls, st.LastError)
		c.fixes = []string{"a plug that answers now and then leaves time uncovered: check its Wi-Fi, and that nothing else polls it hard"}
		return c
	}
	c.ok, c.detail = true, describe(p.Info())+"; "+readings(m, from, p.Info())
	if a := describeAdapter(p); a != "" {
		c.detail += "; " + a
	}
	_, at, _ := m.Latest()
	held, ok, fix := mac.against(ctx, m.Energy(from, at), at.Sub(from))
	c.detail += "; " + held
	if !ok {
		c.ok, c.fixes = false, []string{fix}
	}
	return c
}

// macPower is the Mac's own power over the plug's readings, from
// IOReport and the SMC, which need no root.
type macPower struct {
	meter    *sampler.Sampler
	span     *sampler.Span
	err      error
	finished bool
}

// startMac starts IOReport and the SMC and a span on them; where they do
// not answer (not a Mac), the wall is held against nothing.
func startMac(ctx context.Context, open source.OpenIOReport) *macPower {
	meter, err := source.Start(ctx, source.Options{Kind: source.IOReport, IOReport: open, Interval: 200 * time.Millisecond})
	if err != nil {
		return &macPower{err: err}
	}
	return &macPower{meter: meter, span: meter.Begin(ctx, nil)}
}

// close stops IOReport where the span was not finished (a check that
// failed before it): nothing is left running.
func (mp *macPower) close() {
	if mp.meter != nil && !mp.finished {
		mp.meter.Stop()
	}
}

// against ends the Mac's span at the plug's last reading, d after the
// first, and holds the plug's energy sp against the Mac's own: the whole
// Mac's as the SMC reports it where it does, else the SoC's. A plug that
// reads less than the Mac draws is not the Mac's (or the Mac ran from
// its battery): ok is false, and fix says what to check.
func (mp *macPower) against(ctx context.Context, sp wall.Span, d time.Duration) (text string, ok bool, fix string) {
	if mp.meter == nil {
		return "the Mac's own power was not read (" + mp.err.Error() + "): nothing to hold the plug against", true, ""
	}
	res := mp.meter.Finish(ctx, mp.span, mp.span.Start.Add(d))
	mp.finished = true
	if res.Samples == 0 || d <= 0 {
		return "the Mac's own power gave no window over the readings: nothing to hold the plug against", true, ""
	}
	wallW := sp.Joules / d.Seconds()
	own, name := res.Average.Total, "its SoC alone (no SMC answers)"
	if res.Has.System {
		own, name = res.Average.System, "the whole Mac as its SMC reports it"
	}
	if wallW < 0.9*own-1 {
		return fmt.Sprintf("the plug read %s over those seconds, less than %s, %s", output.Watts(wallW), name, output.Watts(own)), false,
			"is this Mac plugged into this plug, through its adapter? (a MacBook running from its battery draws less at the wall than it uses)"
	}
	text = fmt.Sprintf("%s over the same seconds: %s; the wall is %s more, %.0f %% (the adapter's loss, and whatever else is on the plug)",
		name, output.Watts(own), output.Watts(wallW-own), 100*(wallW-own)/max(own, 1e-9))
	if res.Has.System && wallW > 2*own+30 {
		text += "; more than the Mac again: something else draws on this plug"
	}
	return text, true, ""
}

// describe says what the plug is.
func describe(in wall.Info) string {
	var parts []string
	for _, s := range []string{in.Model, in.Name} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	what := in.Kind
	if len(parts) > 0 {
		what += " " + strings.Join(parts, ", ")
	}
	if in.Firmware != "" {
		what += ", firmware " + in.Firmware
	}
	what += " at " + in.Address
	if in.HasCounter {
		what += fmt.Sprintf(", its counter in counts of %s", output.Joules(in.CounterResolution))
	} else {
		what += ", no counter of its own (power readings only)"
	}
	return what
}

// readings says what the readings gave: the newest power, and the
// energy over their time.
func readings(m *wall.Meter, from time.Time, in wall.Info) string {
	r, at, _ := m.Latest()
	text := ""
	if r.HasPower {
		text = fmt.Sprintf("now %s", output.Watts(r.Power))
	}
	sp := m.Energy(from, at)
	secs := at.Sub(from).Seconds()
	if secs > 0 {
		text += fmt.Sprintf("; %s over %s (%s, %s ± %s by its %s)", output.Watts(sp.Joules/secs), output.Seconds(secs), output.Count(sp.Polls, "reading"),
			output.Joules(sp.Joules), output.Joules(sp.UncertaintyJoules), sp.Method)
	}
	if in.HasCounter && sp.Method != wall.MethodCounter {
		text += fmt.Sprintf("; a run needs ten counts (%s) to be measured by the counter", output.Joules(10*in.CounterResolution))
	}
	return strings.TrimPrefix(text, "; ")
}
