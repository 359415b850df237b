package plot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// macWindow is a window of a line of watch --json of this Mac: its end,
// by the Mac's clock, its length, and its power.
type macWindow struct {
	end    time.Time
	length time.Duration
	power  power.Values
	has    power.Reported
	energy power.Values // the watch's, from its start to the window's end
	// wall is the plug's power reading at the window's end (watch
	// --wall), where hasWall.
	wall    float64
	hasWall bool
}

// readMacLines reads the lines of watch --json of this Mac alone: its
// power per component over time, as a recording's, and the summary's
// figures.
func readMacLines(r io.Reader) (Power, error) {
	dec := json.NewDecoder(r)
	var ws []macWindow
	var sum *watchLine
	for k := 1; ; k++ {
		var l watchLine
		err := dec.Decode(&l)
		if err == io.EOF {
			return macPower(ws, sum)
		}
		if err != nil {
			return Power{}, fmt.Errorf("line %d: not a line of watch --json: %v", k, err)
		}
		switch {
		case l.Type == "summary":
			sum = &l
		case l.Type == "sample" && l.Node == "":
			end, err := time.Parse(time.RFC3339Nano, l.Time)
			if err != nil {
				return Power{}, fmt.Errorf("line %d: its time %q is not RFC 3339", k, l.Time)
			}
			w := macWindow{end: end, length: time.Duration(float64(l.WindowSeconds) * 1e9),
				power: l.PowerWatts.Values(), has: l.PowerWatts.Has(), energy: l.EnergyJoules.Values()}
			if l.Wall != nil && l.Wall.PowerWatts != nil {
				w.wall, w.hasWall = float64(*l.Wall.PowerWatts), true
			}
			ws = append(ws, w)
		case l.Type == "sample", l.Type == "total":
			return Power{}, fmt.Errorf("line %d: a node's line amid the lines of watch --json of this Mac alone: plot takes the lines of one watch", k)
		default:
			return Power{}, fmt.Errorf("line %d: a line of type %q, not one of watch --json", k, l.Type)
		}
	}
}

// macPower is the picture of a watch of this Mac: its windows in seconds
// from the watch's start, and the summary's energy and average; without
// a summary (a watch that did not end), from its first window's start
// to its last's end, and the energy its last line counts.
func macPower(ws []macWindow, sum *watchLine) (Power, error) {
	if len(ws) == 0 {
		return Power{}, errors.New("watch --json lines without a window: nothing to plot")
	}
	p := Power{Title: "exopower watch", Origin: "the watch's start"}
	t0 := ws[0].end.Add(-ws[0].length)
	last := ws[len(ws)-1]
	if sum != nil {
		if start, err := time.Parse(time.RFC3339Nano, sum.StartedAt); err == nil {
			t0 = start
		}
		p.Caption = caption(sum.Source)
		p.SpanEnd, p.Energy, p.Average = float64(sum.DurationSeconds), sum.EnergyJoules.Values(), sum.AvgPowerWatts.Values()
		if sum.Wall != nil {
			// The summary's wall is the span's, its energy_joules.
			j := float64(sum.Wall.EnergyJoules)
			p.WallEnergy = &j
		}
	} else {
		p.Title += "\nno summary line: the watch did not end"
		p.SpanEnd, p.Energy = last.end.Sub(t0).Seconds(), last.energy
		if p.SpanEnd > 0 {
			p.Average = p.Energy.Scale(1 / p.SpanEnd)
		}
	}
	for _, w := range ws {
		end := w.end.Sub(t0)
		p.Windows = append(p.Windows, Window{Start: (end - w.length).Seconds(), End: end.Seconds(), Power: w.power, Has: w.has, Wall: w.wall, HasWall: w.hasWall})
	}
	return p, nil
}
