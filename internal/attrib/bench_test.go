package attrib_test

import (
	"testing"
	"time"

	"github.com/exopower/exopower/internal/attrib"
)

// stillKernel is a Mac of n processes besides a tree of m, none coming or
// going, each read at the cost of a map lookup: what a poll costs of the
// Tracker itself, apart from the kernel's calls.
type stillKernel struct {
	pids   []int32
	idents map[int32]attrib.Ident
	gpu    []attrib.GPUTime
	tick   uint64
}

func newStillKernel(tree, others int) *stillKernel {
	k := &stillKernel{idents: map[int32]attrib.Ident{}}
	for i := range tree + others {
		pid := int32(1000 + i)
		parent := uint64(1) // launchd's
		if i > 0 && i < tree {
			parent = 1000 // the root's
		}
		k.pids = append(k.pids, pid)
		k.idents[pid] = attrib.Ident{UniqueID: uint64(pid), ParentUniqueID: parent}
		if i%10 == 0 {
			k.gpu = append(k.gpu, attrib.GPUTime{Pid: pid})
		}
	}
	return k
}

func (k *stillKernel) Pids(buf []int32) ([]int32, error) { return append(buf[:0], k.pids...), nil }
func (k *stillKernel) Identify(pid int32) (attrib.Ident, error) {
	id, ok := k.idents[pid]
	if !ok {
		return id, attrib.ErrNoProcess
	}
	return id, nil
}
func (k *stillKernel) Usage(pid int32) (attrib.Usage, error) {
	k.tick++
	return attrib.Usage{EnergyNJ: k.tick * 1000, CPU: time.Duration(k.tick), Start: uint64(pid)}, nil
}
func (k *stillKernel) GPUTimes(buf []attrib.GPUTime) ([]attrib.GPUTime, error) {
	buf = append(buf[:0], k.gpu...)
	for i := range buf {
		buf[i].Time = time.Duration(k.tick)
	}
	return buf, nil
}
func (k *stillKernel) CoalitionOf(int32) (uint64, error) { return 1, nil }
func (k *stillKernel) CoalitionUsage(uint64) (attrib.CoalitionUsage, error) {
	return attrib.CoalitionUsage{TasksStarted: 1 << 20}, nil
}
func (k *stillKernel) WaitExited(int32) error { return nil }
func (k *stillKernel) Info() attrib.Info      { return attrib.Info{ProcessEnergy: true} }
func (k *stillKernel) Close() error           { return nil }

// BenchmarkPoll is one poll of a tree of 100 processes on a Mac of 600,
// the Tracker's own work; "%core@100ms" is the share of one core that
// polling every 100 ms takes. The kernel's own work for the calls (one
// proc_listpids, a proc_pid_rusage per process, the GPU's clients) comes
// on top on a Mac: see BenchmarkUsage and BenchmarkPids of the binding
// over its fake, and docs/measurement.md.
func BenchmarkPoll(b *testing.B) {
	k := newStillKernel(100, 500)
	tr, err := attrib.Track(k, 1000, true, 0)
	if err != nil {
		b.Fatal(err)
	}
	if r := tr.Snapshot(); r.Processes != 100 {
		b.Fatalf("%d processes in the tree, want 100", r.Processes)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tr.Poll()
	}
	perPoll := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(perPoll/0.1*100, "%core@100ms")
}
