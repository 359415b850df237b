//go:build attribfake && linux

package attrib_test

import (
	"errors"
	"maps"
	"math"
	"math/big"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ebitengine/purego"

	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/fakemac"
)

// The binding (lib.go, lib_gpu.go) runs here against a fake of the parts
// of libSystem, Core Foundation and IOKit that it calls, written in C
// (fakelib/fake.c) and built by the test with gcc. The fake aborts on
// what would crash or misbehave on a Mac (a wrong flavor, size, option or
// buffer, a release too many, a use after release), so each scenario runs
// in a process of its own: this test binary again, the fake loaded from
// its init. An abort is a failed scenario, with the fake's message.

const (
	scenarioEnv = "EXOPOWER_TEST_ATTRIB_SCENARIO"
	fakeCaseEnv = "FAKE_ATTRIB_CASE"
	rtldNoload  = 0x4 // glibc's RTLD_NOLOAD: a handle only if loaded already
)

// fakeProc is a process of fake.c's tables: its counters are base +
// step×t, t the ticks it has run.
type fakeProc struct {
	pid                    int32
	id, parent             uint64
	other                  bool
	start                  uint64
	energy, denergy        uint64
	penergy, dpenergy      uint64
	user, duser, sys, dsys uint64
	cuser, csys            uint64
	coalition              uint64
}

// treeProcs is fake.c's tree: launchd, WindowServer, a terminal, its
// shell, the command and its descendants, one of them a daemon, one run
// with sudo.
var treeProcs = []fakeProc{
	{pid: 1, id: 1, parent: 0, other: true, start: 1000, energy: 9000000000000, denergy: 1000000, coalition: 1},
	{pid: 88, id: 88000, parent: 1, other: true, start: 2000, energy: 70000000000, denergy: 5000000, coalition: 300},
	{pid: 400, id: 4000, parent: 1, start: 500000, energy: 5000000000, denergy: 40000000, penergy: 3000000000, dpenergy: 30000000,
		user: 240000000, duser: 2400000, sys: 24000000, dsys: 240000, cuser: 200000000000000000, csys: 3, coalition: 500},
	{pid: 401, id: 4001, parent: 4000, start: 600000, energy: 20000000, denergy: 10000, penergy: 1000, dpenergy: 10,
		user: 3000, duser: 3, sys: 300, dsys: 0, coalition: 500},
	{pid: 500, id: 5000, parent: 4001, start: 700000, energy: 1000000, denergy: 250000000, penergy: 800000, dpenergy: 200000000,
		user: 1001, duser: 2400000, sys: 2, dsys: 240000, coalition: 500},
	{pid: 501, id: 5001, parent: 5000, start: 700100, energy: 300, denergy: 7, user: 10, duser: 1, sys: 5, dsys: 1, coalition: 500},
	{pid: 502, id: 5002, parent: 5001, start: 700200, energy: 123456789, denergy: 1000001, penergy: 23456789, dpenergy: 1,
		user: 7, duser: 7, coalition: 500},
	{pid: 503, id: 5003, parent: 5000, other: true, start: 700300, energy: 4, denergy: 4, coalition: 500},
}

// usageAt is a process's usage after t ticks, its reaped children's
// times given in Mach units, with Apple Silicon's timebase, 125/3.
func (p fakeProc) usageAt(t, childMach uint64, exited bool) attrib.Usage {
	return attrib.Usage{
		EnergyNJ:  p.energy + p.denergy*t,
		PEnergyNJ: p.penergy + p.dpenergy*t,
		CPU:       machNs(p.user + p.duser*t + p.sys + p.dsys*t),
		ChildCPU:  machNs(childMach),
		Start:     p.start,
		Exited:    exited,
	}
}

// machNs is Mach time in ns at 125/3, exactly, rounded down.
func machNs(mach uint64) time.Duration {
	ns := new(big.Int).SetUint64(mach)
	ns.Mul(ns, big.NewInt(125)).Quo(ns, big.NewInt(3))
	return time.Duration(ns.Int64())
}

// fakeCoalition is one of fake.c's coalitions, on macOS 15.
type fakeCoalition struct {
	id, started, exited                   uint64
	energy, denergy, ane, dane, gpu, dgpu uint64
}

var treeCoalitions = []fakeCoalition{
	{500, 40, 12, 1000000000000, 500000000, 300000000, 1000000, 7000000000, 20000000},
	{300, 3, 0, 80000000000, 6000000, 0, 0, 90000000000, 300000000},
}

