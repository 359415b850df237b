package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/output"
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
// its power readings give over those seconds, side by side.
func checkWall(ctx context.Context, w Wall, interval time.Duration) check {
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
	return c
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
