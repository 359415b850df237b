package attrib

import (
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/wire"
)

// Wire is the attribution as the summary carries it, beside the Mac's
// energy over the same span (the source's reading of it): the tree's GPU
// energy estimated as its share of the GPU's time times the GPU's
// energy, unless its own coalition's driver accounting is there, and the
// rest of the Mac the remainder of the whole Mac's energy (the SoC's
// where the whole Mac's is not measured).
func (r Result) Wire(interval time.Duration, mac power.Values, has power.Reported, info Info) *wire.Attribution {
	a := &wire.Attribution{
		ProcessesRead: r.Processes, ProcessesNotReadable: r.NotPermitted, ProcessesRunningAtEnd: r.Running,
		PollIntervalSeconds: wire.Num(interval.Seconds()), Polls: r.Polls,
		CPUSeconds: wire.Num(r.CPUTime.Seconds()), UnseenCPUSeconds: wire.Num(r.UnseenCPUTime.Seconds()),
		Coverage: wire.Num(r.Coverage()), CoalitionNote: r.CoalitionNote,
		Methods: map[string]string{"cpu": wire.MethodMeasuredByKernel, "cpu_performance_cores": wire.MethodMeasuredByKernel, "unseen_cpu": wire.MethodEstimatedFromCPU, "rest_of_mac": wire.MethodRemainder},
	}
	e := &a.EnergyJoules
	e.CPU, e.CPUPerformanceCores, e.UnseenCPU = wire.Num(r.CPU), wire.Num(r.PCPU), wire.Num(r.UnseenCPU())
	if r.GPUErr == nil && r.Polls > 1 {
		share := wire.Num(r.GPUShare())
		a.GPUShare = &share
		if has.GPU {
			gpu := wire.Num(r.GPUShare() * mac.GPU)
			e.GPU, a.Methods["gpu"] = &gpu, wire.MethodEstimatedFromGPU
		}
	}
	if c := r.Coalition; c != nil && info.AcceleratorEnergy {
		gpu, ane := wire.Num(c.GPU), wire.Num(c.ANE)
		e.GPU, e.ANE, a.Methods["gpu"], a.Methods["ane"] = &gpu, &ane, wire.MethodMeasuredByDrivers, wire.MethodMeasuredByDrivers
	} else if c != nil && a.CoalitionNote == "" {
		a.CoalitionNote = "the command has a coalition of its own, but macOS " + info.MacOS + " accounts no GPU or Neural Engine energy to coalitions (macOS 15 and later do)"
	}
	e.Command = e.CPU + e.UnseenCPU + val(e.GPU) + val(e.ANE)
	whole := mac.Total
	a.RestOf = "soc"
	if has.System {
		whole, a.RestOf = mac.System, "system"
	}
	e.RestOfMac = wire.Num(whole) - e.Command
	return a
}

// FromComponents is the Mac's energy as a summary gives it, for Wire.
func FromComponents(c wire.Components) (power.Values, power.Reported) {
	mac := power.Values{CPU: float64(c.CPU), GPU: float64(c.GPU), ANE: float64(c.ANE), Total: float64(c.Total), System: float64(val(c.System))}
	return mac, power.Reported{CPU: true, GPU: true, ANE: true, DRAM: c.DRAM != nil, System: c.System != nil}
}

func val(n *wire.Num) wire.Num {
	if n == nil {
		return 0
	}
	return *n
}