// fakeLib is what the fake tells the tests.
type fakeLib struct {
	tick                                   func()
	reap                                   func(int32) int32
	liveCF, liveIO, waiters, listPidsCalls func() int64
	loadedOnMain                           func() int32
}

// scenario is what one process does, over the fake in one of its cases.
type scenario struct {
	fake string
	run  func(t *testing.T, f *fakeLib)
}

var scenarios = map[string]scenario{
	"a tree of known energies":                        {"tree", aTree},
	"another user's process is identified, not read":  {"tree", anotherUsers},
	"a pid not listed":                                {"tree", notListed},
	"coalitions with the GPU's and the ANE's energy":  {"tree", coalitions15},
	"the poll's calls allocate nothing":               {"tree", noAllocations},
	"no GPU":                                          {"tree", noGPU},
	"the command exits, and is a zombie until reaped": {"exits", theCommandExits},
	"the Tracker over the binding":                    {"exits", theTrackerOverTheBinding},
	"a descendant gone between two readings":          {"exits", aDescendantGone},
	"waiting for a process not exopower's child":      {"exits", notAChild},
	"a pid reused":                                    {"reuse", aPidReused},
	"a macOS 14 kernel: no accelerators' energy":      {"mac14", aMac14},
	"a macOS 12 kernel: no process energy":            {"mac12", aMac12},
	"a virtual machine: no energy":                    {"vm", aVirtualMachine},
	"more processes than the kernel's first guess":    {"many", manyProcesses},
	"proc_listpids fails":                             {"no-list", listFails},
	"the GPU's clients":                               {"gpu", gpuClients},
	"no matching dictionary for the GPU":              {"no-matching", noMatching},
}

// Every scenario passes in a process of its own.
func TestTheBindingAgainstAFakeOfMacOSsProcessCalls(t *testing.T) {
	if os.Getenv(scenarioEnv) != "" {
		t.Skip("this is a scenario's process")
	}
	so := fakemac.Build(t, "macOS's process calls")
	fakemac.Scenarios(t, scenarios, "TestAttribBindingScenario", func(name string) []string {
		return []string{scenarioEnv + "=" + name, fakeCaseEnv + "=" + scenarios[name].fake, attrib.FakeLibraryEnv + "=" + so}
	})
}

// TestAttribBindingScenario is one scenario, in the process that
// TestTheBindingAgainstAFakeOfMacOSsProcessCalls started for it. The
// fake must have been loaded already, on the main thread, when the
// package was initialised: Core Foundation must be initialised there.
func TestAttribBindingScenario(t *testing.T) {
	name := os.Getenv(scenarioEnv)
	if name == "" {
		t.Skip("run in a process of its own by TestTheBindingAgainstAFakeOfMacOSsProcessCalls")
	}
	f := loadFake(t)
	if f.loadedOnMain() != 1 {
		t.Fatal("the libraries were loaded off the main thread")
	}
	scenarios[name].run(t, f)
}

// loadFake finds the fake's functions for the tests, in the library the
// package loaded.
func loadFake(t testing.TB) *fakeLib {
	t.Helper()
	h, err := purego.Dlopen(os.Getenv(attrib.FakeLibraryEnv), purego.RTLD_NOW|rtldNoload)
	if err != nil {
		t.Fatalf("the libraries were not loaded when the package was initialised (%v): Core Foundation would be initialised off the main thread", err)
	}
	var f fakeLib
	for fptr, name := range map[any]string{&f.tick: "fake_tick", &f.reap: "fake_reap", &f.liveCF: "fake_live_cf", &f.liveIO: "fake_live_io",
		&f.waiters: "fake_waiters", &f.listPidsCalls: "fake_listpids_calls", &f.loadedOnMain: "fake_loaded_on_main_thread"} {
		purego.RegisterLibFunc(fptr, h, name)
	}
	return &f
}

// nothingLeft fails where a Core Foundation object other than the
// binding's keys is alive, or an IOKit object not released.
func (f *fakeLib) nothingLeft(t *testing.T, when string, keys int64) {
	t.Helper()
	if cf, io := f.liveCF(), f.liveIO(); cf != keys || io != 0 {
		t.Errorf("%s: %d Core Foundation objects alive (want %d), %d IOKit objects not released", when, cf, keys, io)
	}
}

