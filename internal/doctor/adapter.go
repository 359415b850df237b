package doctor

import (
	"context"
	"errors"
	"fmt"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wall"
)

// adapterFix is what to use where a MacBook's adapter cannot be read.
const adapterFix = "measure at the wall with a metered plug: --wall shelly://HOST and the others in docs/wall.md"

// checkAdapter reads a MacBook's adapter once, as plain doctor does on a
// Mac: for information only, since exopower measures without it.
func checkAdapter(context.Context) check {
	c := check{name: "adapter", ok: true, info: true}
	p, err := wall.Open(context.Background(), wall.Target{Scheme: wall.KindAdapter}, wall.Credentials{})
	if err != nil {
		c.detail = err.Error()
		var ue *wall.UnsupportedError
		if !errors.As(err, &ue) {
			c.detail += "; --wall adapter will not read it"
		}
		return c
	}
	defer p.Close()
	c.detail = describeAdapter(p) + "; --wall adapter reads it"
	return c
}

// adapterState is the plug of --wall adapter.
type adapterState interface{ State() wall.AdapterState }

// describeAdapter says what the adapter's plug read last: the wall, the
// DC input and the adapter's loss, the Mac's load and the battery's flow,
// on AC or on battery; "" for another plug.
func describeAdapter(p wall.Plug) string {
	a, ok := p.(adapterState)
	if !ok {
		return ""
	}
	s := a.State()
	var text string
	switch {
	case !s.OnAC:
		text = "on battery: 0 W at the wall"
	case s.Telemetry:
		text = fmt.Sprintf("on AC: %s at the wall, %s coming in from the adapter and %s of its loss as macOS estimates it (AppleSmartBattery's PowerTelemetryData)",
			output.Watts(s.Wall), output.Watts(s.Input), output.Watts(s.Loss))
	default:
		text = fmt.Sprintf("on AC: %s coming in from the adapter, from the SMC's PDTR: PowerTelemetryData is missing on this model, so the adapter's loss is neither known nor counted", output.Watts(s.Input))
	}
	if s.HasLoad {
		text += fmt.Sprintf("; the Mac's load %s", output.Watts(s.Load))
	}
	switch {
	case s.HasBattery && s.Battery < 0:
		text += fmt.Sprintf("; the battery discharges at %s (%s)", output.Watts(-s.Battery), s.BatteryFrom)
		if !s.OnAC {
			text += ", which is what the Mac draws"
		}
	case s.HasBattery:
		text += fmt.Sprintf("; the battery takes %s (%s)", output.Watts(s.Battery), s.BatteryFrom)
	case !s.OnAC:
		text += "; the battery's discharge is not given on this model"
	}
	if s.Errors > 0 {
		text += fmt.Sprintf("; PowerTelemetryErrorCount is %d", s.Errors)
	}
	return text
}
