package compare

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/wire"
)

// KnownSchema is the newest schema_version of bench's and llm's JSON
// that compare reads: a newer export may mean its fields otherwise.
const KnownSchema = 1

// Export is one side of a comparison: a bench's JSON (bench --json,
// --export-json) or an llm's, read for what compare needs of it.
// Fields it does not need are ignored, so that exports with fields added
// since are read as they are.
type Export struct {
	// Name is how messages name the export: its path.
	Name string
	// Kind is "bench" or "llm".
	Kind     string
	Complete bool
	Source   wire.Source
	Scope    string
	// IntervalSeconds is the source's sample interval.
	IntervalSeconds float64
	// Idle is the idle baseline; nil without one.
	Idle *Idle
	// Unit is bench's unit of work (--unit with --units or --units-from),
	// "" without.
	Unit string
	// Nodes counts the Macs measured: 1 for this Mac alone.
	Nodes int
	// API and PromptSeed are llm's: the server's API and the seed its
	// prompts were made from (nil: none, as with --prompts).
	API        string
	PromptSeed *uint64
	Benchmarks []Benchmark
	// Rates are the price and carbon intensity the export's run was
	// given, each with the source "new"; none where it was given none.
	Rates cost.Rates

	digest [sha256.Size]byte
}

// Idle is an export's idle power and its standard error (NaN where it
// has none), in watts.
type Idle struct{ Watts, SE float64 }

// Benchmark is a command of a bench (with its parameters) or a setting of
// an llm (model and concurrency), and its figures.
type Benchmark struct {
	// Key matches a benchmark with the other export's by name; Name is
	// how the outputs name it.
	Key, Name string
	Figures   []Figure
}

// Figure is one figure of a benchmark, net of the idle power (Net, nil
// without a baseline) and gross (Gross, nil where there is none).
type Figure struct {
	// Slug names the figure in the outputs ("energy",
	// "energy-per-token"); the net one's is "net-" and this.
	Slug string
	// Label names it for people ("energy", "energy per token").
	Label string
	// Unit is its unit: "J", or "J/token" for a figure per token.
	Unit       string
	Net, Gross *Sample
}

// maxExport is the largest export compare reads: far more than a bench
// of thousands of runs, or an llm run of thousands of requests, writes.
const maxExport = 1 << 30

// Load reads an export from data; name is how messages name it. It
// refuses what is not a bench's or an llm's JSON, a newer schema than it
// knows, and JSON cut short, each with what to do next.
func Load(name string, data []byte) (*Export, error) {
	if len(data) > maxExport {
		return nil, cli.Fail(fmt.Errorf("%s: over %d MiB: too large for a bench's or an llm's JSON", name, maxExport>>20))
	}
	var head struct {
		SchemaVersion *int    `json:"schema_version"`
		Type          *string `json:"type"`
		Results       json.RawMessage
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, notJSON(name, data, err)
	}
	kind := ""
	if head.Type != nil {
		kind = *head.Type
	}
	if err := knownKind(name, kind, head.Results != nil); err != nil {
		return nil, err
	}
	if head.SchemaVersion == nil || *head.SchemaVersion < 1 {
		return nil, cli.Fail(fmt.Errorf("%s: a %s's JSON without a schema_version: not written by exopower", name, kind))
	}
	if v := *head.SchemaVersion; v > KnownSchema {
		return nil, cli.Fail(fmt.Errorf("%s: schema_version %d, newer than the %d this exopower reads", name, v, KnownSchema),
			"compare it with the exopower that wrote it, or a newer one than this")
	}
	var (
		e   *Export
		err error
	)
	if kind == "bench" {
		e, err = readBench(data)
	} else {
		e, err = readLLM(data)
	}
	if err != nil {
		return nil, cli.Fail(fmt.Errorf("%s: not a %s's JSON as exopower writes it: %w", name, kind, err))
	}
	e.Name, e.Kind, e.digest = name, kind, sha256.Sum256(bytes.TrimSpace(data))
	return e, nil
}

