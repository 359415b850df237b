package bench

import (
	"fmt"
	"io"
	"time"

	"github.com/exopower/exopower/internal/output"
)

// Progress is the line on a terminal's stderr that says where the bench
// is: the command, run k of N, the time left and the last run's energy,
// redrawn in place. A nil w draws nothing: stderr is no terminal, or the
// commands' output goes there.
type Progress struct {
	w     io.Writer
	total int // measured runs in all
	done  int
	first time.Time // when the first measured run began
	last  string    // the last run's energy
	tail  time.Duration
	drawn bool
}

// NewProgress draws on w for total measured runs, with tail (the idle
// baseline after the runs) still to wait once they are done.
func NewProgress(w io.Writer, total int, tail time.Duration) *Progress {
	return &Progress{w: w, total: total, tail: tail}
}

// maxCommand is how much of a command the line shows, so that it stays
// one line on most terminals.
const maxCommand = 40

// Run says that run k of n of command c begins.
func (p *Progress) Run(c string, k, n int) {
	if p.w == nil {
		return
	}
	if p.first.IsZero() {
		p.first = time.Now()
	}
	if r := []rune(c); len(r) > maxCommand {
		c = string(r[:maxCommand-1]) + "…"
	}
	left := "estimating the time left"
	if p.done > 0 {
		per := time.Since(p.first) / time.Duration(p.done)
		left = "about " + (per*time.Duration(p.total-p.done) + p.tail).Round(time.Second).String() + " left"
	}
	line := fmt.Sprintf("%s: run %d of %d, %s", c, k, n, left)
	if p.last != "" {
		line += ", last " + p.last
	}
	p.draw(line)
}

// Ran says that a measured run ended, having used joules.
func (p *Progress) Ran(joules float64) {
	p.done++
	p.last = output.Joules(joules)
}

// Idle says that the idle Mac is being measured for d.
func (p *Progress) Idle(d time.Duration) {
	if p.w != nil {
		p.draw(fmt.Sprintf("measuring the idle Mac for %v", d))
	}
}

// IdleAtMost says that the idle Mac is being measured for as long as
// the runs need, at most d.
func (p *Progress) IdleAtMost(d time.Duration) {
	if p.w != nil {
		p.draw(fmt.Sprintf("measuring the idle Mac, at most %v", d))
	}
}

func (p *Progress) draw(line string) {
	fmt.Fprintf(p.w, "\r%s\x1b[K", line)
	p.drawn = true
}

// Clear takes the line away, before anything else is written to stderr
// and at the end.
func (p *Progress) Clear() {
	if p.w != nil && p.drawn {
		io.WriteString(p.w, "\r\x1b[K")
		p.drawn = false
	}
}
