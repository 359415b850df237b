package compare

import (
	"fmt"
	"strings"

	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/wire"
)

// RowCost is the change in a figure's cost: the new mean's less the
// old's, both at one price, so that it says what the change in energy
// costs, not how the price changed.
type RowCost struct {
	Currency    string   `json:"currency"`
	PricePerKWh wire.Num `json:"price_per_kwh"`
	// Change is the change's cost, in Currency, per Per.
	Change wire.Num `json:"change"`
	// Per is what Change is per: "run", bench's unit of work, or for
	// llm "million output tokens" or "million prompt tokens".
	Per string `json:"per"`
	// Of is "soc": compare's figures are the SoC's energies (net of the
	// idle power where the row's measure says so).
	Of string `json:"of"`
	// Source is "flag" (--price), "env" ($EXOPOWER_PRICE), or "new":
	// NEW's export's price, where compare is given none.
	Source string `json:"source"`
}

// RowCO2e is the change in a figure's CO2e, as RowCost's.
type RowCO2e struct {
	IntensityGPerKWh wire.Num `json:"intensity_g_per_kwh"`
	// ChangeGrams is the change's CO2e, per Per.
	ChangeGrams wire.Num `json:"change_grams"`
	Per         string   `json:"per"`
	Of          string   `json:"of"`
	// Source is "flag", "env", "grid:CC (...)", or "new" as RowCost's.
	Source string `json:"source"`
}

// Price gives each row that both sides have the change in its cost and
// CO2e: at rates, else at new's (the newer run's price, where compare
// is given none); nothing where neither has one.
func (rep *Report) Price(rates cost.Rates, new *Export) {
	if rates.Price == nil {
		rates.Price = new.Rates.Price
	}
	if rates.Intensity == nil {
		rates.Intensity = new.Rates.Intensity
	}
	for i := range rep.Rows {
		r := &rep.Rows[i]
		r.Cost, r.CO2e = nil, nil
		if r.Old == nil || r.New == nil {
			continue
		}
		per, scale := rep.per(*r)
		j := (float64(r.New.Mean) - float64(r.Old.Mean)) * scale
		if c := rates.Cost(j, cost.OfSoC); c != nil {
			r.Cost = &RowCost{Currency: c.Currency, PricePerKWh: c.PricePerKWh, Change: c.Amount, Per: per, Of: c.Of, Source: c.Source}
		}
		if g := rates.CO2e(j, cost.OfSoC); g != nil {
			r.CO2e = &RowCO2e{IntensityGPerKWh: g.IntensityGPerKWh, ChangeGrams: g.Grams, Per: per, Of: g.Of, Source: g.Source}
		}
	}
}

// per is what a row's change is priced per, and what its values are
// multiplied by to be so: a bench's run or unit of work as they are, an
// llm's token by a million, the unit providers price tokens in.
func (rep *Report) per(r Row) (string, float64) {
	unit := strings.TrimPrefix(r.Unit, "J/")
	switch {
	case r.Unit == "J":
		return "run", 1
	case rep.Kind == "llm" && strings.Contains(r.Measure, "prompt"):
		return "million prompt tokens", 1e6
	case rep.Kind == "llm":
		return "million output tokens", 1e6
	}
	return unit, 1
}

// costLine is a block's line of the change's cost and CO2e, "" without
// either: "+0.0000120 EUR, +0.0160 g CO2e per run".
func costLine(r Row) (value, after string) {
	var parts, basis []string
	per := ""
	if c := r.Cost; c != nil {
		parts = append(parts, signed(cost.AmountText(float64(c.Change), c.Currency), float64(c.Change)))
		basis = append(basis, fmt.Sprintf("%v %s/kWh (%s)", float64(c.PricePerKWh), c.Currency, sourceText(c.Source, "--price", cost.EnvPrice)))
		per = c.Per
	}
	if g := r.CO2e; g != nil {
		parts = append(parts, signed(cost.GramsText(float64(g.ChangeGrams)), float64(g.ChangeGrams)))
		basis = append(basis, fmt.Sprintf("%v g/kWh (%s)", float64(g.IntensityGPerKWh), sourceText(g.Source, "--carbon-intensity", cost.EnvIntensity)))
		per = g.Per
	}
	if len(parts) == 0 {
		return "", ""
	}
	return strings.Join(parts, ", ") + " per " + per, "[the change in the SoC's " + rowEnergy(r) + " at " + strings.Join(basis, " and ") + "]"
}

// rowEnergy names the energy a row compares: net of the idle power or
// gross.
func rowEnergy(r Row) string {
	if strings.HasPrefix(r.Measure, "net-") {
		return "net energy"
	}
	return "energy"
}

// sourceText names where a figure came from, for people: NEW's, or as
// cost.SourceText names it.
func sourceText(source, flag, env string) string {
	if source == "new" {
		return "NEW's, as its run was given it"
	}
	return cost.SourceText(source, flag, env)
}

// signed puts a plus before text of a positive x: a change reads as one.
func signed(text string, x float64) string {
	if x > 0 {
		return "+" + text
	}
	return text
}
