package apps_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/power"
)

const (
	s  = time.Second
	ms = time.Millisecond
)

// t0 is when the fake Mac's table starts.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a clock the test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// rails are the busy Mac's rails, in watts, all along: CPU 20, GPU 8,
// ANE 1, DRAM 2, and the whole Mac 40 (its SMC).
var rails = power.Values{CPU: 20, GPU: 8, ANE: 1, Total: 29, DRAM: 2, System: 40}

var ioreportHas = power.Reported{CPU: true, GPU: true, ANE: true, DRAM: true, System: true}

// run polls mac every second from 0 to end, its rails as given, and
// returns the Poller and every Round's snapshot.
func run(t *testing.T, table []fakepm.Process, r power.Values, end time.Duration, cfg apps.Config) (*apps.Poller, []apps.Snapshot) {
	t.Helper()
	c := &clock{t: t0}
	mac := fakepm.NewMac(table, c.now)
	p := apps.New(mac, mac, cfg)
	if err := p.Start(apps.Reading{At: t0, Has: ioreportHas}); err != nil {
		t.Fatal(err)
	}
	var snaps []apps.Snapshot
	for at := s; at <= end; at += s {
		c.t = t0.Add(at)
		if err := p.Round(apps.Reading{At: c.t, Energy: r.Scale(at.Seconds()), Has: ioreportHas}); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, p.Snapshot())
	}
	return p, snaps
}

