// Package attrib attributes energy to a process tree: the part of the
// Mac's energy that one command and its descendants drew, on a Mac that
// is doing other things too. The kernel measures each process's CPU
// energy (proc_pid_rusage's ri_energy_nj, macOS 13 and later); the GPU's
// is estimated from each process's share of the GPU's time; a coalition
// of the command's own, where it has one, adds the GPU's and the Neural
// Engine's energy as the drivers account it (macOS 15 and later).
//
// Kernel is the thin layer that reads macOS (lib.go, through purego, as
// internal/ioreport reads IOReport); the Tracker polls it and does the
// arithmetic, and is tested here against fakes of known energies.
package attrib

import (
	"errors"
	"time"
)

// Kernel is what macOS keeps of processes, as the binding reads it. Its
// methods are called from one goroutine at a time.
type Kernel interface {
	// Pids lists every process id, zombies included
	// (proc_listpids(PROC_ALL_PIDS)), appended to buf[:0].
	Pids(buf []int32) ([]int32, error)
	// Identify gives a process's unique id and its parent's
	// (proc_pidinfo PROC_PIDUNIQIDENTIFIERINFO), which, unlike a pid,
	// are never reused, and which a process reparented to launchd
	// keeps. Any user's process can be identified.
	Identify(pid int32) (Ident, error)
	// Usage reads a process's resource usage (proc_pid_rusage,
	// RUSAGE_INFO_V6): ErrNotPermitted for another user's process,
	// ErrNoProcess for one that is gone (reaped), ErrUnsupported before
	// macOS 13. A zombie gives its final record, with Exited set.
	Usage(pid int32) (Usage, error)
	// GPUTimes gives the GPU time each process has used, summed over
	// its clients of the GPU (the IORegistry's AGXDeviceUserClient
	// entries, AppUsage[].accumulatedGPUTime), appended to buf[:0].
	GPUTimes(buf []GPUTime) ([]GPUTime, error)
	// CoalitionOf gives the id of a process's resource coalition
	// (proc_pidinfo PROC_PIDCOALITIONINFO).
	CoalitionOf(pid int32) (uint64, error)
	// CoalitionUsage reads a coalition's usage, its dead tasks included
	// (coalition_info_resource_usage).
	CoalitionUsage(id uint64) (CoalitionUsage, error)
	// WaitExited waits until the process, a child of this one, has
	// exited, and leaves it unreaped, a zombie whose final Usage can
	// still be read (waitid with WEXITED|WNOWAIT).
	WaitExited(pid int32) error
	// Info says what this Mac's kernel can give.
	Info() Info
	// Close releases what the binding holds.
	Close() error
}

// Ident is a process's identity across pid reuse.
type Ident struct {
	UniqueID       uint64 // p_uniqueid: never reused, kept across exec
	ParentUniqueID uint64 // p_puniqueid: the parent's at fork, kept when reparented
}

// Usage is a process's cumulative usage since it started.
type Usage struct {
	// EnergyNJ is the CPU energy the kernel measured for the process,
	// in nanojoules (ri_energy_nj), and PEnergyNJ its part on the
	// performance cores (ri_penergy_nj).
	EnergyNJ, PEnergyNJ uint64
	// CPU is its CPU time (user and system); ChildCPU that of the
	// children it has reaped, and theirs, recursively (ri_child_*).
	CPU, ChildCPU time.Duration
	// Start tells one process from another that later had its pid
	// (ri_proc_start_abstime).
	Start uint64
	// Exited is true for a zombie's final record (ri_proc_exit_abstime
	// is set).
	Exited bool
}

// GPUTime is a process's GPU time so far.
type GPUTime struct {
	Pid  int32
	Time time.Duration
}

// CoalitionUsage is a coalition's energy so far, in nanojoules: the CPU's
// (energy), and from macOS 15 the GPU's and the Neural Engine's as their
// drivers account it (gpu_energy_nj, ane_energy_nj).
type CoalitionUsage struct {
	CPUNJ, GPUNJ, ANENJ       uint64
	TasksStarted, TasksExited uint64
}

// Info is what the kernel can give on this Mac.
type Info struct {
	// MacOS is the product version ("15.5"); Chip the CPU's brand
	// ("Apple M2 Pro").
	MacOS, Chip string
	// ProcessEnergy is whether processes' CPU energy is kept: macOS 13
	// or later on Apple Silicon, not in a virtual machine
	// (kern.pervasive_energy).
	ProcessEnergy bool
	// AcceleratorEnergy is whether coalitions carry the GPU's and the
	// Neural Engine's energy (macOS 15 and later).
	AcceleratorEnergy bool
}

var (
	// ErrNotPermitted is another user's process (EPERM): its usage is
	// not this user's to read.
	ErrNotPermitted = errors.New("not permitted: another user's process")
	// ErrNoProcess is a process that is gone (ESRCH).
	ErrNoProcess = errors.New("no such process")
	// ErrUnsupported is a kernel without the usage (EINVAL: macOS 12
	// and older).
	ErrUnsupported = errors.New("the kernel has no per-process energy (macOS 13 or later)")
)

// Describer is what the whole Mac's view of apps (internal/apps) reads of
// a process besides its usage: its owner and names, and the app
// responsible for it. Any user's process can be described. Its methods
// are called from one goroutine at a time, once for each process that
// view meets: none is part of a poll's steady work.
type Describer interface {
	// Describe reads a process's owner and short name (proc_pidinfo
	// PROC_PIDT_SHORTBSDINFO, with arg 1, which finds a zombie too).
	Describe(pid int32) (Description, error)
	// Path gives the path of a process's executable (proc_pidpath),
	// appended to buf[:0]: an error for the kernel's own process, a
	// zombie, or one gone.
	Path(pid int32, buf []byte) ([]byte, error)
	// Responsible gives the pid of the process responsible for pid
	// (libquarantine's responsibility_get_pid_responsible_for_pid, by
	// which Activity Monitor groups an app's helpers): the app whose
	// helper it is, the terminal that started a command, or pid itself
	// where none other is. An error where macOS names none.
	Responsible(pid int32) (int32, error)
}

// Description is a process's owner and short name.
type Description struct {
	// UID is the process's effective user id.
	UID uint32
	// Comm is the process's short name (p_comm): at most 16 bytes of
	// whatever the process was named, not ended by a NUL when full.
	Comm [16]byte
}

// Name is the short name up to its first NUL, as the process gave it:
// any bytes, to be made safe before they are shown.
func (d Description) Name() string {
	n := 0
	for n < len(d.Comm) && d.Comm[n] != 0 {
		n++
	}
	return string(d.Comm[:n])
}

// AsDescriber is k's Describer, where its binding has one: the binding
// of macOS and the tests' fakes do.
func AsDescriber(k Kernel) (Describer, error) {
	d, ok := k.(Describer)
	if !ok {
		return nil, errors.New("this accounting of processes cannot name them or their apps")
	}
	return d, nil
}
