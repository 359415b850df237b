package attrib

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Tracker follows one process tree: the root and every descendant it
// sees, each read at every poll so that its last reading is as near to
// its end as the interval allows. A process is known by its unique id,
// not its pid, so that a pid reused by another process is not read as
// the first one's. A descendant that lived and was reaped between two
// polls is not seen; its CPU time still reaches its parent's usage once
// reaped (ri_child_*), and is reported as unseen.
//
// Every method may be called from any goroutine: the Kernel is read under
// the Tracker's lock, one call at a time.
type Tracker struct {
	mu     sync.Mutex
	k      Kernel
	root   int32
	rootID uint64
	procs  map[uint64]*proc // the tree, by unique id
	live   map[int32]*proc  // the tree's processes still to read, by pid
	gen    uint32           // the polls so far
	listed map[int32]uint32 // the poll in which each pid was last listed
	pids   []int32          // the last list, reused
	fresh  []fresh          // new pids' identities, reused
	// firstMax is the newest unique id that the first poll found: a
	// process found later with an older one was there already.
	firstMax uint64
	gpu      gpuShare
	coal     coalition
	err      error // why the last poll failed, if one did
	ended    bool
}

// proc is one process of the tree.
type proc struct {
	pid           int32
	id, parent    uint64
	start         uint64 // Usage.Start at the first reading: tells a reused pid
	first, last   Usage  // the reading it counts from (zero: its birth), and the latest
	fromFirst     bool   // counted from its first reading, not from its birth
	read, denied  bool   // read at least once; another user's
	exited, ended bool   // read as a zombie; gone, as last read
	// exitedAt and endedAt are the polls that found it a zombie, and
	// gone: 0 before. beforeExit is the reading before the zombie's.
	exitedAt, endedAt uint32
	beforeExit        Usage
}

type fresh struct {
	pid int32
	Ident
}

// Track starts following the tree of root, reading it once at once.
// fromBirth counts root's usage (and that of descendants alive now) from
// the process's start, as for a command exopower has just started;
// otherwise from this first reading, as for a server already running.
// others is how many processes besides the tree may share its coalition
// (exopower itself and its source's process, where they share it), for
// telling whether the coalition is the tree's own.
func Track(k Kernel, root int32, fromBirth bool, others int) (*Tracker, error) {
	id, err := k.Identify(root)
	if err != nil {
		return nil, fmt.Errorf("process %d: %w", root, err)
	}
	t := &Tracker{k: k, root: root, rootID: id.UniqueID, procs: map[uint64]*proc{}, live: map[int32]*proc{}, listed: map[int32]uint32{}}
	t.add(root, id, fromBirth)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.poll(fromBirth); err != nil {
		return nil, err
	}
	t.coal = openCoalition(k, root, others, len(t.live))
	return t, nil
}

// Poll reads the tree once: new descendants, then every process's usage
// and the GPU's time.
func (t *Tracker) Poll() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return nil
	}
	return t.poll(false)
}

// Run polls every interval until done is closed. Once every process of
// the tree is gone, it polls every second only: the GPU's time of every
// process still makes the tree's share, and a descendant may still be
// found.
func (t *Tracker) Run(done <-chan struct{}, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	slow := false
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			t.Poll()
			if gone := t.Gone(); gone != slow {
				slow = gone
				tick.Reset(map[bool]time.Duration{false: interval, true: max(interval, goneInterval)}[gone])
			}
		}
	}
}

// goneInterval is how often a tree that is gone is read.
const goneInterval = time.Second

// Gone is whether every process of the tree is gone (reaped), as the
// last poll found.
func (t *Tracker) Gone() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.live) == 0
}

// Close reads the tree no more and closes the kernel's accounting, once
// no reading is under way.
func (t *Tracker) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = true
	return t.k.Close()
}

// poll is Poll with the lock held. At the first poll, processes count
// from birth when fromBirth is set.
func (t *Tracker) poll(fromBirth bool) error {
	first := t.gen == 0
	t.gen++
	if err := t.discover(first, fromBirth); err != nil {
		t.err = err
		return err
	}
	for _, p := range t.live {
		// Another user's process is asked too: it answers until it is
		// gone, and its GPU time is the tree's while it runs.
		if err := t.readProc(p); errors.Is(err, ErrUnsupported) {
			t.err = err
			return err
		}
	}
	t.gpu.poll(t.k, t.live, first, fromBirth)
	// A zombie is read until it is reaped, which tells its parent's
	// count of reaped children holds it.
	for pid, p := range t.live {
		if p.ended {
			delete(t.live, pid)
		}
	}
	return nil
}

// discover adds the processes listed for the first time whose parent is
// in the tree. Unique ids grow with every process the Mac starts, so in
// their order a parent comes before its children, even both new.
func (t *Tracker) discover(first, fromBirth bool) error {
	var err error
	if t.pids, err = t.k.Pids(t.pids); err != nil {
		return fmt.Errorf("listing the processes: %w", err)
	}
	t.fresh = t.fresh[:0]
	for _, pid := range t.pids {
		if g, ok := t.listed[pid]; !ok || g != t.gen-1 {
			id, err := t.k.Identify(pid)
			switch {
			case err == nil:
				t.fresh = append(t.fresh, fresh{pid, id})
			case !errors.Is(err, ErrNoProcess):
				continue // not marked listed: asked again at the next poll
			}
		}
		t.listed[pid] = t.gen
	}
	if len(t.listed) > 2*len(t.pids) {
		for pid, g := range t.listed {
			if g != t.gen {
				delete(t.listed, pid)
			}
		}
	}
	slices.SortFunc(t.fresh, func(a, b fresh) int { return cmpUint(a.UniqueID, b.UniqueID) })
	if first && len(t.fresh) > 0 {
		t.firstMax = t.fresh[len(t.fresh)-1].UniqueID
	}
	for _, f := range t.fresh {
		if _, known := t.procs[f.UniqueID]; !known && t.procs[f.ParentUniqueID] != nil {
			// Alive at the first poll (found then, or later, where
			// its identity could not be read at once): counted from
			// birth or from then, as the root is; born since: from
			// birth.
			t.add(f.pid, f.Ident, fromBirth || !first && f.UniqueID > t.firstMax)
		}
	}
	return nil
}

// add puts a process in the tree.
func (t *Tracker) add(pid int32, id Ident, fromBirth bool) {
	p := &proc{pid: pid, id: id.UniqueID, parent: id.ParentUniqueID, fromFirst: !fromBirth}
	t.procs[id.UniqueID] = p
	t.live[pid] = p
}

// readProc reads one process.
func (t *Tracker) readProc(p *proc) error {
	u, err := t.k.Usage(p.pid)
	switch {
	case errors.Is(err, ErrNotPermitted):
		p.denied = true
		return err
	case errors.Is(err, ErrNoProcess):
		p.end(t.gen)
		return err
	case err != nil:
		return err
	case p.read && u.Start != p.start:
		// Another process has the pid: this one ended since the last
		// reading, which stands. The pid is identified again at the
		// next poll.
		p.end(t.gen)
		delete(t.listed, p.pid)
		return nil
	}
	if !p.read {
		p.read, p.start = true, u.Start
		if p.fromFirst {
			p.first = u
		}
	}
	if u.Exited && p.exitedAt == 0 {
		p.exitedAt, p.beforeExit = t.gen, p.last
	}
	p.last, p.exited = u, u.Exited
	return nil
}

// end marks p gone at the poll gen.
func (p *proc) end(gen uint32) { p.ended, p.endedAt = true, gen }

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
