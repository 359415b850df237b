package llm

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// Figures are a setting's figures over its requests that ended as they
// should, as mean ± σ, median and p90.
type Figures struct {
	Requests int `json:"requests"`
	Failed   int `json:"failed"`
	// TimeToFirstTokenSeconds is the prefill as a client sees it.
	TimeToFirstTokenSeconds *Spread `json:"time_to_first_token_seconds"`
	// OutputTokensPerSecond is the decode's pace: the tokens after the
	// first over the time from the first to the last.
	OutputTokensPerSecond *Spread `json:"output_tokens_per_second"`
	// PromptTokensPerSecond is the prefill's: the prompt's tokens over
	// the time to the first token.
	PromptTokensPerSecond *Spread `json:"prompt_tokens_per_second"`
	RequestSeconds        *Spread `json:"request_seconds"`
	// SoC is in the SoC's scope (CPU + GPU + ANE); System in the whole
	// Mac's, where the source reads it (null otherwise).
	SoC    *Scope `json:"soc"`
	System *Scope `json:"system"`
	// Nodes are each node's, with several nodes.
	Nodes []NodeFigures `json:"nodes,omitempty"`
}

// Scope is the energy figures in one scope.
type Scope struct {
	// JoulesPerOutputToken is the decode's energy over its tokens (those
	// after the first); JoulesPerPromptToken the prefill's over the
	// prompt's tokens it processed (not those the server had cached);
	// JoulesPerRequest both phases'.
	JoulesPerOutputToken *Spread `json:"joules_per_output_token"`
	JoulesPerPromptToken *Spread `json:"joules_per_prompt_token"`
	JoulesPerRequest     *Spread `json:"joules_per_request"`
	AvgPowerWatts        *Spread `json:"avg_power_watts"`
	// The same less the idle power over each phase; null without a
	// baseline. Their uncertainties are the idle power's standard error
	// over the mean's time, per unit: the same for every request.
	NetJoulesPerOutputToken            *Spread   `json:"net_joules_per_output_token"`
	NetJoulesPerOutputTokenUncertainty *wire.Num `json:"net_joules_per_output_token_uncertainty"`
	NetJoulesPerPromptToken            *Spread   `json:"net_joules_per_prompt_token"`
	NetJoulesPerPromptTokenUncertainty *wire.Num `json:"net_joules_per_prompt_token_uncertainty"`
	NetJoulesPerRequest                *Spread   `json:"net_joules_per_request"`
	NetJoulesPerRequestUncertainty     *wire.Num `json:"net_joules_per_request_uncertainty"`
}

// NodeFigures are one node's energy figures.
type NodeFigures struct {
	Node   string `json:"node"`
	SoC    *Scope `json:"soc"`
	System *Scope `json:"system"`
}

// idlePower is an idle power and its standard error, in one scope; ok
// is false when it is not known.
type idlePower struct {
	watts, se float64
	ok        bool
}

// scopeOf picks a phase's energy, in joules, in one scope on one node
// (node -1: all of them).
type scopeOf func(ph *Phase, node int) (float64, bool)

func socOf(ph *Phase, node int) (float64, bool) {
	if node < 0 {
		return float64(ph.EnergyJoules), true
	}
	return ph.soc[node], true
}

func systemOf(ph *Phase, node int) (float64, bool) {
	if !ph.hasSystem {
		return 0, false
	}
	if node < 0 {
		return val(ph.SystemEnergyJoules), true
	}
	return ph.system[node], true
}

