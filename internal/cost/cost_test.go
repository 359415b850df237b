package cost

import (
	"math"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/wire"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestPricesAreExactPerKilowattHour(t *testing.T) {
	r := Rates{Price: &Price{PerKWh: 0.30, Currency: "EUR", Source: "flag"}, Intensity: &Intensity{GramsPerKWh: 400, Source: "env"}}
	for _, c := range []struct {
		name          string
		joules        float64
		amount, grams float64
	}{
		{"a kWh costs the price and weighs the intensity", 3.6e6, 0.30, 400},
		{"a joule is a 3.6 millionth of it", 1, 0.30 / 3.6e6, 400 / 3.6e6},
		{"nothing costs nothing", 0, 0, 0},
		{"ten kWh ten times", 3.6e7, 3, 4000},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := r.Cost(c.joules, OfWall)
			if math.Abs(float64(got.Amount)-c.amount) > 1e-12*math.Max(1, c.amount) || got.Currency != "EUR" || got.PricePerKWh != 0.30 || got.Of != OfWall || got.Source != "flag" {
				t.Errorf("cost of %v J = %+v, want %v EUR of the wall", c.joules, *got, c.amount)
			}
			co2 := r.CO2e(c.joules, OfSystem)
			if math.Abs(float64(co2.Grams)-c.grams) > 1e-12*math.Max(1, c.grams) || co2.IntensityGPerKWh != 400 || co2.Of != OfSystem || co2.Source != "env" {
				t.Errorf("CO2e of %v J = %+v, want %v g of the system", c.joules, *co2, c.grams)
			}
		})
	}
}

func TestNothingIsPricedWithoutAFigure(t *testing.T) {
	var r Rates
	if r.Given() || r.Cost(3.6e6, OfSoC) != nil || r.CO2e(3.6e6, OfSoC) != nil {
		t.Fatal("rates without figures priced something")
	}
	sum := &wire.Summary{EnergyJoules: wire.Components{Total: 100}}
	r.Summary(sum)
	if sum.Cost != nil || sum.CO2e != nil {
		t.Errorf("a summary without rates got %+v, %+v", sum.Cost, sum.CO2e)
	}
	got, err := Resolve(Flags{}, env(nil))
	if err != nil || got.Given() {
		t.Errorf("Resolve with nothing given = %+v, %v; want nothing", got, err)
	}
}

func TestThePriceAppliesToTheWallFirst(t *testing.T) {
	w, e, s, soc := 40.0, 30.0, 20.0, 10.0
	for _, c := range []struct {
		name string
		e    Energies
		j    float64
		of   string
	}{
		{"a plug's wall first", Energies{&w, &e, &s, &soc}, 40, OfWall},
		{"else the estimate at the wall", Energies{nil, &e, &s, &soc}, 30, OfWallEstimated},
		{"else the system", Energies{nil, nil, &s, &soc}, 20, OfSystem},
		{"else the SoC", Energies{SoC: &soc}, 10, OfSoC},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, of, ok := c.e.Pick()
			if !ok || j != c.j || of != c.of {
				t.Errorf("Pick = %v %q %v, want %v %q", j, of, ok, c.j, c.of)
			}
		})
	}
	if _, _, ok := (Energies{}).Pick(); ok {
		t.Error("Pick of no energy found one")
	}
}

func TestASummaryIsPricedByTheRule(t *testing.T) {
	sys := wire.Num(7.2e6)
	sum := &wire.Summary{EnergyJoules: wire.Components{Total: 3.6e6, System: &sys}}
	r := Rates{Price: &Price{PerKWh: 0.25, Currency: "GBP", Source: "env"}}
	r.Summary(sum)
	if sum.Cost == nil || sum.Cost.Amount != 0.5 || sum.Cost.Of != OfSystem || sum.CO2e != nil {
		t.Fatalf("system's 2 kWh at 0.25 GBP: %+v, %+v", sum.Cost, sum.CO2e)
	}
	sum.Wall = &wire.Wall{EnergyJoules: 1.8e6}
	r.Summary(sum)
	if sum.Cost.Amount != 0.125 || sum.Cost.Of != OfWall {
		t.Errorf("the wall's 0.5 kWh at 0.25 GBP: %+v", sum.Cost)
	}
}