func open(t *testing.T) attrib.Kernel {
	t.Helper()
	k, err := attrib.Open()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// closeAll closes k and checks that nothing is left, and that it reads
// no more.
func closeAll(t *testing.T, f *fakeLib, k attrib.Kernel) {
	t.Helper()
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	f.nothingLeft(t, "after Close", 0)
	if err := k.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if _, err := k.Usage(500); err == nil {
		t.Error("Usage after Close did not fail")
	}
	if _, err := k.Pids(nil); err == nil {
		t.Error("Pids after Close did not fail")
	}
	if _, err := k.GPUTimes(nil); err == nil {
		t.Error("GPUTimes after Close did not fail")
	}
	f.nothingLeft(t, "after a second Close", 0)
}

func pidsOf(procs []fakeProc) []int32 {
	var pids []int32
	for _, p := range procs {
		pids = append(pids, p.pid)
	}
	return pids
}

// wantErr fails unless err is target, saying what the call was.
func wantErr(t *testing.T, what string, err, target error, says string) {
	t.Helper()
	if !errors.Is(err, target) || !strings.Contains(fmtErr(err), says) {
		t.Errorf("%s: %v, want %v saying %q", what, err, target, says)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A tree: every process listed and identified at every tick, this
// user's read at their exact energies and times (Mach time at 125/3,
// and a child time whose product by 125 passes 64 bits), the others
// refused; what the Mac is; then Close.
func aTree(t *testing.T, f *fakeLib) {
	k := open(t)
	if got, want := k.Info(), (attrib.Info{MacOS: "15.5", Chip: "Apple M2 Pro", ProcessEnergy: true, AcceleratorEnergy: true}); got != want {
		t.Errorf("Info %+v, want %+v", got, want)
	}
	var pids []int32
	for tick := uint64(0); tick < 3; tick++ {
		var err error
		if pids, err = k.Pids(pids); err != nil || !slices.Equal(pids, pidsOf(treeProcs)) {
			t.Fatalf("tick %d: Pids %v, %v; want %v", tick, pids, err, pidsOf(treeProcs))
		}
		for _, p := range treeProcs {
			readsAsTheTable(t, k, p, tick)
		}
		f.tick()
	}
	closeAll(t, f, k)
}

// readsAsTheTable checks one of the tree's processes after tick ticks.
func readsAsTheTable(t *testing.T, k attrib.Kernel, p fakeProc, tick uint64) {
	t.Helper()
	if id, err := k.Identify(p.pid); err != nil || id != (attrib.Ident{UniqueID: p.id, ParentUniqueID: p.parent}) {
		t.Errorf("tick %d: Identify(%d) %+v, %v; want %d and its parent %d", tick, p.pid, id, err, p.id, p.parent)
	}
	if c, err := k.CoalitionOf(p.pid); err != nil || c != p.coalition {
		t.Errorf("tick %d: CoalitionOf(%d) %d, %v; want %d", tick, p.pid, c, err, p.coalition)
	}
	u, err := k.Usage(p.pid)
	if p.other {
		wantErr(t, "Usage of another user's process", err, attrib.ErrNotPermitted, "proc_pid_rusage")
		return
	}
	if want := p.usageAt(tick, p.cuser+p.csys, false); err != nil || u != want {
		t.Errorf("tick %d: Usage(%d)\n %+v, %v\nwant %+v", tick, p.pid, u, err, want)
	}
}

// Another user's process is identified and has a coalition; its usage is
// not permitted, which is no process gone.
func anotherUsers(t *testing.T, f *fakeLib) {
	k := open(t)
	if id, err := k.Identify(503); err != nil || id.UniqueID != 5003 || id.ParentUniqueID != 5000 {
		t.Errorf("Identify(503) %+v, %v", id, err)
	}
	_, err := k.Usage(503)
	wantErr(t, "Usage(503)", err, attrib.ErrNotPermitted, "proc_pid_rusage: not permitted")
	if errors.Is(err, attrib.ErrNoProcess) || errors.Is(err, attrib.ErrUnsupported) {
		t.Errorf("Usage(503): %v is also another error", err)
	}
	closeAll(t, f, k)
}

// A pid that is not listed is no process, whichever the call.
func notListed(t *testing.T, f *fakeLib) {
	k := open(t)
	_, err := k.Usage(999)
	wantErr(t, "Usage(999)", err, attrib.ErrNoProcess, "proc_pid_rusage")
	_, err = k.Identify(999)
	wantErr(t, "Identify(999)", err, attrib.ErrNoProcess, "PROC_PIDUNIQIDENTIFIERINFO")
	_, err = k.CoalitionOf(999)
	wantErr(t, "CoalitionOf(999)", err, attrib.ErrNoProcess, "PROC_PIDCOALITIONINFO")
	closeAll(t, f, k)
}

// macOS 15's coalitions carry the GPU's and the Neural Engine's energy,
// read at every tick; a coalition that is gone says so.
func coalitions15(t *testing.T, f *fakeLib) {
	k := open(t)
	for tick := uint64(0); tick < 3; tick++ {
		for _, c := range treeCoalitions {
			want := attrib.CoalitionUsage{CPUNJ: c.energy + c.denergy*tick, GPUNJ: c.gpu + c.dgpu*tick, ANENJ: c.ane + c.dane*tick,
				TasksStarted: c.started, TasksExited: c.exited}
			if u, err := k.CoalitionUsage(c.id); err != nil || u != want {
				t.Errorf("tick %d: coalition %d: %+v, %v; want %+v", tick, c.id, u, err, want)
			}
		}
		f.tick()
	}
	if _, err := k.CoalitionUsage(999); err == nil || !strings.Contains(err.Error(), "no coalition 999") {
		t.Errorf("an unknown coalition: %v", err)
	}
	closeAll(t, f, k)
}

// Pids, Identify, Usage, CoalitionOf and CoalitionUsage allocate nothing,
// failing as succeeding, once Pids has its room.
func noAllocations(t *testing.T, f *fakeLib) {
	k := open(t)
	pids, err := k.Pids(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, fn := range map[string]func(){
		"Pids":                            func() { pids, _ = k.Pids(pids) },
		"Usage":                           func() { k.Usage(500) },
		"Usage of another user's process": func() { k.Usage(503) },
		"Usage of a process gone":         func() { k.Usage(999) },
		"Identify":                        func() { k.Identify(500) },
		"Identify of a process gone":      func() { k.Identify(999) },
		"CoalitionOf":                     func() { k.CoalitionOf(500) },
		"CoalitionUsage":                  func() { k.CoalitionUsage(500) },
	} {
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Errorf("%s: %v allocations a call", name, n)
		}
	}
	closeAll(t, f, k)
}

// A Mac whose registry has no GPU's service (a virtual machine): no
// process has GPU time, and that is no error.
func noGPU(t *testing.T, f *fakeLib) {
	k := open(t)
	if g, err := k.GPUTimes(nil); err != nil || len(g) != 0 {
		t.Errorf("GPUTimes %v, %v; want none", g, err)
	}
	f.nothingLeft(t, "after GPUTimes", 3)
	closeAll(t, f, k)
}

// fake.c's "exits" case: exopower (450), its child the command (500),
// which exits at the second tick, and the command's child (501), which
// exits and is reaped between the first two.
var (
	exitsCommand = fakeProc{pid: 500, id: 5000, parent: 4500, start: 700000, energy: 1000, denergy: 100, penergy: 10, dpenergy: 1,
		user: 300, duser: 30, sys: 30, dsys: 3, cuser: 6, csys: 9}
	exitsChild = fakeProc{pid: 501, id: 5001, parent: 5000, start: 700100, energy: 50, denergy: 5, user: 600, duser: 60, sys: 90, dsys: 9}
	// The command's reaped children's time once 501 is reaped: its own,
	// and 501's at its exit, after one tick.
	exitsChildMach = exitsCommand.cuser + exitsCommand.csys + exitsChild.user + exitsChild.duser + exitsChild.sys + exitsChild.dsys
)

// The command exits: WaitExited, started before, retried after a signal,
// returns once it has, without reaping it; its final usage reads the same
// until it is reaped, and then it is gone.
func theCommandExits(t *testing.T, f *fakeLib) {
	k := open(t)
	done := make(chan error, 1)
	go func() { done <- k.WaitExited(500) }()
	waitFor(t, "WaitExited to wait, after its first call was interrupted", func() bool { return f.waiters() == 1 || len(done) > 0 })
	if len(done) > 0 {
		t.Fatalf("WaitExited returned before the command exited: %v", <-done)
	}
	// The poll goes on beside the wait.
	f.tick()
	if u, err := k.Usage(500); err != nil || u != exitsCommand.usageAt(1, exitsChildMach, false) {
		t.Errorf("tick 1: Usage(500) %+v, %v", u, err)
	}
	select {
	case err := <-done:
		t.Fatalf("WaitExited returned before the command exited: %v", err)
	default:
	}
	f.tick()
	if err := waitErr(t, done); err != nil {
		t.Fatalf("WaitExited: %v", err)
	}
	final := exitsCommand.usageAt(2, exitsChildMach, true)
	for tick := 2; tick < 4; tick++ {
		if u, err := k.Usage(500); err != nil || u != final {
			t.Errorf("tick %d: the zombie's Usage\n %+v, %v\nwant %+v", tick, u, err, final)
		}
		if id, err := k.Identify(500); err != nil || id.UniqueID != 5000 {
			t.Errorf("tick %d: Identify of the zombie: %+v, %v", tick, id, err)
		}
		f.tick()
	}
	if pids, err := k.Pids(nil); err != nil || !slices.Equal(pids, []int32{450, 500}) {
		t.Errorf("Pids with the zombie %v, %v", pids, err)
	}
	_, err := k.CoalitionOf(500)
	wantErr(t, "CoalitionOf the zombie", err, attrib.ErrNoProcess, "zombie")
	isReaped(t, f, k)
	closeAll(t, f, k)
}

// The Tracker follows the command through the binding: the command read
// as a zombie after its end, its child read once before it was reaped,
// the rest of that child's time unseen, to the nanojoule and the
// nanosecond that the fake's counters give.
func theTrackerOverTheBinding(t *testing.T, f *fakeLib) {
	k := open(t)
	tr, err := attrib.Track(k, 500, true, 1)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := tr.ReadBeforeReap(nil)
		done <- err
	}()
	f.tick()
	tr.Poll()
	f.tick() // the command exits
	if err := waitErr(t, done); err != nil {
		t.Fatalf("ReadBeforeReap: %v", err)
	}
	r := tr.Result()
	final := exitsCommand.usageAt(2, exitsChildMach, true)
	child := exitsChild.usageAt(0, 0, false)
	// Each process's nanojoules are joules apart, summed as floats.
	if want := float64(final.EnergyNJ+child.EnergyNJ) / 1e9; math.Abs(r.CPU-want) > 1e-18 || r.Processes != 2 || r.Running != 0 {
		t.Errorf("%+v: want %g J of 2 processes, none running", r, want)
	}
	if want := final.ChildCPU - child.CPU; r.UnseenCPUTime != want || r.CPUTime != final.CPU+child.CPU {
		t.Errorf("CPU time %v read, %v unseen: want %v and %v", r.CPUTime, r.UnseenCPUTime, final.CPU+child.CPU, want)
	}
	// The coalition holds 28 live tasks: a terminal's, not the command's.
	if r.Coalition != nil || !strings.Contains(r.CoalitionNote, "shares its coalition") {
		t.Errorf("coalition %+v (%s): want none of its own", r.Coalition, r.CoalitionNote)
	}
	if f.reap(500) != 1 {
		t.Fatal("the fake did not reap 500")
	}
	closeAll(t, f, k)
}

// isReaped reaps the command, as cmd.Wait does, and checks it is gone.
func isReaped(t *testing.T, f *fakeLib, k attrib.Kernel) {
	t.Helper()
	if f.reap(500) != 1 {
		t.Fatal("the fake did not reap 500")
	}
	_, err := k.Usage(500)
	wantErr(t, "Usage once reaped", err, attrib.ErrNoProcess, "proc_pid_rusage")
	_, err = k.Identify(500)
	wantErr(t, "Identify once reaped", err, attrib.ErrNoProcess, "PROC_PIDUNIQIDENTIFIERINFO")
	if pids, err := k.Pids(nil); err != nil || !slices.Equal(pids, []int32{450}) {
		t.Errorf("Pids once reaped %v, %v", pids, err)
	}
	if err := k.WaitExited(500); err == nil || !strings.Contains(err.Error(), "reaped already") {
		t.Errorf("WaitExited once reaped: %v", err)
	}
}

// waitFor waits until cond holds, failing after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		runtime.Gosched()
	}
}

