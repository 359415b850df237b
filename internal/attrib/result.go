package attrib

import (
	"cmp"
	"errors"
	"fmt"
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
// nothing went unseen, 0 when nothing could be read.
func (r Result) Coverage() float64 {
	all := r.CPUTime + r.UnseenCPUTime
	if all <= 0 && r.NotPermitted > 0 && r.Processes == 0 {
		return 0 // nothing was read: nothing is known
	}
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
// exit, calls exited (when not nil), and reads the tree once more while
// the root is a zombie whose final usage can still be read: the caller
// reaps it after. It returns
// when the root exited, as the wait returned, or the wait's error, after
// which the tree has been read all the same.
func (t *Tracker) ReadBeforeReap(onExit func()) (exited time.Time, err error) {
	err = t.k.WaitExited(t.root)
	if err == nil {
		exited = time.Now()
		if onExit != nil {
			onExit()
		}
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
	r := Result{Polls: int(t.gen), GPUTime: t.gpu.tree, AllGPUTime: t.gpu.all}
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
	blind := t.blindParents()
	r.UnseenCPUTime = max(t.treeCPU(blind)-r.CPUTime, 0)
	r.Coalition, r.CoalitionNote = t.coal.since(t.k)
	r.Warnings = t.warnings(blind)
	if t.gpu.polls < 2 {
		r.GPUErr = cmp.Or(t.gpu.err, errors.New("read fewer than twice"))
	}
	return r
}

// warnings say what the tree's figures lack.
func (t *Tracker) warnings(blind map[uint64]bool) []string {
	var w []string
	if t.procs[t.rootID].denied {
		w = append(w, "the command itself is another user's process (under sudo, a setuid program): its energy is not this user's to read, "+
			"and neither is that of what it starts as that user; only this user's processes in its tree are attributed")
	}
	if len(blind) > 0 {
		w = append(w, fmt.Sprintf("%d of the tree's processes reaped another user's process that was there before the span: "+
			"their children's CPU time cannot be told from its, and is not counted as unseen", len(blind)))
	}
	if t.err != nil {
		w = append(w, "a reading of the command's processes failed: "+t.err.Error())
	}
	switch g := t.gpu; {
	case g.polls < 2 && g.err == nil:
		w = append(w, "the GPU's clients were read once only, so the command's GPU energy is not estimated yet")
	case g.polls < 2:
		w = append(w, "the GPU's clients could not be read, so the command's GPU energy is not estimated: "+g.err.Error())
	case g.failed > 0:
		w = append(w, fmt.Sprintf("%d of %d readings of the GPU's clients failed (%v): the time of clients that closed meanwhile is not counted",
			g.failed, g.failed+g.polls, g.err))
	}
	return w
}

// blindParents are the processes read whose count of reaped children
// holds, beside what the span saw, the whole life of another user's
// process that was there before the span: that part cannot be told.
// A blind process reaped by its parent makes the parent blind too: the
// parent's count holds the blind one's.
func (t *Tracker) blindParents() map[uint64]bool {
	blind := map[uint64]bool{}
	for _, c := range t.procs {
		if c.denied && c.fromFirst && c.ended && t.procs[c.parent] != nil {
			blind[c.parent] = true
		}
	}
	for grew := len(blind) > 0; grew; {
		grew = false
		for id := range blind {
			p := t.procs[id]
			if p.ended && !t.orphaned(p) && !blind[p.parent] {
				blind[p.parent], grew = true, true
			}
		}
	}
	return blind
}

// treeCPU is the CPU time of the whole tree over the span, as the
// processes that hold it at the end count it: a process not reaped (alive,
// or a zombie such as the command itself at its end) holds its own and
// that of the children it reaped, and theirs, recursively (ri_child_*);
// a process reaped by its parent in the tree is in that parent's count;
// one left to launchd when its parent ended first is counted as last
// read, and so are the children of a blind parent, whose count is not
// used. Less, for processes that were there before the span, what they
// had used by its start.
func (t *Tracker) treeCPU(blind map[uint64]bool) time.Duration {
	var d time.Duration
	for _, p := range t.procs {
		if !p.read {
			continue // in its parent's count, if it reaped it
		}
		if p.ended && !t.orphaned(p) && !blind[p.parent] {
			d -= p.first.CPU + p.first.ChildCPU
			continue
		}
		d += p.last.CPU - p.first.CPU
		if !blind[p.id] {
			d += p.last.ChildCPU - p.first.ChildCPU
		}
	}
	return d
}

// orphaned is whether p was reaped by a process out of the tree: the root,
// which this process reaps, or a process whose parent had exited by the
// poll that found p gone, without having reaped it: by a poll before, or
// by the same one where its count of reaped children did not grow by
// p's.
func (t *Tracker) orphaned(p *proc) bool {
	parent := t.procs[p.parent]
	if parent == nil || parent.denied {
		return true // reaped where no count is read
	}
	gone := parent.exitedAt
	if gone == 0 || parent.endedAt != 0 && parent.endedAt < gone {
		gone = parent.endedAt
	}
	switch {
	case gone == 0 || gone > p.endedAt:
		return false
	case gone < p.endedAt:
		return true
	}
	// Both at one poll. A parent read as a zombie tells: its count grew
	// by p's if it reaped p before it exited. One found gone does not,
	// and is taken to have reaped p.
	grew := parent.last.ChildCPU - parent.beforeExit.ChildCPU
	return parent.exitedAt == p.endedAt && grew < p.last.CPU+p.last.ChildCPU
}

// delta is a counter's increase: 0 where it went back.
func delta(now, then uint64) uint64 {
	if now < then {
		return 0
	}
	return now - then
}
