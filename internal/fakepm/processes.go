package fakepm

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/attrib"
)

// WattsPerCPUSecond is the fake processes' CPU power while they use the
// CPU: a process's CPU time is its energy over it.
const WattsPerCPUSecond = 4.0

// Process is one process of a fake process table, its times since the
// table's start (the first moment the root is identified).
type Process struct {
	Name string
	// Pid 0 is the root: the first process the table is asked to
	// identify. Real makes it a real child of this process, whose end
	// is its own.
	Pid              int32
	Real             bool
	ID, ParentID     uint64        // unique ids: a parent's is lower than its children's
	Born             time.Duration // when it was forked
	Exits, Reaped    time.Duration // 0: not in the table's time
	Watts, PShare    float64       // CPU power while busy, and the performance cores' part
	Busy             time.Duration // busy until then (0: until it exits)
	GPU              float64       // GPU seconds per second while busy
	AnotherUsers     bool          // its usage is not for this user to read
	ReapedByLaunchd  bool          // reaped at Reaped by launchd, its parent having not
	GPUTimeWhileDead bool          // a client of the GPU left after its end (a fault)

	// What a whole Mac's view reads of it (NewMac): the process
	// responsible for it (0: itself; -1: none named), its executable's
	// path ("": none, as the kernel's own), and its owner (0: 501, or 0
	// for AnotherUsers).
	Responsible int32
	Path        string
	UID         uint32
	// CounterOffset is added to its energy counter from CounterOffsetAt
	// on, in joules: a counter that goes back (negative) or jumps (a
	// fault of the kernel's).
	CounterOffsetAt time.Duration
	CounterOffset   float64
}

// Processes is a fake of the kernel's process accounting (attrib.Kernel)
// over a table whose energies are known exactly: a process's CPU energy
// at time t is its Watts over the time it was busy until t.
type Processes struct {
	mu    sync.Mutex
	table []Process
	now   func() time.Time
	start time.Time
	root  int32 // the root's real pid, once identified
	// rootExit is when the real root exited, as WaitExited saw it.
	rootExit time.Duration
	// CoalitionOthers is how many more live tasks the root's coalition
	// holds than the tree; CoalitionGPU and CoalitionANE the watts its
	// drivers account to it.
	CoalitionOthers            int
	CoalitionGPU, CoalitionANE float64
	// MacOS is the version Info gives; "12.7" has no process energy.
	MacOS string
	// IdentifyFailsOnce is a pid whose first identification fails, as
	// a call the kernel did not answer.
	IdentifyFailsOnce int32
	// mac: a whole Mac's table (NewMac), whose time starts when it is
	// made, with no root and no launchd but the table's own.
	mac bool
}

// NewProcesses makes a fake over table, with now as its clock (time.Now
// when nil).
func NewProcesses(table []Process, now func() time.Time) *Processes {
	if now == nil {
		now = time.Now
	}
	return &Processes{table: table, now: now, MacOS: "15.5"}
}

// Since is the table's time now.
func (f *Processes) since() time.Duration {
	if f.start.IsZero() {
		return 0
	}
	return f.now().Sub(f.start)
}

// at is the process that has pid at t: born and not reaped.
func (f *Processes) at(pid int32, t time.Duration) *Process {
	for i := range f.table {
		p := &f.table[i]
		if f.pidOf(p) == pid && p.Born <= t && !f.reaped(p, t) {
			return p
		}
	}
	return nil
}

func (f *Processes) inTable(pid int32) bool {
	for i := range f.table {
		if f.table[i].Pid == pid {
			return true
		}
	}
	return false
}

func (f *Processes) pidOf(p *Process) int32 {
	if p.Pid == 0 {
		return f.root
	}
	return p.Pid
}

// real is whether p is the real root, a child of this process.
func (f *Processes) real(p *Process) bool { return p.Pid == 0 && p.Real }

func (f *Processes) reaped(p *Process, t time.Duration) bool {
	if f.real(p) {
		return f.root != 0 && errors.Is(syscall.Kill(int(f.root), 0), syscall.ESRCH)
	}
	return p.Reaped != 0 && t >= p.Reaped
}

// exited is whether p has ended by t, and when.
func (f *Processes) exited(p *Process, t time.Duration) (time.Duration, bool) {
	end := p.Exits
	if f.real(p) {
		end = f.rootExit
	}
	if end != 0 && t >= end {
		return end, true
	}
	return t, false
}

// busy is how long p was busy by t.
func (f *Processes) busy(p *Process, t time.Duration) time.Duration {
	t, _ = f.exited(p, t)
	if p.Busy != 0 {
		t = min(t, p.Busy)
	}
	return max(t-p.Born, 0)
}

// Energy is p's exact CPU energy by t, in joules.
func (f *Processes) Energy(p *Process, t time.Duration) float64 {
	return p.Watts * f.busy(p, t).Seconds()
}

func (f *Processes) cpu(p *Process, t time.Duration) time.Duration {
	return time.Duration(f.Energy(p, t) / WattsPerCPUSecond * 1e9)
}

