package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/fakepm"
)

// screen is a fake terminal: what exopower wrote to it, its size, and a
// way to wait until the writing shows something.
type screen struct {
	mu            sync.Mutex
	b             bytes.Buffer
	changed       chan struct{}
	width, height int
}

func newScreen(w, h int) *screen { return &screen{changed: make(chan struct{}), width: w, height: h} }

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.changed)
	s.changed = make(chan struct{})
	return s.b.Write(p)
}

func (s *screen) size() (int, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.width, s.height, nil
}

func (s *screen) resize(w, h int) {
	s.mu.Lock()
	s.width, s.height = w, h
	s.mu.Unlock()
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// await waits until what was written holds n matches of re.
func (s *screen) await(t *testing.T, re string, n int) {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(time.Minute)
	for {
		s.mu.Lock()
		got, ch := len(rx.FindAllIndex(s.b.Bytes(), -1)), s.changed
		s.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("the screen never showed %d of %q:\n%q", n, re, s.String())
		}
	}
}

// watchOnAFakeTerminal runs exopower watch in process on a fake terminal
// of 80x24, reading a stream fed by the test through a pipe as stdin.
func watchOnAFakeTerminal(t *testing.T, env map[string]string) (scr *screen, feed func(), resized chan os.Signal, signals chan os.Signal, done chan error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	doc := fakepm.Document{Elapsed: 50 * time.Millisecond, Timestamp: time.Unix(1_800_000_000, 0), Energy: fakepm.Watts{0.2, 0.05, 0.01},
		Layout: fakepm.Layouts["m1"], OSBuild: "23E224", Samplers: map[string]bool{"cpu_power": true, "gpu_power": true, "thermal": true}}
	feed = func() { w.Write(append(doc.Append(nil), 0)) }
	scr = newScreen(80, 24)
	resized, signals, done = make(chan os.Signal, 1), make(chan os.Signal, 1), make(chan error, 1)
	s := &cli.Streams{
		In: r, InFd: int(r.Fd()), Out: scr, Err: &bytes.Buffer{}, OutTTY: true,
		Getenv:   func(k string) string { return env[k] },
		Environ:  func() []string { return nil },
		TermSize: scr.size, Signals: signals, Resized: resized,
	}
	feed() // the first sample shows that the stream works
	go func() {
		done <- runWatch(context.Background(), s, &watchOptions{commonOptions: commonOptions{interval: 50 * time.Millisecond}, from: "-"})
	}()
	return scr, feed, resized, signals, done
}

const (
	enterAlt = "\x1b[?1049h"
	leaveAlt = "\x1b[?1049l"
	redraw   = `\x1b\[H`
)

// The panel on a terminal, in process: it enters the alternate screen,
// redraws at each window and at each change of size, fits the terminal,
// and gives the terminal back exactly once when a signal ends it.
func TestWatchDrawsThePanelOnATerminal(t *testing.T) {
	scr, feed, resized, signals, done := watchOnAFakeTerminal(t, map[string]string{"NO_COLOR": "1"})
	scr.await(t, regexp.QuoteMeta(enterAlt), 1)
	feed()
	scr.await(t, redraw, 1)
	feed()
	scr.await(t, redraw, 2)
	scr.resize(40, 10)
	resized <- syscall.SIGWINCH
	scr.await(t, redraw, 3)
	signals <- os.Interrupt
	if err := <-done; err != nil {
		t.Fatalf("watch: %v", err)
	}
	out := scr.String()
	if strings.Count(out, enterAlt) != 1 || strings.Count(out, leaveAlt) != 1 || !strings.HasSuffix(out, leaveAlt) {
		t.Errorf("the alternate screen was entered %d and left %d times, the last write %q; want once each, leaving last",
			strings.Count(out, enterAlt), strings.Count(out, leaveAlt), out[max(0, len(out)-20):])
	}
	frames := strings.Split(out, "\x1b[H")
	last := strings.Split(strings.Split(frames[len(frames)-1], "\x1b[J")[0], "\n")
	if len(last) > 10 {
		t.Errorf("the drawing after the resize has %d lines, more than the terminal's 10", len(last))
	}
	for _, l := range last {
		if n := utf8.RuneCountInString(strings.ReplaceAll(l, "\x1b[K", "")); n > 40 {
			t.Errorf("a line of %d columns after the resize to 40: %q", n, l)
		}
	}
	if !strings.Contains(frames[2], "exopower watch  MacBookPro17,1  macOS build 23E224") {
		t.Errorf("a drawing without the machine's name:\n%s", frames[2])
	}
	if regexp.MustCompile(`\x1b\[[0-9;]*m`).MatchString(out) {
		t.Error("colours with NO_COLOR set")
	}
}

// Without NO_COLOR, on a terminal that has colours, the panel has them.
func TestWatchColoursThePanelWithoutNoColor(t *testing.T) {
	scr, feed, _, signals, done := watchOnAFakeTerminal(t, map[string]string{"TERM": "xterm-256color"})
	scr.await(t, regexp.QuoteMeta(enterAlt), 1)
	feed()
	scr.await(t, redraw, 1)
	signals <- os.Interrupt
	if err := <-done; err != nil {
		t.Fatalf("watch: %v", err)
	}
	if !regexp.MustCompile(`\x1b\[[0-9;]*m`).MatchString(scr.String()) {
		t.Errorf("no colours on a colour terminal:\n%q", scr.String())
	}
}
