package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// Nodes say which Macs to measure and how to reach them, as the flags
// --node, --nodes, --node-credentials, --node-ca and --skip-unreachable
// give them.
type Nodes struct {
	// URLs are the --node values; File names a file of them, one a line.
	URLs []string
	File string
	// Credentials names a file of lines URL USER PASSWORD; without one,
	// EXOPOWER_NODE_USER and EXOPOWER_NODE_PASSWORD are everyone's.
	Credentials string
	// CAFile holds CA certificates to trust for https nodes, besides the
	// system's.
	CAFile string
	// SkipUnreachable goes on without the nodes that do not answer
	// before the start, naming them.
	SkipUnreachable bool
}

// Given says whether any node was named.
func (n Nodes) Given() bool { return len(n.URLs) > 0 || n.File != "" }

// Unreachable is the hint for a node that does not answer.
const Unreachable = "check that exopower serve runs on each node (curl URL/v1/status), or pass --skip-unreachable"

// Setup says how to reach the nodes of a run, a watch or a bench.
type Setup struct {
	Nodes
	Getenv func(string) string
	// Interval is this Mac's sample interval, should it be a node.
	Interval time.Duration
	// Start starts this Mac's stream, when it is named as a node
	// ("local").
	Start func(ctx context.Context) (*sampler.Sampler, error)
	// Warn tells the user, at once, of something about the nodes'
	// setup that does not stop the run (nil: nobody is told).
	Warn func(string)
	// ReadAs says as whom the files of --nodes, --node-credentials and
	// --node-ca are read: under sudo, the user who ran it (nil, or a nil
	// credential: exopower's own user).
	ReadAs func() (*syscall.Credential, error)
	// Boot is this Mac's boot session (boot.ID), by which a serve on
	// this Mac is told from another's; "" when unknown.
	Boot string
}

// Connect reaches every node at once: a remote one by its status, this
// Mac by starting its stream. Nodes that do not answer, or not as
// exopower serve does, are an error, unless SkipUnreachable: then they
// are left out, and named in skipped. A Mac reached twice (one serve
// under two URLs, this Mac as local and by its serve) is an error
// whatever SkipUnreachable says: the list of nodes is wrong. Close the
// members when done.
func (s Setup) Connect(ctx context.Context) (members []Member, skipped []Skipped, err error) {
	ts, auth, err := s.targets(s.Getenv)
	if err != nil {
		return nil, nil, err
	}
	tlsConf, err := caConfig(s.CAFile, auth.ca)
	if err != nil {
		return nil, nil, cli.Fail(fmt.Errorf("--node-ca: %w", err))
	}
	found := make([]Member, len(ts))
	errs := make([]error, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Go(func() { found[i], errs[i] = s.reach(ctx, t, auth, tlsConf) })
	}
	wg.Wait()
	var failed []error
	for i, m := range found {
		switch {
		case errs[i] == nil:
			members = append(members, m)
		case s.SkipUnreachable && !ts[i].Local:
			skipped = append(skipped, Skipped{Node: ts[i].Name(), Err: errs[i]})
		default:
			failed = append(failed, errs[i])
		}
	}
	if err := twice(members, s.Boot); err != nil {
		failed = append(failed, err)
	}
	if len(failed) > 0 {
		CloseAll(members)
		return nil, nil, withHint(failed)
	}
	if len(members) == 0 {
		return nil, nil, cli.Fail(errors.New("no node answered"), Unreachable)
	}
	return members, skipped, nil
}

// reach reaches one node: this Mac by starting its stream, a remote one
// by its status, which it answers at once (Connect waits StatusWait).
func (s Setup) reach(ctx context.Context, t Target, auth Auth, tlsConf *tls.Config) (Member, error) {
	if t.Local {
		meter, err := s.Start(ctx)
		if err != nil {
			return nil, err
		}
		return NewLocal(meter, s.Interval), nil
	}
	r, err := Connect(ctx, NewClient(t, auth, tlsConf))
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", t.Name(), err)
	}
	return r, nil
}

// withHint is errs, the failures to reach the nodes, joined, with the
// hints that say what to check: those the failures carry (this Mac's
// powermetrics), and the check of the serves when a node did not answer.
func withHint(errs []error) error {
	var hints []string
	unreachable := false
	for _, err := range errs {
		var e *cli.Error
		if errors.As(err, &e) {
			hints = append(hints, e.Hints...)
		} else {
			unreachable = true
		}
	}
	if unreachable {
		hints = append(hints, Unreachable)
	}
	return cli.Fail(errors.Join(errs...), hints...)
}

// CloseAll closes every member.
func CloseAll(ms []Member) {
	for _, m := range ms {
		m.Close()
	}
}

// StreamAll streams every member's windows at once into f, with the
// member's index, until ctx ends, and tells note what becomes of each
// stream (broken, back, over). over is closed when every stream is over
// (ctx ended, or each given up); wait waits for the streams to stop. f
// and note are called from several goroutines at once and must not
// block.
func StreamAll(ctx context.Context, ms []Member, f func(i int, l wire.SampleLine), note func(i int, n StreamNote)) (over <-chan struct{}, wait func()) {
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() {
			m.Stream(ctx, func(l wire.SampleLine) { f(i, l) }, func(n StreamNote) { note(i, n) })
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return done, func() { <-done }
}
