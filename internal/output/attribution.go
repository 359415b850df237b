package output

import (
	"fmt"
	"strings"

	"github.com/exopower/exopower/internal/wire"
)

// writeAttribution writes the command's own processes' energy (run
// --attribute), each figure with how it was obtained, and the rest of
// the Mac's.
func writeAttribution(b *strings.Builder, sum *wire.Summary, st *Styles) {
	a := sum.Attribution
	if a == nil {
		return
	}
	e := a.EnergyJoules
	head := "the command's own processes: " + processes(a.ProcessesRead) + " read"
	if a.ProcessesNotReadable > 0 {
		head += fmt.Sprintf(" and %d more of another user's, which it may not read", a.ProcessesNotReadable)
	}
	if a.ProcessesRunningAtEnd > 0 {
		head += fmt.Sprintf(", %d still running at the end (counted to it)", a.ProcessesRunningAtEnd)
	}
	fmt.Fprintf(b, "  %s\n", st.Render(st.Label, head+fmt.Sprintf("; read every %.0f ms", float64(a.PollIntervalSeconds)*1000)))
	line := func(name string, j wire.Num, how string) {
		fmt.Fprintf(b, "  %s %s  %s\n", st.Render(st.Label, fmt.Sprintf("%-11s", name)), st.Render(st.Value, fmt.Sprintf("%10s", Joules(float64(j)))), how)
	}
	line("CPU", e.CPU, fmt.Sprintf("%s (%s of CPU time; %s on the performance cores)", a.Methods["cpu"], Seconds(float64(a.CPUSeconds)), Joules(float64(e.CPUPerformanceCores))))
	line("unseen CPU", e.UnseenCPU, fmt.Sprintf("%s: %s that no reading held (%s of the tree's CPU time read)", a.Methods["unseen_cpu"], Seconds(float64(a.UnseenCPUSeconds)), Percent(float64(a.Coverage))))
	switch {
	case e.GPU != nil && a.Methods["gpu"] == wire.MethodEstimatedFromGPU && a.GPUShare != nil:
		line("GPU", *e.GPU, fmt.Sprintf("%s: %s of the GPU's time × the GPU's %s", a.Methods["gpu"], Percent(float64(*a.GPUShare)), Joules(float64(sum.EnergyJoules.GPU))))
	case e.GPU != nil:
		line("GPU", *e.GPU, a.Methods["gpu"])
	}
	if e.ANE != nil {
		line("ANE", *e.ANE, a.Methods["ane"])
	}
	line("command", e.Command, "the figures above, added")
	line("rest of Mac", e.RestOfMac, fmt.Sprintf("%s: the %s energy less the command's", a.Methods["rest_of_mac"], restOfName(a.RestOf)))
	if a.CoalitionNote != "" {
		fmt.Fprintf(b, "  %s no GPU or Neural Engine energy from the drivers: %s\n", st.Render(st.Label, fmt.Sprintf("%-11s", "")), a.CoalitionNote)
	}
}

func restOfName(of string) string {
	if of == "system" {
		return "whole Mac's (system)"
	}
	return "SoC's (CPU + GPU + ANE)"
}

func processes(n int) string {
	if n == 1 {
		return "1 process"
	}
	return fmt.Sprintf("%d processes", n)
}
