package bench

import (
	"cmp"

	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/wire"
)

// ResultCost is a command's mean run priced at --price: Amount is the
// mean run's cost, of the energy that cost's rule picks among the
// result's (the wall's, its estimate, the system's, the SoC's).
type ResultCost struct {
	wire.Cost
	// AmountPerUnit is the mean of the runs' cost per unit of work, of
	// the same energy; null without units.
	AmountPerUnit *wire.Num `json:"amount_per_unit"`
}

// ResultCO2e is a command's mean run's CO2e at --carbon-intensity or
// --grid, as ResultCost prices it.
type ResultCO2e struct {
	wire.CO2e
	// GramsPerUnit is the mean of the runs' CO2e per unit of work;
	// null without units.
	GramsPerUnit *wire.Num `json:"grams_per_unit"`
}

// finishCost prices the result's mean run, and its mean per unit of
// work, at its rates; nil, nil without them.
func (r *Result) finishCost() {
	r.Cost, r.CO2e = nil, nil
	if !r.rates.Given() {
		return
	}
	mean := func(s *Spread) *float64 {
		if s == nil {
			return nil
		}
		x := float64(s.Mean)
		return &x
	}
	e := cost.Energies{SoC: mean(r.EnergyJoules), System: mean(r.SystemEnergyJoules)}
	if w := r.WallEstimated; w != nil {
		e.WallEstimated = mean(w.EnergyJoules)
	}
	if w := r.Wall; w != nil {
		e.Wall = mean(w.EnergyJoules)
	}
	j, of, ok := e.Pick()
	if !ok {
		return
	}
	perUnit := r.meanPerUnit(of)
	if c := r.rates.Cost(j, of); c != nil {
		r.Cost = &ResultCost{Cost: *c}
		if perUnit != nil {
			r.Cost.AmountPerUnit = &r.rates.Cost(*perUnit, of).Amount
		}
	}
	if c := r.rates.CO2e(j, of); c != nil {
		r.CO2e = &ResultCO2e{CO2e: *c}
		if perUnit != nil {
			r.CO2e.GramsPerUnit = &r.rates.CO2e(*perUnit, of).Grams
		}
	}
}

// meanPerUnit is the mean over the runs of the energy of of per unit of
// work, as each figure per unit is had; nil without units.
func (r *Result) meanPerUnit(of string) *float64 {
	var s *Spread
	switch of {
	case cost.OfWall:
		s = r.Wall.EnergyPerUnitJoules
	case cost.OfWallEstimated:
		s = r.WallEstimated.EnergyPerUnitJoules
	case cost.OfSoC:
		s = r.EnergyPerUnitJoules
	case cost.OfSystem:
		// The system's energy has no figure per unit of its own: the
		// runs that have units give it, as perUnit gives the SoC's.
		var xs []float64
		for _, run := range r.Runs {
			if run.Units != nil && run.EnergyJoules.System != nil {
				xs = append(xs, float64(*run.EnergyJoules.System)/float64(*run.Units))
			}
		}
		if r.EnergyPerUnitJoules == nil || len(xs) == 0 {
			return nil
		}
		s = newSpread(xs)
	}
	if s == nil {
		return nil
	}
	x := float64(s.Mean)
	return &x
}

// costLines are a command's block's lines of its cost and CO2e: the mean
// run's, and per unit of work; none without rates.
func costLines(r Result) []blockLine {
	var lines []blockLine
	unit := cmp.Or(r.unit, "unit")
	if c := r.Cost; c != nil {
		basis := "[" + cost.CostBasis(&c.Cost) + "]"
		lines = append(lines, blockLine{"Cost (mean):", cost.AmountText(float64(c.Amount), c.Currency), "", "", basis})
		if u := c.AmountPerUnit; u != nil {
			lines = append(lines, blockLine{"Cost per " + unit + " (mean):", cost.AmountText(float64(*u), c.Currency), "", "", ""})
		}
	}
	if c := r.CO2e; c != nil {
		var priced *wire.Cost
		if r.Cost != nil {
			priced = &r.Cost.Cost
		}
		lines = append(lines, blockLine{"CO2e (mean):", cost.GramsText(float64(c.Grams)), "", "", "[" + cost.CO2eBasis(&c.CO2e, priced) + "]"})
		if g := c.GramsPerUnit; g != nil {
			lines = append(lines, blockLine{"CO2e per " + unit + " (mean):", cost.GramsText(float64(*g)), "", "", ""})
		}
	}
	return lines
}

// costTable is which of the cost's columns a table has: the currency of
// the cost's (one price for every command), whether the CO2e's, and
// whether each per unit of work.
type costTable struct {
	currency            string
	co2e, unit, co2Unit bool
}

func costColumns(rep *Report) costTable {
	var t costTable
	for _, r := range rep.Results {
		if c := r.Cost; c != nil {
			t.currency, t.unit = c.Currency, t.unit || c.AmountPerUnit != nil
		}
		if c := r.CO2e; c != nil {
			t.co2e, t.co2Unit = true, t.co2Unit || c.GramsPerUnit != nil
		}
	}
	return t
}

func (t costTable) head(unit *string) []string {
	name := "unit"
	if unit != nil {
		name = *unit
	}
	var h []string
	if t.currency != "" {
		h = append(h, "Cost ["+t.currency+"]")
	}
	if t.unit {
		h = append(h, "Cost per "+name+" ["+t.currency+"]")
	}
	if t.co2e {
		h = append(h, "CO2e [g]")
	}
	if t.co2Unit {
		h = append(h, "CO2e per "+name+" [g]")
	}
	return h
}

// cells are r's mean run's cost and CO2e, to three significant figures.
func (t costTable) cells(r Result) []string {
	c, g := r.Cost, r.CO2e
	if c == nil {
		c = &ResultCost{}
	}
	if g == nil {
		g = &ResultCO2e{}
	}
	var cells []string
	if t.currency != "" {
		cells = append(cells, figures(r.Cost != nil, &c.Amount))
	}
	if t.unit {
		cells = append(cells, figures(true, c.AmountPerUnit))
	}
	if t.co2e {
		cells = append(cells, figures(r.CO2e != nil, &g.Grams))
	}
	if t.co2Unit {
		cells = append(cells, figures(true, g.GramsPerUnit))
	}
	return cells
}

// figures is x to three significant figures, "" where !ok or x is nil.
func figures(ok bool, x *wire.Num) string {
	if !ok || x == nil {
		return ""
	}
	return cost.Significant(float64(*x), 3)
}
