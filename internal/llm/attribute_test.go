package llm

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

var t0 = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * 1e9)) }

// steady is a node whose windows are a second long from 0 to 20 s, at
// the power watts(i) in window i, with the system at twice it.
func steady(watts func(i int) float64) *Timeline {
	t := newTimeline("mac", "local")
	for i := range 20 {
		w := watts(i)
		sys := wire.Num(2 * w)
		t.add(wire.SampleLine{Time: at(float64(i + 1)).Format(time.RFC3339Nano), WindowSeconds: 1,
			PowerWatts: wire.Components{Total: wire.Num(w), System: &sys}})
	}
	return t
}

func request(sent, first, last float64, prompt, completion int) Request {
	p := prompt
	return Request{sent: at(sent), first: at(first), last: at(last), ended: at(last), PromptTokens: &p, CompletionTokens: completion, TokensFrom: "usage"}
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// A request alone on the Mac gets every joule of its phases: the
// integral of the windows' powers over each, edge to edge.
func TestARequestAloneIsMeasuredExactly(t *testing.T) {
	tl := steady(func(i int) float64 { return float64(1 + i) }) // 1 W in [0,1], 2 W in [1,2], ...
	rs := []Request{request(0.5, 2.25, 4.5, 10, 11)}
	attribute(rs, []*Timeline{tl})
	rs[0].Prefill.fill(nil, false, nil)
	rs[0].Decode.fill(nil, false, nil)
	rs[0].Whole.fill(nil, false, nil)
	// Prefill [0.5, 2.25]: 0.5·1 + 1·2 + 0.25·3; decode [2.25, 4.5]: 0.75·3 + 1·4 + 0.5·5.
	near(t, "prefill", float64(rs[0].Prefill.EnergyJoules), 0.5+2+0.75)
	near(t, "decode", float64(rs[0].Decode.EnergyJoules), 2.25+4+2.5)
	near(t, "whole", float64(rs[0].Whole.EnergyJoules), 0.5+2+0.75+2.25+4+2.5)
	near(t, "system prefill", val(rs[0].Prefill.SystemEnergyJoules), 2*(0.5+2+0.75))
	if rs[0].Overlapped || rs[0].Prefill.Coverage != 1 {
		t.Errorf("overlapped %v, coverage %v", rs[0].Overlapped, rs[0].Prefill.Coverage)
	}
}

// Two requests in flight share each stretch between edges by their
// tokens a second; the shares add up to the Mac's energy over the time
// any request was in flight.
func TestOverlappingRequestsShareByTokensASecond(t *testing.T) {
	tl := steady(func(int) float64 { return 10 })
	rs := []Request{
		request(1, 2, 4, 100, 21),  // prefill 100 tok/s, decode 10 tok/s
		request(3, 3.5, 6, 50, 26), // prefill 100 tok/s, decode 10 tok/s
	}
	attribute(rs, []*Timeline{tl})
	for i := range rs {
		for _, ph := range []*Phase{&rs[i].Prefill, &rs[i].Decode, &rs[i].Whole} {
			ph.fill(nil, false, nil)
		}
	}
	// [1,2] A's prefill alone: 10 J. [2,3] A's decode alone: 10 J.
	// [3,3.5] A's decode (10/s) and B's prefill (100/s) share 5 J.
	// [3.5,4] both decode alike: 2.5 J each. [4,6] B's decode: 20 J.
	near(t, "A prefill", float64(rs[0].Prefill.EnergyJoules), 10)
	near(t, "A decode", float64(rs[0].Decode.EnergyJoules), 10+5*10.0/110+2.5)
	near(t, "B prefill", float64(rs[1].Prefill.EnergyJoules), 5*100.0/110)
	near(t, "B decode", float64(rs[1].Decode.EnergyJoules), 2.5+20)
	near(t, "all", float64(rs[0].Whole.EnergyJoules+rs[1].Whole.EnergyJoules), 10*5)
	// The time is shared as the energy is, so that the idle power comes
	// off each request's share, not its whole time twice.
	near(t, "A's decode time, shared", float64(rs[0].Decode.AttributedSeconds), 1+0.5*10/110+0.25)
	near(t, "B's prefill time, shared", float64(rs[1].Prefill.AttributedSeconds), 0.5*100/110)
	near(t, "all the time", float64(rs[0].Whole.AttributedSeconds+rs[1].Whole.AttributedSeconds), 5)
	if !rs[0].Overlapped || !rs[1].Overlapped {
		t.Error("the requests overlapped, and are not said to")
	}
}

// Without a rate (no usage: no prompt tokens), the requests in flight
// share alike.
func TestWithoutRatesTheShareIsEqual(t *testing.T) {
	tl := steady(func(int) float64 { return 6 })
	a, b := request(1, 2, 3, 10, 5), request(1, 2, 3, 10, 5)
	a.PromptTokens, b.PromptTokens = nil, nil
	rs := []Request{a, b}
	attribute(rs, []*Timeline{tl})
	rs[0].Prefill.fill(nil, false, nil)
	near(t, "A's prefill", float64(rs[0].Prefill.EnergyJoules), 3)
}

// A node whose windows stop before a request ends covers part of it, and
// says how much.
func TestCoverageIsThePartTheWindowsCovered(t *testing.T) {
	tl := steady(func(int) float64 { return 1 })
	rs := []Request{request(18, 19, 22, 10, 5)}
	attribute(rs, []*Timeline{tl})
	near(t, "decode coverage", float64(rs[0].Decode.Coverage), 1.0/3)
	near(t, "prefill coverage", float64(rs[0].Prefill.Coverage), 1)
}

func TestPercentileIsNumpysLinear(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for q, want := range map[float64]float64{0: 1, 0.5: 3, 0.9: 4.6, 1: 5} {
		near(t, "percentile", percentile(xs, q), want)
	}
}

// A server that serves one request at a time queues the others: a
// request waiting for its turn takes no share of the one being served,
// and its prefill is charged for its prompt's processing alone.
func TestAQueuedRequestTakesNoShareWhileItWaits(t *testing.T) {
	tl := steady(func(int) float64 { return 10 })
	rs := []Request{
		request(0, 1, 3, 100, 21), // served at once: prefill [0,1], decode [1,3]
		request(0, 4, 6, 100, 21), // queued until 3, prefill [3,4], decode [4,6]
	}
	attribute(rs, []*Timeline{tl})
	for i := range rs {
		for _, ph := range []*Phase{&rs[i].Prefill, &rs[i].Decode, &rs[i].Whole} {
			ph.fill(nil, false, nil)
		}
	}
	near(t, "A's prefill", float64(rs[0].Prefill.EnergyJoules), 10)
	near(t, "A's decode", float64(rs[0].Decode.EnergyJoules), 20)
	near(t, "B's prefill", float64(rs[1].Prefill.EnergyJoules), 10+0) // its wait [0,3] was A's
	near(t, "B's decode", float64(rs[1].Decode.EnergyJoules), 20)
	near(t, "B's prefill time, shared", float64(rs[1].Prefill.AttributedSeconds), 1)
	if !rs[1].Overlapped {
		t.Error("B waited while A ran, and is not said to overlap")
	}
}

// A request whose rate is not known (no usage) shares as the mean of
// those known, not making every request share alike.
func TestAnUnknownRateIsTheMeanOfTheKnown(t *testing.T) {
	segs := []segment{{rate: 100}, {rate: 10}, {rate: math.NaN()}}
	got := sharesOf(segs, []int{0, 1, 2})
	near(t, "the known fast one", got[0], 100/165.0)
	near(t, "the unknown one", got[2], 55/165.0)
	got = sharesOf([]segment{{rate: 0}, {rate: math.NaN()}}, []int{0, 1})
	near(t, "a waiting one beside an unknown one", got[0], 0)
}

// BenchmarkAttribute20000 shares 20,000 requests, four in flight, over
// a node's windows of 100 ms: what a long --duration leaves to do once
// its requests are done.
func BenchmarkAttribute20000(b *testing.B) {
	tl := newTimeline("mac", "local")
	for i := range 40000 {
		tl.add(wire.SampleLine{Time: at(float64(i+1) * 0.1).Format(time.RFC3339Nano), WindowSeconds: 0.1, PowerWatts: wire.Components{Total: 10}})
	}
	base := make([]Request, 20000)
	for i := range base {
		s := float64(i) * 0.2
		base[i] = request(s, s+0.3, s+0.8, 100, 20)
	}
	for b.Loop() {
		rs := slices.Clone(base)
		attribute(rs, []*Timeline{tl})
	}
}
