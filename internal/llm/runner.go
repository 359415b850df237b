package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// Setting is one configuration of a benchmark: a model, asked by this
// many requests in flight at once.
type Setting struct {
	Model       string
	Concurrency int
}

// Config says what a Runner asks and how.
type Config struct {
	Client   *Client
	Settings []Setting
	Prompts  *Prompts
	// Requests is each setting's measured requests; with Duration, as
	// many as are sent within it (and at most Requests, when not 0).
	Requests int
	Duration time.Duration
	// Warmup is each setting's requests before the measured ones, not
	// measured: the model's load and the server's caches are not the
	// first request's cost.
	Warmup int
	// Baseline is the idle span before the first setting and after the
	// last (0: none).
	Baseline time.Duration
	Interval time.Duration
	// Signals cut the benchmark short; Messages takes what the runner
	// says as it goes.
	Signals  <-chan os.Signal
	Messages io.Writer
	// Progress draws where the benchmark is; nil draws nothing.
	Progress *bench.Progress
	// Finished, when not nil, is given each setting's result as soon as
	// its requests are done: its index, and the result without the net
	// figures (which need the closing baseline).
	Finished func(i int, r Result)
	// Rates price each setting's run (--price, --carbon-intensity);
	// none prices nothing.
	Rates cost.Rates
}

// Runner runs a benchmark: the idle baseline, then each setting's
// warmup and measured requests, then the closing baseline.
type Runner struct {
	cfg    Config
	meter  *Meter
	signal atomic.Int32
	sent   atomic.Int64 // requests sent, for the next prompt
}

// NewRunner runs cfg over meter, whose streams Start has opened.
func NewRunner(cfg Config, meter *Meter) *Runner {
	if cfg.Progress == nil {
		cfg.Progress = bench.NewProgress(nil, 0, 0)
	}
	return &Runner{cfg: cfg, meter: meter}
}

// Signal is the signal that cut the benchmark short, 0 when none did.
func (r *Runner) Signal() int { return int(r.signal.Load()) }

// watch cancels the work when a signal comes, until stop.
func (r *Runner) watch(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case sig := <-r.cfg.Signals:
			if s, ok := sig.(syscall.Signal); ok {
				r.signal.Store(int32(s))
			} else {
				r.signal.Store(int32(syscall.SIGINT))
			}
			cancel()
		case <-done:
		}
	})
	return ctx, func() { close(done); wg.Wait(); cancel() }
}

// Measure runs the benchmark and returns its report, finished: net
// figures against the baseline, estimates where requests overlapped.
// The meter is closed.
func (r *Runner) Measure(ctx context.Context) *Report {
	work, stop := r.watch(ctx)
	defer stop()
	rep := &Report{SchemaVersion: SchemaVersion, Type: "llm", Endpoint: Where(r.cfg.Client.URL), API: string(r.cfg.Client.API),
		IntervalSeconds: wire.Num(r.cfg.Interval.Seconds()), Results: []Result{}, Warnings: []string{}}
	if seed, ok := r.cfg.Prompts.Seed(); ok {
		rep.PromptSeed = &seed
	}
	var idle []span
	if r.cfg.Baseline > 0 {
		idle = append(idle, r.idle(work))
	}
	for _, s := range r.cfg.Settings {
		if work.Err() != nil {
			break
		}
		res := r.setting(work, s)
		rep.Results = append(rep.Results, res)
		if r.cfg.Finished != nil {
			r.cfg.Progress.Clear()
			r.cfg.Finished(len(rep.Results)-1, res.preview(r.meter.timelines))
		}
	}
	if r.cfg.Baseline > 0 && work.Err() == nil {
		idle = append(idle, r.idle(work))
	}
	r.cfg.Progress.Clear()
	rep.Complete = work.Err() == nil
	rep.Baseline = newBaseline(r.meter.timelines, idle)
	if rep.Baseline != nil {
		rep.Baseline.Wall = r.meter.wallIdle(idle)
		rep.Baseline.WallEstimatedPowerWatts, rep.Baseline.wallEstimatedFrom = r.meter.wallIdleEstimated(rep.Baseline)
	}
	if d, ok := drift(r.meter.timelines, idle); ok {
		rep.Warnings = append(rep.Warnings, d)
	}
	rep.Nodes, rep.timelines, rep.plug = nodesOf(r.meter.timelines), r.meter.timelines, r.meter.plug
	rep.Warnings = append(rep.Warnings, r.meter.Close()...)
	for _, sk := range r.meter.skipped {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("node %s was left out: %v", sk.Node, sk.Err))
	}
	rep.finish(r.meter.timelines)
	if n := wire.Finite(rep); n > 0 {
		rep.Warnings = append(rep.Warnings, notFinite(n))
	}
	return rep
}

