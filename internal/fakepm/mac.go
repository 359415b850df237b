package fakepm

import (
	"errors"
	"fmt"
	"math"
	"strings"
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

// HostileName is a process's name as a process may give it: a
// title-setting escape, a clear screen, bytes that are not UTF-8, a
// newline, and 10 KB.
var HostileName = "\x1b]0;pwned\x07\x1b[2J\xff\xfe\nevil" + strings.Repeat("x", 10<<10)

// BusyMac is a Mac of 509 processes, 510 for a while (times are the
// table's, from its start; apps' tests poll it every second to 5 s):
//
//	launchd, WindowServer (GPU 0.2 s/s)  another user's: 0.5 W, 2 W
//	Safari                3 W, GPU 0.3 s/s
//	├─ WebContent         4 W, GPU 0.5 s/s
//	└─ Networking         1 W from 2.5 s, ends at 3.5 s (read once, at 3 s)
//	Terminal              0.1 W
//	├─ make               1 W
//	├─ cc                 2 W from 1.2 s to 1.7 s: never read
//	└─ newtool            2 W from 2.5 s, on olddaemon's pid
//	olddaemon             1 W, ends at 2.2 s; its pid is newtool's from 2.5 s
//	(HostileName)         0.5 W
//	flaky                 1 W, its counter 1.5 J back from 3 s
//	mdworker_shared ×300  0.01 W each, one app of one name
//	daemon0..199          another user's, 0.01 W each
func BusyMac() []Process {
	const s, ms = time.Second, time.Millisecond
	t := []Process{
		{Name: "launchd", Pid: 1, ID: 1, Path: "/sbin/launchd", Born: -100 * s, Watts: 0.5, AnotherUsers: true},
		{Name: "WindowServer", Pid: 88, ID: 88, UID: 88, Path: "/System/Library/PrivateFrameworks/SkyLight.framework/Resources/WindowServer",
			Born: -90 * s, Watts: 2, GPU: 0.2, AnotherUsers: true},
		{Name: "Safari", Pid: 600, ID: 600, Path: "/Applications/Safari.app/Contents/MacOS/Safari", Born: -60 * s, Watts: 3, GPU: 0.3},
		{Name: "com.apple.WebKit", Pid: 601, ID: 601, Responsible: 600, Born: -50 * s, Watts: 4, GPU: 0.5,
			Path: "/System/Library/Frameworks/WebKit.framework/XPCServices/com.apple.WebKit.WebContent.xpc/Contents/MacOS/com.apple.WebKit.WebContent"},
		{Name: "com.apple.WebKit", Pid: 602, ID: 10002, Responsible: 600, Born: 2500 * ms, Exits: 3500 * ms, Reaped: 3600 * ms, Watts: 1,
			Path: "/System/Library/Frameworks/WebKit.framework/XPCServices/com.apple.WebKit.Networking.xpc/Contents/MacOS/com.apple.WebKit.Networking"},
		{Name: "Terminal", Pid: 700, ID: 700, Path: "/System/Applications/Utilities/Terminal.app/Contents/MacOS/Terminal", Born: -40 * s, Watts: 0.1},
		{Name: "make", Pid: 702, ID: 702, Path: "/usr/bin/make", Responsible: 700, Born: -5 * s, Watts: 1},
		{Name: "cc", Pid: 710, ID: 10001, Path: "/usr/bin/cc", Responsible: 700, Born: 1200 * ms, Exits: 1700 * ms, Reaped: 1800 * ms, Watts: 2},
		{Name: "olddaemon", Pid: 720, ID: 720, Path: "/usr/libexec/olddaemon", Born: -30 * s, Exits: 2200 * ms, Reaped: 2300 * ms, Watts: 1},
		{Name: "newtool", Pid: 720, ID: 10003, Path: "/usr/local/bin/newtool", Responsible: 700, Born: 2500 * ms, Watts: 2},
		{Name: HostileName, Pid: 730, ID: 730, Path: "/tmp/" + HostileName, Born: -20 * s, Watts: 0.5},
		{Name: "flaky", Pid: 740, ID: 740, Path: "/usr/local/bin/flaky", Born: -10 * s, Watts: 1, CounterOffsetAt: 3 * s, CounterOffset: -1.5},
	}
	for i := range 300 {
		t = append(t, Process{Name: "mdworker_shared", Pid: int32(1000 + i), ID: uint64(1000 + i), Path: "/System/Library/Frameworks/CoreServices.framework/mdworker_shared",
			Born: -15 * s, Watts: 0.01})
	}
	for i := range 200 {
		t = append(t, Process{Name: fmt.Sprintf("daemon%d", i), Pid: int32(2000 + i), ID: uint64(2000 + i), Path: fmt.Sprintf("/usr/libexec/daemon%d", i),
			Born: -15 * s, Watts: 0.01, AnotherUsers: true})
	}
	return t
}
