package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/cluster"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wire"
)

type watchOptions struct {
	commonOptions
	count    int
	duration time.Duration
	from     string
	nodes    nodeOptions
	wall     wallOptions
	cost     costOptions
}

func newWatchCmd(s *cli.Streams) *cobra.Command {
	var o watchOptions
	c := &cobra.Command{
		Use:   "watch [flags]",
		Short: "Show the Mac's power live",
		Long: `Show the Mac's power as its source samples it: on a terminal, a chart per
rail over the last two minutes, redrawn in place (Tab goes to exopower top's
apps and back, q ends it); one line per sample otherwise, NDJSON with --json.
Ctrl-C, q, --count or --duration end it with the same summary as exopower
run.`,
		Example: `  sudo exopower watch
  sudo exopower watch --json --duration 10m > power.ndjson
  sudo powermetrics -f plist -b 0 -i 1000 -s cpu_power,gpu_power,thermal | exopower watch --from -`,
		Args: usage.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runWatch(c.Context(), s, &o) },
	}
	o.addFlags(c, time.Second)
	c.Flags().IntVarP(&o.count, "count", "n", 0, "stop after N samples (0: no limit)")
	c.Flags().DurationVarP(&o.duration, "duration", "d", 0, "stop after D, such as 30s or 10m (0: no limit)")
	c.Flags().StringVar(&o.from, "from", "", "read a powermetrics -f plist stream from `FILE` (- for stdin) instead of starting powermetrics")
	o.nodes.addFlags(c)
	o.wall.addFlags(c)
	o.cost.addFlags(c)
	return c
}

// check refuses, before anything starts, options that cannot work.
func (o *watchOptions) check(s *cli.Streams) error {
	if err := o.validate(); err != nil {
		return err
	}
	if o.count < 0 {
		return cli.Fail(fmt.Errorf("--count %d is out of range: it takes 0 (no limit, the default) or more samples", o.count))
	}
	if o.duration < 0 {
		return cli.Fail(fmt.Errorf("--duration %v is out of range: it takes 0 (no limit, the default) or more, such as 10m", o.duration))
	}
	return o.cost.resolve(s.Getenv)
}

func runWatch(ctx context.Context, s *cli.Streams, o *watchOptions) error {
	if err := o.check(s); err != nil {
		return err
	}
	if o.nodes.Given() {
		if o.from != "" {
			return cli.Fail(errors.New("--from and --node cannot go together"), "watch a stream with --from, or Macs with --node")
		}
		if o.wall.url != "" {
			return errWallWithNodes("run --node sums them")
		}
		return o.watchNodes(ctx, s)
	}
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
	plug, err := o.wall.startAsSelf(startCtx, s)
	if err != nil {
		stopStart()
		return err
	}
	defer plug.Close()
	meter, err := o.start(startCtx, s)
	stopStart()
	if err != nil {
		return err
	}
	feed := output.NewFeed[update]()
	span := meter.Begin(ctx, func(w sampler.Window, tot sampler.Totals) { feed.Put(update{w, tot}) })
	c := output.SinkConfig{Origin: span.Start, Source: func() wire.Source { return streamSource(meter) }, Wall: liveWall(plug)}
	if o.from != "" {
		c.NoApps = "no apps with --from: the stream's power may be another Mac's, or late, and the processes read are this one's"
	}
	view, err := openWatchView(s, o.json, c)
	end := span.Start
	if err == nil {
		// Deferred as well, for a panic: the terminal is given back on
		// every way out. A second Close does nothing.
		defer view.Close()
		end, err = o.follow(s, meter, span.Start, view, feed)
		if cerr := view.Close(); err == nil {
			err = cerr
		}
	}
	// A further signal cuts the wait for the last window short.
	endCtx, stop := cli.CancelOnSignal(context.Background(), s.Signals)
	res := meter.Finish(endCtx, span, end)
	stop()
	sum := output.NewSummary(res, span.Start, o.interval)
	sum.Title = "watch"
	addWall(sum, plug, span.Start, end)
	if id, err := child.Identify(false, os.Geteuid(), s.Getenv, s.Environ()); plug == nil && err == nil {
		addWallEstimate(sum, res, id)
	}
	return o.finish(s, sum, feed, err)
}