func TestPricesAreReadInOneForm(t *testing.T) {
	for _, c := range []struct {
		in       string
		per      float64
		currency string
	}{
		{"0.30EUR", 0.30, "EUR"},
		{"0.30 EUR", 0.30, "EUR"},
		{" 0.3 eur ", 0.3, "EUR"},
		{"0.30EUR/kWh", 0.30, "EUR"},
		{"0.30 EUR/kwh", 0.30, "EUR"},
		{"27JPY", 27, "JPY"},
		{"0USD", 0, "USD"},
	} {
		p, err := ParsePrice(c.in)
		if err != nil || p.PerKWh != c.per || p.Currency != c.currency {
			t.Errorf("ParsePrice(%q) = %+v, %v; want %v %s", c.in, p, err, c.per, c.currency)
		}
	}
}

func TestBadPricesSayWhatIsWrong(t *testing.T) {
	for _, c := range []struct{ in, says string }{
		{"", "empty"},
		{"0.30", "no currency"},
		{"EUR 0.30", "the amount comes first"},
		{"$0.30", "not its sign"},
		{"0.30€", "not its sign"},
		{"0.30EURO", `"EURO" is not a currency's ISO 4217 code`},
		{"0.30 E", `"E" is not`},
		{"0,30EUR", "after a point"},
		{"-0.30EUR", "negative"},
		{"NaNEUR", "no amount"},
		{"EUR", "no amount"},
		{"1e400EUR", "not a number"},
		{"0x1p-2EUR", "not a number"},
		{"300000000EUR", "not of a MWh"},
		{"0.30 EUR/MWh", "per kWh only"},
	} {
		_, err := ParsePrice(c.in)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("ParsePrice(%q) = %v, want an error saying %q", c.in, err, c.says)
		}
	}
}

func TestIntensitiesAreBounded(t *testing.T) {
	for _, c := range []struct {
		in   string
		g    float64
		says string
	}{
		{"400", 400, ""},
		{"400 g/kWh", 400, ""},
		{"56.04g/kwh", 56.04, ""},
		{"0", 0, ""},
		{"2000", 2000, ""},
		{"2001", 0, "not per MWh"},
		{"-1", 0, "negative"},
		{"four hundred", 0, "not a number"},
		{"", 0, "empty"},
		{"0.4 kg/kWh", 0, "such as 400 for 0.4 kg/kWh"},
		{"400000 g/MWh", 0, "grams of CO2e per kWh only"},
	} {
		g, err := ParseIntensity(c.in)
		switch {
		case c.says == "" && (err != nil || g != c.g):
			t.Errorf("ParseIntensity(%q) = %v, %v; want %v", c.in, g, err, c.g)
		case c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says)):
			t.Errorf("ParseIntensity(%q) = %v, want an error saying %q", c.in, err, c.says)
		}
	}
}

func TestFlagsWinOverTheEnvironment(t *testing.T) {
	vars := env(map[string]string{EnvPrice: "0.40USD", EnvIntensity: "300"})
	r, err := Resolve(Flags{}, vars)
	if err != nil || r.Price.PerKWh != 0.40 || r.Price.Currency != "USD" || r.Price.Source != "env" || r.Intensity.GramsPerKWh != 300 || r.Intensity.Source != "env" {
		t.Fatalf("the environment alone: %+v %+v, %v", r.Price, r.Intensity, err)
	}
	r, err = Resolve(Flags{Price: "0.30EUR", Intensity: "100"}, vars)
	if err != nil || r.Price.PerKWh != 0.30 || r.Price.Source != "flag" || r.Intensity.GramsPerKWh != 100 || r.Intensity.Source != "flag" {
		t.Fatalf("flags and the environment: %+v %+v, %v", r.Price, r.Intensity, err)
	}
	// --grid is a flag too: it wins over the variable of the intensity.
	r, err = Resolve(Flags{Grid: "FR"}, vars)
	if err != nil || r.Price.Source != "env" || !strings.HasPrefix(r.Intensity.Source, "grid:FR ") {
		t.Fatalf("--grid and the environment: %+v %+v, %v", r.Price, r.Intensity, err)
	}
	// A bad variable is refused even where a flag stands for the other
	// figure: it would be used the next time.
	if _, err := Resolve(Flags{Intensity: "100"}, env(map[string]string{EnvPrice: "cheap"})); err == nil || !strings.Contains(err.Error(), "$EXOPOWER_PRICE") {
		t.Errorf("a bad $EXOPOWER_PRICE: %v", err)
	}
	// A bad variable under a flag of its own figure is not read.
	if _, err := Resolve(Flags{Price: "0.1EUR"}, env(map[string]string{EnvPrice: "cheap"})); err != nil {
		t.Errorf("a flag over a bad $EXOPOWER_PRICE: %v", err)
	}
}

