package attrib

import (
	"errors"
	"fmt"

	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/wire"
)

// Session is --attribute for a command that this process runs: the
// kernel's accounting opened before anything starts, the command's tree
// followed from its start, and what it drew put in its summary. A nil
// Session (no --attribute) does nothing.
type Session struct {
	// Kernel is the accounting the session opened.
	Kernel Kernel
	tree   *Command
}

const withoutAttribute = "run without --attribute to measure the whole Mac alone"

// ErrNodes refuses --attribute over several Macs.
var ErrNodes = errors.New("--attribute reads this Mac's processes: not with --node")

// Begin opens the kernel's accounting with open when on, before anything
// starts: a Mac that keeps no energy per process is told so before the
// command runs, not after. It returns nil when not on.
func Begin(on bool, open func() (Kernel, error)) (*Session, error) {
	if !on {
		return nil, nil
	}
	k, err := open()
	if err != nil {
		return nil, cli.Fail(fmt.Errorf("--attribute: %w", err), withoutAttribute)
	}
	if info := k.Info(); !info.ProcessEnergy {
		k.Close()
		return nil, cli.Fail(fmt.Errorf("--attribute: this Mac keeps no energy per process (macOS %s, %s): "+
			"it needs macOS 13 or later on Apple Silicon, not in a virtual machine", info.MacOS, info.Chip), withoutAttribute)
	}
	return &Session{Kernel: k}, nil
}

// Watch has cmd's tree followed from its start; others is how many
// processes besides the tree share its coalition (this one, and its
// source's).
func (s *Session) Watch(cmd *child.Command, others int) {
	if s == nil {
		return
	}
	s.tree = NewCommand(s.Kernel, PollInterval, others)
	cmd.Watch = s.tree.Watch
}

// Finish puts what the tree drew in sum, beside the Mac's energy over
// the same span, and returns sum.
func (s *Session) Finish(sum *wire.Summary, mac power.Values, has power.Reported) *wire.Summary {
	if s == nil || s.tree == nil {
		return sum
	}
	var w []string
	sum.Attribution, w = s.tree.Attribution(mac, has)
	sum.Warnings = append(sum.Warnings, w...)
	return sum
}

// Close releases the kernel's accounting, on any path.
func (s *Session) Close() {
	if s != nil && s.Kernel != nil {
		s.tree.Stop()
		s.Kernel.Close()
		s.Kernel = nil
	}
}

// Attribution is what the command's tree drew, beside the Mac's energy
// over its span, with the warnings for its summary; nil where the tree
// could not be followed, which a warning says.
func (c *Command) Attribution(mac power.Values, has power.Reported) (*wire.Attribution, []string) {
	r, err := c.Result()
	if err != nil {
		return nil, []string{"--attribute: the command's processes could not be followed: " + err.Error()}
	}
	a := r.Wire(PollInterval, mac, has, c.k.Info())
	var w []string
	for _, s := range append(r.Warnings, RemainderWarnings(a)...) {
		w = append(w, "--attribute: "+s)
	}
	return a, w
}

// RemainderWarnings say where the command's figures add up to more than
// the Mac's energy.
func RemainderWarnings(a *wire.Attribution) []string {
	if a == nil || a.EnergyJoules.RestOfMac >= 0 {
		return nil
	}
	return []string{"the command's figures add up to more than the Mac's " + a.RestOf +
		" energy: the kernel's per-process energy is a model of the CPU's, not a reading of its rail, " +
		"and an open span's processes are read a moment after its newest window"}
}