// finish prints the summary of what was measured, even when the live
// output failed, and returns that failure first.
func (o *watchOptions) finish(s *cli.Streams, sum *wire.Summary, feed interface{ DroppedWarning() string }, err error) error {
	if w := feed.DroppedWarning(); w != "" {
		sum.Warnings = append(sum.Warnings, w)
	}
	o.cost.rates.Summary(sum)
	serr := output.PrintSummary(s, o.json, o.json, sum)
	if err != nil {
		return cli.Wrote("stdout", err)
	}
	return serr
}

// update is a window of the watched span and the span's totals after it.
type update struct {
	w   sampler.Window
	tot sampler.Totals
}

// live says when the view ends: --duration from t0, a signal, and the
// stream's end (nil: never).
func (o *watchOptions) live(s *cli.Streams, t0 time.Time, resize func() error, ended <-chan struct{}) output.Live {
	l := output.Live{Signals: s.Signals, Resized: s.Resized, Resize: resize, Ended: ended}
	if o.duration > 0 {
		l.Deadline = t0.Add(o.duration)
	}
	return l
}

// follow shows the windows as they come, until --count, --duration, a
// signal, the end of the stream or a failure to show one, and returns the
// end of the span and that failure: the end of the last window shown, or
// of --duration, or now.
func (o *watchOptions) follow(s *cli.Streams, meter *sampler.Sampler, t0 time.Time, view *watchView, feed *output.Feed[update]) (time.Time, error) {
	var last time.Time // the end of the last window shown
	n, over := 0, false
	live := o.live(s, t0, view.sink.Resize, meter.Done())
	if view.screen != nil {
		view.screen.takeKeys(&live)
	}
	why, err := output.Follow(live, feed, func(u update) (bool, error) {
		if over = o.duration > 0 && !u.w.End.Before(t0.Add(o.duration)); over {
			return true, nil
		}
		last, n = u.w.End, n+1
		err := view.window(u.w, u.tot)
		return n == o.count, err
	})
	switch {
	case why == output.TimeUp || over:
		return t0.Add(o.duration), err
	case why == output.Signalled || why == output.Quitted || last.IsZero():
		return time.Now(), err
	}
	return last, err
}

// streamSource names the stream's source and what its first document
// says it came from.
func streamSource(meter *sampler.Sampler) wire.Source {
	t := meter.Totals()
	return wire.Source{Tool: t.Source, HWModel: t.HWModel, OSBuild: t.OSBuild}
}

// start starts powermetrics, or follows the stream named by --from.
func (o *watchOptions) start(ctx context.Context, s *cli.Streams) (*sampler.Sampler, error) {
	if o.from == "" {
		return source.Start(ctx, o.sourceOptions(s.Getenv, "exopower watch"))
	}
	in, regular, err := s.OpenLive(o.from)
	if err != nil {
		return nil, err
	}
	if regular {
		in.Close()
		// A file is read at once: arrival times would say nothing of
		// when its windows were.
		return nil, cli.Fail(fmt.Errorf("--from %s is a recorded file, not a live stream", cli.InputName(o.from)),
			"summarise a recording with: exopower report "+o.from)
	}
	return source.Pipe(ctx, in, o.from, o.interval)
}

// nodeLine is a window of node i, or a note of what became of its
// stream.
type nodeLine struct {
	i    int
	l    wire.SampleLine
	note *cluster.StreamNote
}

