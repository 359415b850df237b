package cost

import (
	"strings"
	"testing"
)

// The figures of CO2.js 0.19.0's averageIntensity, as its npm package
// ships them.
func TestTheGridTableHoldsTheDatasetsFigures(t *testing.T) {
	for _, c := range []struct {
		code   string
		g      float64
		source string
	}{
		{"FR", 44.18, "grid:FR (France, 2024: Ember yearly electricity data via CO2.js 0.19.0, CC BY-SA 4.0)"},
		{"fra", 44.18, "grid:FR (France, 2024: "},
		{"US", 383.55, "grid:US (United States, 2024: "},
		{"DEU", 342.06, "grid:DE (Germany, 2024: "},
		{"KY", 642.86, "grid:KY (Cayman Islands, 2023: "},
		{" se ", 35.89, "grid:SE (Sweden, "},
	} {
		in, err := Grid(c.code)
		if err != nil || in.GramsPerKWh != c.g || !strings.HasPrefix(in.Source, c.source) {
			t.Errorf("Grid(%q) = %+v, %v; want %v g/kWh from %q", c.code, in, err, c.g, c.source)
		}
	}
}

func TestEveryCountryHasBothCodesOnce(t *testing.T) {
	rows, err := Countries()
	if err != nil {
		t.Fatal(err)
	}
	countries := map[string]bool{}
	for code, c := range rows {
		if code != c.ISO2 && code != c.ISO3 || len(c.ISO2) != 2 || len(c.ISO3) != 3 || c.Year < 2020 || c.Name == "" {
			t.Errorf("%s: %+v", code, c)
		}
		countries[c.ISO3] = true
	}
	if len(countries) != 209 || len(rows) != 2*209 {
		t.Errorf("%d countries under %d codes, want 209 under 418: a code given twice hides a country", len(countries), len(rows))
	}
}

func TestABrokenGridTableIsRefused(t *testing.T) {
	for _, text := range []string{
		"",
		"iso,country\nFR,France\n",
		"iso2,iso3,country,year,g_co2e_per_kwh\nFR,FRA,France,2024,lots\n",
		"iso2,iso3,country,year,g_co2e_per_kwh\nFR,FRA,France,2024,5000\n",
	} {
		if _, err := readGrid(text); err == nil {
			t.Errorf("readGrid(%q) took it", text)
		}
	}
}