// notJSON says why data is not one JSON object: cut short, empty, or
// something else.
func notJSON(name string, data []byte, err error) error {
	var syn *json.SyntaxError
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return cli.Fail(fmt.Errorf("%s is empty", name), "give the file that bench --export-json or llm --export-json wrote")
	// Cut inside a literal (nul of null), encoding/json finds a
	// character it made up at the end: an error at the last offset is a
	// cut too.
	case errors.As(err, &syn) && (strings.Contains(syn.Error(), "unexpected end") || syn.Offset >= int64(len(data))):
		return cli.Fail(fmt.Errorf("%s ends in the middle of its JSON: the file is cut short", name),
			"export it again (exopower writes its exports whole, so something else cut it), or restore the saved copy")
	}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return cli.Fail(fmt.Errorf("%s: not one JSON object but %s: compare reads the object of bench --export-json or llm --export-json", name, ute.Value))
	}
	return cli.Fail(fmt.Errorf("%s: not JSON: %w", name, err), "give the file that bench --export-json or llm --export-json wrote")
}

// knownKind refuses JSON of any kind but bench's and llm's, naming what
// it is where that is known.
func knownKind(name, kind string, results bool) error {
	switch kind {
	case "bench", "llm":
		return nil
	case "":
		if results {
			return cli.Fail(fmt.Errorf("%s has results but no type: hyperfine's own export, which has no energy", name),
				"export with exopower bench --export-json instead of hyperfine's")
		}
		return cli.Fail(fmt.Errorf("%s: JSON without a type: not a bench's or an llm's", name),
			"give the file that bench --export-json or llm --export-json wrote")
	case "compare":
		return cli.Fail(fmt.Errorf("%s is what compare wrote, not a bench's or an llm's JSON", name),
			"compare the two exports it was made from")
	}
	return cli.Fail(fmt.Errorf("%s: JSON of type %q, not a bench's or an llm's", name, kind),
		"compare reads what bench --export-json and llm --export-json write, not the summary of run or watch")
}

// benchFile is what compare reads of a bench's JSON (docs/json/bench.md).
type benchFile struct {
	Complete        bool        `json:"complete"`
	IntervalSeconds float64     `json:"interval_seconds"`
	Scope           string      `json:"scope"`
	Source          wire.Source `json:"source"`
	Baseline        *struct {
		PowerWatts         float64  `json:"power_watts"`
		StandardErrorWatts *float64 `json:"standard_error_watts"`
		Before             *spans   `json:"before"`
		Between            *spans   `json:"between"`
		After              *spans   `json:"after"`
	} `json:"baseline"`
	Unit    *string       `json:"unit"`
	Results []benchResult `json:"results"`
}

// priced is what compare reads of a result's cost and CO2e: their
// figures, to price the changes at where it is given none.
type priced struct {
	Cost *struct {
		Currency    string  `json:"currency"`
		PricePerKWh float64 `json:"price_per_kwh"`
	} `json:"cost"`
	CO2e *struct {
		IntensityGPerKWh float64 `json:"intensity_g_per_kwh"`
	} `json:"co2e"`
}

// add gives r the figures p holds where r has none, each with the
// source "new".
func (p priced) add(r *cost.Rates) {
	if c := p.Cost; c != nil && r.Price == nil {
		r.Price = &cost.Price{PerKWh: c.PricePerKWh, Currency: c.Currency, Source: "new"}
	}
	if g := p.CO2e; g != nil && r.Intensity == nil {
		r.Intensity = &cost.Intensity{GramsPerKWh: g.IntensityGPerKWh, Source: "new"}
	}
}

type spans struct {
	Spans int `json:"spans"`
}

type benchResult struct {
	priced
	Command    string            `json:"command"`
	Parameters map[string]string `json:"parameters"`
	Runs       []struct {
		EnergyJoules struct {
			Total *float64 `json:"total"`
		} `json:"energy_joules"`
		NetEnergyJoules            *float64          `json:"net_energy_joules"`
		NetEnergyUncertaintyJoules *float64          `json:"net_energy_uncertainty_joules"`
		Units                      *float64          `json:"units"`
		Nodes                      []json.RawMessage `json:"nodes"`
	} `json:"runs"`
}