func waitErr(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("WaitExited did not return a minute after the command exited")
	}
	return nil
}

// A descendant that exits and is reaped between two readings: gone from
// the list and unread, its time in its parent's reaped children's.
func aDescendantGone(t *testing.T, f *fakeLib) {
	k := open(t)
	if u, err := k.Usage(501); err != nil || u != exitsChild.usageAt(0, 0, false) {
		t.Errorf("tick 0: Usage(501) %+v, %v", u, err)
	}
	f.tick()
	if pids, err := k.Pids(nil); err != nil || !slices.Equal(pids, []int32{450, 500}) {
		t.Errorf("Pids %v, %v; want 501 gone", pids, err)
	}
	_, err := k.Usage(501)
	wantErr(t, "Usage(501)", err, attrib.ErrNoProcess, "proc_pid_rusage")
	if u, err := k.Usage(500); err != nil || u.ChildCPU != machNs(exitsChildMach) {
		t.Errorf("the parent's reaped children's CPU time %v, %v; want %v", u.ChildCPU, err, machNs(exitsChildMach))
	}
	closeAll(t, f, k)
}

// WaitExited on a process that is not exopower's child fails at once.
func notAChild(t *testing.T, f *fakeLib) {
	k := open(t)
	if err := k.WaitExited(450); err == nil || !strings.Contains(err.Error(), "not exopower's child") {
		t.Errorf("WaitExited(450): %v", err)
	}
	closeAll(t, f, k)
}

