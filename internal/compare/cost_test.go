package compare

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

func sameAs(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

var eur = cost.Rates{Price: &cost.Price{PerKWh: 0.30, Currency: "EUR", Source: "flag"}, Intensity: &cost.Intensity{GramsPerKWh: 400, Source: "env"}}

func TestTheChangeIsPricedPerRunPerUnitAndPerMillionTokens(t *testing.T) {
	for _, c := range []struct {
		name, kind, measure, unit string
		old, new                  float64
		per                       string
		amount, grams             float64
	}{
		// One more kWh a run: 0.30 EUR and 400 g.
		{"a bench's run", "bench", "net-energy", "J", 3.6e6, 7.2e6, "run", 0.30, 400},
		{"a bench's unit of work", "bench", "energy-per-frame", "J/frame", 7.2e6, 3.6e6, "frame", -0.30, -400},
		// 0.36 J a token more is 0.1 kWh a million tokens.
		{"an llm's output token, by the million", "llm", "net-energy-per-output-token", "J/token", 1, 1.36, "million output tokens", 0.03, 40},
		{"an llm's prompt token", "llm", "energy-per-prompt-token", "J/token", 1, 1.36, "million prompt tokens", 0.03, 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := &Report{Kind: c.kind, Rows: []Row{{Measure: c.measure, Unit: c.unit, Old: &Stats{N: 2, Mean: numOf(c.old)}, New: &Stats{N: 2, Mean: numOf(c.new)}}}}
			rep.Price(eur, &Export{})
			r := rep.Rows[0]
			if r.Cost == nil || !sameAs(float64(r.Cost.Change), c.amount) || r.Cost.Per != c.per || r.Cost.Of != cost.OfSoC || r.Cost.Source != "flag" || r.Cost.Currency != "EUR" {
				t.Errorf("cost %+v, want %v EUR per %s", r.Cost, c.amount, c.per)
			}
			if r.CO2e == nil || !sameAs(float64(r.CO2e.ChangeGrams), c.grams) || r.CO2e.Per != c.per || r.CO2e.Source != "env" {
				t.Errorf("CO2e %+v, want %v g per %s", r.CO2e, c.grams, c.per)
			}
		})
	}
}

func numOf(x float64) wire.Num { return wire.Num(x) }

func TestTheChangeIsPricedAtNewsPriceWhereCompareIsGivenNone(t *testing.T) {
	data := []byte(`{"schema_version":1,"type":"bench","complete":true,"results":[{"command":"a","runs":[{"energy_joules":{"total":1}}],` +
		`"cost":{"currency":"GBP","price_per_kwh":0.25,"amount":1,"of":"system","source":"flag"},"co2e":{"grams":1,"intensity_g_per_kwh":44.18,"of":"system","source":"flag"}}]}`)
	e, err := Load("new.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if p, in := e.Rates.Price, e.Rates.Intensity; p == nil || p.PerKWh != 0.25 || p.Currency != "GBP" || p.Source != "new" || in == nil || in.GramsPerKWh != 44.18 || in.Source != "new" {
		t.Fatalf("NEW's rates: %+v %+v", p, in)
	}
	rep := &Report{Kind: "bench", Rows: []Row{{Measure: "energy", Unit: "J", Old: &Stats{Mean: 0}, New: &Stats{Mean: 3.6e6}}, {Measure: "energy", Unit: "J", New: &Stats{Mean: 1}}}}
	rep.Price(cost.Rates{Intensity: &cost.Intensity{GramsPerKWh: 100, Source: "flag"}}, e)
	r := rep.Rows[0]
	if r.Cost == nil || r.Cost.Change != 0.25 || r.Cost.Source != "new" || r.CO2e == nil || r.CO2e.ChangeGrams != 100 || r.CO2e.Source != "flag" {
		t.Errorf("NEW's price, compare's own intensity: %+v %+v", r.Cost, r.CO2e)
	}
	if rep.Rows[1].Cost != nil {
		t.Errorf("a row of one side priced: %+v", rep.Rows[1].Cost)
	}
	var text bytes.Buffer
	st := &output.Styles{Plain: true}
	WriteText(&text, &text, rep, st, st)
	if want := "  Cost of the change:  +0.250 GBP, +100 g CO2e per run    [the change in the SoC's energy at 0.25 GBP/kWh (NEW's, as its run was given it) and 100 g/kWh (--carbon-intensity)]\n"; !strings.Contains(text.String(), want) {
		t.Errorf("no %q in\n%s", want, text.String())
	}
	var md bytes.Buffer
	WriteMarkdown(&md, rep)
	if !strings.Contains(md.String(), " | p | Cost of the change |\n") || !strings.Contains(md.String(), " | +0.250 GBP, +100 g CO2e per run |\n") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

func TestNothingIsPricedWithoutAPrice(t *testing.T) {
	rep := &Report{Kind: "bench", Rows: []Row{{Measure: "energy", Unit: "J", Old: &Stats{Mean: 1}, New: &Stats{Mean: 2}}}}
	rep.Price(cost.Rates{}, &Export{})
	var md bytes.Buffer
	WriteMarkdown(&md, rep)
	if rep.Rows[0].Cost != nil || rep.Rows[0].CO2e != nil || strings.Contains(md.String(), "Cost") {
		t.Errorf("priced without rates: %+v %+v\n%s", rep.Rows[0].Cost, rep.Rows[0].CO2e, md.String())
	}
}
