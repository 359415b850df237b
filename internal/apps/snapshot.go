// Package apps is the whole Mac's energy by app, live: every process the
// kernel lists, read once per window of the Mac's own source, grouped
// under the app responsible for it (as Activity Monitor groups an app's
// helpers), in watts and joules that add up, with what they leave out,
// to what the Mac drew.
//
// A Poller reads the process table through attrib's binding (the
// kernel's CPU energy of each process, ri_energy_nj, and each process's
// GPU time) at each window the caller hands it, and splits the window's
// energy: each app's CPU energy is what the kernel counted for its
// processes since the last window; its GPU energy, its processes' share
// of the GPU's time times the GPU rail's energy; the rest of every rail
// is the remainder. A Snapshot is one refresh of it, for a screen to
// draw (exopower top) or a line of JSON; a Series is the bounded set of
// counters that exopower serve publishes of it.
package apps

import (
	"time"

	"github.com/exopower/exopower/internal/power"
)

// Snapshot is one refresh of the whole Mac: its rails, its apps sorted by
// power, each with its processes, and what the apps leave out. Every
// figure of an app, of the remainder and of the Mac is in watts (Power:
// over the refresh's window) and in joules (Energy: since the view
// began). The apps, Forgotten and Rest add up to the Mac's figure of
// Scope, in power as in energy. A Snapshot is the caller's: nothing in it
// is shared with the Poller.
type Snapshot struct {
	// Seq counts the refreshes, from 1.
	Seq int
	// Start and End bound the refresh's window on exopower's monotonic
	// timeline: the source's windows since the last refresh. Since is
	// when the view began: its first reading of the processes.
	Start, End, Since time.Time
	// AllUsers says every user's processes are read (exopower runs as
	// root). Otherwise only this user's are: the others are counted in
	// Processes.NotReadable, and their CPU energy is in Rest.CPU.
	AllUsers bool
	// Scope is the Mac's figure that the apps and the remainder add up
	// to: "system", the whole Mac as its SMC reports it, where the
	// source reads it (IOReport), else "soc", the SoC's CPU, GPU and ANE
	// (powermetrics).
	Scope string
	// Mac is the Mac's own rails, as its source measured them.
	Mac Rails
	// Wall is the metered plug of --wall; nil without one. Its energy
	// is the Mac's and its adapter's and whatever else the plug feeds:
	// the apps and the remainder add up to Scope's figure, not to it.
	Wall *Wall
	// Apps are the apps with a process of this user's alive or with
	// energy since the view began, by Power.Total, highest first, then
	// by Energy.Total and by name. An app of nothing but other users'
	// processes that used no GPU is not among them: Processes counts
	// its processes.
	Apps []App
	// Forgotten is the energy of the apps gone for longer than
	// Config.Forget, which are no longer listed, in joules.
	Forgotten Figures
	// Rest is what the apps' figures leave out.
	Rest Rest
	// Processes counts the processes of this refresh.
	Processes Counts
	// CPUScale is what the kernel's CPU energy of the processes read was
	// multiplied by in this refresh: 1, unless it added up to more than
	// the CPU rail measured over the window (the kernel's figure is a
	// model, and its readings fall a moment after the window's end),
	// when the processes' shares are scaled down to the rail and
	// Rest.Power.CPU is 0.
	CPUScale float64
	// Warnings say what this refresh could not read, for people.
	Warnings []string
}

// Rails are the Mac's rails: their power over the refresh's window, in
// watts, and their energy since the view began, in joules (power.Values:
// CPU, GPU, ANE, their sum Total, DRAM and System). Has says which the
// source reads: DRAM and System only over IOReport.
type Rails struct {
	Power, Energy power.Values
	Has           power.Reported
}

// Whole is the Mac's figure of scope in v: System, or the SoC's Total.
func (r Rails) Whole(v power.Values) float64 {
	if r.Has.System {
		return v.System
	}
	return v.Total
}

// Wall is the metered plug's live figures.
type Wall struct {
	// PowerWatts is the plug's newest power reading; HasPower is false
	// while it has not answered for a while, or gives no power.
	PowerWatts float64
	HasPower   bool
	// EnergyJoules is the energy at the wall since the view began.
	EnergyJoules float64
}