// childCPU is the CPU time of p's children reaped by t, and theirs.
func (f *Processes) childCPU(p *Process, t time.Duration) time.Duration {
	var d time.Duration
	for i := range f.table {
		c := &f.table[i]
		if c.ParentID == p.ID && c.Reaped != 0 && c.Reaped <= t && !c.ReapedByLaunchd {
			d += f.cpu(c, c.Exits) + f.childCPU(c, c.Exits)
		}
	}
	return d
}

// Pids lists the processes born and not reaped.
func (f *Processes) Pids(buf []int32) ([]int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.since()
	buf = buf[:0]
	if !f.mac {
		buf = append(buf, 1) // launchd, never the tree's
	}
	for i := range f.table {
		p := &f.table[i]
		if pid := f.pidOf(p); pid != 0 && p.Born <= t && !f.reaped(p, t) {
			buf = append(buf, pid)
		}
	}
	return buf, nil
}

// Identify identifies a process; a pid asked for that is not in the
// table is the root, and the table's time starts again.
func (f *Processes) Identify(pid int32) (attrib.Ident, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pid == 1 && !f.mac {
		return attrib.Ident{UniqueID: 1}, nil
	}
	if pid == f.IdentifyFailsOnce && pid != 0 {
		f.IdentifyFailsOnce = 0
		return attrib.Ident{}, errors.New("fake: no answer")
	}
	if pid != f.root && !f.inTable(pid) && !f.mac {
		// A new command: the table starts again around it, as for the
		// next run of a bench.
		f.root, f.start, f.rootExit = pid, f.now(), 0
	}
	p := f.at(pid, f.since())
	if p == nil {
		return attrib.Ident{}, attrib.ErrNoProcess
	}
	return attrib.Ident{UniqueID: p.ID, ParentUniqueID: p.ParentID}, nil
}

// Usage reads a process's usage, as proc_pid_rusage would.
func (f *Processes) Usage(pid int32) (attrib.Usage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.MacOS == "12.7" {
		return attrib.Usage{}, attrib.ErrUnsupported
	}
	t := f.since()
	p := f.at(pid, t)
	switch {
	case p == nil:
		return attrib.Usage{}, attrib.ErrNoProcess
	case p.AnotherUsers:
		return attrib.Usage{}, attrib.ErrNotPermitted
	}
	_, exited := f.exited(p, t)
	e := f.Energy(p, t)
	nj := uint64(e * 1e9)
	if f.mac {
		nj = f.counterNJ(p, t)
	}
	return attrib.Usage{
		EnergyNJ: nj, PEnergyNJ: uint64(e * p.PShare * 1e9),
		CPU: f.cpu(p, t), ChildCPU: f.childCPU(p, t), Start: p.ID, Exited: exited,
	}, nil
}

// GPUTimes gives the GPU time of each process with a client of the GPU:
// one alive, or one whose client outlives it as a fault.
func (f *Processes) GPUTimes(buf []attrib.GPUTime) ([]attrib.GPUTime, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.since()
	buf = buf[:0]
	for i := range f.table {
		p := &f.table[i]
		_, exited := f.exited(p, t)
		if p.GPU == 0 || p.Born > t || f.reaped(p, t) || exited && !p.GPUTimeWhileDead {
			continue
		}
		buf = append(buf, attrib.GPUTime{Pid: f.pidOf(p), Time: time.Duration(p.GPU * float64(f.busy(p, t)))})
	}
	return buf, nil
}

// CoalitionOf gives every process the coalition 7.
func (f *Processes) CoalitionOf(pid int32) (uint64, error) { return 7, nil }

// CoalitionUsage is the tree's CPU energy, with the drivers' GPU and
// Neural Engine power over the table's time.
func (f *Processes) CoalitionUsage(id uint64) (attrib.CoalitionUsage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.since()
	u := attrib.CoalitionUsage{TasksStarted: uint64(f.CoalitionOthers)}
	var cpu float64
	for i := range f.table {
		p := &f.table[i]
		if p.Born > t || p.ID < f.table[0].ID {
			continue // not the tree's
		}
		cpu += f.Energy(p, t)
		u.TasksStarted++
		if _, exited := f.exited(p, t); exited {
			u.TasksExited++
		}
	}
	u.CPUNJ = uint64(cpu * 1e9)
	u.GPUNJ = uint64(f.CoalitionGPU * t.Seconds() * 1e9)
	u.ANENJ = uint64(f.CoalitionANE * t.Seconds() * 1e9)
	return u, nil
}

// WaitExited waits for the real root without reaping it; a root of the
// table's own has exited once its time has come.
func (f *Processes) WaitExited(pid int32) error {
	f.mu.Lock()
	real := pid == f.root && f.real(&f.table[0])
	f.mu.Unlock()
	if !real {
		return nil
	}
	err := waitExited(pid)
	f.mu.Lock()
	f.rootExit = f.since()
	f.mu.Unlock()
	return err
}

// Info says what the fake's Mac gives.
func (f *Processes) Info() attrib.Info {
	return attrib.Info{MacOS: f.MacOS, Chip: "Apple M2 Pro", ProcessEnergy: f.MacOS != "12.7", AcceleratorEnergy: f.MacOS >= "15"}
}