// scope computes the figures of the requests rs in one scope on one
// node (-1: all), net of idle where it is known.
func scope(rs []*Request, of scopeOf, node int, idle idlePower) *Scope {
	var out, prompt, whole, power, netOut, netPrompt, netWhole, outSecs, promptSecs, wholeSecs []float64
	for _, r := range rs {
		d, okD := of(&r.Decode, node)
		p, okP := of(&r.Prefill, node)
		w, okW := of(&r.Whole, node)
		if !okD || !okP || !okW {
			return nil
		}
		if n := r.CompletionTokens - 1; n > 0 && r.Decode.Seconds > 0 {
			out = append(out, d/float64(n))
			netOut = append(netOut, (d-idle.watts*float64(r.Decode.AttributedSeconds))/float64(n))
			outSecs = append(outSecs, float64(r.Decode.AttributedSeconds)/float64(n))
		}
		if r.processed() > 0 {
			n := float64(r.processed())
			prompt = append(prompt, p/n)
			netPrompt = append(netPrompt, (p-idle.watts*float64(r.Prefill.AttributedSeconds))/n)
			promptSecs = append(promptSecs, float64(r.Prefill.AttributedSeconds)/n)
		}
		whole = append(whole, w)
		netWhole = append(netWhole, w-idle.watts*float64(r.Whole.AttributedSeconds))
		wholeSecs = append(wholeSecs, float64(r.Whole.AttributedSeconds))
		if r.Whole.Seconds > 0 {
			power = append(power, w/float64(r.Whole.Seconds))
		}
	}
	s := &Scope{JoulesPerOutputToken: newSpread(out), JoulesPerPromptToken: newSpread(prompt), JoulesPerRequest: newSpread(whole), AvgPowerWatts: newSpread(power)}
	if idle.ok {
		s.NetJoulesPerOutputToken, s.NetJoulesPerOutputTokenUncertainty = newSpread(netOut), uncertainty(idle, outSecs)
		s.NetJoulesPerPromptToken, s.NetJoulesPerPromptTokenUncertainty = newSpread(netPrompt), uncertainty(idle, promptSecs)
		s.NetJoulesPerRequest, s.NetJoulesPerRequestUncertainty = newSpread(netWhole), uncertainty(idle, wholeSecs)
	}
	return s
}

// uncertainty is what the idle power's error makes of a net figure's
// mean: the error times the mean seconds per unit.
func uncertainty(idle idlePower, secsPerUnit []float64) *wire.Num {
	if len(secsPerUnit) == 0 || math.IsNaN(idle.se) {
		return nil
	}
	return num(idle.se * bench.Summarize(secsPerUnit).Mean)
}

// figures are the setting's figures over its requests that ended well.
func (res *Result) figures(b *Baseline, nodes []Node) *Figures {
	var ok []*Request
	f := &Figures{}
	var ttft, outRate, promptRate, secs []float64
	for i := range res.Requests {
		r := &res.Requests[i]
		if r.Error != nil || r.FirstTokenSeconds == nil {
			f.Failed++
			continue
		}
		ok = append(ok, r)
		ttft = append(ttft, float64(*r.FirstTokenSeconds))
		secs = append(secs, float64(r.Whole.Seconds))
		if n := r.CompletionTokens - 1; n > 0 && r.Decode.Seconds > 0 {
			outRate = append(outRate, float64(n)/float64(r.Decode.Seconds))
		}
		if r.processed() > 0 && r.Prefill.Seconds > 0 {
			promptRate = append(promptRate, float64(r.processed())/float64(r.Prefill.Seconds))
		}
	}
	f.Requests = len(ok)
	if len(ok) == 0 {
		return f
	}
	f.TimeToFirstTokenSeconds, f.OutputTokensPerSecond = newSpread(ttft), newSpread(outRate)
	f.PromptTokensPerSecond, f.RequestSeconds = newSpread(promptRate), newSpread(secs)
	f.SoC = scope(ok, socOf, -1, b.soc(-1))
	f.System = scope(ok, systemOf, -1, b.system(-1))
	if len(nodes) > 1 {
		for k, n := range nodes {
			f.Nodes = append(f.Nodes, NodeFigures{Node: n.Label, SoC: scope(ok, socOf, k, b.soc(k)), System: scope(ok, systemOf, k, b.system(k))})
		}
	}
	return f
}

// finish fills in what needs every setting and the baseline: each
// phase's energies, net of idle, the run's totals, the figures, and the
// warnings.
func (rep *Report) finish(tls []*Timeline) {
	for i := range rep.Results {
		rep.Results[i].finish(rep.Baseline, rep.Nodes, rep.IntervalSeconds)
	}
}

// preview is the result with its figures but no net ones, for the text
// written as soon as a setting is done.
func (res Result) preview(tls []*Timeline) Result {
	res.Requests = slices.Clone(res.Requests)
	res.Warnings = slices.Clone(res.Warnings)
	res.finish(nil, nodesOf(tls), 0)
	if n := wire.Finite(&res); n > 0 {
		res.Warnings = append(res.Warnings, notFinite(n))
	}
	return res
}