// notFinite is the warning of a report in which n figures came to NaN or
// infinity, which no measurement can: a fault of exopower's own.
func notFinite(n int) string {
	return fmt.Sprintf("%s came to NaN or infinity, which cannot be true: written as null (0 where the JSON has no null); please report it", output.Count(n, "figure"))
}

// span is a stretch of time, by this Mac's clock.
type span struct{ from, to time.Time }

// idle waits out an idle span of the baseline's length, or until a
// signal; over --node it is a span on every node too, for their plugs.
func (r *Runner) idle(ctx context.Context) span {
	r.cfg.Progress.Idle(r.cfg.Baseline)
	r.meter.mark()
	from := time.Now()
	nodes := r.meter.beginIdle(ctx)
	t := time.NewTimer(time.Until(from.Add(r.cfg.Baseline)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	to := time.Now()
	if nodes {
		r.meter.endIdle(from, to)
	}
	r.meter.settle(context.Background(), to)
	return span{from, to}
}

// setting runs one setting's warmup and measured requests, the latter
// within a span on every node.
func (r *Runner) setting(ctx context.Context, s Setting) Result {
	res := Result{Model: s.Model, Concurrency: s.Concurrency, Requests: []Request{}, Warnings: []string{}, rates: r.cfg.Rates}
	if r.cfg.Warmup > 0 {
		answers, _ := r.batch(ctx, s, r.cfg.Warmup, 0, nil)
		for _, a := range answers {
			if a.Err != nil && ctx.Err() == nil {
				res.Warnings = append(res.Warnings, "a warmup request failed: "+a.Err.Error())
				break
			}
		}
	}
	if ctx.Err() != nil {
		return res
	}
	r.meter.mark()
	start := time.Now()
	if err := r.meter.begin(ctx); err != nil {
		res.Warnings = append(res.Warnings, "not measured: "+err.Error())
		return res
	}
	answers, stopped := r.batch(ctx, s, r.cfg.Requests, r.cfg.Duration, r.cfg.Progress)
	end := time.Now()
	if stopped != "" {
		res.Warnings = append(res.Warnings, stopped)
	}
	// The nodes' spans end even when a signal cut the requests short:
	// what was measured is kept.
	ectx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res.Run = newRunTotals(r.meter.end(ectx, start, end))
	res.Requests = requests(answers, r.meter.timelines)
	return res
}

// giveUp is how many requests in a row may fail before a setting stops:
// a server that is gone, or refuses every request, is not hammered.
const giveUp = 5

// batch sends n requests (or, with d, as many as start within d, at
// most n when not 0), k of them in flight at once, and returns their
// answers in the order they were sent, and why it stopped early ("" when
// it did not). A nil progress draws nothing.
func (r *Runner) batch(ctx context.Context, s Setting, n int, d time.Duration, progress *bench.Progress) ([]Answer, string) {
	var (
		mu      sync.Mutex
		answers []Answer
		next    int
		inARow  int
		stopped string
		wg      sync.WaitGroup
	)
	deadline := time.Now().Add(d)
	if d > 0 {
		// The end of the duration ends the requests in flight too: a
		// slow or endless answer does not hold the run past it.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadlineCause(ctx, deadline, ErrDurationOver)
		defer cancel()
	}
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil || stopped != "" || (n > 0 && next >= n) || (d > 0 && !time.Now().Before(deadline)) {
			return 0, false
		}
		next++
		answers = append(answers, Answer{})
		if progress != nil {
			progress.Run(s.Model, next, max(n, next))
		}
		return next - 1, true
	}
	done := func(i int, a Answer) {
		mu.Lock()
		defer mu.Unlock()
		answers[i] = a
		switch {
		case a.Err == nil:
			inARow = 0
		case !errors.Is(a.Err, ErrInterrupted) && !errors.Is(a.Err, ErrDurationOver):
			if inARow++; inARow >= giveUp && stopped == "" {
				stopped = fmt.Sprintf("stopped after %d requests in a row failed, the last with: %v", giveUp, a.Err)
			}
		}
	}
	for range max(1, s.Concurrency) {
		wg.Go(func() {
			for i, ok := take(); ok; i, ok = take() {
				done(i, r.send(ctx, s.Model))
			}
		})
	}
	wg.Wait()
	return answers, stopped
}

// send sends the next request of model.
func (r *Runner) send(ctx context.Context, model string) Answer {
	p, err := r.cfg.Prompts.Next(int(r.sent.Add(1) - 1))
	if err != nil {
		// A request that could not be sent, said in the report.
		now := time.Now()
		return Answer{Sent: now, Ended: now, Err: r.cfg.Client.scrub(err)}
	}
	return r.cfg.Client.Do(ctx, model, p, r.meter)
}