func readBench(data []byte) (*Export, error) {
	var f benchFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	if f.Results == nil {
		return nil, errors.New("no results")
	}
	e := &Export{Complete: f.Complete, Source: f.Source, Scope: f.Scope, IntervalSeconds: f.IntervalSeconds, Nodes: 1}
	sharedDOF := math.Inf(1)
	if b := f.Baseline; b != nil {
		e.Idle = &Idle{Watts: b.PowerWatts, SE: nanIfNil(b.StandardErrorWatts)}
		// The idle error is read from the spread of the baseline's
		// pieces: their count less one is its degrees of freedom.
		pieces := 0
		for _, s := range []*spans{b.Before, b.Between, b.After} {
			if s != nil {
				pieces += s.Spans
			}
		}
		if pieces >= 2 {
			sharedDOF = float64(pieces - 1)
		}
	}
	if f.Unit != nil {
		e.Unit = *f.Unit
	}
	for i, r := range f.Results {
		b, nodes, err := benchBenchmark(r, e.Unit, e.Idle != nil, sharedDOF)
		if err != nil {
			return nil, fmt.Errorf("results[%d] (%s): %w", i, r.Command, err)
		}
		e.Nodes = max(e.Nodes, nodes)
		e.Benchmarks = append(e.Benchmarks, b)
		r.add(&e.Rates)
	}
	nameBench(e.Benchmarks, f.Results)
	return e, nil
}

// benchBenchmark is a bench's command: its energy per run, and per unit
// of work where the bench counted units; net of the idle power where
// every run has a net energy. nodes is the most nodes a run was
// measured on.
func benchBenchmark(r benchResult, unit string, baseline bool, sharedDOF float64) (b Benchmark, nodes int, err error) {
	var gross, net, netShared, perUnit, netPerUnit, perUnitShared []float64
	for k, run := range r.Runs {
		if run.EnergyJoules.Total == nil {
			return b, 0, fmt.Errorf("runs[%d] has no energy_joules.total", k)
		}
		nodes = max(nodes, len(run.Nodes))
		e := *run.EnergyJoules.Total
		gross = append(gross, e)
		hasNet := baseline && run.NetEnergyJoules != nil
		if hasNet {
			net = append(net, *run.NetEnergyJoules)
			netShared = append(netShared, nanIfNil(run.NetEnergyUncertaintyJoules))
		}
		if u := run.Units; u != nil && *u > 0 {
			perUnit = append(perUnit, e / *u)
			if hasNet {
				netPerUnit = append(netPerUnit, *run.NetEnergyJoules / *u)
				perUnitShared = append(perUnitShared, nanIfNil(run.NetEnergyUncertaintyJoules) / *u)
			}
		}
	}
	energy := Figure{Slug: "energy", Label: "energy", Unit: "J", Gross: sampleOf(gross, 0, math.Inf(1))}
	if len(net) == len(r.Runs) {
		energy.Net = sampleOf(net, bench.Summarize(netShared).Mean, sharedDOF)
	}
	b.Figures = append(b.Figures, energy)
	if unit != "" {
		f := Figure{Slug: "energy-per-" + slug(unit), Label: "energy per " + unit, Unit: "J/" + unit, Gross: sampleOf(perUnit, 0, math.Inf(1))}
		if len(netPerUnit) == len(perUnit) {
			f.Net = sampleOf(netPerUnit, bench.Summarize(perUnitShared).Mean, sharedDOF)
		}
		b.Figures = append(b.Figures, f)
	}
	return b, max(nodes, 1), nil
}

// nameBench names a bench's commands: by the command, and where two
// share it, by their parameters too; where two share both (a command
// given twice), the second is the command's second, and so on.
func nameBench(bs []Benchmark, rs []benchResult) {
	count := map[string]int{}
	for _, r := range rs {
		count[r.Command]++
	}
	seen := map[string]int{}
	for i, r := range rs {
		name := r.Command
		if count[r.Command] > 1 && len(r.Parameters) > 0 {
			var ps []string
			for _, k := range slices.Sorted(maps.Keys(r.Parameters)) {
				ps = append(ps, k+" = "+r.Parameters[k])
			}
			name += " (" + strings.Join(ps, ", ") + ")"
		}
		seen[name]++
		if n := seen[name]; n > 1 {
			name = fmt.Sprintf("%s [%d]", name, n)
		}
		bs[i].Key, bs[i].Name = name, name
	}
}