func (res *Result) finish(b *Baseline, nodes []Node, interval wire.Num) {
	for i := range res.Requests {
		r := &res.Requests[i]
		for _, ph := range []*Phase{&r.Prefill, &r.Decode, &r.Whole} {
			ph.fill(b, len(nodes) > 1, nodes)
		}
	}
	res.Attribution = "measured"
	for _, r := range res.Requests {
		if r.Overlapped {
			res.Attribution = "estimated"
		}
	}
	res.runTotals(b)
	res.Figures = res.figures(b, nodes)
	res.Warnings = append(res.Warnings, res.doubts()...)
}

// fill sums the phase's nodes and takes the idle power off.
func (ph *Phase) fill(b *Baseline, perNode bool, nodes []Node) {
	var soc, system float64
	ph.Nodes = nil
	for k := range ph.soc {
		soc, system = soc+ph.soc[k], system+ph.system[k]
		if perNode {
			np := NodePhase{Node: nodes[k].Label, EnergyJoules: wire.Num(ph.soc[k])}
			if ph.hasSystem {
				np.SystemEnergyJoules = num(ph.system[k])
			}
			if i := b.soc(k); i.ok {
				np.NetEnergyJoules = num(ph.soc[k] - i.watts*float64(ph.AttributedSeconds))
			}
			if i := b.system(k); i.ok && ph.hasSystem {
				np.NetSystemEnergyJoules = num(ph.system[k] - i.watts*float64(ph.AttributedSeconds))
			}
			ph.Nodes = append(ph.Nodes, np)
		}
	}
	ph.EnergyJoules, ph.SystemEnergyJoules = wire.Num(soc), nil
	ph.NetEnergyJoules, ph.NetSystemEnergyJoules, ph.NetEnergyUncertaintyJoules = nil, nil, nil
	if ph.hasSystem {
		ph.SystemEnergyJoules = num(system)
	}
	if i := b.soc(-1); i.ok {
		ph.NetEnergyJoules = num(soc - i.watts*float64(ph.AttributedSeconds))
		ph.NetEnergyUncertaintyJoules = num(i.se * float64(ph.AttributedSeconds))
	}
	if i := b.system(-1); i.ok && ph.hasSystem {
		ph.NetSystemEnergyJoules = num(system - i.watts*float64(ph.AttributedSeconds))
	}
}

// runTotals adds the tokens and the exact figures of the whole stretch.
func (res *Result) runTotals(b *Baseline) {
	run := res.Run
	if run == nil || run.Summary == nil {
		return
	}
	run.PromptTokens, run.CompletionTokens = 0, 0
	for _, r := range res.Requests {
		if r.Error == nil {
			run.CompletionTokens += r.CompletionTokens
			if r.PromptTokens != nil {
				run.PromptTokens += *r.PromptTokens
			}
		}
	}
	secs := float64(run.Summary.DurationSeconds)
	run.NetEnergyJoules, run.NetSystemEnergyJoules, run.NetEnergyUncertaintyJoules = nil, nil, nil
	run.JoulesPerOutputToken, run.NetJoulesPerOutputToken, run.OutputTokensPerSecond = nil, nil, nil
	run.SystemJoulesPerOutputToken, run.NetSystemJoulesPerOutputToken = nil, nil
	n := float64(run.CompletionTokens)
	per := func(j float64) *wire.Num {
		if n > 0 {
			return num(j / n)
		}
		return nil
	}
	e := float64(run.Summary.EnergyJoules.Total)
	run.JoulesPerOutputToken = per(e)
	if i := b.soc(-1); i.ok {
		run.NetEnergyJoules, run.NetEnergyUncertaintyJoules = num(e-i.watts*secs), num(i.se*secs)
		run.NetJoulesPerOutputToken = per(e - i.watts*secs)
	}
	if sys := run.Summary.EnergyJoules.System; sys != nil {
		run.SystemJoulesPerOutputToken = per(float64(*sys))
		if i := b.system(-1); i.ok {
			run.NetSystemEnergyJoules = num(float64(*sys) - i.watts*secs)
			run.NetSystemJoulesPerOutputToken = per(float64(*sys) - i.watts*secs)
		}
	}
	if n > 0 && secs > 0 {
		run.OutputTokensPerSecond = num(n / secs)
	}
	run.Wall = res.runWall(b)
	run.WallEstimated = res.runWallEstimated(b)
	res.price()
}

