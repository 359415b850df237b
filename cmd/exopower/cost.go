package main

import (
	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/cost"
)

// costOptions are the flags that price what a command measures: every
// command that prints energy takes them.
type costOptions struct {
	flags cost.Flags
	// rates are the flags as read, with the variables where a flag is
	// not given: set by resolve.
	rates cost.Rates
}

func (o *costOptions) addFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.flags.Price, "price", "", "give the energy's cost at `PRICE` a kWh, with its currency's ISO 4217 code, such as 0.30EUR (default $"+cost.EnvPrice+"; none: no cost)")
	f.StringVar(&o.flags.Intensity, "carbon-intensity", "", "give the energy's CO2e at `G` grams of CO2e a kWh, such as 400 (default $"+cost.EnvIntensity+"; none: no CO2e)")
	f.StringVar(&o.flags.Grid, "grid", "", "give the energy's CO2e at the yearly average carbon intensity of country `CC` (ISO 3166, such as FR), from Ember's data (default $"+cost.EnvGrid+")")
}

// resolve reads the flags, and the variables where a flag is not given:
// a figure that cannot be read stops the command before it measures
// anything.
func (o *costOptions) resolve(getenv func(string) string) error {
	r, err := cost.Resolve(o.flags, getenv)
	o.rates = r
	return err
}
