package ioreport_test

import (
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/ioreport"
	"github.com/exopower/exopower/internal/power"
)

// The first window comes at once, whatever the interval: a command
// measured at an interval of an hour starts when measurement is known to
// work, not an hour later (it waited the whole interval before).
func TestTheFirstWindowComesAtOnceWhateverTheInterval(t *testing.T) {
	prof, _ := fakepm.ParseProfile("0=10,0,0")
	s, err := ioreport.NewStream(fakepm.NewIOReport(prof, "", nil), time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	got := make(chan power.Sample, 1)
	go func() {
		smp, _ := s.Next()
		got <- smp
	}()
	// A deadline far above the first window's 100 ms, far below the hour.
	select {
	case smp := <-got:
		if smp.Window <= 0 || smp.Window > time.Minute {
			t.Errorf("the first window is %v long", smp.Window)
		}
	case <-time.After(time.Minute):
		t.Fatal("no window within a minute at an interval of an hour")
	}
}
