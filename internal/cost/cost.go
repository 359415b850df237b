// Package cost prices energy: what it costs at the user's price of
// electricity, and the CO2e it stands for at a carbon intensity, both
// per kilowatt-hour. exopower assumes neither: without a figure from the
// user (a flag, its variable, or --grid's table of countries' yearly
// averages) nothing is priced and nothing is printed.
//
// One rule, here and nowhere else, says which energy a figure prices
// (Energies.Pick): a price per kWh is what the meter at the wall counts,
// so the wall's energy where a plug measured it, else the wall's as this
// Mac's calibration estimates it, else the Mac's system energy (its
// SMC's, short of the wall by the power supply's loss), else the SoC's
// (CPU, GPU and ANE alone); each figure says which it priced.
package cost

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/wire"
)

// JoulesPerKWh is the joules in a kilowatt-hour.
const JoulesPerKWh = 3.6e6

// The variables that stand for the flags where a flag is not given.
const (
	EnvPrice     = "EXOPOWER_PRICE"
	EnvIntensity = "EXOPOWER_CARBON_INTENSITY"
	EnvGrid      = "EXOPOWER_GRID"
)

// MaxIntensity bounds a carbon intensity, g CO2e per kWh: electricity
// from lignite, the dirtiest, is about 1,100; the dirtiest country's
// yearly average in the grid table is 1,306.
const MaxIntensity = 2000

// maxPrice bounds a price per kWh: even in currencies of small units a
// kilowatt-hour costs thousands, not a million.
const maxPrice = 1e6

// Price is a price of electricity.
type Price struct {
	// PerKWh is a kilowatt-hour's price in Currency, an ISO 4217 code.
	PerKWh   float64
	Currency string
	// Source is "flag" or "env".
	Source string
}

// Intensity is a carbon intensity of electricity.
type Intensity struct {
	// GramsPerKWh is g CO2e per kWh.
	GramsPerKWh float64
	// Source is "flag", "env", or Grid's "grid:CC (...)".
	Source string
}

// Rates are the figures given; nil where none was.
type Rates struct {
	Price     *Price
	Intensity *Intensity
}

// Given says whether anything is to be priced.
func (r Rates) Given() bool { return r.Price != nil || r.Intensity != nil }

// Flags are the flags as given, "" where not.
type Flags struct{ Price, Intensity, Grid string }

// Resolve reads the flags and, for a figure whose flags are not given,
// its variables: a flag wins over every variable, so that a command
// line says what it prices whatever the environment. --carbon-intensity
// and --grid give the same figure: both at once are refused, as are
// both variables.
func Resolve(f Flags, getenv func(string) string) (Rates, error) {
	var r Rates
	price, source, name := f.Price, "flag", "--price"
	if price == "" {
		price, source, name = getenv(EnvPrice), "env", "$"+EnvPrice
	}
	if price != "" {
		p, err := ParsePrice(price)
		if err != nil {
			return Rates{}, cli.Fail(fmt.Errorf("%s %s: %w", name, strconv.Quote(price), err), "give the price of a kWh and its currency's ISO 4217 code, such as --price 0.30EUR or --price \"0.30 EUR\"")
		}
		p.Source = source
		r.Price = &p
	}
	in, err := intensity(f, getenv)
	r.Intensity = in
	return r, err
}

