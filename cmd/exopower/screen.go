package main

import (
	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/keys"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
)

// openKeys opens the terminal's keys; tests replace it.
var openKeys = keys.Open

// screenView is the live screen on a terminal, watch's and top's alike:
// the rails and the apps a key apart (output.Screen), and the keys of
// the terminal, where it has one to read them from (without, the screen
// still draws, and Ctrl-C still ends it).
type screenView struct {
	sc output.Screen
	kr *keys.Reader
}

// openScreen opens the screen on the streams' terminal, c saying what it
// shows first and what it draws with.
func openScreen(s *cli.Streams, c output.SinkConfig) (*screenView, error) {
	kr, kerr := openKeys()
	c.Format, c.Getenv, c.Keys = output.Panel, s.Getenv, kerr == nil
	c.Terminal = output.Terminal{Out: s.Out, TTY: s.OutTTY, Size: s.TermSize}
	sink, err := output.NewSink(c)
	if err != nil {
		if kr != nil {
			kr.Close()
		}
		return nil, err
	}
	return &screenView{sc: sink.(output.Screen), kr: kr}, nil
}

func (v *screenView) Window(w sampler.Window, tot sampler.Totals) error { return v.sc.Window(w, tot) }
func (v *screenView) Show(sn apps.Snapshot) error                       { return v.sc.Apps(sn) }
func (v *screenView) Resize() error                                     { return v.sc.Resize() }

// takeKeys has the wait loop hand the keys to the screen.
func (v *screenView) takeKeys(l *output.Live) {
	if v.kr != nil {
		l.Keys, l.Key = v.kr.C(), v.sc.Key
	}
}

// Close leaves the screen and gives the terminal its settings back, on
// every way out: the end, a key, a signal, a failure.
func (v *screenView) Close() error {
	err := v.sc.Close()
	if v.kr != nil {
		if kerr := v.kr.Close(); err == nil {
			err = kerr
		}
	}
	return err
}