// Figures are an app's or a process's CPU and GPU figures: watts in a
// Power, joules in an Energy.
type Figures struct {
	// CPU is measured by the kernel (ri_energy_nj), scaled by CPUScale
	// where its sum passed the rail.
	CPU float64
	// GPU is estimated: the share of the GPU's time over the window
	// times the GPU rail's energy.
	GPU float64
}

// Total is CPU + GPU.
func (f Figures) Total() float64 { return f.CPU + f.GPU }

func (f Figures) add(g Figures) Figures { return Figures{f.CPU + g.CPU, f.GPU + g.GPU} }

// App is an app and its processes: a process stands under the app
// responsible for it (libquarantine's responsibility, as Activity
// Monitor groups an app's helpers and a terminal's commands), and a
// process with no app responsible for it stands alone, as an app of its
// own name. Apps of one name are one app: an app quit and launched
// again, or the many processes of one daemon's name.
type App struct {
	// Name is the app's name: its bundle's (Safari for
	// /Applications/Safari.app/Contents/MacOS/Safari), else its
	// executable's, else the process's short name; made safe to print
	// (control characters and bytes that are not UTF-8 escaped, at most
	// 512 characters). It keys the app: no two apps share it.
	Name string
	// Pid is the pid of the app's own process (the one responsible for
	// the others), 0 where it is not alive.
	Pid int32
	// Power is over the refresh's window; Energy since the view began,
	// that of its processes gone included.
	Power, Energy Figures
	// Processes are its processes alive at this refresh, sorted as the
	// apps are.
	Processes []Process
	// NotReadable is how many of them are another user's, whose CPU
	// energy is not read: it is in Rest.CPU.
	NotReadable int
	// Gone says that none of its processes is alive: its energy is kept
	// until Config.Forget has passed.
	Gone bool
}

// Process is one process of an app.
type Process struct {
	Pid int32
	// Name is its executable's name, else its short name, made safe as
	// App.Name is.
	Name string
	// UID is its owner's user id.
	UID uint32
	// Readable says its CPU energy is read: false for another user's
	// process without root, whose Power.CPU and Energy.CPU are 0.
	Readable bool
	// Power is over the refresh's window; Energy since the view began,
	// or since it started where that was later.
	Power, Energy Figures
}

// Rest is what the apps' figures leave out: Power over the refresh's
// window, in watts, Energy since the view began, in joules.
type Rest struct {
	Power, Energy RestFigures
}

// RestFigures are the parts of the remainder. Their Total and the apps'
// (and Forgotten, in energy) make the Mac's figure of Scope.
type RestFigures struct {
	// CPU is the CPU rail's energy that no process read holds: the
	// kernel's own work, idle cores, other users' processes without
	// root, and processes that started and ended between two readings
	// or ended after their last.
	CPU float64
	// GPU is the GPU rail's energy that no process read used the GPU's
	// time for: all of it in a window without any GPU time.
	GPU float64
	// ANE is the Neural Engine's, which no process's figure holds.
	ANE float64
	// DRAM is the memory's, where the source reads it and the scope is
	// the whole Mac's; 0 otherwise.
	DRAM float64
	// System is the rest of the whole Mac beside the SoC and the memory
	// (display, storage, radios, fans, the power supply's loss): the
	// SMC's figure less the rails, where the scope is "system"; 0
	// otherwise.
	System float64
	// Total is the sum of the above.
	Total float64
}

// Counts are the processes of a refresh.
type Counts struct {
	// Listed is how many processes the kernel listed.
	Listed int
	// Read is how many of them had their CPU energy read.
	Read int
	// NotReadable is how many are another user's, whose energy this
	// user may not read (0 as root).
	NotReadable int
	// Started is how many were listed for the first time, Ended how
	// many listed at the last refresh are gone: what each used after
	// its last reading is in Rest.CPU.
	Started, Ended int
	// Refused is how many readings were refused: a process's energy
	// counter that went back, or rose beyond what any Mac can draw. Its
	// energy is left to Rest.CPU, never subtracted.
	Refused int
}