// doubts are the warnings about a setting's figures.
func (res *Result) doubts() []string {
	var w []string
	pieces, cached, cut, over, thin := 0, 0, 0, 0, 0
	var errs, notes []string
	for _, r := range res.Requests {
		notes = append(notes, r.Warnings...)
		switch {
		case r.Error != nil && *r.Error == ErrInterrupted.Error():
			cut++
			continue
		case r.Error != nil && *r.Error == ErrDurationOver.Error():
			over++
			continue
		case r.Error != nil:
			errs = append(errs, *r.Error)
			continue
		case r.TokensFrom == "pieces":
			pieces++
		}
		if r.CachedPromptTokens > 0 {
			cached++
		}
		if r.Whole.Coverage < 0.99 {
			thin++
		}
	}
	if pieces > 0 {
		w = append(w, fmt.Sprintf("the server gave no token counts (usage) for %s: their output tokens are the streamed pieces counted, which a server may group; prompt tokens are not known, so neither is J per prompt token", output.Count(pieces, "request")))
	}
	if cached > 0 {
		w = append(w, fmt.Sprintf("the server took part of the prompt of %s from its cache: J per prompt token counts the tokens it processed, not those it cached; prompts that begin differently (as --prompt-tokens makes them) avoid it", output.Count(cached, "request")))
	}
	if thin > 0 {
		w = append(w, fmt.Sprintf("%s with less than 99%% of its time covered by windows: its energy is short by what was not (a stream broke, or a node's windows stopped)", output.Count(thin, "request")))
	}
	if cut > 0 {
		w = append(w, fmt.Sprintf("%s cut short by the interrupt: in the requests, not in the figures", output.Count(cut, "request")))
	}
	if over > 0 {
		w = append(w, fmt.Sprintf("%s in flight when --duration ended, cut short there: in the requests, not in the figures", output.Count(over, "request")))
	}
	if len(errs) > 0 {
		w = append(w, fmt.Sprintf("%s of %d failed, left out of the figures: %s", output.Count(len(errs), "request"), len(res.Requests), tally(errs)))
	}
	if len(notes) > 0 {
		w = append(w, tally(notes))
	}
	if res.Attribution == "estimated" {
		w = append(w, "requests overlapped: each one's phases are estimates (shares of the Mac by tokens a second, a queued request's wait taking none); the run's total and its J per output token are measured")
	}
	return append(w, res.runDoubts()...)
}

// tally lists distinct messages with their counts, the first few.
func tally(msgs []string) string {
	count := map[string]int{}
	var order []string
	for _, m := range msgs {
		if count[m] == 0 {
			order = append(order, m)
		}
		count[m]++
	}
	var parts []string
	for i, m := range order {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more kinds", len(order)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", m, output.Count(count[m], "request")))
	}
	return strings.Join(parts, "; ")
}

// runDoubts are what keeps the whole run's figure from being exact: a
// node lost or not covering the stretch (the span's own warnings), or
// requests whose energy is in the stretch but whose tokens are not.
func (res *Result) runDoubts() []string {
	run := res.Run
	if run == nil || run.Summary == nil {
		return nil
	}
	var w []string
	for _, sw := range run.Summary.Warnings {
		w = append(w, "the run's span: "+sw)
	}
	run.Exact = run.Summary.Coverage >= 0.99
	for _, n := range run.Summary.Nodes {
		run.Exact = run.Exact && !n.Lost
	}
	if sw := run.Summary.Wall; sw != nil {
		w = append(w, wallDoubts(sw, float64(run.Summary.DurationSeconds))...)
	}
	if !run.Exact {
		w = append(w, "the run's energy is not all measured (a node was lost or its windows did not cover the stretch): its J per output token is short by what was not")
	}
	for _, r := range res.Requests {
		if r.Error != nil {
			run.Exact = false
			w = append(w, "the run's J per output token counts the energy of the requests that failed or were cut short, but not their tokens: it is not that of the requests that ended well")
			break
		}
	}
	return w
}

// nodesOf names the timelines' nodes.
func nodesOf(tls []*Timeline) []Node {
	ns := []Node{}
	for _, t := range tls {
		ns = append(ns, Node{Node: t.Node, Label: t.Label, URL: t.URL})
	}
	return ns
}