// intensity is the carbon intensity of the flags, else of the
// variables; nil where neither gives one.
func intensity(f Flags, getenv func(string) string) (*Intensity, error) {
	value, grid, source, names := f.Intensity, f.Grid, "flag", [2]string{"--carbon-intensity", "--grid"}
	if value == "" && grid == "" {
		value, grid, source, names = getenv(EnvIntensity), getenv(EnvGrid), "env", [2]string{"$" + EnvIntensity, "$" + EnvGrid}
	}
	switch {
	case value != "" && grid != "":
		return nil, cli.Fail(fmt.Errorf("%s and %s both give the carbon intensity: give one", names[0], names[1]),
			"--carbon-intensity G for your own figure (g CO2e per kWh), --grid CC for a country's yearly average")
	case grid != "":
		in, err := Grid(grid)
		if err != nil {
			return nil, cli.Fail(fmt.Errorf("%s %s: %w", names[1], strconv.Quote(grid), err), "name a country by its ISO 3166 code, such as --grid FR or --grid FRA")
		}
		return &in, nil
	case value != "":
		g, err := ParseIntensity(value)
		if err != nil {
			return nil, cli.Fail(fmt.Errorf("%s %s: %w", names[0], strconv.Quote(value), err), "give grams of CO2e per kWh, such as --carbon-intensity 400")
		}
		return &Intensity{GramsPerKWh: g, Source: source}, nil
	}
	return nil, nil
}

// ParsePrice reads a price per kWh: a number, then its currency's ISO
// 4217 code of three letters, with or without a space between, such as
// "0.30EUR" or "0.30 EUR"; "/kWh" may follow. The code is written in
// capitals; it is not checked against ISO 4217's list.
func ParsePrice(s string) (Price, error) {
	t := strings.TrimSpace(s)
	if low := strings.ToLower(t); strings.HasSuffix(low, "/kwh") {
		t = strings.TrimSpace(t[:len(t)-len("/kwh")])
	} else if strings.Contains(t, "/") {
		return Price{}, errors.New("a price is taken per kWh only: give one kWh's, such as 0.30EUR (a price per MWh divided by 1,000)")
	}
	cut := strings.LastIndexFunc(t, func(r rune) bool { return !isLetter(r) }) + 1
	number, code := strings.TrimSpace(t[:cut]), t[cut:]
	switch {
	case t == "":
		return Price{}, errors.New("empty")
	case strings.ContainsAny(t, "$€£¥₹"):
		return Price{}, errors.New("a currency is given by its ISO 4217 code, not its sign: 0.30USD, 0.25EUR, 0.28GBP")
	case cut == 0:
		return Price{}, errors.New("no amount: give the price of a kWh, then its currency, such as 0.30EUR")
	case code == "" && isLetter(rune(t[0])):
		return Price{}, errors.New("the amount comes first, then the currency: 0.30EUR")
	case code == "":
		return Price{}, errors.New("no currency: write its ISO 4217 code after the amount, such as 0.30EUR")
	case len(code) != 3:
		return Price{}, fmt.Errorf("%q is not a currency's ISO 4217 code, which has three letters, such as EUR or USD", code)
	}
	x, err := number64(number, "0.30EUR")
	if err != nil {
		return Price{}, err
	}
	if x > maxPrice {
		return Price{}, fmt.Errorf("%s %s a kWh is beyond any price of electricity: give the price of one kWh, not of a MWh", number, strings.ToUpper(code))
	}
	return Price{PerKWh: x, Currency: strings.ToUpper(code)}, nil
}

// ParseIntensity reads a carbon intensity in g CO2e per kWh: a number
// from 0 to MaxIntensity, "g/kWh" after it or not, such as "400" or
// "400 g/kWh".
func ParseIntensity(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if low := strings.ToLower(t); strings.HasSuffix(low, "kg/kwh") || strings.Contains(low, "/mwh") {
		return 0, errors.New("a carbon intensity is taken in grams of CO2e per kWh only: kg per kWh and g per MWh are the same number times 1,000 and over 1,000, such as 400 for 0.4 kg/kWh")
	} else if strings.HasSuffix(low, "g/kwh") {
		t = strings.TrimSpace(t[:len(t)-len("g/kwh")])
	}
	if t == "" {
		return 0, errors.New("empty")
	}
	x, err := number64(t, "400")
	if err != nil {
		return 0, err
	}
	if x > MaxIntensity {
		return 0, fmt.Errorf("%s g CO2e per kWh is beyond any grid's (the dirtiest burn coal at about 1,000; %d is the most taken): give grams per kWh, not per MWh", t, MaxIntensity)
	}
	return x, nil
}

