package wire

// Cost is what an energy cost at the user's price of electricity
// (--price, $EXOPOWER_PRICE): null wherever no price was given, since
// exopower has no price of its own to assume.
type Cost struct {
	// Currency is the price's ISO 4217 code, such as "EUR".
	Currency string `json:"currency"`
	// PricePerKWh is the price of a kilowatt-hour, in Currency.
	PricePerKWh Num `json:"price_per_kwh"`
	// Amount is the energy's cost, in Currency: energy / 3.6e6 J ×
	// PricePerKWh.
	Amount Num `json:"amount"`
	// Of names the energy priced (internal/cost's rule): "wall" (a
	// plug's), "wall_estimated" (this Mac's calibration's), "system"
	// (the Mac's SMC, not the wall's) or "soc" (CPU + GPU + ANE).
	Of string `json:"of"`
	// Source is where the price came from: "flag" or "env".
	Source string `json:"source"`
}

// CO2e is the greenhouse gases, in grams of CO2 equivalent, that an
// energy stands for at a carbon intensity of electricity
// (--carbon-intensity, --grid, or their variables): null wherever none
// was given.
type CO2e struct {
	// Grams is energy / 3.6e6 J × IntensityGPerKWh.
	Grams Num `json:"grams"`
	// IntensityGPerKWh is the intensity, g CO2e per kWh.
	IntensityGPerKWh Num `json:"intensity_g_per_kwh"`
	// Of names the energy, as Cost's Of does.
	Of string `json:"of"`
	// Source is "flag", "env", or for --grid "grid:CC (dataset, year,
	// licence)".
	Source string `json:"source"`
}
