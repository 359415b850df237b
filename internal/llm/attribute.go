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
	} else if a.First.IsZero() {
		msg := "the stream ended with no text"
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

// segment is a stretch of a request's phase, for the sweep: its share
// of the Mac, where other requests are in flight, is by rate.
type segment struct {
	req, phase int
	span
	rate float64
}

// segments are a request's phases as the sweep shares them. The decode
// works at its tokens a second throughout. The prefill, as a client sees
// it, is the request's wait in the server's queue and then the prompt's
// processing, which only the first token's arrival shows; so its work
// is taken to be its last work seconds (see prefillWork), at its prompt
// tokens a second, and the wait before it a stretch of no work, which
// takes no share while another request works. NaN rates are not known.
func (r *Request) segments(i int, work time.Duration) []segment {
	ph := r.phases()
	var out []segment
	pre := ph[0]
	if d := pre.to.Sub(pre.from); d > 0 {
		rate := math.NaN()
		if w := min(work, d); r.processed() > 0 && w > 0 {
			rate = float64(r.processed()) / w.Seconds()
		}
		if work > 0 && work < d && !r.first.IsZero() {
			cut := pre.to.Add(-work)
			out = append(out, segment{req: i, phase: 0, span: span{pre.from, cut}, rate: 0})
			pre.from = cut
		}
		out = append(out, segment{req: i, phase: 0, span: pre, rate: rate})
	}
	if d := ph[1].to.Sub(ph[1].from); d > 0 {
		rate := math.NaN()
		if r.CompletionTokens > 1 {
			rate = float64(r.CompletionTokens-1) / d.Seconds()
		}
		out = append(out, segment{req: i, phase: 1, span: ph[1], rate: rate})
	}
	return out
}

// prefillWork is how long each request's prompt processing took, as
// far as the requests show it: the least time to first token a prompt
// token of any of them, times the request's own prompt tokens (the
// least time to first token where tokens are not known). The least is
// the request that waited least in the queue; those that waited longer
// processed their prompts as fast.
func prefillWork(rs []Request) []time.Duration {
	perToken, least := math.Inf(1), time.Duration(math.MaxInt64)
	for _, r := range rs {
		if r.first.IsZero() {
			continue
		}
		ttft := r.first.Sub(r.sent)
		least = min(least, ttft)
		if n := r.processed(); n > 0 {
			perToken = min(perToken, ttft.Seconds()/float64(n))
		}
	}
	work := make([]time.Duration, len(rs))
	for i, r := range rs {
		switch {
		case r.first.IsZero():
		case r.processed() > 0 && !math.IsInf(perToken, 1):
			work[i] = time.Duration(perToken * float64(r.processed()) * 1e9)
		case least < time.Duration(math.MaxInt64):
			work[i] = least
		}
	}
	return work
}

// attribute reads each request's phases from every node's windows. Where
// requests overlap, each stretch between two edges of any request is
// shared among the stretches of work in flight by their tokens a second
// (a request waiting in the queue takes none): an estimate, said as
// such. Where a phase has the Mac to itself, its share is all of it:
// measured.
func attribute(rs []Request, tls []*Timeline) {
	var segs []segment
	edges := []time.Time{}
	work := prefillWork(rs)
	for i := range rs {
		ph := rs[i].phases()
		for p := range 2 {
			rs[i].phase(p).init(len(tls), ph[p])
		}
		for _, sg := range rs[i].segments(i, work[i]) {
			segs = append(segs, sg)
			edges = append(edges, sg.from, sg.to)
		}
	}
	slices.SortFunc(edges, func(a, b time.Time) int { return a.Compare(b) })
	edges = slices.CompactFunc(edges, func(a, b time.Time) bool { return a.Equal(b) })
	slices.SortFunc(segs, func(a, b segment) int { return a.from.Compare(b.from) })
	var active []int
	next := 0
	for j := 0; j+1 < len(edges); j++ {
		a, b := edges[j], edges[j+1]
		// The segments in flight over [a, b]: every edge is some
		// segment's end, so a segment covers the stretch or misses it.
		active = slices.DeleteFunc(active, func(si int) bool { return !segs[si].to.After(a) })
		for ; next < len(segs) && !segs[next].from.After(a); next++ {
			if segs[next].to.After(a) {
				active = append(active, next)
			}
		}
		if len(active) > 0 {
			share(rs, segs, active, tls, a, b)
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

// share gives the segments in flight over [a, b] their shares of its
// energy on every node, and of its time.
func share(rs []Request, segs []segment, active []int, tls []*Timeline, a, b time.Time) {
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
	if differ(segs, active) {
		for _, si := range active {
			rs[segs[si].req].Overlapped = true
		}
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

// sharesOf are the active segments' shares of a stretch, by rate. A rate
// not known is taken as the mean of those known (so that one request
// without usage does not make every other share alike); with none known,
// all share alike. Segments of no work share only when none works. A
// rate that is not a finite number of 0 or more is not known, and the
// rates are taken relative to the highest, so that no sum of them
// overflows: every share is a finite part of the stretch, and the
// shares sum to it.
func sharesOf(segs []segment, active []int) []float64 {
	shares := make([]float64, len(active))
	top := 0.0
	for n, si := range active {
		shares[n] = segs[si].rate
		if !(shares[n] >= 0) || math.IsInf(shares[n], 1) {
			shares[n] = math.NaN()
		} else {
			top = max(top, shares[n])
		}
	}
	known, sum := 0, 0.0
	for n, x := range shares {
		if !math.IsNaN(x) {
			if top > 0 {
				shares[n] = x / top
			}
			known, sum = known+1, sum+shares[n]
		}
	}
	mean := 1.0
	if known > 0 && sum > 0 {
		mean = sum / float64(known)
	}
	total := 0.0
	for n := range shares {
		if math.IsNaN(shares[n]) {
			shares[n] = mean
		}
		total += shares[n]
	}
	if !(total > 0) {
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
