package fakepm

import (
	"bytes"
	"io"
	"math"
	"os"
	"syscall"
	"testing"
	"time"
)

// newFakeFor makes the fake that args and env ask for, writing to out.
func newFakeFor(t *testing.T, out io.Writer, args []string, env ...string) *fake {
	t.Helper()
	fl, ok := parseFlags(args, io.Discard)
	if !ok {
		t.Fatalf("parseFlags(%q) refused", args)
	}
	f, err := newFake(fl, out, envOf(env...))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The online loop, driven in-process: the sample and stop channels stand in
// for the signals that online wires to them. They are unbuffered, so a send
// returns only once the loop has taken it, and the test knows what the loop
// has seen without waiting on the clock.
func TestOnlineLoopAnswersSampleAndStop(t *testing.T) {
	const hour = "3600000" // an interval no window of a test reaches
	tests := []struct {
		name     string
		args     []string
		mode     string
		send     []string // "sample" or "stop", in order
		wantCode int
		wantDocs int
		cut      bool // the stream ends in a document cut short
	}{
		{name: "a sample request writes a document at once", args: []string{"-i", hour}, send: []string{"sample", "stop"}, wantDocs: 1},
		{name: "each request writes one", args: []string{"-i", hour}, send: []string{"sample", "sample", "sample", "stop"}, wantDocs: 3},
		{name: "stop before a window ends writes nothing", args: []string{"-i", hour}, send: []string{"stop"}},
		{name: "a request that reaches -n ends the stream by itself", args: []string{"-i", hour, "-n", "2"}, send: []string{"sample", "sample"}, wantDocs: 2},
		{name: "die-after fails with status 3", args: []string{"-i", hour}, mode: "die-after=1", send: []string{"sample"}, wantCode: 3, wantDocs: 1},
		{name: "silent writes nothing, even when asked", args: []string{"-i", "1"}, mode: "silent", send: []string{"sample", "sample", "stop"}},
		{name: "truncate-on-exit cuts the last document short", args: []string{"-i", hour}, mode: "truncate-on-exit", send: []string{"sample", "stop"}, wantDocs: 1, cut: true},
		{name: "stall-after writes nothing more after N, even when asked", args: []string{"-i", hour}, mode: "stall-after=2", send: []string{"sample", "sample", "sample", "sample", "stop"}, wantDocs: 2},
		{name: "silent with truncate-on-exit still writes nothing", args: []string{"-i", hour}, mode: "silent,truncate-on-exit", send: []string{"stop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			f := newFakeFor(t, &out, append([]string{"-f", "plist"}, tt.args...), "FAKEPM_MODE", tt.mode, "FAKEPM_PROFILE", "0=10,2,0.5")
			sample, stop, done := make(chan os.Signal), make(chan os.Signal), make(chan int)
			go func() { done <- f.loop(sample, stop, io.Discard) }()
			for _, s := range tt.send {
				ch := sample
				if s == "stop" {
					ch = stop
				}
				select {
				case ch <- syscall.SIGUSR1:
				case code := <-done:
					t.Fatalf("the loop ended with status %d before it took %s", code, s)
				}
			}
			if code := <-done; code != tt.wantCode {
				t.Errorf("exit status %d, want %d", code, tt.wantCode)
			}
			stream := out.Bytes()
			if tt.cut {
				stream = checkCut(t, stream)
			}
			checkConstantPower(t, stream, tt.wantDocs, Watts{10, 2, 0.5})
		})
	}
}

// With no requests the clock ends each window, and -n ends the stream.
func TestOnlineLoopWritesAtTheEndOfEachWindow(t *testing.T) {
	var out bytes.Buffer
	f := newFakeFor(t, &out, []string{"-f", "plist", "-i", "1", "-n", "5"}, "FAKEPM_PROFILE", "0=10,2,0.5")
	if code := f.loop(nil, nil, io.Discard); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	checkConstantPower(t, out.Bytes(), 5, Watts{10, 2, 0.5})
}

// checkCut checks that stream ends in a NUL and the first half of a
// document, and returns the stream before it.
func checkCut(t *testing.T, stream []byte) []byte {
	t.Helper()
	i := bytes.LastIndexByte(stream, 0)
	if i < 0 {
		t.Fatal("no NUL before a last, cut document")
	}
	cut := stream[i+1:]
	if !bytes.HasPrefix(cut, []byte("<?xml ")) || bytes.Contains(cut, []byte("</plist>")) {
		t.Errorf("the last document is not the start of one cut short: %.40q...%q", cut, cut[max(0, len(cut)-20):])
	}
	return stream[:i]
}

// checkConstantPower checks that stream holds n documents of a constant
// power w: their energies are exactly w over the window they say.
func checkConstantPower(t *testing.T, stream []byte, n int, w Watts) {
	t.Helper()
	docs := decodeAll(t, stream)
	if len(docs) != n {
		t.Fatalf("%d documents, want %d", len(docs), n)
	}
	for i, d := range docs {
		secs := time.Duration(d.ElapsedNS).Seconds()
		p := d.Processor
		for c, mj := range []int64{p.CPUEnergy, p.GPUEnergy, p.ANEEnergy} {
			if want := int64(math.Round(w[c] * secs * 1000)); mj != want {
				t.Errorf("document %d, component %d: %d mJ over %v, want %d", i, c, mj, time.Duration(d.ElapsedNS), want)
			}
		}
	}
}
