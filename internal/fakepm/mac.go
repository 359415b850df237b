package fakepm

import (
	"errors"
	"math"
	"time"

	"github.com/exopower/exopower/internal/attrib"
)

// NewMac makes a fake of a whole Mac's processes over table, with now as
// its clock (time.Now when nil), for the whole Mac's view of apps: the
// table's time starts now, every process has its own pid (there is no
// root, and no launchd but one the table lists), a pid not in the table
// is no process, and the names and apps of attrib.Describer are answered
// from each process's Name, Path, UID and Responsible. Energy counters
// are whole nanojoules, rounded: every figure is known to the nanojoule.
func NewMac(table []Process, now func() time.Time) *Processes {
	f := NewProcesses(table, now)
	f.mac, f.start = true, f.now()
	return f
}

// counterNJ is p's energy counter at t in nanojoules: its energy, and
// its fault's offset from when it comes.
func (f *Processes) counterNJ(p *Process, t time.Duration) uint64 {
	e := f.Energy(p, t)
	if p.CounterOffset != 0 && t >= p.CounterOffsetAt {
		e += p.CounterOffset
	}
	return uint64(math.Round(max(e, 0) * 1e9))
}

// EnergyNJ is p's energy counter at t, as Usage gives it in a whole
// Mac's table, for the tests' exact figures.
func (f *Processes) EnergyNJ(p *Process, t time.Duration) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counterNJ(p, t)
}

// Describe gives a process's owner and its Name's first 16 bytes.
func (f *Processes) Describe(pid int32) (attrib.Description, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.at(pid, f.since())
	if p == nil {
		return attrib.Description{}, attrib.ErrNoProcess
	}
	d := attrib.Description{UID: uidOf(p)}
	copy(d.Comm[:], p.Name)
	return d, nil
}

func uidOf(p *Process) uint32 {
	switch {
	case p.UID != 0:
		return p.UID
	case p.AnotherUsers:
		return 0
	}
	return 501
}

// Path gives a process's Path, none for a zombie or one without.
func (f *Processes) Path(pid int32, buf []byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.since()
	p := f.at(pid, t)
	if p == nil || p.Path == "" {
		return buf[:0], errors.New("fake: no path")
	}
	if _, exited := f.exited(p, t); exited {
		return buf[:0], errors.New("fake: no path")
	}
	return append(buf[:0], p.Path...), nil
}

// Responsible gives the pid of the process responsible for pid.
func (f *Processes) Responsible(pid int32) (int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.at(pid, f.since())
	switch {
	case p == nil || p.Responsible < 0:
		return 0, errors.New("fake: no process responsible")
	case p.Responsible == 0:
		return pid, nil
	}
	return p.Responsible, nil
}
