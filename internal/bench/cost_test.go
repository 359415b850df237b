package bench

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

var usd = cost.Rates{Price: &cost.Price{PerKWh: 0.20, Currency: "USD", Source: "flag"}, Intensity: &cost.Intensity{GramsPerKWh: 400, Source: "env"}}

// pricedReport is a bench of one command of two runs: the system's 1 kWh
// and 2 kWh (mean 1.5 kWh) over 1000 and 3000 tokens (3600 and 2400 J a
// token, mean 3000).
func pricedReport(rates cost.Rates) *Report {
	unit := "token"
	runs := []Run{systemRun(1, 1, 1e6, 3.6e6), systemRun(1, 1, 2e6, 7.2e6)}
	for i, u := range []wire.Num{1000, 3000} {
		runs[i].Units = &u
	}
	rep := NewReport(100 * time.Millisecond)
	rep.Unit = &unit
	rep.Results = []Result{{Command: "gen", Runs: runs, rates: rates}}
	rep.Finish(-1)
	return rep
}

// exact is a within rounding of b.
func exact(a wire.Num, b float64) bool {
	return math.Abs(float64(a)-b) <= 1e-12*math.Max(1, math.Abs(b))
}

func TestBenchPricesTheMeanRunAndEachUnit(t *testing.T) {
	rep := pricedReport(usd)
	r := rep.Results[0]
	c, g := r.Cost, r.CO2e
	// 1.5 kWh at 0.20 USD is 0.30 USD, at 400 g 600 g; 3000 J a token is
	// 1/1200 kWh: 1/6000 USD, 1/3 g.
	if c == nil || !exact(c.Amount, 0.30) || c.AmountPerUnit == nil || !exact(*c.AmountPerUnit, 1.0/6000) || c.Of != cost.OfSystem || c.Currency != "USD" {
		t.Fatalf("cost: %+v", c)
	}
	if g == nil || !exact(g.Grams, 600) || g.GramsPerUnit == nil || !exact(*g.GramsPerUnit, 1.0/3) || g.Of != cost.OfSystem || g.Source != "env" {
		t.Fatalf("CO2e: %+v", g)
	}
	var text bytes.Buffer
	if err := WriteText(&text, rep, &output.Styles{Plain: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  Cost (mean):                 0.300 USD               [for the Mac's system energy (not the wall's: the power supply's loss is not in it) at 0.2 USD/kWh (--price)]\n",
		"  Cost per token (mean):       0.000167 USD\n",
		"  CO2e (mean):                 600 g CO2e               [for the same energy at 400 g/kWh ($EXOPOWER_CARBON_INTENSITY)]\n",
		"  CO2e per token (mean):       0.333 g CO2e\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("no %q in the text:\n%s", want, text.String())
		}
	}
	rows := csvRows(t, rep)
	n := len(rows[0]) - costColumnCount
	if got, want := rows[1][n:], []string{"USD", "0.2", "system", "0.3", "0.000166666666667", "400", "system", "600", "0.333333333333"}; !slices.Equal(got, want) {
		t.Errorf("csv: %q, want %q", got, want)
	}
	var md bytes.Buffer
	WriteMarkdown(&md, rep)
	if !strings.Contains(md.String(), " | Cost [USD] | Cost per token [USD] | CO2e [g] | CO2e per token [g] |\n") || !strings.Contains(md.String(), " | 0.300 | 0.000167 | 600 | 0.333 |\n") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

func TestBenchPricesTheWallWhereAPlugMeasuredIt(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	runs := []Run{systemRun(2, 1, 1e6, 3.6e6), systemRun(2, 1, 1e6, 3.6e6)}
	for i := range runs {
		runs[i].Wall = &RunWall{EnergyJoules: 7.2e6, Method: "counter", Coverage: 1, Polls: 4}
	}
	rep.Results = []Result{{Command: "w", Runs: runs, rates: usd}}
	rep.Finish(-1)
	if c := rep.Results[0].Cost; c == nil || !exact(c.Amount, 0.40) || c.Of != cost.OfWall || c.AmountPerUnit != nil {
		t.Errorf("the wall's 2 kWh at 0.20 USD: %+v", c)
	}
}

func TestBenchPricesNothingWithoutAFigure(t *testing.T) {
	rep := pricedReport(cost.Rates{})
	if r := rep.Results[0]; r.Cost != nil || r.CO2e != nil {
		t.Fatalf("priced without rates: %+v %+v", r.Cost, r.CO2e)
	}
	var text, md bytes.Buffer
	WriteText(&text, rep, &output.Styles{Plain: true})
	WriteMarkdown(&md, rep)
	if strings.Contains(text.String(), "Cost") || strings.Contains(text.String(), "CO2e") || strings.Contains(md.String(), "Cost") {
		t.Errorf("text:\n%s\nmarkdown:\n%s", text.String(), md.String())
	}
	rows := csvRows(t, rep)
	if got := rows[1][len(rows[0])-costColumnCount:]; strings.Join(got, "") != "" {
		t.Errorf("csv's cost columns: %q", got)
	}
}
