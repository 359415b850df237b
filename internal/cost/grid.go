package cost

import (
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// gridCSV is the table of --grid: each country's yearly average carbon
// intensity of electricity, from Ember's yearly data as CO2.js
// republishes it; its head names the dataset, its licence and what was
// changed (README.md beside it says more).
//
//go:embed grid.csv
var gridCSV string

// GridDataset names the table's dataset and licence, as the output
// cites it beside each country's year.
const GridDataset = "Ember yearly electricity data via CO2.js 0.19.0, CC BY-SA 4.0"

// Country is a row of the grid table.
type Country struct {
	ISO2, ISO3, Name string
	Year             int
	GramsPerKWh      float64
}

var (
	gridOnce  sync.Once
	gridRows  map[string]Country // by ISO2 and ISO3
	gridError error
)

// Countries is the grid table, by both codes of each country.
func Countries() (map[string]Country, error) {
	gridOnce.Do(func() { gridRows, gridError = readGrid(gridCSV) })
	return gridRows, gridError
}

func readGrid(text string) (map[string]Country, error) {
	r := csv.NewReader(strings.NewReader(text))
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil || len(rows) < 2 || strings.Join(rows[0], ",") != "iso2,iso3,country,year,g_co2e_per_kwh" {
		return nil, fmt.Errorf("the grid table is not as it was built: %v", err)
	}
	out := map[string]Country{}
	for _, row := range rows[1:] {
		year, errY := strconv.Atoi(row[3])
		g, errG := strconv.ParseFloat(row[4], 64)
		if errY != nil || errG != nil || g < 0 || g > MaxIntensity {
			return nil, fmt.Errorf("the grid table's row %q is not as it was built", strings.Join(row, ","))
		}
		c := Country{ISO2: row[0], ISO3: row[1], Name: row[2], Year: year, GramsPerKWh: g}
		out[c.ISO2], out[c.ISO3] = c, c
	}
	return out, nil
}

// Grid is the yearly average carbon intensity of the country of code,
// an ISO 3166-1 code of two letters or three ("FR", "FRA"), from the
// grid table; its source names the country, the dataset, the year and
// the licence: "grid:FR (France, 2024: Ember yearly electricity data
// via CO2.js 0.19.0, CC BY-SA 4.0)".
func Grid(code string) (Intensity, error) {
	rows, err := Countries()
	if err != nil {
		return Intensity{}, err
	}
	c, ok := rows[strings.ToUpper(strings.TrimSpace(code))]
	if !ok {
		return Intensity{}, errors.New("no such country in the grid table (" + GridDataset + "), which names each by its ISO 3166-1 code")
	}
	return Intensity{GramsPerKWh: c.GramsPerKWh, Source: fmt.Sprintf("grid:%s (%s, %d: %s)", c.ISO2, c.Name, c.Year, GridDataset)}, nil
}
