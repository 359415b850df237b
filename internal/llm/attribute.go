package llm

import (
	"math"
	"slices"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// requests turns the answers into requests, each phase's energy read from
// every node's windows.
func requests(answers []Answer, tls []*Timeline) []Request {
	rs := make([]Request, 0, len(answers))
	for i, a := range answers {
		if a.Sent.IsZero() {
			continue // never sent: nothing to measure
		}
		rs = append(rs, newRequest(i, a))
	}
	attribute(rs, tls)
	return rs
}

func newRequest(i int, a Answer) Request {
	r := Request{Index: i, StartedAt: a.Sent.UTC().Format(time.RFC3339Nano), Pieces: a.Pieces, FinishReason: a.FinishReason,
		DurationSeconds: wire.Num(a.Ended.Sub(a.Sent).Seconds()), Warnings: append([]string{}, a.Warnings...),
		sent: a.Sent, first: a.First, last: a.Last, ended: a.Ended}
	if !a.First.IsZero() {
		r.FirstTokenSeconds = num(a.First.Sub(a.Sent).Seconds())
		r.LastTokenSeconds = num(a.Last.Sub(a.Sent).Seconds())
	}
	r.TokensFrom, r.CompletionTokens = "pieces", a.Pieces
	if a.Usage {
		p := a.PromptTokens
		r.TokensFrom, r.PromptTokens, r.CompletionTokens = "usage", &p, a.CompletionTokens
		r.CachedPromptTokens = min(max(a.CachedTokens, 0), p)
	}
	if a.Err != nil {
		msg := a.Err.Error()
		r.Error = &msg
	}
	return r
}

// phases are a request's prefill (send to first token, or to its end
// when no token came) and decode (first token to last).
func (r *Request) phases() [2]span {
	if r.first.IsZero() {
		return [2]span{{r.sent, r.ended}, {r.ended, r.ended}}
	}
	return [2]span{{r.sent, r.first}, {r.first, r.last}}
}

// rates are the tokens a second of the request's phases: the share of
// the Mac that a phase takes while other requests are in flight. NaN
// where it is not known.
func (r *Request) rates() [2]float64 {
	ph := r.phases()
	rate := [2]float64{math.NaN(), math.NaN()}
	if s := ph[0].to.Sub(ph[0].from).Seconds(); s > 0 && r.processed() > 0 {
		rate[0] = float64(r.processed()) / s
	}
	if s := ph[1].to.Sub(ph[1].from).Seconds(); s > 0 && r.CompletionTokens > 1 {
		rate[1] = float64(r.CompletionTokens-1) / s
	}
	return rate
}

// segment is a phase of a request, for the sweep.
type segment struct {
	req, phase int
	span
	rate float64
}

// attribute reads each request's phases from every node's windows. Where
// requests overlap, each stretch between two edges of any request is
// shared among the phases in flight by their tokens a second (equally
// when one's is not known): an estimate, said as such. Where a phase
// has the Mac to itself, its share is all of it: measured.
func attribute(rs []Request, tls []*Timeline) {
	var segs []segment
	edges := []time.Time{}
	for i := range rs {
		ph, rate := rs[i].phases(), rs[i].rates()
		for p := range 2 {
			rs[i].phase(p).init(len(tls), ph[p])
			if ph[p].to.After(ph[p].from) {
				segs = append(segs, segment{req: i, phase: p, span: ph[p], rate: rate[p]})
				edges = append(edges, ph[p].from, ph[p].to)
			}
		}
	}
	slices.SortFunc(edges, func(a, b time.Time) int { return a.Compare(b) })
	edges = slices.CompactFunc(edges, func(a, b time.Time) bool { return a.Equal(b) })
	for j := 0; j+1 < len(edges); j++ {
		a, b := edges[j], edges[j+1]
		active := inFlight(segs, a, b)
		if len(active) == 0 {
			continue
		}
		shares := sharesOf(segs, active)
		for n, si := range active {
			rs[segs[si].req].phase(segs[si].phase).AttributedSeconds += wire.Num(shares[n] * b.Sub(a).Seconds())
		}
		for k, tl := range tls {
			e := tl.Energy(a, b)
			for n, si := range active {
				s := segs[si]
				rs[s.req].phase(s.phase).add(k, e, shares[n])
			}
		}
		if len(active) > 1 && differ(segs, active) {
			for _, si := range active {
				rs[segs[si].req].Overlapped = true
			}
		}
	}
	for i := range rs {
		for p := range 2 {
			rs[i].phase(p).coverage(tls, rs[i].phases()[p])
		}
		// A phase of no time (one token, or none) measures nothing, and
		// says of the system's scope what the other phase says.
		if rs[i].Decode.Seconds == 0 {
			rs[i].Decode.hasSystem = rs[i].Prefill.hasSystem
		}
		rs[i].Whole = sum(rs[i].Prefill, rs[i].Decode)
	}
}

// differ says the active segments are of more than one request.
func differ(segs []segment, active []int) bool {
	for _, si := range active[1:] {
		if segs[si].req != segs[active[0]].req {
			return true
		}
	}
	return false
}

// inFlight are the segments that cover [a, b]. Edges are every
// segment's ends, so a segment covers the stretch or misses it.
func inFlight(segs []segment, a, b time.Time) []int {
	var in []int
	for i, s := range segs {
		if !s.from.After(a) && !s.to.Before(b) {
			in = append(in, i)
		}
	}
	return in
}

// sharesOf are the active segments' shares of a stretch: by rate, or
// equal when a rate is unknown.
func sharesOf(segs []segment, active []int) []float64 {
	shares := make([]float64, len(active))
	total := 0.0
	for n, si := range active {
		shares[n] = segs[si].rate
		total += segs[si].rate
	}
	if math.IsNaN(total) || !(total > 0) {
		for n := range shares {
			shares[n] = 1
		}
		total = float64(len(active))
	}
	for n := range shares {
		shares[n] /= total
	}
	return shares
}

func (r *Request) phase(p int) *Phase {
	if p == 0 {
		return &r.Prefill
	}
	return &r.Decode
}

func (ph *Phase) init(nodes int, s span) {
	ph.Seconds = wire.Num(max(0, s.to.Sub(s.from).Seconds()))
	ph.soc, ph.system, ph.hasSystem = make([]float64, nodes), make([]float64, nodes), true
}

func (ph *Phase) add(node int, e Energy, share float64) {
	ph.soc[node] += e.SoC * share
	ph.system[node] += e.System * share
	ph.hasSystem = ph.hasSystem && e.HasSystem
}

// coverage is the least part of the phase that any node's windows
// covered.
func (ph *Phase) coverage(tls []*Timeline, s span) {
	ph.Coverage = 1
	d := s.to.Sub(s.from)
	if d <= 0 {
		return
	}
	for _, tl := range tls {
		c := float64(tl.Energy(s.from, s.to).Covered) / float64(d)
		ph.Coverage = wire.Num(min(float64(ph.Coverage), c))
	}
}

// sum is the two phases together.
func sum(a, b Phase) Phase {
	w := Phase{Seconds: a.Seconds + b.Seconds, AttributedSeconds: a.AttributedSeconds + b.AttributedSeconds, Coverage: wire.Num(min(a.Coverage, b.Coverage)), hasSystem: a.hasSystem && b.hasSystem,
		soc: make([]float64, len(a.soc)), system: make([]float64, len(a.soc))}
	if float64(b.Seconds) == 0 {
		w.Coverage = a.Coverage
	}
	for k := range a.soc {
		w.soc[k], w.system[k] = a.soc[k]+b.soc[k], a.system[k]+b.system[k]
	}
	return w
}

// processed are the prompt's tokens that the prefill processed: those
// the server did not take from its cache; 0 when not known.
func (r *Request) processed() int {
	if r.PromptTokens == nil {
		return 0
	}
	return *r.PromptTokens - r.CachedPromptTokens
}
