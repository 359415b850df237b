package llm

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// pricedResult is a setting whose run drew 2 kWh of the system's (1 kWh
// of the SoC's) over 500 and 1500 output tokens.
func pricedResult(rates cost.Rates) *Result {
	sum := &wire.Summary{DurationSeconds: 100, Coverage: 1, EnergyJoules: wire.Components{Total: 3.6e6, System: ptr(7.2e6)}}
	res := &Result{Model: "tiny", Concurrency: 1, Run: &RunTotals{Summary: sum}, Requests: []Request{{CompletionTokens: 500}, {CompletionTokens: 1500}}, rates: rates}
	res.runTotals(nil)
	res.Figures = &Figures{Requests: 2, SoC: &Scope{}}
	return res
}

func TestLLMPricesTheRunPerMillionOutputTokens(t *testing.T) {
	rates := cost.Rates{Price: &cost.Price{PerKWh: 0.25, Currency: "EUR", Source: "flag"}, Intensity: &cost.Intensity{GramsPerKWh: 100, Source: "flag"}}
	res := pricedResult(rates)
	c, g := res.Run.Cost, res.Run.CO2e
	// 2 kWh at 0.25 EUR is 0.50 EUR, at 100 g 200 g; over 2000 tokens,
	// 250 EUR and 100 kg a million.
	if c == nil || !closeTo(float64(c.Amount), 0.5) || !closeTo(float64(*c.AmountPerMillionOutputTokens), 250) || c.Of != cost.OfSystem {
		t.Fatalf("cost %+v", c)
	}
	if g == nil || !closeTo(float64(g.Grams), 200) || !closeTo(float64(*g.GramsPerMillionOutputTokens), 1e5) || g.Of != cost.OfSystem {
		t.Fatalf("CO2e %+v", g)
	}
	if s := res.Run.Summary; s.Cost == nil || s.Cost.Amount != c.Amount || s.CO2e == nil || s.CO2e.Grams != g.Grams {
		t.Errorf("the run's summary is priced as run's: %+v %+v", s.Cost, s.CO2e)
	}
	rep := &Report{Results: []Result{*res}}
	var text, md, csv bytes.Buffer
	WriteText(&text, rep, &output.Styles{Plain: true})
	for _, want := range []string{
		"\n  Cost:      250.00 EUR per million output tokens    (whole run 0.500 EUR, for the Mac's system energy (not the wall's: the power supply's loss is not in it) at 0.25 EUR/kWh (--price))\n",
		"\n  CO2e:      100 kg CO2e per million output tokens    (whole run 200 g CO2e, for the same energy at 100 g/kWh (--carbon-intensity))\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("no %q in the text:\n%s", want, text.String())
		}
	}
	WriteCSV(&csv, rep)
	rows := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if got := strings.Split(rows[1], ","); !slices.Equal(got[len(got)-len(costColumns):], []string{"EUR", "0.25", "system", "0.5", "250", "100", "system", "200", "100000"}) {
		t.Errorf("csv: %s", rows[1])
	}
	WriteMarkdown(&md, rep)
	if !strings.Contains(md.String(), " | Cost per million output tokens [EUR] | CO2e per million output tokens [g] |\n") || !strings.Contains(md.String(), " | 250 | 100000 |\n") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

func TestLLMPricesTheWallsEstimateFirst(t *testing.T) {
	res := pricedResult(cost.Rates{Price: &cost.Price{PerKWh: 0.25, Currency: "EUR", Source: "env"}})
	res.Run.Summary.WallEstimated = &wire.WallEstimated{EnergyJoules: 9e6}
	res.runTotals(nil)
	if c := res.Run.Cost; c == nil || !closeTo(float64(c.Amount), 0.625) || c.Of != cost.OfWallEstimated || res.Run.CO2e != nil {
		t.Errorf("the estimate's 2.5 kWh at 0.25 EUR: %+v %+v", c, res.Run.CO2e)
	}
}

func TestLLMPricesNothingWithoutAFigure(t *testing.T) {
	res := pricedResult(cost.Rates{})
	if res.Run.Cost != nil || res.Run.CO2e != nil || res.Run.Summary.Cost != nil {
		t.Fatalf("priced without rates: %+v %+v", res.Run.Cost, res.Run.CO2e)
	}
	var text, md bytes.Buffer
	rep := &Report{Results: []Result{*res}}
	WriteText(&text, rep, &output.Styles{Plain: true})
	WriteMarkdown(&md, rep)
	if strings.Contains(text.String(), "Cost") || strings.Contains(text.String(), "CO2e") || strings.Contains(md.String(), "Cost") {
		t.Errorf("text:\n%s\nmarkdown:\n%s", text.String(), md.String())
	}
}
