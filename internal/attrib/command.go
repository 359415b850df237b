package attrib

import (
	"sync"
	"time"
)

// PollInterval is how often a command's tree is read: a descendant that
// lives and is reaped within it is not seen, and its CPU time is counted
// as unseen. At 100 ms, reading a tree of 100 processes costs well under
// 0.5 % of a core (BenchmarkPoll).
const PollInterval = 100 * time.Millisecond

// Command follows the tree of a command that this process starts: Watch
// is for child.Command.Watch.
type Command struct {
	k        Kernel
	interval time.Duration
	others   int
	mu       sync.Mutex
	tr       *Tracker
	err      error // why the tree could not be followed
	waitErr  error // why the command's end could not be waited for
	done     chan struct{}
	stopped  sync.Once
	ran      chan struct{} // closed when the polls have stopped
}

// NewCommand follows a command's tree through k, reading it every
// interval; others is how many processes besides the tree are known to
// share its coalition (this one, and its source's process).
func NewCommand(k Kernel, interval time.Duration, others int) *Command {
	return &Command{k: k, interval: interval, others: others, done: make(chan struct{}), ran: make(chan struct{})}
}

// Watch starts following the command's tree, and returns what waits for
// the command's exit and reads the tree then, before it is reaped.
func (c *Command) Watch(pid int) func(exited func()) time.Time {
	tr, err := Track(c.k, int32(pid), true, c.others)
	c.mu.Lock()
	c.tr, c.err = tr, err
	c.mu.Unlock()
	if err != nil {
		close(c.ran)
		return nil
	}
	go func() {
		defer close(c.ran)
		tr.Run(c.done, c.interval)
	}()
	return func(onExit func()) time.Time {
		exited, err := tr.ReadBeforeReap(onExit)
		if err != nil {
			// The polls go on until the command has been reaped,
			// and Result stops them.
			c.mu.Lock()
			c.waitErr = err
			c.mu.Unlock()
			return time.Time{}
		}
		c.Stop()
		return exited
	}
}

// Stop stops the polls and waits until none is under way: the kernel's
// accounting may then be closed. A nil Command, or one whose command
// did not start, has none.
func (c *Command) Stop() {
	if c == nil || c.tr == nil && c.err == nil {
		return
	}
	c.stopped.Do(func() { close(c.done) })
	<-c.ran
}

// Result says what the tree drew; an error where it could not be
// followed at all. Call it once the command has been waited for.
func (c *Command) Result() (Result, error) {
	c.Stop()
	c.mu.Lock()
	tr, err, waitErr := c.tr, c.err, c.waitErr
	c.mu.Unlock()
	if tr == nil {
		return Result{}, err
	}
	r := tr.Result()
	if waitErr != nil {
		r.Warnings = append(r.Warnings, "the command's end could not be waited for before it was reaped ("+waitErr.Error()+
			"): the tree was read until it was reaped, and the command's own last moments after its last reading are not counted")
	}
	return r, nil
}
