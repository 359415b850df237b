package apps

import (
	"errors"
	"fmt"
	"time"

	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/power"
)

// Reading is the Mac's energy as its source measured it, up to the end of
// its newest window: what a Poller splits among the apps.
type Reading struct {
	// At is the end of the newest window, on exopower's monotonic
	// timeline.
	At time.Time
	// Energy is cumulative, in joules, from whatever origin the caller
	// keeps (a span's start, the stream's first window): only its
	// differences from one reading to the next are split.
	Energy power.Values
	// Has says which rails the source reads.
	Has power.Reported
	// Wall is the metered plug's figures, its energy since the view
	// began; nil without one.
	Wall *Wall
}

// Config tunes a Poller.
type Config struct {
	// Forget is how long an app whose processes are all gone keeps its
	// place, with its energy; its energy then joins Forgotten. 0 keeps
	// every app for as long as the Poller lives.
	Forget time.Duration
	// MaxGone bounds the apps kept whose processes are all gone: beyond
	// it, the longest gone are forgotten at once, their energy joining
	// Forgotten. Processes under ever new names (a user's short-lived
	// commands, or someone's on purpose) would otherwise keep an app
	// each for Forget, and every round would walk them all. 0 is
	// DefaultMaxGone.
	MaxGone int
	// AllUsers says that exopower runs as root and so reads every
	// user's processes; it is told in every Snapshot.
	AllUsers bool
}

// DefaultMaxGone is Config.MaxGone's default.
const DefaultMaxGone = 1024

// Poller reads the whole process table once per Round and splits the
// Mac's energy among its apps. Its methods are called from one goroutine
// at a time. In steady state (no process started or ended) a Round
// reads each process once and allocates nothing: a process costs a map
// entry and its names once, when it is first listed.
type Poller struct {
	k   attrib.Kernel
	d   attrib.Describer
	cfg Config

	procs  map[int32]*proc  // the processes listed at the last poll, by pid
	apps   map[string]*app  // by name
	pids   []int32          // proc_listpids's, reused
	gpu    []attrib.GPUTime // the GPU's clients, reused
	fresh  []*proc          // the processes found at this poll, reused
	path   []byte           // proc_pidpath's, reused
	rounds []AppRound       // this round's apps, reused
	gone   []goneApp        // this round's apps all gone, reused

	gen     uint32 // polls so far
	gpuOK   uint32 // the last poll that read the GPU's clients
	now     time.Time
	maxID   uint64 // the newest unique id identified so far
	prevMax uint64 // and as of the poll before this one
	started bool

	first, prev Reading      // at Start; at the last Round
	before      time.Time    // the last Round's stretch began here
	dE          power.Values // the Mac's energy over it
	seq         int          // Rounds so far
	round       RestFigures  // this Round's remainder, in joules
	rest        RestFigures  // since Start
	forgotten   Figures
	counts      Counts
	scale       float64
	warnings    []string
}

// proc is a process listed at the last poll.
type proc struct {
	pid      int32
	id       uint64 // its unique id: a pid's next process has another
	start    uint64 // Usage.Start, which tells the same
	name     string
	uid      uint32
	app      *app
	readable bool
	gen      uint32 // the poll that last listed it
	// lastNJ is the kernel's count at the last reading it counts from;
	// refused, how many readings in a row were refused.
	lastNJ  uint64
	refused int
	// The GPU time at the last poll, and the poll that listed it as the
	// GPU's client (a process that was not has no time to count from);
	// gpuBase takes this poll's time as where it counts from.
	lastGPU time.Duration
	gpuGen  uint32
	gpuBase bool
	// This round's: the kernel's CPU energy, and GPU time.
	rawNJ   uint64
	gpuTime time.Duration
	// In joules: this round's, and since it was first read.
	round, energy Figures
}

// app is the processes of one name.
type app struct {
	name   string
	pid    int32 // its own process's, 0 when not alive
	live   int   // its processes alive
	goneAt time.Time
	// In joules: this round's, and since Start.
	round, energy Figures
	// joined counts the processes that came to it; joined0 and live0
	// are joined and live as this round began (for a Span); notReadable
	// is how many of those alive are another user's.
	joined, joined0, live0 int
	notReadable            int
}

// AppRound is what one Round gave an app, for Series: its energy, in
// joules, and whether it was forgotten (its Energy then being all it
// had).
type AppRound struct {
	Name      string
	Round     Figures
	Energy    Figures
	Forgotten bool
}

// New makes a Poller over the kernel's accounting k and its names d.
func New(k attrib.Kernel, d attrib.Describer, cfg Config) *Poller {
	return &Poller{k: k, d: d, cfg: cfg, procs: map[int32]*proc{}, apps: map[string]*app{}, scale: 1}
}

// Start reads every process once, where each one counts from, at r: the
// energy of r and before is nobody's.
func (p *Poller) Start(r Reading) error {
	if p.started {
		return errors.New("apps: started twice")
	}
	p.now = r.At
	if err := p.poll(true, 0); err != nil {
		return err
	}
	p.started, p.first, p.prev = true, r, r
	return nil
}

// Round reads every process again and splits the energy of r since the
// last Round (or Start) among the apps. Where the process table cannot
// be read, all of it goes to the remainder, and the error says why; the
// processes' energy meanwhile is counted at the next Round that reads
// them.
func (p *Poller) Round(r Reading) error {
	if !p.started {
		return errors.New("apps: a round before Start")
	}
	p.beginRound()
	p.now = r.At
	dt := r.At.Sub(p.prev.At)
	dE := r.Energy.Sub(p.prev.Energy)
	err := p.poll(false, dt)
	if err != nil {
		p.warnings = append(p.warnings, "the processes could not be read: "+err.Error()+": the window's energy is all in the rest")
		p.toRest(dE, r.Has)
	} else {
		p.split(dE, r.Has)
	}
	p.forget(r.At)
	p.seq++
	p.before, p.dE, p.prev = p.prev.At, dE, r
	return err
}

