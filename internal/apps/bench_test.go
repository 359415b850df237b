package apps_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/power"
)

// stillMac is a Mac of n processes, none coming or going, each read at
// the cost of a slice index: what a poll costs of the Poller itself,
// apart from the kernel's calls. A fifth are another user's, a tenth
// the GPU's clients, and they stand under 40 apps.
type stillMac struct {
	pids  []int32
	ids   []uint64 // each slot's process's unique id
	byPid map[int32]int
	gpu   []attrib.GPUTime
	tick  uint64
	// churn processes end at each poll, and as many start in their
	// slots, with pids and unique ids never seen.
	churn  int
	nextID uint64
}

func newStillMac(n int) *stillMac {
	m := &stillMac{byPid: map[int32]int{}}
	for i := range n {
		pid := int32(100 + i)
		m.pids = append(m.pids, pid)
		m.ids = append(m.ids, uint64(1000+i))
		m.byPid[pid] = i
		if i%10 == 0 {
			m.gpu = append(m.gpu, attrib.GPUTime{Pid: pid})
		}
	}
	m.nextID = uint64(1000 + n)
	return m
}

func (m *stillMac) Pids(buf []int32) ([]int32, error) {
	m.tick++
	for range m.churn {
		i := int(m.nextID) % len(m.pids)
		delete(m.byPid, m.pids[i])
		m.pids[i], m.ids[i] = int32(100+m.nextID), m.nextID
		m.byPid[m.pids[i]] = i
		m.nextID++
	}
	return append(buf[:0], m.pids...), nil
}
func (m *stillMac) Identify(pid int32) (attrib.Ident, error) {
	i, ok := m.byPid[pid]
	if !ok {
		return attrib.Ident{}, attrib.ErrNoProcess
	}
	return attrib.Ident{UniqueID: m.ids[i], ParentUniqueID: 1}, nil
}
func (m *stillMac) Usage(pid int32) (attrib.Usage, error) {
	i, ok := m.byPid[pid]
	switch {
	case !ok:
		return attrib.Usage{}, attrib.ErrNoProcess
	case i%5 == 0:
		return attrib.Usage{}, attrib.ErrNotPermitted
	}
	return attrib.Usage{EnergyNJ: m.tick * uint64(1000+i), CPU: time.Duration(m.tick), Start: m.ids[i]}, nil
}
func (m *stillMac) GPUTimes(buf []attrib.GPUTime) ([]attrib.GPUTime, error) {
	buf = append(buf[:0], m.gpu...)
	for i := range buf {
		buf[i].Time = time.Duration(m.tick) * time.Millisecond
	}
	return buf, nil
}
func (m *stillMac) CoalitionOf(int32) (uint64, error) { return 1, nil }
func (m *stillMac) CoalitionUsage(uint64) (attrib.CoalitionUsage, error) {
	return attrib.CoalitionUsage{}, nil
}
func (m *stillMac) WaitExited(int32) error { return nil }
func (m *stillMac) Info() attrib.Info      { return attrib.Info{ProcessEnergy: true} }
func (m *stillMac) Close() error           { return nil }

func (m *stillMac) Describe(pid int32) (attrib.Description, error) {
	d := attrib.Description{UID: 501}
	copy(d.Comm[:], "proc"+strconv.Itoa(int(pid)))
	return d, nil
}
func (m *stillMac) Path(pid int32, buf []byte) ([]byte, error) {
	return append(buf[:0], "/Applications/App"+strconv.Itoa(int(pid)%40)+".app/Contents/MacOS/helper"...), nil
}
func (m *stillMac) Responsible(pid int32) (int32, error) { return pid, nil }

// started is a Poller over m, started and past its first Round, when a
// process's names and its app are made.
func started(tb testing.TB, m *stillMac) (*apps.Poller, func() error) {
	p := apps.New(m, m, apps.Config{})
	at := time.Unix(1000, 0)
	if err := p.Start(apps.Reading{At: at}); err != nil {
		tb.Fatal(err)
	}
	r := apps.Reading{Has: ioreportHas}
	round := func() error {
		at = at.Add(time.Second)
		r.At, r.Energy = at, r.Energy.Add(rails)
		return p.Round(r)
	}
	if err := round(); err != nil {
		tb.Fatal(err)
	}
	return p, round
}

// A poll of a Mac whose processes neither start nor end allocates
// nothing: each process is read once, into what the last poll left;
// nor do serve's series of it.
func TestAStillMacsPollAllocatesNothing(t *testing.T) {
	p, round := started(t, newStillMac(800))
	series := apps.NewSeries(20, power.Values{})
	series.Add(p, time.Second)
	if n := testing.AllocsPerRun(20, func() {
		if err := round(); err != nil {
			t.Fatal(err)
		}
		series.Add(p, time.Second)
	}); n != 0 {
		t.Errorf("%v allocations a poll of 800 processes", n)
	}
}

// BenchmarkPoll is one poll of a Mac of 800 processes and the split of
// its window, the Poller's own work; "%core@1s" is the share of one core
// that a poll a second takes (exopower top's default, and serve's). The
// kernel's own work for the calls (one proc_listpids, a proc_pid_rusage
// or a proc_pidinfo per process, the GPU's clients in the IORegistry)
// comes on top on a Mac, and only a Mac can show it: see BenchmarkPids
// and BenchmarkUsage of the binding over its fake, and docs/top.md.
func BenchmarkPoll(b *testing.B) {
	_, round := started(b, newStillMac(800))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := round(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/1*100, "%core@1s")
}

// BenchmarkPollChurn is BenchmarkPoll on a Mac where 80 of the 800
// processes end at every poll and 80 others start: each new one costs
// its identity, names and map entry once, so a poll costs the list and
// its newcomers, not the list again.
func BenchmarkPollChurn(b *testing.B) {
	m := newStillMac(800)
	_, round := started(b, m)
	m.churn = 80
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := round(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/1*100, "%core@1s")
}

// BenchmarkSnapshot is a refresh's snapshot of that Mac, which exopower
// top makes at every poll: its apps and processes, sorted, copied.
func BenchmarkSnapshot(b *testing.B) {
	p, _ := started(b, newStillMac(800))
	b.ReportAllocs()
	for b.Loop() {
		// Of the 40, the 4 whose processes are all another user's and
		// none the GPU's client are not rows.
		if sn := p.Snapshot(); len(sn.Apps) != 36 {
			b.Fatalf("%d apps, want 36", len(sn.Apps))
		}
	}
}
