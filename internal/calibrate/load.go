package calibrate

import (
	"sync"
	"sync/atomic"
	"time"
)

// dutyPeriod is the period of a core's duty cycle: short against a
// step and the Mac's sampling, so that the power it reads is the cycle's
// average, and long against the scheduler's slices.
const dutyPeriod = 10 * time.Millisecond

// CPULoad keeps Cores goroutines busy for a share of each dutyPeriod:
// a level of 50 is each busy half of the time. The goroutines end on
// Set's next level and on Stop, which waits for them: nothing is left
// running.
type CPULoad struct {
	Cores int
	mu    sync.Mutex
	stop  chan struct{}
	wg    sync.WaitGroup
}

// Set stops the level before and starts level (0 to 100).
func (l *CPULoad) Set(level int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.halt()
	level = min(max(level, 0), 100)
	if level == 0 {
		return
	}
	l.stop = make(chan struct{})
	busy := dutyPeriod * time.Duration(level) / 100
	for range l.Cores {
		l.wg.Add(1)
		go func(stop <-chan struct{}) {
			defer l.wg.Done()
			spin(stop, busy)
		}(l.stop)
	}
}

// Stop stops the load and waits for its goroutines to end. It may be
// called more than once, and on a load never set.
func (l *CPULoad) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.halt()
}

func (l *CPULoad) halt() {
	if l.stop != nil {
		close(l.stop)
		l.stop = nil
	}
	l.wg.Wait()
}

// spin is busy for busy of every dutyPeriod, until stop closes.
func spin(stop <-chan struct{}, busy time.Duration) {
	x := uint64(1)
	for {
		begin := time.Now()
		for time.Since(begin) < busy {
			for range 1000 {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}
		select {
		case <-stop:
			sink.Store(x)
			return
		case <-time.After(dutyPeriod - busy):
		}
	}
}

// sink keeps the busy loop's arithmetic from being thrown away.
var sink atomic.Uint64