// beginRound clears what a round adds up.
func (p *Poller) beginRound() {
	p.counts = Counts{}
	p.warnings = p.warnings[:0]
	p.round = RestFigures{}
	p.scale = 1
	for _, a := range p.apps {
		a.round = Figures{}
		a.joined0, a.live0 = a.joined, a.live
	}
}

// poll lists the processes and reads each once: its CPU energy, or its
// identity where it is another user's; then the GPU's clients. dt is
// the time since the last poll, which bounds a believable reading.
func (p *Poller) poll(first bool, dt time.Duration) error {
	var err error
	if p.pids, err = p.k.Pids(p.pids); err != nil {
		return fmt.Errorf("listing the processes: %w", err)
	}
	p.gen++
	p.prevMax = p.maxID
	p.fresh = p.fresh[:0]
	bound := maxNJ(dt)
	for _, pid := range p.pids {
		if err := p.readOne(pid, first, bound); err != nil {
			return err
		}
	}
	p.counts.Listed = len(p.pids)
	for _, pr := range p.procs {
		if pr.gen != p.gen {
			p.end(pr)
		}
	}
	p.readGPU(first)
	for _, pr := range p.fresh {
		pr.gpuBase = false
	}
	return nil
}

// maxNJ is the most CPU energy a process can believably have used in
// dt, in nanojoules: any Mac's most, and a second more for the polls'
// own lag.
func maxNJ(dt time.Duration) uint64 {
	return uint64(power.MaxWatts * (max(dt, 0) + time.Second).Seconds() * 1e9)
}

// readOne reads the process listed as pid: a process not known is
// found; a known one is read, and where its pid has another process now
// (its start, or its unique id, differs), that one is found in its
// place. Only a kernel without per-process energy is an error.
func (p *Poller) readOne(pid int32, first bool, bound uint64) error {
	pr := p.procs[pid]
	if pr == nil {
		return p.discover(pid, first, bound, nil)
	}
	pr.gen, pr.rawNJ, pr.gpuTime = p.gen, 0, 0
	if !pr.readable {
		// Its usage would be refused: its identity, which anyone may
		// read, tells whether it is still the same process.
		id, err := p.k.Identify(pid)
		switch {
		case errors.Is(err, attrib.ErrNoProcess):
			p.end(pr)
		case err == nil && id.UniqueID != pr.id:
			p.end(pr)
			return p.discover(pid, first, bound, nil)
		default:
			p.counts.NotReadable++
		}
		return nil
	}
	u, err := p.k.Usage(pid)
	switch {
	case errors.Is(err, attrib.ErrNoProcess):
		p.end(pr)
	case errors.Is(err, attrib.ErrNotPermitted):
		// It became another user's (a set-user-id program): what it
		// used since its last reading is not read.
		pr.readable = false
		pr.app.notReadable++
		p.counts.NotReadable++
	case errors.Is(err, attrib.ErrUnsupported):
		return err
	case err != nil:
		// Not answered: read again at the next poll, from its last
		// reading.
	case u.Start != pr.start:
		p.end(pr)
		return p.discover(pid, first, bound, &u)
	default:
		p.counts.Read++
		p.count(pr, u.EnergyNJ, bound)
	}
	return nil
}

// count takes a process's energy counter: what it added since the last
// reading is this round's, unless it went back or rose beyond belief,
// when the reading is refused and the process counts from its last
// reading still. Three refusals in a row take the counter as started
// again, from where it stands, counting nothing.
func (p *Poller) count(pr *proc, nj, bound uint64) {
	if nj < pr.lastNJ || nj-pr.lastNJ > bound {
		p.counts.Refused++
		if pr.refused++; pr.refused >= 3 {
			pr.lastNJ, pr.refused = nj, 0
		}
		return
	}
	pr.rawNJ, pr.lastNJ, pr.refused = nj-pr.lastNJ, nj, 0
}

// end takes a process that is gone out of the table: what it used after
// its last reading is nobody's.
func (p *Poller) end(pr *proc) {
	if p.procs[pr.pid] == pr {
		delete(p.procs, pr.pid)
	}
	p.counts.Ended++
	a := pr.app
	if a.pid == pr.pid {
		a.pid = 0
	}
	if !pr.readable {
		a.notReadable--
	}
	if a.live--; a.live == 0 {
		a.goneAt = p.now
	}
}

// readGPU reads the GPU's clients and each known process's GPU time
// since the last poll that read them. A process whose time went back
// closed a client (or gave its pid to another): it counts from here. A
// client of a pid not listed is counted at the next poll, its process's
// from its start. After a poll that could not read them, the next one's
// times are those of two windows, shared out over the newest one's
// energy.
func (p *Poller) readGPU(first bool) {
	var err error
	if p.gpu, err = p.k.GPUTimes(p.gpu); err != nil {
		p.warnings = append(p.warnings, "the GPU's clients could not be read: "+err.Error()+": the window's GPU energy is all in the rest")
		return
	}
	for _, c := range p.gpu {
		pr := p.procs[c.Pid]
		if pr == nil {
			continue
		}
		prev := pr.lastGPU
		if pr.gpuGen != p.gpuOK {
			prev = 0 // no client at the last poll: its time is since then
		}
		pr.lastGPU, pr.gpuGen = c.Time, p.gen
		if !first && !pr.gpuBase && c.Time > prev {
			pr.gpuTime = c.Time - prev
		}
	}
	p.gpuOK = p.gen
}