// A pid reused: the same pid, another unique id and start.
func aPidReused(t *testing.T, f *fakeLib) {
	k := open(t)
	for _, want := range []struct {
		id, start, energy uint64
	}{{6000, 111, 10}, {6100, 222, 5}, {6100, 222, 7}} {
		id, err := k.Identify(600)
		u, uerr := k.Usage(600)
		if err != nil || uerr != nil || id.UniqueID != want.id || id.ParentUniqueID != 4500 || u.Start != want.start || u.EnergyNJ != want.energy {
			t.Errorf("pid 600: %+v, %v, %+v, %v; want unique id %d, start %d, %d nJ", id, err, u, uerr, want.id, want.start, want.energy)
		}
		f.tick()
	}
	closeAll(t, f, k)
}

// macOS 14: process energy, and coalitions without the GPU's and the
// Neural Engine's energy, whose fields that kernel does not copy.
func aMac14(t *testing.T, f *fakeLib) {
	k := open(t)
	if got, want := k.Info(), (attrib.Info{MacOS: "14.5", Chip: "Apple M3 Max", ProcessEnergy: true}); got != want {
		t.Errorf("Info %+v, want %+v", got, want)
	}
	for tick := uint64(0); tick < 2; tick++ {
		want := attrib.CoalitionUsage{CPUNJ: 2000 + 20*tick, TasksStarted: 5, TasksExited: 1}
		if u, err := k.CoalitionUsage(500); err != nil || u != want {
			t.Errorf("coalition %+v, %v; want %+v", u, err, want)
		}
		f.tick()
	}
	if u, err := k.Usage(500); err != nil || u.EnergyNJ != 1200 {
		t.Errorf("Usage %+v, %v", u, err)
	}
	closeAll(t, f, k)
}