// watchNodes shows several Macs live: a row per node and the total on a
// terminal, a line per node's window and a total line otherwise. Each
// node streams its windows; a span on each, opened at the start and
// ended at the end, makes the summary, as in run --node. A node's stream
// that breaks is opened again; the user is told (in the panel, else on
// stderr) and the summary's warnings say so.
func (o *watchOptions) watchNodes(ctx context.Context, s *cli.Streams) error {
	members, skipped, err := begin(ctx, s, o.nodes.setup(s, o.sourceOptions(s.Getenv, "exopower watch")))
	if err != nil {
		return err
	}
	defer cluster.CloseAll(members)
	start := time.Now()
	feed := output.NewFeed[nodeLine]()
	streams, stopStreams := context.WithCancel(context.Background())
	var mu sync.Mutex
	var notes []string
	over, wait := cluster.StreamAll(streams, members, func(i int, l wire.SampleLine) { feed.Put(nodeLine{i: i, l: l}) },
		func(i int, n cluster.StreamNote) {
			mu.Lock()
			notes = append(notes, n.Text)
			mu.Unlock()
			feed.Put(nodeLine{i: i, note: &n})
		})
	names := make([]output.NodeName, len(members))
	for i, label := range cluster.Labels(members) {
		names[i] = output.NodeName{Name: members[i].Name(), Label: label}
	}
	format := output.ChooseFormat(o.json, s.OutTTY)
	sink, err := output.NewClusterSink(output.SinkConfig{
		Format:   format,
		Terminal: output.Terminal{Out: s.Out, TTY: s.OutTTY, Size: s.TermSize},
		Getenv:   s.Getenv,
	}, names)
	end := time.Now()
	if err == nil {
		end, err = o.followNodes(s, sink, feed, start, len(members), over, format == output.Panel)
		if cerr := sink.Close(); err == nil {
			err = cerr
		}
	}
	stopStreams()
	wait()
	endCtx, stopEnd := cli.CancelOnSignal(context.Background(), s.Signals)
	nodes := cluster.EndAll(endCtx, members, end)
	stopEnd()
	// A watch has no command to time: its span over the cluster is the
	// longest of the nodes' own spans, which all hold it.
	for _, n := range nodes {
		if d := time.Duration(float64(n.DurationSeconds) * float64(time.Second)); end.Sub(start) < d {
			start = end.Add(-d)
		}
	}
	sum := cluster.Total(nodes, skipped, start, end.Sub(start))
	sum.Title = fmt.Sprintf("watch: %d nodes", len(members))
	sum.Warnings = append(sum.Warnings, notes...)
	return o.finish(s, sum, feed, err)
}

// streamStates are what the panel shows of a node's stream in its row.
var streamStates = map[cluster.StreamState]string{
	cluster.StreamBroke: "stream broke: reconnecting",
	cluster.StreamBack:  "",
	cluster.StreamGone:  "stream lost",
}

// followNodes shows the nodes' windows until --duration, --count (windows
// of every node whose stream goes on), a signal, the end of every node's
// stream (over) or a failure to show one, and returns the end. What
// becomes of a node's stream shows in the panel's row, or else as a
// warning on stderr.
func (o *watchOptions) followNodes(s *cli.Streams, sink output.ClusterSink, feed *output.Feed[nodeLine], t0 time.Time, n int, over <-chan struct{}, panel bool) (time.Time, error) {
	counts := make([]int, n)
	gone := make([]bool, n)
	done := 0
	why, err := output.Follow(o.live(s, t0, sink.Resize, over), feed, func(nl nodeLine) (bool, error) {
		if nl.note != nil {
			if !panel {
				fmt.Fprintln(s.Err, "exopower: warning: "+nl.note.Text)
			}
			if err := sink.Note(nl.i, streamStates[nl.note.State]); err != nil {
				return true, err
			}
			// A node whose stream is over shows no more windows: --count
			// waits for the others.
			if nl.note.State == cluster.StreamGone && !gone[nl.i] {
				if gone[nl.i] = true; o.count > 0 && counts[nl.i] < o.count {
					done++
				}
			}
			return o.count > 0 && done == n, nil
		}
		if err := sink.Window(nl.i, nl.l); err != nil {
			return true, err
		}
		if counts[nl.i]++; o.count > 0 && counts[nl.i] == o.count && !gone[nl.i] {
			done++
		}
		return o.count > 0 && done == n, nil
	})
	if why == output.TimeUp {
		return t0.Add(o.duration), err
	}
	return time.Now(), err
}
