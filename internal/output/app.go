package output

import (
	"fmt"
	"strings"

	"github.com/exopower/exopower/internal/wire"
)

// writeApp writes one app's energy over the span (run --app), each
// figure with how it was obtained.
func writeApp(b *strings.Builder, sum *wire.Summary, st *Styles) {
	a := sum.App
	if a == nil {
		return
	}
	head := fmt.Sprintf("the app %s: %s seen, %d running at the end", a.Name, processes(a.Processes), a.ProcessesRunning)
	if a.ProcessesNotReadable > 0 {
		head += fmt.Sprintf(" (%d of another user's, which it may not read)", a.ProcessesNotReadable)
	}
	head += fmt.Sprintf("; %s of every process over %s", Count(a.Reads, "read"), Seconds(float64(a.ReadSeconds)))
	fmt.Fprintf(b, "  %s\n", st.Render(st.Label, head))
	line := func(name string, j, w wire.Num, how string) {
		fmt.Fprintf(b, "  %s %s %s  %s\n", st.Render(st.Label, fmt.Sprintf("%-11s", name)), st.Render(st.Value, fmt.Sprintf("%10s", Joules(float64(j)))),
			st.Render(st.Value, fmt.Sprintf("%9s", Watts(float64(w)))), how)
	}
	e, p := a.EnergyJoules, a.AvgPowerWatts
	line("CPU", e.CPU, p.CPU, wire.MethodMeasuredByKernel)
	line("GPU", e.GPU, p.GPU, wire.MethodEstimatedFromGPU)
	line("app", e.Total, p.Total, "the two, added")
}
