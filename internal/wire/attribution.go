package wire

// Attribution is the energy of the measured command's own process tree
// (run --attribute), beside the whole Mac's: each figure with how it was
// obtained, in Methods.
type Attribution struct {
	// ProcessesRead is how many of the tree's processes were read;
	// ProcessesNotReadable how many more were another user's, whose
	// usage this user may not read (under sudo, a setuid program);
	// ProcessesRunningAtEnd how many of those read outlived the command
	// (counted to its end).
	ProcessesRead         int `json:"processes_read"`
	ProcessesNotReadable  int `json:"processes_not_readable"`
	ProcessesRunningAtEnd int `json:"processes_running_at_end"`
	// PollIntervalSeconds is how often the tree was read; Polls how many
	// times it was.
	PollIntervalSeconds Num `json:"poll_interval_seconds"`
	Polls               int `json:"polls"`
	// CPUSeconds is the CPU time of the processes read; UnseenCPUSeconds
	// the tree's CPU time that no reading held (descendants that lived
	// and were reaped between two polls, another user's processes, the
	// last moments of those read); Coverage the part of the tree's CPU
	// time that was read.
	CPUSeconds       Num `json:"cpu_seconds"`
	UnseenCPUSeconds Num `json:"unseen_cpu_seconds"`
	Coverage         Num `json:"coverage"`
	// GPUShare is the tree's part of every process's GPU time over the
	// polls; null where the GPU's clients could not be read.
	GPUShare *Num `json:"gpu_share"`
	// EnergyJoules are the tree's figures, and the rest of the Mac's.
	EnergyJoules AttributedEnergy `json:"energy_joules"`
	// Methods says, for each figure of EnergyJoules by its name, how it
	// was obtained: "measured by the kernel", "estimated from CPU time",
	// "estimated from the share of GPU time", "measured by the drivers,
	// for the command's own coalition", "the remainder".
	Methods map[string]string `json:"methods"`
	// RestOf names what the rest of the Mac is the remainder of:
	// "system" (the SMC's whole-Mac power) or "soc" (CPU + GPU + ANE).
	RestOf string `json:"rest_of"`
	// CoalitionNote says why the coalition's figures are missing; empty
	// where they are there.
	CoalitionNote string `json:"coalition_note,omitempty"`
}

// AttributedEnergy is the tree's energy, in joules.
type AttributedEnergy struct {
	// CPU is what the kernel measured of the processes read, and
	// CPUPerformanceCores its part on the performance cores.
	CPU                 Num `json:"cpu"`
	CPUPerformanceCores Num `json:"cpu_performance_cores"`
	// UnseenCPU is the unseen CPU time at the energy per CPU second of
	// the processes read: an estimate.
	UnseenCPU Num `json:"unseen_cpu"`
	// GPU is the command's coalition's GPU energy where it has one of
	// its own on macOS 15 or later, else the tree's share of GPU time
	// times the GPU's energy: an estimate. Null where neither is known.
	GPU *Num `json:"gpu"`
	// ANE is the command's coalition's Neural Engine energy, where it
	// has one of its own on macOS 15 or later; null otherwise.
	ANE *Num `json:"ane"`
	// Command is CPU + UnseenCPU + GPU + ANE: the command's energy.
	Command Num `json:"command"`
	// RestOfMac is the Mac's energy (RestOf) less Command.
	RestOfMac Num `json:"rest_of_mac"`
}

// How each figure of an Attribution was obtained (Attribution.Methods).
const (
	MethodMeasuredByKernel  = "measured by the kernel"
	MethodEstimatedFromCPU  = "estimated from CPU time"
	MethodEstimatedFromGPU  = "estimated from the share of GPU time"
	MethodMeasuredByDrivers = "measured by the drivers, for the command's own coalition"
	MethodRemainder         = "the remainder"
)