// llmFile is what compare reads of an llm's JSON (docs/json/llm.md).
type llmFile struct {
	Complete        bool    `json:"complete"`
	API             string  `json:"api"`
	IntervalSeconds float64 `json:"interval_seconds"`
	PromptSeed      *uint64 `json:"prompt_seed"`
	Nodes           []any   `json:"nodes"`
	Baseline        *struct {
		PowerWatts         float64  `json:"power_watts"`
		StandardErrorWatts *float64 `json:"standard_error_watts"`
	} `json:"baseline"`
	Results []struct {
		Model       string `json:"model"`
		Concurrency int    `json:"concurrency"`
		Run         *struct {
			priced
			Summary *struct {
				Scope  string      `json:"scope"`
				Source wire.Source `json:"source"`
			} `json:"summary"`
		} `json:"run"`
		Figures *struct {
			SoC *llmScope `json:"soc"`
		} `json:"figures"`
	} `json:"results"`
}

type llmScope struct {
	JoulesPerOutputToken               *llmSpread `json:"joules_per_output_token"`
	JoulesPerPromptToken               *llmSpread `json:"joules_per_prompt_token"`
	NetJoulesPerOutputToken            *llmSpread `json:"net_joules_per_output_token"`
	NetJoulesPerOutputTokenUncertainty *float64   `json:"net_joules_per_output_token_uncertainty"`
	NetJoulesPerPromptToken            *llmSpread `json:"net_joules_per_prompt_token"`
	NetJoulesPerPromptTokenUncertainty *float64   `json:"net_joules_per_prompt_token_uncertainty"`
}

type llmSpread struct {
	N      int      `json:"n"`
	Mean   float64  `json:"mean"`
	Stddev *float64 `json:"stddev"`
}

// sample is the spread as a Sample, its shared error the idle power's
// over its mean time per token; nil for none.
func (s *llmSpread) sample(shared *float64) *Sample {
	if s == nil || s.N < 1 {
		return nil
	}
	return &Sample{N: s.N, Mean: s.Mean, SD: nanIfNil(s.Stddev), Shared: zeroIfNil(shared), SharedDOF: math.Inf(1)}
}

func readLLM(data []byte) (*Export, error) {
	var f llmFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	if f.Results == nil {
		return nil, errors.New("no results")
	}
	e := &Export{Complete: f.Complete, API: f.API, IntervalSeconds: f.IntervalSeconds, PromptSeed: f.PromptSeed, Nodes: max(1, len(f.Nodes))}
	if b := f.Baseline; b != nil {
		e.Idle = &Idle{Watts: b.PowerWatts, SE: nanIfNil(b.StandardErrorWatts)}
	}
	for _, r := range f.Results {
		if r.Run != nil && r.Run.Summary != nil && e.Source.HWModel == "" {
			e.Source, e.Scope = r.Run.Summary.Source, r.Run.Summary.Scope
		}
		if r.Run != nil {
			r.Run.add(&e.Rates)
		}
		name := fmt.Sprintf("%s, concurrency %d", r.Model, r.Concurrency)
		b := Benchmark{Key: name, Name: name}
		var s llmScope
		if r.Figures != nil && r.Figures.SoC != nil {
			s = *r.Figures.SoC
		}
		out := Figure{Slug: "energy-per-output-token", Label: "energy per output token", Unit: "J/token", Gross: s.JoulesPerOutputToken.sample(nil)}
		prompt := Figure{Slug: "energy-per-prompt-token", Label: "energy per prompt token", Unit: "J/token", Gross: s.JoulesPerPromptToken.sample(nil)}
		if e.Idle != nil {
			out.Net = s.NetJoulesPerOutputToken.sample(s.NetJoulesPerOutputTokenUncertainty)
			prompt.Net = s.NetJoulesPerPromptToken.sample(s.NetJoulesPerPromptTokenUncertainty)
		}
		b.Figures = []Figure{out, prompt}
		e.Benchmarks = append(e.Benchmarks, b)
	}
	if e.Scope == "" {
		e.Scope = wire.Scope
	}
	return e, nil
}

// sampleOf describes values, each sharing the error shared (0 where
// NaN: unknown) read with dof degrees of freedom; nil for none.
func sampleOf(xs []float64, shared, dof float64) *Sample {
	if len(xs) == 0 {
		return nil
	}
	st := bench.Summarize(xs)
	if math.IsNaN(shared) {
		shared = 0
	}
	return &Sample{N: st.N, Mean: st.Mean, SD: st.Stddev, Shared: shared, SharedDOF: dof}
}

func nanIfNil(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func zeroIfNil(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// slug is s in lower case, each run of other characters than letters and
// digits one hyphen: a unit's name in a figure's slug.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
