package attrib

import (
	"time"
)

// Result is what the tree drew, as the kernel and the drivers count it.
type Result struct {
	// Processes is how many of the tree's processes were read;
	// NotPermitted how many more were another user's, whose usage is
	// not this user's to read (a command under sudo, a setuid program);
	// Running how many of those read were still running at the end.
	Processes, NotPermitted, Running int
	// CPU is the CPU energy the kernel measured for the processes read,
	// in joules, and PCPU its part on the performance cores.
	CPU, PCPU float64
	// CPUTime is those processes' CPU time. UnseenCPUTime is CPU time
	// the tree used out of sight: descendants that lived and were
	// reaped between two polls, another user's processes reaped by a
	// parent in the tree, and what the processes read used between
	// their last reading and their end. Their parents' usage counts it
	// once they reap them; a process left to launchd is not counted.
	CPUTime, UnseenCPUTime time.Duration
	// GPUTime is the tree's GPU time, AllGPUTime every process's, over
	// the same polls; GPUErr why they could not be read.
	GPUTime, AllGPUTime time.Duration
	GPUErr              error
	// Coalition is the energy of the tree's coalition, where it has one
	// of its own; CoalitionNote says why not otherwise.
	Coalition     *CoalitionEnergy
	CoalitionNote string
	// Polls is how many times the tree was read.
	Polls int
	// Warnings say what went wrong along the way, for people to read.
	Warnings []string
}

// CoalitionEnergy is a coalition's energy over the span, in joules:
// the CPU's as the kernel counts it (that of the coalition's other
// members, exopower's own included, with it), and the GPU's and the
// Neural Engine's as their drivers account it (0 before macOS 15).
type CoalitionEnergy struct {
	CPU, GPU, ANE float64
}

// UnseenCPU estimates the CPU energy of the unseen CPU time at the
// energy per CPU second of the processes read, in joules: 0 where
// nothing was read.
func (r Result) UnseenCPU() float64 {
	if r.CPUTime <= 0 {
		return 0
	}
	return r.CPU / r.CPUTime.Seconds() * r.UnseenCPUTime.Seconds()
}

// Coverage is the part of the tree's CPU time that was read: 1 when
// nothing went unseen.
func (r Result) Coverage() float64 {
	all := r.CPUTime + r.UnseenCPUTime
	if all <= 0 {
		return 1
	}
	return r.CPUTime.Seconds() / all.Seconds()
}

// GPUShare is the tree's part of the GPU's time: 0 when the GPU was not
// used, or not read.
func (r Result) GPUShare() float64 {
	if r.AllGPUTime <= 0 {
		return 0
	}
	return r.GPUTime.Seconds() / r.AllGPUTime.Seconds()
}

// ReadBeforeReap waits for the tree's root, a child of this process, to
// exit, and reads the tree once more while the root is a zombie whose
// final usage can still be read: the caller reaps it after. It returns
// when the root exited, as the wait returned, or the wait's error, after
// which the tree has been read all the same.
func (t *Tracker) ReadBeforeReap() (exited time.Time, err error) {
	err = t.k.WaitExited(t.root)
	if err == nil {
		exited = time.Now()
	}
	t.Poll()
	return exited, err
}

// Result reads the coalition once more and says what the tree drew. The
// tree is read no more after it.
func (t *Tracker) Result() Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = true
	return t.result()
}

// Snapshot says what the tree has drawn so far, and goes on reading it.
func (t *Tracker) Snapshot() Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.result()
}

// Readable is whether the root's usage can be read: not where it is
// another user's.
func (t *Tracker) Readable() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.procs[t.rootID].denied
}

func (t *Tracker) result() Result {
	r := Result{Polls: int(t.gen), GPUTime: t.gpu.tree, AllGPUTime: t.gpu.all, GPUErr: t.gpu.err}
	for _, p := range t.procs {
		switch {
		case p.denied:
			r.NotPermitted++
			continue
		case !p.read:
			continue // gone before its first reading: unseen
		}
		r.Processes++
		if !p.ended && !p.exited {
			r.Running++
		}
		r.CPU += nj(delta(p.last.EnergyNJ, p.first.EnergyNJ))
		r.PCPU += nj(delta(p.last.PEnergyNJ, p.first.PEnergyNJ))
		r.CPUTime += p.last.CPU - p.first.CPU
	}
	r.UnseenCPUTime = max(t.treeCPU()-r.CPUTime, 0)
	r.Coalition, r.CoalitionNote = t.coal.since(t.k)
	if t.err != nil {
		r.Warnings = append(r.Warnings, "a reading of the command's processes failed: "+t.err.Error())
	}
	if r.GPUErr != nil {
		r.Warnings = append(r.Warnings, "the GPU's clients could not be read, so the command's GPU energy is not estimated: "+r.GPUErr.Error())
	}
	return r
}

// treeCPU is the CPU time of the whole tree over the span, as the
// processes that hold it at the end count it: a process not reaped (alive,
// or a zombie such as the command itself at its end) holds its own and
// that of the children it reaped, and theirs, recursively (ri_child_*);
// a process reaped by its parent in the tree is in that parent's count;
// one left to launchd when its parent ended first is counted as last
// read. Less, for processes that were there before the span, what they
// had used by its start.
func (t *Tracker) treeCPU() time.Duration {
	var d time.Duration
	for _, p := range t.procs {
		if !p.read {
			continue // in its parent's count, if it reaped it
		}
		if p.ended && !t.orphaned(p) {
			d -= p.first.CPU + p.first.ChildCPU
			continue
		}
		d += p.last.CPU - p.first.CPU + p.last.ChildCPU - p.first.ChildCPU
	}
	return d
}

// orphaned is whether p was reaped by a process out of the tree: the root,
// which this process reaps, or a process whose parent had exited by a
// poll before the one that found p gone.
func (t *Tracker) orphaned(p *proc) bool {
	parent := t.procs[p.parent]
	if parent == nil {
		return true
	}
	gone := parent.exitedAt
	if gone == 0 || parent.endedAt != 0 && parent.endedAt < gone {
		gone = parent.endedAt
	}
	return gone != 0 && gone < p.endedAt
}

// delta is a counter's increase: 0 where it went back.
func delta(now, then uint64) uint64 {
	if now < then {
		return 0
	}
	return now - then
}