// macOS 12: no RUSAGE_INFO_V6, no kern.pervasive_energy.
func aMac12(t *testing.T, f *fakeLib) {
	k := open(t)
	if got, want := k.Info(), (attrib.Info{MacOS: "12.7.6", Chip: "Apple M1"}); got != want {
		t.Errorf("Info %+v, want %+v", got, want)
	}
	_, err := k.Usage(500)
	wantErr(t, "Usage on macOS 12", err, attrib.ErrUnsupported, "proc_pid_rusage: the kernel has no per-process energy (macOS 13 or later)")
	if u, err := k.CoalitionUsage(500); err != nil || u != (attrib.CoalitionUsage{CPUNJ: 2000, TasksStarted: 5, TasksExited: 1}) {
		t.Errorf("coalition %+v, %v", u, err)
	}
	closeAll(t, f, k)
}

// A virtual machine's kernel keeps no energy, and says so; its timebase
// is 1/1.
func aVirtualMachine(t *testing.T, f *fakeLib) {
	k := open(t)
	if got, want := k.Info(), (attrib.Info{MacOS: "13.6.1", Chip: "Apple M2 (Virtual)"}); got != want {
		t.Errorf("Info %+v, want %+v", got, want)
	}
	f.tick()
	if u, err := k.Usage(500); err != nil || u.EnergyNJ != 0 || u.CPU != 6 {
		t.Errorf("Usage %+v, %v; want 0 nJ and 6 ns", u, err)
	}
	closeAll(t, f, k)
}

