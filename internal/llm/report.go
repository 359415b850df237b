package llm

import (
	"math"
	"slices"
	"time"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// SchemaVersion is the version of the JSON of exopower llm; it grows
// when a field changes meaning or goes away, not when one is added.
const SchemaVersion = 1

// Report is the JSON of exopower llm (--json, --export-json).
type Report struct {
	SchemaVersion int `json:"schema_version"`
	// Type is "llm".
	Type string `json:"type"`
	// Complete is false when the benchmark was cut short (Ctrl-C).
	Complete bool `json:"complete"`
	// Endpoint is the URL the requests went to; API is "chat" or
	// "completions".
	Endpoint        string   `json:"endpoint"`
	API             string   `json:"api"`
	IntervalSeconds wire.Num `json:"interval_seconds"`
	// PromptSeed is the seed the prompts were made from (--seed, or a
	// new one each run), to make the same prompts again; null with
	// --prompts.
	PromptSeed *uint64 `json:"prompt_seed"`
	// Nodes are the Macs measured: this Mac alone ("local") or the
	// nodes of --node.
	Nodes []Node `json:"nodes"`
	// Baseline is the idle Macs' power, summed over the nodes; null with
	// --baseline 0.
	Baseline *Baseline `json:"baseline"`
	Results  []Result  `json:"results"`
	Warnings []string  `json:"warnings"`

	// timelines are the nodes' windows, for the picture; plug is the
	// plug of --wall (nil without), whose readings it draws too.
	timelines []*Timeline
	plug      *wall.Session
}

// Node names a measured Mac.
type Node struct {
	Node  string `json:"node"`
	Label string `json:"label"`
	URL   string `json:"url"`
}

// Baseline is the idle power of the Macs, from their windows in the idle
// spans before the first setting and after the last.
type Baseline struct {
	DurationSeconds    wire.Num  `json:"duration_seconds"`
	PowerWatts         wire.Num  `json:"power_watts"`
	StandardErrorWatts *wire.Num `json:"standard_error_watts"`
	// SystemPowerWatts is the whole Macs' idle power, where the source
	// reads the SMC; null otherwise.
	SystemPowerWatts         *wire.Num `json:"system_power_watts"`
	SystemStandardErrorWatts *wire.Num `json:"system_standard_error_watts"`
	// Nodes are each node's, with several nodes.
	Nodes []NodeBaseline `json:"nodes,omitempty"`
	// Wall is the idle power at the wall (--wall), from the idle spans;
	// null without.
	Wall *bench.IdleWall `json:"wall"`
	// WallEstimatedPowerWatts is the idle power at the wall estimated
	// from this Mac's calibration (of SystemPowerWatts where there is
	// one, else of PowerWatts), which the runs' net estimates are net
	// of; null without a calibration.
	WallEstimatedPowerWatts *wire.Num `json:"wall_estimated_power_watts"`

	wallEstimatedFrom string // which of the Mac's powers the estimate maps
}

// NodeBaseline is one node's idle power.
type NodeBaseline struct {
	Node                     string    `json:"node"`
	PowerWatts               wire.Num  `json:"power_watts"`
	StandardErrorWatts       *wire.Num `json:"standard_error_watts"`
	SystemPowerWatts         *wire.Num `json:"system_power_watts"`
	SystemStandardErrorWatts *wire.Num `json:"system_standard_error_watts"`
}

// Result is one setting's requests and what they measured.
type Result struct {
	Model       string `json:"model"`
	Concurrency int    `json:"concurrency"`
	// Run is the measured stretch as a whole, exact whatever the
	// concurrency: its energy is a span's on every node.
	Run *RunTotals `json:"run"`
	// Attribution says how each request's energies were found:
	// "measured" when no two requests overlapped, else "estimated".
	Attribution string    `json:"attribution"`
	Figures     *Figures  `json:"figures"`
	Requests    []Request `json:"requests"`
	Warnings    []string  `json:"warnings"`

	rates cost.Rates // Config.Rates: what to price the run at
}

// Request is one request: its edges, its tokens and its phases' energy.
type Request struct {
	Index     int    `json:"index"`
	StartedAt string `json:"started_at"`
	// FirstTokenSeconds and LastTokenSeconds are from the send; null
	// when no token came.
	FirstTokenSeconds *wire.Num `json:"first_token_seconds"`
	LastTokenSeconds  *wire.Num `json:"last_token_seconds"`
	DurationSeconds   wire.Num  `json:"duration_seconds"`
	// PromptTokens and CompletionTokens are the server's usage, or the
	// streamed pieces counted where it gave none (TokensFrom says
	// which: "usage" or "pieces"); the prompt's is null then.
	PromptTokens *int `json:"prompt_tokens"`
	// CachedPromptTokens are those of the prompt the server took from its
	// cache, as its usage says (0 where it says nothing): the prefill
	// processed the rest, which J per prompt token counts.
	CachedPromptTokens int    `json:"cached_prompt_tokens"`
	CompletionTokens   int    `json:"completion_tokens"`
	TokensFrom         string `json:"tokens_from"`
	Pieces             int    `json:"pieces"`
	FinishReason       string `json:"finish_reason"`
	// Overlapped says another request was in flight during this one:
	// its phases' energies are then estimates.
	Overlapped bool `json:"overlapped"`
	// Prefill is from the send to the first token; Decode from the first
	// token to the last; Whole both.
	Prefill  Phase    `json:"prefill"`
	Decode   Phase    `json:"decode"`
	Whole    Phase    `json:"whole"`
	Error    *string  `json:"error"`
	Warnings []string `json:"warnings"`

	sent, first, last, ended time.Time
}

// Phase is what a stretch of a request drew.
type Phase struct {
	Seconds wire.Num `json:"seconds"`
	// AttributedSeconds is the phase's time weighed by its share of the
	// Mac: Seconds when no other request was in flight. The idle power is
	// taken off over it, as the energy is shared.
	AttributedSeconds wire.Num `json:"attributed_seconds"`
	// EnergyJoules is the SoC's (CPU + GPU + ANE), summed over the nodes;
	// SystemEnergyJoules the whole Macs', where the source reads it.
	EnergyJoules       wire.Num  `json:"energy_joules"`
	SystemEnergyJoules *wire.Num `json:"system_energy_joules"`
	// The same less the idle power over AttributedSeconds, and the uncertainty
	// that the idle power's standard error gives them; null without a
	// baseline.
	NetEnergyJoules            *wire.Num `json:"net_energy_joules"`
	NetSystemEnergyJoules      *wire.Num `json:"net_system_energy_joules"`
	NetEnergyUncertaintyJoules *wire.Num `json:"net_energy_uncertainty_joules"`
	// Coverage is the part of the phase that windows covered, on the
	// node that covered least.
	Coverage wire.Num    `json:"coverage"`
	Nodes    []NodePhase `json:"nodes,omitempty"`

	soc, system []float64 // per node
	hasSystem   bool
}

// NodePhase is one node's part of a phase.
type NodePhase struct {
	Node                  string    `json:"node"`
	EnergyJoules          wire.Num  `json:"energy_joules"`
	SystemEnergyJoules    *wire.Num `json:"system_energy_joules"`
	NetEnergyJoules       *wire.Num `json:"net_energy_joules"`
	NetSystemEnergyJoules *wire.Num `json:"net_system_energy_joules"`
}

// RunTotals is a setting's measured stretch as a whole.
type RunTotals struct {
	// Summary is the spans' summary, as exopower run --json gives it:
	// the cluster's, with each node's among its nodes.
	Summary *wire.Summary `json:"summary"`
	// Tokens of the requests that ended as they should.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// NetEnergyJoules and NetSystemEnergyJoules are the energy less the
	// idle power over the stretch; null without a baseline.
	NetEnergyJoules            *wire.Num `json:"net_energy_joules"`
	NetSystemEnergyJoules      *wire.Num `json:"net_system_energy_joules"`
	NetEnergyUncertaintyJoules *wire.Num `json:"net_energy_uncertainty_joules"`
	// JoulesPerOutputToken is the whole stretch's energy over its
	// completion tokens: exact, whatever the concurrency, idle gaps and
	// prefills included; NetJoulesPerOutputToken its net energy's (null
	// without a baseline). The System ones are the whole Mac's (null
	// without its power).
	JoulesPerOutputToken *wire.Num `json:"joules_per_output_token"`
	// Exact says the figures above are exact: every node covered the
	// whole stretch, and every request in it ended well (the warnings
	// say which did not).
	Exact                         bool      `json:"exact"`
	NetJoulesPerOutputToken       *wire.Num `json:"net_joules_per_output_token"`
	SystemJoulesPerOutputToken    *wire.Num `json:"system_joules_per_output_token"`
	NetSystemJoulesPerOutputToken *wire.Num `json:"net_system_joules_per_output_token"`
	OutputTokensPerSecond         *wire.Num `json:"output_tokens_per_second"`
	// Wall is the run's figures at the wall (--wall; its energy is
	// Summary's wall); null without.
	Wall *RunWall `json:"wall"`
	// WallEstimated is the run's figures at the wall estimated from
	// this Mac's calibration (its energy is Summary's wall_estimated);
	// null without one.
	WallEstimated *RunWallEstimated `json:"wall_estimated"`
	// Cost is the run priced at --price, and per million output tokens;
	// CO2e the same at --carbon-intensity or --grid. Each null without
	// its figure (the summary's cost and co2e are the run's too).
	Cost *RunCost `json:"cost"`
	CO2e *RunCO2e `json:"co2e"`
}

func newRunTotals(sum *wire.Summary) *RunTotals { return &RunTotals{Summary: sum} }

// Spread is the statistics of one figure over a setting's requests.
type Spread struct {
	N      int       `json:"n"`
	Mean   wire.Num  `json:"mean"`
	Stddev *wire.Num `json:"stddev"`
	Median wire.Num  `json:"median"`
	P90    wire.Num  `json:"p90"`
	Min    wire.Num  `json:"min"`
	Max    wire.Num  `json:"max"`
}

func newSpread(xs []float64) *Spread {
	if len(xs) == 0 {
		return nil
	}
	st := bench.Summarize(xs)
	return &Spread{N: st.N, Mean: wire.Num(st.Mean), Stddev: num(st.Stddev), Median: wire.Num(st.Median),
		P90: wire.Num(percentile(xs, 0.9)), Min: wire.Num(st.Min), Max: wire.Num(st.Max)}
}

// percentile is the q-th quantile of xs, linear between the two nearest
// ranks (numpy's default).
func percentile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

func num(x float64) *wire.Num {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	n := wire.Num(x)
	return &n
}

func val(n *wire.Num) float64 {
	if n == nil {
		return math.NaN()
	}
	return float64(*n)
}
