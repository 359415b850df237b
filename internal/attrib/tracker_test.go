package attrib_test

import (
	"errors"
	"math"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/fakepm"
)

const ms = time.Millisecond

// clock is a clock the test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// A busy Mac's tree, polled every 100 ms from 0 to 2 s, when the root
// exits: every figure is known exactly.
//
//	root  2 W until 1 s, GPU 0.5 s/s until 1 s, exits at 2 s
//	├─ A  1 W from 0.2 s, exits at 1.15 s between two polls, reaped at 1.17 s
//	│  └─ B  3 W (half on the performance cores) from 0.5 s to 0.9 s, reaped at 0.95 s
//	├─ C  5 W from 0.31 s to 0.33 s, reaped at 0.34 s: never polled
//	├─ D  2 W from 0.4 s to 0.8 s, another user's, reaped at 0.85 s
//	└─ E  1 W from 1.0 s with B's pid, exits at 1.5 s, reaped at 1.6 s
//	outside: a browser at 6 W and GPU 0.25 s/s all along, and a process
//	that takes A's pid at 1.3 s
func busyMac() []fakepm.Process {
	return []fakepm.Process{
		{Name: "root", ID: 1000, ParentID: 900, Exits: 2000 * ms, Reaped: 2100 * ms, Watts: 2, Busy: 1000 * ms, GPU: 0.5},
		{Name: "A", Pid: 4001, ID: 1001, ParentID: 1000, Born: 200 * ms, Exits: 1150 * ms, Reaped: 1170 * ms, Watts: 1},
		{Name: "B", Pid: 4002, ID: 1002, ParentID: 1001, Born: 500 * ms, Exits: 900 * ms, Reaped: 950 * ms, Watts: 3, PShare: 0.5},
		{Name: "C", Pid: 4003, ID: 1003, ParentID: 1000, Born: 310 * ms, Exits: 330 * ms, Reaped: 340 * ms, Watts: 5},
		{Name: "D", Pid: 4004, ID: 1004, ParentID: 1000, Born: 400 * ms, Exits: 800 * ms, Reaped: 850 * ms, Watts: 2, AnotherUsers: true},
		{Name: "E", Pid: 4002, ID: 1005, ParentID: 1000, Born: 1000 * ms, Exits: 1500 * ms, Reaped: 1600 * ms, Watts: 1},
		{Name: "browser", Pid: 500, ID: 50, ParentID: 1, Born: -10 * time.Second, Watts: 6, GPU: 0.25},
		{Name: "A's pid again", Pid: 4001, ID: 1006, ParentID: 1, Born: 1300 * ms, Watts: 9},
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestATreeOnABusyMacAddsUpToItsExactEnergy(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	k := fakepm.NewProcesses(busyMac(), c.now)
	tr, err := attrib.Track(k, 3000, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 19 {
		c.t = c.t.Add(100 * ms)
		if err := tr.Poll(); err != nil {
			t.Fatal(err)
		}
	}
	c.t = c.t.Add(100 * ms) // 2 s: the root exits
	if _, err := tr.ReadBeforeReap(nil); err != nil {
		t.Fatal(err)
	}
	r := tr.Result()
	// Read: root 2 J, A 0.9 J of its 0.95 J (last read at 1.1 s), B
	// 1.2 J, E 0.5 J. Unseen: A's last 0.05 J, C's 0.1 J, D's 0.8 J, as
	// CPU time at 4 W per CPU second.
	if r.Processes != 4 || r.NotPermitted != 1 || r.Running != 0 {
		t.Errorf("%d processes read, %d another user's, %d running: want 4, 1, 0", r.Processes, r.NotPermitted, r.Running)
	}
	if !near(r.CPU, 4.6, 1e-6) || !near(r.PCPU, 0.6, 1e-6) {
		t.Errorf("CPU %.6f J (performance cores %.6f J), want 4.6 J (0.6 J)", r.CPU, r.PCPU)
	}
	if want := 237500 * time.Microsecond; r.UnseenCPUTime < want-time.Microsecond || r.UnseenCPUTime > want+time.Microsecond {
		t.Errorf("unseen CPU time %v, want %v", r.UnseenCPUTime, want)
	}
	if !near(r.UnseenCPU(), 0.95, 1e-5) || !near(r.CPU+r.UnseenCPU(), 5.55, 1e-5) {
		t.Errorf("unseen %.6f J, the tree %.6f J: want 0.95 J of 5.55 J", r.UnseenCPU(), r.CPU+r.UnseenCPU())
	}
	if !near(r.Coverage(), 4.6/5.55, 1e-5) {
		t.Errorf("coverage %.5f, want %.5f", r.Coverage(), 4.6/5.55)
	}
	// The root's 0.5 s of GPU time, and the browser's 0.25 s/s over 2 s.
	if r.GPUTime != 500*ms || r.AllGPUTime != 1000*ms || r.GPUShare() != 0.5 {
		t.Errorf("GPU time %v of %v, share %v: want 500ms of 1s, 0.5", r.GPUTime, r.AllGPUTime, r.GPUShare())
	}
	if r.Polls != 21 {
		t.Errorf("%d polls, want 21", r.Polls)
	}
}

// A server already running counts from the first reading: its energy and
// its children's before that is not the span's.
func TestATreeAlreadyRunningCountsFromTheFirstReading(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	table := []fakepm.Process{
		{Name: "server", ID: 1000, ParentID: 1, Born: -5 * time.Second, Watts: 3, GPU: 1},
		{Name: "worker", Pid: 4001, ID: 1001, ParentID: 1000, Born: -4 * time.Second, Watts: 2, Exits: 500 * ms, Reaped: 520 * ms},
		{Name: "request", Pid: 4002, ID: 1002, ParentID: 1000, Born: 250 * ms, Exits: 600 * ms, Reaped: 650 * ms, Watts: 4},
	}
	k := fakepm.NewProcesses(table, c.now)
	r := trackFromFirst(t, k, c)
	// server 3 W × 1 s, worker 2 W × 0.5 s, request 4 W × 0.35 s.
	if !near(r.CPU, 3+1+1.4, 1e-6) || r.UnseenCPUTime != 0 || r.Running != 1 || r.Processes != 3 {
		t.Errorf("%+v: want 5.4 J, nothing unseen, 1 of 3 running", r)
	}
	if r.GPUTime != time.Second || r.AllGPUTime != time.Second {
		t.Errorf("GPU %v of %v, want 1s of 1s", r.GPUTime, r.AllGPUTime)
	}
}

// A Mac without per-process energy (macOS 12) says so at once.
func TestAKernelWithoutProcessEnergyIsAnError(t *testing.T) {
	k := fakepm.NewProcesses(busyMac(), nil)
	k.MacOS = "12.7"
	if _, err := attrib.Track(k, 3000, true, 0); !errors.Is(err, attrib.ErrUnsupported) {
		t.Errorf("Track: %v, want ErrUnsupported", err)
	}
}

// A coalition is the tree's own when it holds the tree and the processes
// known to share it, and no more: its GPU and Neural Engine energy are
// then the tree's.
func TestACoalitionCountsOnlyWhereItIsTheTreesOwn(t *testing.T) {
	for _, tc := range []struct {
		others, known int
		own           bool
	}{{0, 0, true}, {1, 1, true}, {3, 1, false}} {
		c := &clock{t: time.Unix(1000, 0)}
		k := fakepm.NewProcesses(busyMac()[:1], c.now)
		k.CoalitionOthers, k.CoalitionGPU, k.CoalitionANE = tc.others, 5, 1.5
		tr, err := attrib.Track(k, 3000, true, tc.known)
		if err != nil {
			t.Fatal(err)
		}
		c.t = c.t.Add(800 * ms)
		tr.Poll()
		r := tr.Result()
		switch {
		case tc.own && (r.Coalition == nil || !near(r.Coalition.GPU, 4, 1e-6) || !near(r.Coalition.ANE, 1.2, 1e-6) || !near(r.Coalition.CPU, 1.6, 1e-6)):
			t.Errorf("%d others, %d known: %+v (%s), want 4 J of GPU, 1.2 J of ANE, 1.6 J of CPU", tc.others, tc.known, r.Coalition, r.CoalitionNote)
		case !tc.own && (r.Coalition != nil || r.CoalitionNote == ""):
			t.Errorf("%d others, %d known: %+v, want no coalition and why", tc.others, tc.known, r.Coalition)
		}
	}
}

// The command's own process is read as a zombie, after it exits and
// before it is reaped: its final usage, not the last poll's.
func TestTheRootIsReadAsAZombieBeforeItIsReaped(t *testing.T) {
	cmd := exec.Command("sleep", "0.3")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	k := fakepm.NewProcesses([]fakepm.Process{{Name: "sleep", Real: true, ID: 1000, ParentID: 1, Watts: 2}}, nil)
	tr, err := attrib.Track(k, int32(cmd.Process.Pid), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	exited, err := tr.ReadBeforeReap(nil)
	if err != nil || exited.IsZero() {
		t.Fatal(exited, err)
	}
	r := tr.Result()
	if err := cmd.Wait(); err != nil {
		t.Errorf("the command, reaped after: %v", err)
	}
	// 2 W over its lifetime as the fake saw it, 0.3 s and some.
	if r.Running != 0 || r.CPU < 0.6 || r.Processes != 1 {
		t.Errorf("%+v: want the zombie's final 0.6 J or more", r)
	}
}

// A parent that reaps its child and is reaped itself between two polls:
// the child's CPU time is in the root's count once, through the parent's,
// not once more for having been read.
func TestAGrandchildReapedBetweenPollsIsCountedOnce(t *testing.T) {
	r := tenPolls(t, []fakepm.Process{
		{Name: "root", ID: 1000, ParentID: 900, Exits: 1000 * ms, Watts: 1, Busy: 100 * ms},
		{Name: "A", Pid: 4001, ID: 1001, ParentID: 1000, Born: 200 * ms, Exits: 380 * ms, Reaped: 390 * ms, Watts: 2},
		{Name: "B", Pid: 4002, ID: 1002, ParentID: 1001, Born: 250 * ms, Exits: 340 * ms, Reaped: 360 * ms, Watts: 4},
	})
	// Read: root 0.1 J, A 0.2 J and B 0.2 J at 0.3 s; the tree drew
	// 0.1 + 0.36 + 0.36 J.
	if !near(r.CPU, 0.5, 1e-6) || !near(r.CPU+r.UnseenCPU(), 0.82, 1e-5) {
		t.Errorf("read %.6f J, read and unseen %.6f J: want 0.5 J and 0.82 J", r.CPU, r.CPU+r.UnseenCPU())
	}
}

// A child whose parent exits before it is reaped by launchd: its CPU time
// is in no count of the tree's, and is taken as last read.
func TestAnOrphanIsCountedAsLastRead(t *testing.T) {
	r := tenPolls(t, []fakepm.Process{
		{Name: "root", ID: 1000, ParentID: 900, Exits: 1000 * ms, Watts: 1, Busy: 100 * ms},
		{Name: "A", Pid: 4001, ID: 1001, ParentID: 1000, Born: 150 * ms, Exits: 250 * ms, Reaped: 260 * ms, Watts: 2},
		{Name: "daemon", Pid: 4002, ID: 1002, ParentID: 1001, Born: 200 * ms, Exits: 600 * ms, Reaped: 610 * ms, Watts: 3},
	})
	// root 0.1 J, A 0.1 J of 0.2 J (read at 0.2 s), the daemon 1.2 J
	// (read as a zombie at 0.6 s); A's last 0.1 J unseen.
	if !near(r.CPU, 1.4, 1e-6) || !near(r.CPU+r.UnseenCPU(), 1.5, 1e-5) {
		t.Errorf("read %.6f J, read and unseen %.6f J: want 1.4 J and 1.5 J", r.CPU, r.CPU+r.UnseenCPU())
	}
}

// tenPolls follows the tree of table's root from its birth, polling it at
// 0.1 s to 1 s, and says what it drew.
func tenPolls(t *testing.T, table []fakepm.Process) attrib.Result {
	t.Helper()
	c := &clock{t: time.Unix(1000, 0)}
	return pollTen(t, fakepm.NewProcesses(table, c.now), c, true)
}

// A child its parent never reaps goes to launchd when the parent exits,
// and is reaped there at once, gone by the poll that finds the parent a
// zombie: it is in no count of the tree's, and is taken as last read,
// while what the parent did reap stays unseen.
func TestAChildLeftToLaunchdAtTheRootsExitIsCountedAsRead(t *testing.T) {
	r := tenPolls(t, []fakepm.Process{
		{Name: "root", ID: 1000, ParentID: 900, Exits: 1000 * ms, Watts: 1, Busy: 100 * ms},
		{Name: "prep", Pid: 4001, ID: 1001, ParentID: 1000, Born: 100 * ms, Exits: 500 * ms, Reaped: 1000 * ms, ReapedByLaunchd: true, Watts: 2},
		{Name: "C", Pid: 4002, ID: 1002, ParentID: 1000, Born: 310 * ms, Exits: 330 * ms, Reaped: 340 * ms, Watts: 4},
	})
	// Read: root 0.1 J, prep 0.8 J; C's 0.08 J unseen.
	if !near(r.CPU, 0.9, 1e-6) || !near(r.UnseenCPU(), 0.08, 1e-5) {
		t.Errorf("read %.6f J, unseen %.6f J: want 0.9 J and 0.08 J", r.CPU, r.UnseenCPU())
	}
}

// A server's child of another user's, there for an hour before the span
// and reaped during it, puts its whole life in the server's count of
// reaped children: that count is not used, and the summary says so,
// rather than an hour of unseen CPU time.
func TestAnOldChildOfAnotherUsersDoesNotSwampTheUnseen(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	k := fakepm.NewProcesses([]fakepm.Process{
		{Name: "server", ID: 1000, ParentID: 1, Born: -5 * time.Second, Watts: 3},
		{Name: "helper", Pid: 4001, ID: 1001, ParentID: 1000, Born: -time.Hour, Exits: 500 * ms, Reaped: 600 * ms, Watts: 1, AnotherUsers: true},
		{Name: "worker", Pid: 4002, ID: 1002, ParentID: 1000, Born: -time.Second, Exits: 300 * ms, Reaped: 350 * ms, Watts: 2},
	}, c.now)
	r := trackFromFirst(t, k, c)
	// server 3 J, worker 0.6 J; nothing of the helper's hour.
	if !near(r.CPU, 3.6, 1e-6) || r.UnseenCPUTime != 0 || r.NotPermitted != 1 || !strings.Contains(strings.Join(r.Warnings, "\n"), "reaped another user's process that was there before the span") {
		t.Errorf("%+v: want 3.6 J read, nothing unseen, and why", r)
	}
}

// A command that is another user's (run under sudo) cannot be read: the
// summary says so, and that nothing of the tree's time was read.
func TestACommandOfAnotherUsersIsSaidToBeUnread(t *testing.T) {
	r := tenPolls(t, []fakepm.Process{{Name: "sudo", ID: 1000, ParentID: 900, Exits: 1000 * ms, Watts: 1, AnotherUsers: true}})
	if r.Processes != 0 || r.NotPermitted != 1 || r.Coverage() != 0 || !strings.Contains(strings.Join(r.Warnings, "\n"), "the command itself is another user's process") {
		t.Errorf("%+v, coverage %v: want nothing read, coverage 0, and why", r, r.Coverage())
	}
}

// slowGPU is a kernel whose GPU reading takes a while, and that tells
// whether it was closed in the middle of one.
type slowGPU struct {
	*fakepm.Processes
	mu              sync.Mutex
	reading, closed bool
	closedMidway    bool
	started         chan struct{} // told when a reading starts, once set
}

func (k *slowGPU) GPUTimes(buf []attrib.GPUTime) ([]attrib.GPUTime, error) {
	k.mu.Lock()
	k.reading = true
	if k.started != nil {
		select {
		case k.started <- struct{}{}:
		default:
		}
	}
	k.mu.Unlock()
	time.Sleep(20 * ms)
	k.mu.Lock()
	k.reading = false
	k.mu.Unlock()
	return k.Processes.GPUTimes(buf)
}

func (k *slowGPU) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed, k.closedMidway = true, k.reading
	return nil
}

// Closing a Tracker waits for a reading under way: the kernel's
// accounting (the GPU's keys, on a Mac) is not released beneath it.
func TestATrackerClosesOnlyBetweenReadings(t *testing.T) {
	k := &slowGPU{Processes: fakepm.NewProcesses(busyMac(), nil)}
	tr, err := attrib.Track(k, 3000, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	k.mu.Lock()
	k.started = make(chan struct{}, 1)
	k.mu.Unlock()
	done := make(chan struct{})
	go tr.Run(done, ms)
	<-k.started // a reading of the poller's is under way
	tr.Close()
	close(done)
	tr.Poll() // after Close: reads nothing
	if !k.closed || k.closedMidway {
		t.Errorf("closed %v, in the middle of a reading %v", k.closed, k.closedMidway)
	}
}

// trackFromFirst follows the tree of k's root from its first reading, as
// a span that names a process does, polling it at 0.1 s to 1 s.
func trackFromFirst(t *testing.T, k *fakepm.Processes, c *clock) attrib.Result {
	t.Helper()
	return pollTen(t, k, c, false)
}

// pollTen follows the tree of k's root, from its birth or its first
// reading, polls it at 0.1 s to 1 s of c, and says what it drew.
func pollTen(t *testing.T, k *fakepm.Processes, c *clock, fromBirth bool) attrib.Result {
	t.Helper()
	tr, err := attrib.Track(k, 3000, fromBirth, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		c.t = c.t.Add(100 * ms)
		tr.Poll()
	}
	return tr.Result()
}

// A worker that reaped an old child of another user's, and was then
// reaped itself, hands its count on to its parent: the parent's count is
// not used either, and the worker's own children are counted once, as
// read.
func TestABlindCountIsNotUsedUpTheTree(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	k := fakepm.NewProcesses([]fakepm.Process{
		{Name: "server", ID: 1000, ParentID: 1, Born: -2 * time.Hour, Watts: 3},
		{Name: "worker", Pid: 4001, ID: 1001, ParentID: 1000, Born: -time.Hour, Exits: 600 * ms, Reaped: 650 * ms, Watts: 2},
		{Name: "helper", Pid: 4002, ID: 1002, ParentID: 1001, Born: -time.Hour, Exits: 300 * ms, Reaped: 350 * ms, Watts: 1, AnotherUsers: true},
		{Name: "X", Pid: 4003, ID: 1003, ParentID: 1001, Born: 100 * ms, Exits: 200 * ms, Reaped: 250 * ms, Watts: 4},
	}, c.now)
	r := trackFromFirst(t, k, c)
	// server 3 J, the worker 1.2 J, X 0.4 J, all read; nothing unseen.
	if !near(r.CPU, 4.6, 1e-6) || r.UnseenCPUTime != 0 {
		t.Errorf("read %.6f J, unseen %v: want 4.6 J and nothing", r.CPU, r.UnseenCPUTime)
	}
}

// A process there before the span whose identity could not be read at
// the first poll, and is at the next, counts from then, not from its
// birth an hour ago.
func TestAnOldProcessFoundLateCountsFromWhenItWasFound(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	k := fakepm.NewProcesses([]fakepm.Process{
		{Name: "server", ID: 1000, ParentID: 1, Born: -2 * time.Hour, Watts: 3},
		{Name: "worker", Pid: 4001, ID: 1001, ParentID: 1000, Born: -time.Hour, Watts: 2},
		// Started a moment before the span: the newest id the first
		// poll finds, as on a Mac some process always is.
		{Name: "a browser's tab", Pid: 500, ID: 5000, ParentID: 1, Born: -time.Second, Watts: 1},
	}, c.now)
	k.IdentifyFailsOnce = 4001
	r := trackFromFirst(t, k, c)
	// server 3 J over the second; the worker 1.8 J from 0.1 s.
	if !near(r.CPU, 4.8, 1e-6) {
		t.Errorf("read %.6f J: want 4.8 J", r.CPU)
	}
}

// Under a command of another user's (sudo), a shell of this user's reaps
// a brief child: what the shell's count holds is unseen, though the
// shell, reaped by the unreadable command, is in no count read.
func TestUnderAnUnreadableParentTheUnseenIsStillCounted(t *testing.T) {
	r := tenPolls(t, []fakepm.Process{
		{Name: "sudo", ID: 1000, ParentID: 900, Exits: 1000 * ms, Watts: 1, AnotherUsers: true},
		{Name: "sh", Pid: 4001, ID: 1001, ParentID: 1000, Born: 50 * ms, Exits: 800 * ms, Reaped: 850 * ms, Watts: 1},
		{Name: "C", Pid: 4002, ID: 1002, ParentID: 1001, Born: 310 * ms, Exits: 330 * ms, Reaped: 340 * ms, Watts: 4},
	})
	// sh 0.75 J read; C's 0.08 J unseen.
	if !near(r.CPU, 0.75, 1e-6) || !near(r.UnseenCPU(), 0.08, 1e-5) {
		t.Errorf("read %.6f J, unseen %.6f J: want 0.75 J and 0.08 J", r.CPU, r.UnseenCPU())
	}
}