func TestOneCarbonIntensityAtATime(t *testing.T) {
	for _, c := range []struct {
		name string
		f    Flags
		vars map[string]string
		says string
	}{
		{"both flags", Flags{Intensity: "100", Grid: "FR"}, nil, "--carbon-intensity and --grid both"},
		{"both variables", Flags{}, map[string]string{EnvIntensity: "100", EnvGrid: "FR"}, "$EXOPOWER_CARBON_INTENSITY and $EXOPOWER_GRID both"},
		{"a country not in the table", Flags{Grid: "ZZ"}, nil, `--grid "ZZ": no such country`},
		{"a bad price, named by its flag", Flags{Price: "0.30"}, nil, `--price "0.30": no currency`},
		{"a bad intensity from the environment", Flags{}, map[string]string{EnvIntensity: "lots"}, `$EXOPOWER_CARBON_INTENSITY "lots"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Resolve(c.f, env(c.vars))
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("Resolve = %v, want an error saying %q", err, c.says)
			}
			if len(cli.HintsOf(err)) == 0 {
				t.Errorf("%v comes without a hint of what to give", err)
			}
		})
	}
}

func TestAmountsAreWrittenToTheirFigures(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{AmountText(0.30, "EUR"), "0.300 EUR"},
		{AmountText(0.0000123456, "EUR"), "0.0000123 EUR"},
		{AmountText(0.099996, "USD"), "0.100 USD"},
		{AmountText(12.345, "USD"), "12.35 USD"},
		{AmountText(0, "USD"), "0 USD"},
		{GramsText(400), "400 g CO2e"},
		{GramsText(0.041234), "0.0412 g CO2e"},
		{GramsText(12345), "12.3 kg CO2e"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	c := Rates{Price: &Price{PerKWh: 0.3, Currency: "EUR", Source: "flag"}}.Cost(3.6e6, OfSystem)
	if got, want := CostText(c), "0.300 EUR for the Mac's system energy (not the wall's: the power supply's loss is not in it) at 0.3 EUR/kWh (--price)"; got != want {
		t.Errorf("CostText = %q, want %q", got, want)
	}
	g := Rates{Intensity: &Intensity{GramsPerKWh: 400, Source: "env"}}.CO2e(3.6e6, OfWall)
	if got, want := CO2eText(g, nil), "400 g CO2e for the wall's energy at 400 g/kWh ($EXOPOWER_CARBON_INTENSITY)"; got != want {
		t.Errorf("CO2eText = %q, want %q", got, want)
	}
}

func TestCO2eAfterACostOfTheSameEnergySaysSo(t *testing.T) {
	r := Rates{Price: &Price{PerKWh: 0.3, Currency: "EUR", Source: "flag"}, Intensity: &Intensity{GramsPerKWh: 400, Source: "flag"}}
	if got, want := CO2eText(r.CO2e(3.6e6, OfSoC), r.Cost(3.6e6, OfSoC)), "400 g CO2e for the same energy at 400 g/kWh (--carbon-intensity)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := CO2eText(r.CO2e(3.6e6, OfSoC), r.Cost(3.6e6, OfWall)); !strings.Contains(got, "for the SoC's energy") {
		t.Errorf("after a cost of another energy: %q", got)
	}
}