// Close does nothing.
func (f *Processes) Close() error { return nil }

// ProcessesEnv names the environment variable that makes exopower's test
// binary read a fake process table for --attribute and ?pid=: "busy" is
// BusyTree, "server" ServerTree, "macos12" a Mac without per-process
// energy; "mac" is BusyMac, a whole Mac's, for top and serve --apps, and
// "mac-few" six of its processes.
const ProcessesEnv = "EXOPOWER_FAKE_PROCESSES"

// BusyTree is a command's tree on a busy Mac, the command itself the real
// root (at least 0.8 s long), times since it started:
//
//	root  2 W for 0.3 s, GPU 0.5 s/s meanwhile
//	├─ A  1 W from 0.1 s to 0.45 s
//	│  └─ B  3 W (half on the performance cores) from 0.15 s to 0.4 s
//	├─ C  5 W from 0.205 s to 0.225 s: seen only if a poll falls then
//	├─ D  2 W from 0.25 s to 0.5 s, another user's
//	└─ E  1 W for 0.1 s from 0.6 s, running on after the command
//	outside: a browser at 6 W and GPU 0.25 s/s all along
//
// The tree's CPU energy is BusyTreeJoules; its GPU time 0.15 s.
func BusyTree() []Process {
	const ms = time.Millisecond
	return []Process{
		{Name: "root", Real: true, ID: 1000, ParentID: 900, Watts: 2, Busy: 300 * ms, GPU: 0.5},
		{Name: "A", Pid: 4000001, ID: 1001, ParentID: 1000, Born: 100 * ms, Exits: 450 * ms, Reaped: 470 * ms, Watts: 1},
		{Name: "B", Pid: 4000002, ID: 1002, ParentID: 1001, Born: 150 * ms, Exits: 400 * ms, Reaped: 420 * ms, Watts: 3, PShare: 0.5},
		{Name: "C", Pid: 4000003, ID: 1003, ParentID: 1000, Born: 205 * ms, Exits: 225 * ms, Reaped: 230 * ms, Watts: 5},
		{Name: "D", Pid: 4000004, ID: 1004, ParentID: 1000, Born: 250 * ms, Exits: 500 * ms, Reaped: 520 * ms, Watts: 2, AnotherUsers: true},
		{Name: "E", Pid: 4000005, ID: 1005, ParentID: 1000, Born: 600 * ms, Busy: 700 * ms, Watts: 1},
		{Name: "browser", Pid: 500, ID: 50, ParentID: 1, Born: -10 * time.Second, Watts: 6, GPU: 0.25},
	}
}

// BusyTreeJoules is BusyTree's CPU energy: 0.6 + 0.35 + 0.75 + 0.1 +
// 0.5 + 0.1 J.
const BusyTreeJoules = 2.4

// BusyTreeGPU is BusyTree's GPU time, and the browser's GPU seconds per
// second.
const (
	BusyTreeGPU        = 150 * time.Millisecond
	BusyTreeBrowserGPU = 0.25
)

// ServerTree is a model server already running when a span names it,
// times since the span opened: the server at 3 W with a GPU client busy
// half the time, a worker at 2 W, a request's process at 4 W from 0.25 s
// to 0.6 s, and a helper of another user's.
func ServerTree() []Process {
	const ms = time.Millisecond
	return []Process{
		{Name: "server", ID: 1000, ParentID: 1, Born: -5 * time.Second, Watts: 3, GPU: 0.5},
		{Name: "worker", Pid: 5001, ID: 1001, ParentID: 1000, Born: -4 * time.Second, Watts: 2},
		{Name: "request", Pid: 5002, ID: 1002, ParentID: 1000, Born: 250 * ms, Exits: 600 * ms, Reaped: 650 * ms, Watts: 4},
		{Name: "helper", Pid: 5003, ID: 1003, ParentID: 1000, Born: 100 * ms, Watts: 1, AnotherUsers: true},
		{Name: "browser", Pid: 500, ID: 50, ParentID: 1, Born: -10 * time.Second, Watts: 6, GPU: 0.25},
	}
}

// ProcessesFor is the fake process table that ProcessesEnv names.
func ProcessesFor(name string) (*Processes, error) {
	switch name {
	case "busy":
		// The coalition of a terminal, with other tabs in it.
		p := NewProcesses(BusyTree(), nil)
		p.CoalitionOthers = 12
		return p, nil
	case "server":
		// A launchd service's coalition, its own, on macOS 15.
		p := NewProcesses(ServerTree(), nil)
		p.CoalitionGPU, p.CoalitionANE = 2.5, 0.8
		return p, nil
	case "macos12":
		p := NewProcesses(BusyTree(), nil)
		p.MacOS = "12.7"
		return p, nil
	case "mac":
		return NewMac(BusyMac(), nil), nil
	case "mac-few":
		// For the examples of the documents: a few apps, and their
		// lines short.
		b := BusyMac()
		return NewMac([]Process{b[0], b[1], b[2], b[3], b[5], b[6]}, nil), nil
	}
	return nil, fmt.Errorf("%s=%s: want busy, server, macos12, mac or mac-few", ProcessesEnv, name)
}
