package bench

import (
	"fmt"
	"io"
	"strings"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// WriteText writes the report for people, styled with st.
func WriteText(w io.Writer, rep *Report, st *output.Styles) error {
	var b strings.Builder
	if bl := rep.Baseline; bl != nil {
		fmt.Fprintf(&b, "%s %s\n", st.Render(st.Title, "idle baseline:"), idleText(float64(bl.PowerWatts), bl.StandardErrorWatts))
		if bl.After != nil {
			fmt.Fprintf(&b, "  before %s, after %s, %s each\n", idleText(float64(bl.Before.PowerWatts), bl.Before.StandardErrorWatts),
				idleText(float64(bl.After.PowerWatts), bl.After.StandardErrorWatts), output.Seconds(float64(bl.DurationSeconds)))
		}
		if sys := bl.SystemPowerWatts; sys != nil {
			fmt.Fprintf(&b, "  the whole Mac idle: %s (what net system is net of)\n", output.Watts(float64(*sys)))
		}
	}
	for i, r := range rep.Results {
		writeResult(&b, i, r, st, rep.Unit)
	}
	if c := rep.Comparison(); len(c) > 0 {
		fmt.Fprintln(&b, st.Render(st.Title, "summary:"))
		for _, l := range c {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	for _, wn := range rep.Warnings {
		fmt.Fprintf(&b, "%s %s\n", st.Render(st.Warn, "warning:"), wn)
	}
	if !rep.Complete {
		fmt.Fprintf(&b, "%s the bench was cut short: these are the runs made by then\n", st.Render(st.Warn, "warning:"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func idleText(p float64, se *wire.Num) string {
	if se == nil {
		return output.Watts(p)
	}
	return output.Watts(p) + " ± " + output.Watts(float64(*se))
}

func writeResult(b *strings.Builder, i int, r Result, st *output.Styles, unit *string) {
	fmt.Fprintf(b, "%s %s (%s)\n", st.Render(st.Title, fmt.Sprintf("command %d:", i+1)), r.Command, output.Count(len(r.Runs), "run"))
	row := func(label string, s *Spread, unit func(float64) string) {
		if s == nil {
			return
		}
		mean := unit(float64(s.Mean))
		if s.Stddev != nil {
			mean += " ± " + unit(float64(*s.Stddev))
		}
		fmt.Fprintf(b, "  %s %-22s median %s, range %s … %s\n", st.Render(st.Label, fmt.Sprintf("%-10s", label)), mean,
			unit(float64(s.Median)), unit(float64(s.Min)), unit(float64(s.Max)))
	}
	if r.SystemEnergyJoules != nil {
		row("system", r.SystemEnergyJoules, output.Joules)
		row("net system", r.NetSystemEnergyJoules, output.Joules)
	}
	row("energy", r.EnergyJoules, output.Joules)
	row("net", r.NetEnergyJoules, output.Joules)
	if u := r.NetEnergyUncertaintyJoules; u != nil {
		fmt.Fprintf(b, "  %s ± %s from the idle baseline\n", st.Render(st.Label, fmt.Sprintf("%-10s", "")), output.Joules(float64(*u)))
	}
	row("power", r.AvgPowerWatts, output.Watts)
	row("duration", r.DurationSeconds, output.Seconds)
	if unit != nil {
		// Four figures: an energy per token is often a few millijoules.
		row("per "+*unit, r.EnergyPerUnitJoules, func(x float64) string { return fmt.Sprintf("%.4g J", x) })
		row(*unit+"s/J", r.UnitsPerJoule, func(x float64) string { return fmt.Sprintf("%.4g", x) })
	}
	fmt.Fprintf(b, "  %s %s\n", st.Render(st.Label, fmt.Sprintf("%-10s", "exit")), exitText(r.ExitCodes))
	for _, wn := range r.Warnings {
		fmt.Fprintf(b, "  %s %s\n", st.Render(st.Warn, "warning:"), wn)
	}
}

// exitText counts the runs by exit code: "0 ×5", "0 ×3, 1 ×2".
func exitText(codes []int) string {
	var order []int
	count := map[int]int{}
	for _, c := range codes {
		if count[c] == 0 {
			order = append(order, c)
		}
		count[c]++
	}
	parts := make([]string, len(order))
	for i, c := range order {
		parts[i] = fmt.Sprintf("%d ×%d", c, count[c])
	}
	if len(parts) == 0 {
		return "no run"
	}
	return strings.Join(parts, ", ")
}
