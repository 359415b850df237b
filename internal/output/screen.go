package output

import (
	"strings"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/keys"
)

// Screen is the panel as one live program: watch's rails and top's apps,
// a key apart, both fed all along, so that a switch shows either at
// once with all it has counted.
type Screen interface {
	Sink
	// Apps takes a refresh of the apps; a paused view keeps the one it
	// shows.
	Apps(s apps.Snapshot) error
	// Key takes a key; quit says it ends the view.
	Key(k keys.Key) (quit bool, err error)
}

func (s *panelSink) Apps(snap apps.Snapshot) error {
	if s.closed {
		return nil
	}
	s.latest = &snap
	if s.snap != nil && s.apps.Paused {
		return nil
	}
	s.snap = s.latest
	if !s.showApps {
		return nil
	}
	return s.draw()
}

func (s *panelSink) Key(k keys.Key) (bool, error) {
	if s.closed {
		return false, nil
	}
	a := Ignore
	switch {
	case s.showApps:
		a = s.apps.Key(k)
		if !s.apps.Paused {
			// Going on shows the newest refresh at once, not at the
			// next one.
			s.snap = s.latest
		}
	case k.Rune == 'q' || k.Rune == 'Q':
		a = Quit
	case k.Name == keys.Tab:
		a = SwitchView
	}
	switch a {
	case Quit:
		return true, nil
	case SwitchView:
		s.showApps = !s.showApps
	case Ignore:
		return false, nil
	}
	return false, s.draw()
}

// renderApps draws the apps' view, or says why there is none yet.
func (s *panelSink) renderApps(w, h int) string {
	switch {
	case s.noApps != "":
		return strings.Join([]string{s.st.Render(s.st.Title, "exopower top"), "", truncate(s.noApps, w), "",
			s.st.Render(s.st.Label, "q quit  tab rails")}, "\n")
	case s.snap == nil:
		return strings.Join([]string{s.st.Render(s.st.Title, "exopower top"), "", "reading the processes: the apps' figures come with the next window"}, "\n")
	}
	if s.p.source.Tool == "" && s.source != nil {
		s.p.source = s.source()
	}
	return s.apps.Render(s.snap, s.p.source, w, h, s.st)
}
