package cost

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/exopower/exopower/internal/wire"
)

// OfText says what of names, for people: which energy was priced, and
// where it is not the wall's, what it leaves out.
func OfText(of string) string {
	switch of {
	case OfWall:
		return "the wall's energy"
	case OfWallEstimated:
		return "the wall's energy as this Mac's calibration estimates it (not measured)"
	case OfSystem:
		return "the Mac's system energy (not the wall's: the power supply's loss is not in it)"
	}
	return "the SoC's energy (CPU, GPU and ANE only: not the rest of the Mac, nor the wall)"
}

// AmountText writes an amount of money with its currency: two decimals
// from 1 up, three significant figures below, since a command's cost is
// often a fraction of a cent.
func AmountText(x float64, currency string) string {
	if math.Abs(x) >= 1 {
		return strconv.FormatFloat(x, 'f', 2, 64) + " " + currency
	}
	return Significant(x, 3) + " " + currency
}

// GramsText writes grams of CO2e, three significant figures: in kg from
// 1000 g.
func GramsText(g float64) string {
	if math.Abs(g) >= 1000 {
		return Significant(g/1000, 3) + " kg CO2e"
	}
	return Significant(g, 3) + " g CO2e"
}

// Significant writes x with n significant figures in plain decimals.
func Significant(x float64, n int) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	// Rounded first: 0.09996 to three figures is 0.100, not 0.0100.
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'e', n-1, 64), 64)
	dec := max(0, n-1-int(math.Floor(math.Log10(math.Abs(r)))))
	return strconv.FormatFloat(r, 'f', dec, 64)
}

// SourceText names where a figure came from, for people: its flag,
// its variable, or --grid's dataset.
func SourceText(source, flag, env string) string {
	switch source {
	case "flag":
		return flag
	case "env":
		return "$" + env
	}
	return source
}

// CostText says what c is: "0.000123 EUR for the wall's energy at 0.30
// EUR/kWh (--price)".
func CostText(c *wire.Cost) string {
	return AmountText(float64(c.Amount), c.Currency) + " " + CostBasis(c)
}

// CostBasis says what c priced and at what: "for the wall's energy at
// 0.3 EUR/kWh (--price)".
func CostBasis(c *wire.Cost) string {
	return fmt.Sprintf("for %s at %s %s/kWh (%s)", OfText(c.Of), strconv.FormatFloat(float64(c.PricePerKWh), 'f', -1, 64), c.Currency,
		SourceText(c.Source, "--price", EnvPrice))
}

// CO2eText says what c is: "0.0412 g CO2e for the wall's energy at 400
// g/kWh (--carbon-intensity)", or with --grid "... at 44.18 g/kWh,
// grid:FR (France, 2024: DATASET)". After a cost of the same energy
// (cost, nil: none), it is "for the same energy".
func CO2eText(c *wire.CO2e, cost *wire.Cost) string {
	return GramsText(float64(c.Grams)) + " " + CO2eBasis(c, cost)
}

// CO2eBasis says what c is of and at what intensity, as CO2eText.
func CO2eBasis(c *wire.CO2e, cost *wire.Cost) string {
	of := OfText(c.Of)
	if cost != nil && cost.Of == c.Of {
		of = "the same energy"
	}
	text := fmt.Sprintf("for %s at %s g/kWh", of, strconv.FormatFloat(float64(c.IntensityGPerKWh), 'f', -1, 64))
	if strings.HasPrefix(c.Source, "grid:") {
		return text + ", " + c.Source
	}
	return text + " (" + SourceText(c.Source, "--carbon-intensity", EnvIntensity) + ")"
}