func nearly(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

// appNamed is the app of snapshot s named name.
func appNamed(t *testing.T, s apps.Snapshot, name string) apps.App {
	t.Helper()
	for _, a := range s.Apps {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("refresh %d: no app %q among %d", s.Seq, name, len(s.Apps))
	return apps.App{}
}

// A busy Mac over five seconds: every app's energy to the nanojoule, as
// the table gives it. Helpers stand under their app, a command under
// its terminal, a daemon's many processes as one app; a process that
// started and ended between two readings is in the rest, a pid reused
// is a new process, counted from its start, a counter that went back is
// refused, and another user's processes are counted, not read, their
// GPU time theirs all the same.
func TestABusyMacsAppsToTheNanojoule(t *testing.T) {
	_, snaps := run(t, fakepm.BusyMac(), rails, 5*s, apps.Config{})
	last := snaps[4]
	for _, want := range []struct {
		name        string
		cpu, gpu    float64 // joules since the start
		procs, notR int
		gone        bool
	}{
		// 600: 3 W × 5 s; 601: 4 W × 5 s; 602: 1 W × 0.5 s, read at 3 s
		// from its start at 2.5 s. The GPU's 8 J a second, shared by
		// its time: 0.8 of it.
		{"Safari", 15 + 20 + 0.5, 5 * 0.8 * 8, 2, 0, false},
		// Terminal 0.1 W × 5 s, make 1 W × 5 s, newtool 2 W × 2.5 s
		// from its start (cc, never read, is in the rest).
		{"Terminal", 0.5 + 5 + 5, 0, 3, 0, false},
		// Read at 0, 1 and 2 s, gone by 3 s: its last 0.2 J unread.
		{"olddaemon", 2, 0, 0, 0, true},
		// 1 J a second but at 3 s (refused: 11.5 J after 12 J), and
		// at 4 s only what passed 12 J (0.5 J): never what went back.
		{"flaky", 1 + 1 + 0 + 0.5 + 1, 0, 1, 0, false},
		{"mdworker_shared", 300 * 0.01 * 5, 0, 300, 0, false},
		// Another user's: its CPU not read, its GPU time its own.
		{"WindowServer", 0, 5 * 0.2 * 8, 1, 1, false},
	} {
		a := appNamed(t, last, want.name)
		if !nearly(a.Energy.CPU, want.cpu) || !nearly(a.Energy.GPU, want.gpu) || len(a.Processes) != want.procs || a.NotReadable != want.notR || a.Gone != want.gone {
			t.Errorf("%s: %.9f J CPU, %.9f J GPU, %d processes (%d not readable), gone %v; want %.9f, %.9f, %d (%d), %v",
				want.name, a.Energy.CPU, a.Energy.GPU, len(a.Processes), a.NotReadable, a.Gone, want.cpu, want.gpu, want.procs, want.notR, want.gone)
		}
	}
	// Another user's, with no GPU time: counted, not listed.
	for _, a := range last.Apps {
		if a.Name == "launchd" || strings.HasPrefix(a.Name, "daemon") {
			t.Errorf("%s is listed, with nothing read of it", a.Name)
		}
	}
	// 9 besides the 500 daemons' at 5 s; of them, launchd, WindowServer
	// and the 200 daemons are another user's.
	if last.Processes.NotReadable != 202 || last.Processes.Listed != 509 || last.Processes.Read != 307 {
		t.Errorf("processes %+v: want 509 listed, 307 read, 202 not readable", last.Processes)
	}
	safari := appNamed(t, last, "Safari")
	if safari.Pid != 600 || !nearly(safari.Power.CPU, 7) || !nearly(safari.Power.GPU, 6.4) || safari.Processes[0].Pid != 601 {
		t.Errorf("Safari at 5 s: pid %d, %.9f W CPU, %.9f W GPU, first process %d; want 600, 7 W, 6.4 W, 601 (the most power)",
			safari.Pid, safari.Power.CPU, safari.Power.GPU, safari.Processes[0].Pid)
	}
}

// The apps, the forgotten and the rest add up to the Mac's rails at every
// refresh, in power as in energy: the CPU's that no process read holds
// (another user's, cc that came and went, the ends of those gone, what
// flaky's counter lost) is the rest's, and so are the ANE's, the
// memory's and the rest of the whole Mac.
func TestTheAppsAndTheRestAddUpToTheMac(t *testing.T) {
	_, snaps := run(t, fakepm.BusyMac(), rails, 5*s, apps.Config{})
	for _, sn := range snaps {
		at := sn.End.Sub(t0).Seconds()
		var pw, en apps.Figures
		for _, a := range sn.Apps {
			pw, en = apps.Figures{CPU: pw.CPU + a.Power.CPU, GPU: pw.GPU + a.Power.GPU}, apps.Figures{CPU: en.CPU + a.Energy.CPU, GPU: en.GPU + a.Energy.GPU}
		}
		if !nearly(pw.CPU+sn.Rest.Power.CPU, 20) || !nearly(pw.GPU+sn.Rest.Power.GPU, 8) || !nearly(pw.Total()+sn.Rest.Power.Total, 40) {
			t.Errorf("%g s: the apps' %+v W and the rest's %+v W do not make the Mac's 20 W CPU, 8 W GPU, 40 W", at, pw, sn.Rest.Power)
		}
		if !nearly(en.CPU+sn.Rest.Energy.CPU, 20*at) || !nearly(en.Total()+sn.Rest.Energy.Total, 40*at) || !nearly(sn.Mac.Whole(sn.Mac.Energy), 40*at) {
			t.Errorf("%g s: the apps' %+v J and the rest's %+v J do not make the Mac's %g J", at, en, sn.Rest.Energy, 40*at)
		}
		if sn.Scope != "system" || !nearly(sn.Rest.Power.ANE, 1) || !nearly(sn.Rest.Power.DRAM, 2) || !nearly(sn.Rest.Power.System, 40-20-8-1-2) || sn.CPUScale != 1 {
			t.Errorf("%g s: scope %s, rest %+v W, CPU scale %g", at, sn.Scope, sn.Rest.Power, sn.CPUScale)
		}
	}
	// 5 s of 20 W less the 69 J the apps' processes were read to use.
	if got := snaps[4].Rest.Energy.CPU; !nearly(got, 100-69) {
		t.Errorf("the CPU's rest %.9f J, want 31 J", got)
	}
}

// Processes that come and go are counted as they do, and a refused
// reading is counted in its refresh.
func TestChurnIsCountedRefreshByRefresh(t *testing.T) {
	_, snaps := run(t, fakepm.BusyMac(), rails, 5*s, apps.Config{})
	want := []apps.Counts{
		{Listed: 509, Read: 307, NotReadable: 202},
		{Listed: 509, Read: 307, NotReadable: 202},
		// Networking and newtool started; olddaemon ended, its pid
		// newtool's; flaky's counter went back (its reading read, and
		// refused).
		{Listed: 510, Read: 308, NotReadable: 202, Started: 2, Ended: 1, Refused: 1},
		{Listed: 509, Read: 307, NotReadable: 202, Ended: 1},
		{Listed: 509, Read: 307, NotReadable: 202},
	}
	for i, sn := range snaps {
		if sn.Processes != want[i] {
			t.Errorf("refresh %d: %+v, want %+v", i+1, sn.Processes, want[i])
		}
	}
}

// A name is shown as what it is, never acted on: its escapes written out,
// its bytes that are not UTF-8 escaped, its 10 KB cut.
func TestAHostileNameIsMadeSafe(t *testing.T) {
	_, snaps := run(t, fakepm.BusyMac(), rails, 1*s, apps.Config{})
	var found bool
	for _, a := range snaps[0].Apps {
		if !strings.Contains(a.Name, "pwned") {
			continue
		}
		found = true
		for _, r := range a.Name {
			if r < 0x20 || r == 0x7f || r == 0xfffd {
				t.Errorf("the name holds %U: %.80q", r, a.Name)
			}
		}
		// 512 of its characters, each control one written as 4.
		if !strings.HasPrefix(a.Name, `\x1b]0;pwned\x07\x1b[2J\xff\xfe\x0aevil`) || !strings.HasSuffix(a.Name, "x…") || len([]rune(a.Name)) != 512+1+6*3 {
			t.Errorf("the name %.80q (%d runes): want its escapes written out, cut at 512 characters", a.Name, len([]rune(a.Name)))
		}
		if !nearly(a.Energy.CPU, 0.5) {
			t.Errorf("its energy %.9f J, want 0.5 J", a.Energy.CPU)
		}
	}
	if !found {
		t.Fatal("no app of the hostile name")
	}
}

// The kernel's figures can add up to more than the CPU rail over a
// window (a model, read a moment late): the processes' shares are then
// scaled to the rail, and the rest takes none of it.
func TestKernelFiguresBeyondTheRailAreScaledToIt(t *testing.T) {
	table := []fakepm.Process{
		{Name: "hot", Pid: 100, ID: 100, Path: "/usr/bin/hot", Born: -s, Watts: 30},
		{Name: "warm", Pid: 101, ID: 101, Path: "/usr/bin/warm", Born: -s, Watts: 10},
	}
	_, snaps := run(t, table, rails, 2*s, apps.Config{})
	sn := snaps[1]
	hot, warm := appNamed(t, sn, "hot"), appNamed(t, sn, "warm")
	if !nearly(sn.CPUScale, 0.5) || !nearly(hot.Power.CPU, 15) || !nearly(warm.Power.CPU, 5) || sn.Rest.Power.CPU != 0 || !nearly(hot.Energy.CPU, 30) {
		t.Errorf("scale %g, hot %.9f W (%.9f J), warm %.9f W, rest %g W: want 0.5, 15 W (30 J), 5 W, 0", sn.CPUScale, hot.Power.CPU, hot.Energy.CPU, warm.Power.CPU, sn.Rest.Power.CPU)
	}
}

// An app gone for Forget is let go: its energy joins Forgotten, and the
// sums hold.
func TestAnAppGoneLongEnoughIsForgotten(t *testing.T) {
	p, snaps := run(t, fakepm.BusyMac(), rails, 5*s, apps.Config{Forget: 2 * s})
	for _, a := range snaps[3].Apps {
		if a.Name == "olddaemon" && !a.Gone {
			t.Error("olddaemon is not gone at 4 s")
		}
	}
	last := snaps[4]
	for _, a := range last.Apps {
		if a.Name == "olddaemon" {
			t.Error("olddaemon, gone since 3 s, is still listed at 5 s")
		}
	}
	if last.Forgotten != (apps.Figures{CPU: 2}) {
		t.Errorf("forgotten %+v, want olddaemon's 2 J", last.Forgotten)
	}
	var forgotten bool
	for _, r := range p.Apps() {
		forgotten = forgotten || r.Name == "olddaemon" && r.Forgotten && r.Energy == apps.Figures{CPU: 2}
	}
	if !forgotten {
		t.Error("the last round does not say olddaemon was forgotten")
	}
}

// failing is a Mac whose process list fails once.
type failing struct {
	*fakepm.Processes
	fail bool
}

func (f *failing) Pids(buf []int32) ([]int32, error) {
	if f.fail {
		return buf, fmt.Errorf("proc_listpids: no")
	}
	return f.Processes.Pids(buf)
}

// A refresh whose processes cannot be listed gives the window to the
// rest, says why, and the next one counts the processes' energy since
// their last reading.
func TestAListThatFailsGivesTheWindowToTheRest(t *testing.T) {
	c := &clock{t: t0}
	mac := &failing{Processes: fakepm.NewMac([]fakepm.Process{{Name: "app", Pid: 100, ID: 100, Path: "/usr/bin/app", Born: -s, Watts: 5, GPU: 0.5}}, c.now)}
	p := apps.New(mac, mac, apps.Config{})
	if err := p.Start(apps.Reading{At: t0, Has: ioreportHas}); err != nil {
		t.Fatal(err)
	}
	round := func(at time.Duration) error {
		c.t = t0.Add(at)
		return p.Round(apps.Reading{At: c.t, Energy: rails.Scale(at.Seconds()), Has: ioreportHas})
	}
	mac.fail = true
	if err := round(s); err == nil {
		t.Fatal("a round without the list did not fail")
	}
	sn := p.Snapshot()
	if len(sn.Warnings) == 0 || !strings.Contains(sn.Warnings[0], "proc_listpids") || !nearly(sn.Rest.Power.CPU, 20) || !nearly(sn.Rest.Power.GPU, 8) {
		t.Errorf("warnings %q, rest %+v: want the list's failure said, and the whole window in the rest", sn.Warnings, sn.Rest.Power)
	}
	mac.fail = false
	if err := round(2 * s); err != nil {
		t.Fatal(err)
	}
	a := appNamed(t, p.Snapshot(), "app")
	// 5 W over both seconds, read at 2 s, and all of the second one's
	// GPU time: its GPU share is the whole of the window's GPU energy.
	if !nearly(a.Energy.CPU, 10) || !nearly(a.Energy.GPU, 8) {
		t.Errorf("app: %+v J, want 10 J CPU, 8 J GPU", a.Energy)
	}
}

var _ attrib.Describer = (*fakepm.Processes)(nil)

// A counter that jumps beyond what any Mac can draw is refused, reading
// after reading; after three refusals it is taken as started again from
// where it stands, counting nothing of the jump.
func TestACounterBeyondBeliefIsRefusedThenTakenAsStartedAgain(t *testing.T) {
	table := []fakepm.Process{
		{Name: "jumpy", Pid: 100, ID: 100, Path: "/usr/bin/jumpy", Born: -s, Watts: 1, CounterOffsetAt: 1500 * ms, CounterOffset: 1e6},
	}
	_, snaps := run(t, table, rails, 6*s, apps.Config{})
	refused := []int{0, 1, 1, 1, 0, 0}
	for i, sn := range snaps {
		if sn.Processes.Refused != refused[i] {
			t.Errorf("refresh %d: %d refused, want %d", i+1, sn.Processes.Refused, refused[i])
		}
	}
	// 1 J at 1 s; refused at 2, 3 and 4 s (then taken from there); 1 J
	// at 5 and 6 s.
	if a := appNamed(t, snaps[5], "jumpy"); !nearly(a.Energy.CPU, 3) {
		t.Errorf("jumpy: %.9f J, want 3 J, none of the jump", a.Energy.CPU)
	}
}

// Another user's process, whose usage is never read, gives its pid to a
// process of this user's: its identity tells them apart, and the new one
// is read from its start.
func TestAnotherUsersPidReusedIsANewProcess(t *testing.T) {
	table := []fakepm.Process{
		{Name: "rootd", Pid: 900, ID: 900, Path: "/usr/libexec/rootd", Born: -s, Exits: 1200 * ms, Reaped: 1300 * ms, Watts: 5, AnotherUsers: true},
		{Name: "mine", Pid: 900, ID: 10001, Path: "/usr/local/bin/mine", Born: 1500 * ms, Watts: 2},
	}
	_, snaps := run(t, table, rails, 3*s, apps.Config{})
	mine := appNamed(t, snaps[1], "mine")
	if !nearly(mine.Energy.CPU, 1) || len(mine.Processes) != 1 || !mine.Processes[0].Readable {
		t.Errorf("mine at 2 s: %+v, want 1 J from its start at 1.5 s, read", mine)
	}
	if sn := snaps[1]; sn.Processes.Started != 1 || sn.Processes.Ended != 1 || sn.Processes.NotReadable != 0 {
		t.Errorf("at 2 s: %+v, want rootd ended and mine started", sn.Processes)
	}
	if a := appNamed(t, snaps[2], "mine"); !nearly(a.Energy.CPU, 3) {
		t.Errorf("mine at 3 s: %.9f J, want 3 J", a.Energy.CPU)
	}
}
