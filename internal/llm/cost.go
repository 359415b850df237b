package llm

import (
	"fmt"

	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/wire"
)

// tokensPriced is the tokens a figure per token is given for: a
// million, the unit that providers price output tokens in.
const tokensPriced = 1e6

// RunCost is a setting's whole run priced at --price: Amount is the
// run's cost, of the energy that cost's rule picks among the run's (the
// wall's, its estimate, the system's, the SoC's), gross, as the meter at
// the wall counts it.
type RunCost struct {
	wire.Cost
	// AmountPerMillionOutputTokens is Amount over the run's completion
	// tokens, times a million; null without a token.
	AmountPerMillionOutputTokens *wire.Num `json:"amount_per_million_output_tokens"`
}

// RunCO2e is a setting's whole run's CO2e at --carbon-intensity or
// --grid, as RunCost prices it.
type RunCO2e struct {
	wire.CO2e
	// GramsPerMillionOutputTokens is Grams over the run's completion
	// tokens, times a million; null without a token.
	GramsPerMillionOutputTokens *wire.Num `json:"grams_per_million_output_tokens"`
}

// price prices the run, and its summary as run's is priced, at the
// result's rates; nil, nil without them.
func (res *Result) price() {
	run := res.Run
	run.Cost, run.CO2e = nil, nil
	res.rates.Summary(run.Summary)
	c, g := run.Summary.Cost, run.Summary.CO2e
	perMillion := func(x wire.Num) *wire.Num {
		if run.CompletionTokens > 0 {
			return num(float64(x) / float64(run.CompletionTokens) * tokensPriced)
		}
		return nil
	}
	if c != nil {
		run.Cost = &RunCost{Cost: *c, AmountPerMillionOutputTokens: perMillion(c.Amount)}
	}
	if g != nil {
		run.CO2e = &RunCO2e{CO2e: *g, GramsPerMillionOutputTokens: perMillion(g.Grams)}
	}
}

// costRows are a setting's rows of its run's cost and CO2e per million
// output tokens; none without rates.
func costRows(r Result) []row {
	run := r.Run
	if run == nil {
		return nil
	}
	var rows []row
	if c := run.Cost; c != nil && c.AmountPerMillionOutputTokens != nil {
		rows = append(rows, row{"Cost:", fmt.Sprintf("%s per million output tokens", cost.AmountText(float64(*c.AmountPerMillionOutputTokens), c.Currency)),
			fmt.Sprintf("(whole run %s, %s)", cost.AmountText(float64(c.Amount), c.Currency), cost.CostBasis(&c.Cost))})
	}
	if g := run.CO2e; g != nil && g.GramsPerMillionOutputTokens != nil {
		var priced *wire.Cost
		if run.Cost != nil {
			priced = &run.Cost.Cost
		}
		rows = append(rows, row{"CO2e:", fmt.Sprintf("%s per million output tokens", cost.GramsText(float64(*g.GramsPerMillionOutputTokens))),
			fmt.Sprintf("(whole run %s, %s)", cost.GramsText(float64(g.Grams)), cost.CO2eBasis(&g.CO2e, priced))})
	}
	return rows
}

// costCells are a setting's CSV columns of its run's cost and CO2e,
// empty where not priced.
func costCells(r Result) []string {
	f := make([]string, len(costColumns))
	if r.Run == nil {
		return f
	}
	if c := r.Run.Cost; c != nil {
		f[0], f[1], f[2], f[3], f[4] = c.Currency, cell(&c.PricePerKWh), c.Of, cell(&c.Amount), cell(c.AmountPerMillionOutputTokens)
	}
	if g := r.Run.CO2e; g != nil {
		f[5], f[6], f[7], f[8] = cell(&g.IntensityGPerKWh), g.Of, cell(&g.Grams), cell(g.GramsPerMillionOutputTokens)
	}
	return f
}

// costColumns are the CSV's columns of the cost and CO2e: the last.
var costColumns = []string{"cost_currency", "cost_price_per_kwh", "cost_of", "cost_amount", "cost_per_million_output_tokens",
	"co2e_intensity_g_per_kwh", "co2e_of", "co2e_grams", "co2e_grams_per_million_output_tokens"}

// costTable is which of the cost's columns a table has: the currency of
// the cost's (one price for every setting), and whether the CO2e's.
type costTable struct {
	currency string
	co2e     bool
}

func pricedColumns(rep *Report) costTable {
	var t costTable
	for _, r := range rep.Results {
		if r.Run != nil && r.Run.Cost != nil {
			t.currency = r.Run.Cost.Currency
		}
		t.co2e = t.co2e || r.Run != nil && r.Run.CO2e != nil
	}
	return t
}

// n is how many columns the table has.
func (t costTable) n() int {
	n := 0
	if t.currency != "" {
		n++
	}
	if t.co2e {
		n++
	}
	return n
}

func (t costTable) head() string {
	h := ""
	if t.currency != "" {
		h += " Cost per million output tokens [" + t.currency + "] |"
	}
	if t.co2e {
		h += " CO2e per million output tokens [g] |"
	}
	return h
}

// cells are r's run's cost and CO2e per million output tokens, to three
// significant figures.
func (t costTable) cells(r Result) string {
	var c *wire.Num
	var g *wire.Num
	if run := r.Run; run != nil {
		if run.Cost != nil {
			c = run.Cost.AmountPerMillionOutputTokens
		}
		if run.CO2e != nil {
			g = run.CO2e.GramsPerMillionOutputTokens
		}
	}
	s := ""
	if t.currency != "" {
		s += " " + significant(c) + " |"
	}
	if t.co2e {
		s += " " + significant(g) + " |"
	}
	return s
}

func significant(x *wire.Num) string {
	if x == nil {
		return ""
	}
	return cost.Significant(float64(*x), 3)
}
