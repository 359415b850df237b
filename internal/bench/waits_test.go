package bench

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cli"
)

// waitingMeter is a fakeMeter that, in one phase (at: "begin", "end" or
// "idle"), waits on its context as a meter over nodes waits for their
// answers, and says when it does.
type waitingMeter struct {
	fakeMeter
	at      string
	waiting chan struct{}
}

func (m *waitingMeter) wait(ctx context.Context, phase string) error {
	if phase != m.at {
		return nil
	}
	close(m.waiting)
	m.at = "" // once
	<-ctx.Done()
	return ctx.Err()
}

func (m *waitingMeter) Begin(ctx context.Context) error {
	if err := m.wait(ctx, "begin"); err != nil {
		return err
	}
	return m.fakeMeter.Begin(ctx)
}

func (m *waitingMeter) End(ctx context.Context, at time.Time, status int, signal string) Run {
	m.wait(ctx, "end")
	return m.fakeMeter.End(ctx, at, status, signal)
}

func (m *waitingMeter) Idle(ctx context.Context, d time.Duration, sleep func(time.Duration) bool) (IdleSpan, error) {
	if err := m.wait(ctx, "idle"); err != nil {
		return IdleSpan{}, err
	}
	return m.fakeMeter.Idle(ctx, d, sleep)
}

// A signal ends every wait of the bench on its meter (a node that never
// answers the opening of a span, its end, or the idle span's), at once,
// and is the bench's status: Ctrl-C 130, SIGTERM 143.
func TestASignalEndsEveryWaitOnTheMeter(t *testing.T) {
	for _, at := range []string{"begin", "end", "idle"} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			sigs := make(chan os.Signal, 1)
			m := &waitingMeter{at: at, waiting: make(chan struct{})}
			r, _ := runner(t, Config{Jobs: Jobs([]string{"true"}, "", nil, Hooks{}), Runs: 2, Baseline: time.Second, Signals: sigs}, &m.fakeMeter)
			r.meter = m
			done := make(chan *Report)
			go func() { done <- r.Measure(context.Background()) }()
			<-m.waiting
			sigs <- sig
			rep := <-done
			var e *cli.Error
			if !errors.As(r.Err(), &e) || e.Status != 128+int(sig) || rep.Complete {
				t.Errorf("%v while the meter waits in %s: err %v, complete %v; want status %d", sig, at, r.Err(), rep.Complete, 128+int(sig))
			}
		}
	}
}
