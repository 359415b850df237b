//go:build attribfake && linux

package attrib_test

import (
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/attrib"
)

// The whole Mac's view of apps calls Describe, Path and Responsible once
// for each process it meets: fake.c's "apps" case holds them to macOS's
// structure and calls.
func init() {
	scenarios["processes described, named and grouped under their apps"] = scenario{"apps", describedNamedAndGrouped}
	scenarios["the calls that name processes allocate nothing"] = scenario{"apps", namingAllocatesNothing}
}

// appsProc is a process of fake.c's "apps" table as the view reads it.
type appsProc struct {
	pid         int32
	uid         uint32
	comm, path  string // path "": none
	responsible int32  // -1: none named
}

// fakeLongPath is the longest path the kernel gives: 4095 bytes.
var fakeLongPath = "/Users/someone/" + strings.Repeat("a", 4095-15)

var appsProcs = []appsProc{
	{0, 0, "kernel_task", "", 0},
	{1, 0, "launchd", "/sbin/launchd", 1},
	{88, 88, "WindowServer", "/System/Library/PrivateFrameworks/SkyLight.framework/Versions/A/Resources/WindowServer", 88},
	{600, 501, "Safari", "/Applications/Safari.app/Contents/MacOS/Safari", 600},
	// p_comm of the full 16 bytes, which the structure holds without a NUL.
	{601, 501, "com.apple.WebKi.", "/System/Library/Frameworks/WebKit.framework/Versions/A/XPCServices/com.apple.WebKit.WebContent.xpc/Contents/MacOS/com.apple.WebKit.WebContent", 600},
	{700, 501, "Terminal", "/System/Applications/Utilities/Terminal.app/Contents/MacOS/Terminal", 700},
	{702, 501, "make", "/usr/bin/make", 700},
	// Names as the process gave them: the view makes them safe.
	{703, 501, "\x1b]0;pwned\x07\xff\xfe", "/tmp/\x1b[2J\xc3\x28\r\n\x9b", 700},
	{704, 501, "long", fakeLongPath, 700},
	{705, 501, "cc", "/usr/bin/cc", 700}, // a zombie from the first tick: no path then
	{800, 502, "syncdefaultsd", "/usr/libexec/syncdefaultsd", -1},
}

// Every process, another user's too, is described with its owner and
// its short name, a zombie as well; its path is its executable's whole,
// the longest too, and none for the kernel's own or a zombie; the
// process responsible is the app for its helper and the terminal for
// its command, itself for an app, and none where libquarantine names
// none or the pid is not listed.
func describedNamedAndGrouped(t *testing.T, f *fakeLib) {
	k := open(t)
	d, err := attrib.AsDescriber(k)
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for tick := range 2 {
		for _, p := range appsProcs {
			desc, err := d.Describe(p.pid)
			if err != nil || desc.UID != p.uid || desc.Name() != p.comm {
				t.Errorf("tick %d: Describe(%d) uid %d, %q, %v; want %d, %q", tick, p.pid, desc.UID, desc.Name(), err, p.uid, p.comm)
			}
			zombie := p.pid == 705 && tick > 0
			buf, err = d.Path(p.pid, buf)
			switch {
			case p.path == "" || zombie:
				if err == nil || !strings.Contains(err.Error(), "no path") || len(buf) != 0 {
					t.Errorf("tick %d: Path(%d) %q, %v; want no path", tick, p.pid, buf, err)
				}
			case err != nil || string(buf) != p.path:
				t.Errorf("tick %d: Path(%d) %d bytes %.60q, %v; want %d bytes %.60q", tick, p.pid, len(buf), buf, err, len(p.path), p.path)
			}
			r, err := d.Responsible(p.pid)
			if p.responsible < 0 && err == nil || p.responsible >= 0 && (err != nil || r != p.responsible) {
				t.Errorf("tick %d: Responsible(%d) %d, %v; want %d", tick, p.pid, r, err, p.responsible)
			}
		}
		f.tick()
	}
	if _, err := d.Describe(999); err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("Describe of no process: %v", err)
	}
	if _, err := d.Responsible(999); err == nil {
		t.Error("Responsible of no process named one")
	}
	closeAll(t, f, k)
	if _, err := d.Describe(600); err == nil {
		t.Error("Describe after Close did not fail")
	}
}

// Describe, Path and Responsible write into the binding's buffers and
// the caller's: a Mac of many short-lived processes costs no garbage.
func namingAllocatesNothing(t *testing.T, f *fakeLib) {
	k := open(t)
	d, err := attrib.AsDescriber(k)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 4096)
	for name, fn := range map[string]func(){
		"Describe":              func() { d.Describe(601) },
		"Describe of none":      func() { d.Describe(999) },
		"Path":                  func() { buf, _ = d.Path(704, buf) },
		"Path of none":          func() { buf, _ = d.Path(0, buf) },
		"Responsible":           func() { d.Responsible(601) },
		"Usage of another user": func() { k.Usage(800) },
	} {
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Errorf("%s: %v allocations a call", name, n)
		}
	}
	closeAll(t, f, k)
}