// More processes than the kernel's estimate: the binding's buffer grows
// until it holds them all, and holds them in one call after; the
// caller's buffer, nil or small, grows to take them.
func manyProcesses(t *testing.T, f *fakeLib) {
	k := open(t)
	want := make([]int32, 3000)
	for i := range want {
		want[i] = int32(1000 + i)
	}
	for i, start := range [][]int32{nil, make([]int32, 0, 3), make([]int32, 5, 4000)} {
		calls := f.listPidsCalls()
		pids, err := k.Pids(start)
		if err != nil || !slices.Equal(pids, want) {
			t.Fatalf("Pids into a buffer of %d: %d pids, %v; want 1000 to 3999", cap(start), len(pids), err)
		}
		// The estimate, then a buffer too small at least once.
		if n := f.listPidsCalls() - calls; (i == 0 && n < 3) || (i > 0 && n != 1) {
			t.Errorf("Pids into a buffer of %d: %d calls of proc_listpids", cap(start), n)
		}
	}
	closeAll(t, f, k)
}

// proc_listpids fails: the error names it.
func listFails(t *testing.T, f *fakeLib) {
	k := open(t)
	if pids, err := k.Pids(nil); err == nil || !strings.Contains(err.Error(), "proc_listpids") {
		t.Errorf("Pids %v, %v", pids, err)
	}
	closeAll(t, f, k)
}

// The GPU's clients: each process's time summed over its clients of both
// GPUs at every tick; clients of another class, or whose creator or
// AppUsage cannot be read, passed over; nothing left but the keys.
func gpuClients(t *testing.T, f *fakeLib) {
	k := open(t)
	var times []attrib.GPUTime
	for tick := int64(0); tick < 3; tick++ {
		var err error
		if times, err = k.GPUTimes(times); err != nil {
			t.Fatal(err)
		}
		got := map[int32]time.Duration{}
		for _, g := range times {
			if _, twice := got[g.Pid]; twice {
				t.Errorf("pid %d given twice", g.Pid)
			}
			got[g.Pid] = g.Time
		}
		want := map[int32]time.Duration{
			500: time.Duration(1000 + 100*tick + 20 + 2*tick + 300 + 30*tick + 50),
			88:  time.Duration(5000000 + 1000*tick),
			502: time.Duration(7 + tick),
		}
		if !maps.Equal(got, want) {
			t.Errorf("tick %d: GPU times %v, want %v", tick, got, want)
		}
		f.nothingLeft(t, "after GPUTimes", 3)
		f.tick()
	}
	closeAll(t, f, k)
}

// No matching dictionary: GPUTimes fails, naming the call.
func noMatching(t *testing.T, f *fakeLib) {
	k := open(t)
	if _, err := k.GPUTimes(nil); err == nil || !strings.Contains(err.Error(), "IOServiceMatching") {
		t.Errorf("GPUTimes: %v", err)
	}
	f.nothingLeft(t, "after GPUTimes", 3)
	closeAll(t, f, k)
}

// The benchmarks run over the fake's tree, loaded when the package is
// initialised, so they need the library given in the environment:
//
//	gcc -shared -fPIC -I internal/fakemac -o /tmp/libattribfake.so internal/attrib/fakelib/fake.c
//	EXOPOWER_ATTRIB_FAKE_LIBRARY=/tmp/libattribfake.so FAKE_ATTRIB_CASE=tree \
//	  go test -tags attribfake -run '^$' -bench . -benchmem ./internal/attrib/
func benchKernel(b *testing.B) attrib.Kernel {
	if os.Getenv(attrib.FakeLibraryEnv) == "" || os.Getenv(fakeCaseEnv) != "tree" {
		b.Skipf("set %s to the fake library and %s=tree (see binding_test.go)", attrib.FakeLibraryEnv, fakeCaseEnv)
	}
	k, err := attrib.Open()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { k.Close() })
	return k
}

func BenchmarkPids(b *testing.B) {
	k := benchKernel(b)
	var pids []int32
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if pids, err = k.Pids(pids); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUsage(b *testing.B) {
	k := benchKernel(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Usage(500); err != nil {
			b.Fatal(err)
		}
	}
}