// number64 reads a number that cannot be negative; example shows the
// form.
func number64(s, example string) (float64, error) {
	x, err := strconv.ParseFloat(s, 64)
	if !decimal.MatchString(strings.TrimPrefix(s, "-")) {
		// Not 0x1p-2, 1e3 or Inf, which ParseFloat takes.
		err = errors.New("not a decimal")
	}
	switch {
	case err != nil && strings.Contains(s, ","):
		return 0, fmt.Errorf("%q is not a number: write the decimals after a point, such as %s", s, example)
	case err != nil || math.IsNaN(x) || math.IsInf(x, 0):
		return 0, fmt.Errorf("%q is not a number, such as %s", s, example)
	case x < 0:
		return 0, fmt.Errorf("%s is negative", s)
	}
	return x, nil
}

// decimal is a number as people write a price: digits, and decimals
// after a point.
var decimal = regexp.MustCompile(`^([0-9]+\.?[0-9]*|\.[0-9]+)$`)

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// What an energy is of, in the order that Pick prefers them.
const (
	OfWall          = "wall"
	OfWallEstimated = "wall_estimated"
	OfSystem        = "system"
	OfSoC           = "soc"
)

// Energies are the figures of one energy that a reading has, in joules
// (or joules per unit of work, per token), nil where it has none.
type Energies struct{ Wall, WallEstimated, System, SoC *float64 }

// Pick is the energy that a price applies to, and what it is of: the
// wall's where a plug measured it, since a price per kWh is what the
// meter at the wall counts; else the wall's as this Mac's calibration
// estimates it; else the Mac's system energy, short of the wall by the
// power supply's loss; else the SoC's. ok is false where there is none.
func (e Energies) Pick() (joules float64, of string, ok bool) {
	for _, f := range []struct {
		j  *float64
		of string
	}{{e.Wall, OfWall}, {e.WallEstimated, OfWallEstimated}, {e.System, OfSystem}, {e.SoC, OfSoC}} {
		if f.j != nil {
			return *f.j, f.of, true
		}
	}
	return 0, "", false
}

// Cost is joules, of what of says, at the price; nil without one.
func (r Rates) Cost(joules float64, of string) *wire.Cost {
	if r.Price == nil {
		return nil
	}
	return &wire.Cost{Currency: r.Price.Currency, PricePerKWh: wire.Num(r.Price.PerKWh), Amount: wire.Num(joules / JoulesPerKWh * r.Price.PerKWh),
		Of: of, Source: r.Price.Source}
}

// CO2e is joules, of what of says, at the carbon intensity; nil
// without one.
func (r Rates) CO2e(joules float64, of string) *wire.CO2e {
	if r.Intensity == nil {
		return nil
	}
	return &wire.CO2e{Grams: wire.Num(joules / JoulesPerKWh * r.Intensity.GramsPerKWh), IntensityGPerKWh: wire.Num(r.Intensity.GramsPerKWh),
		Of: of, Source: r.Intensity.Source}
}

// Of prices the energy of e that Pick picks; nil, nil without rates or
// an energy.
func (r Rates) Of(e Energies) (*wire.Cost, *wire.CO2e) {
	j, of, ok := e.Pick()
	if !ok {
		return nil, nil
	}
	return r.Cost(j, of), r.CO2e(j, of)
}

// Summary prices the energy of sum, by Pick's rule.
func (r Rates) Summary(sum *wire.Summary) {
	e := Energies{SoC: ptr(float64(sum.EnergyJoules.Total))}
	if s := sum.EnergyJoules.System; s != nil {
		e.System = ptr(float64(*s))
	}
	if w := sum.WallEstimated; w != nil {
		e.WallEstimated = ptr(float64(w.EnergyJoules))
	}
	if w := sum.Wall; w != nil {
		e.Wall = ptr(float64(w.EnergyJoules))
	}
	sum.Cost, sum.CO2e = r.Of(e)
}

func ptr(x float64) *float64 { return &x }
