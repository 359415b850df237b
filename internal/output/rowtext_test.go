package output

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exopower/exopower/internal/wire"
)

// The strings a row carries that encoding/csv quotes or encoding/json
// escapes, and some it leaves alone.
var awkward = []string{"", "nominal", "a,b", `say "hi"`, "two\nlines", "cr\rhere", " lead", "\tlead", `\.`, `\`,
	"<b>&amp;</b>", "é", "\u2028", "\x00\x1f", "bad \xff utf-8", "Mac15,8", "25A354", "tail ", "ﬁ"}

// Numbers at the edges of Num's two notations and of 12 digits.
var awkwardNums = []float64{0, math.Copysign(0, -1), 1, -1, 17.689400000000003, 1e-6, 9.99999999999e-7, 1e21, 9.999999999999e20,
	123456789012.5, 0.1 + 0.2, 5e-324, math.MaxFloat64, -2.5e-9, 3.1415926535897932}

func randomRow(rng *rand.Rand) SampleRow {
	num := func() wire.Num {
		if rng.IntN(3) == 0 {
			return wire.Num(awkwardNums[rng.IntN(len(awkwardNums))])
		}
		return wire.Num((rng.Float64() - 0.2) * math.Pow(10, float64(rng.IntN(30)-12)))
	}
	opt := func() *wire.Num {
		if rng.IntN(2) == 0 {
			return nil
		}
		n := num()
		return &n
	}
	str := func() string { return awkward[rng.IntN(len(awkward))] }
	comps := func() wire.Components {
		return wire.Components{Total: num(), CPU: num(), GPU: num(), ANE: num(), DRAM: opt(), System: opt()}
	}
	r := SampleRow{SchemaVersion: 1, Type: "window", Index: rng.IntN(1 << 20), StartSeconds: num(), EndSeconds: num(),
		StartUnix: UnixTime(rng.Float64() * 2e9), EndUnix: UnixTime(rng.Float64() * 2e9), InsideSeconds: num(),
		PowerWatts: comps(), EnergyJoules: comps(), ClippedStart: rng.IntN(2) == 0, ClippedEnd: rng.IntN(2) == 0,
		GapBeforeSeconds: num(), RefusedBefore: rng.IntN(5), ThermalPressure: str(),
		Source: wire.Source{Tool: str(), HWModel: str(), OSBuild: str()}}
	switch rng.IntN(3) {
	case 0:
		r.Command = []string{}
	case 1:
		r.Command = []string{str(), str()}
	}
	if rng.IntN(2) == 0 {
		r.Wall = &RowWall{PowerWatts: opt(), EnergyJoules: opt()}
	}
	return r
}

// checkRowText holds rowText to encoding/csv and encoding/json on rows.
func checkRowText(t *testing.T, rows []SampleRow) {
	t.Helper()
	var text rowText
	for i := range rows {
		r := &rows[i]
		var want bytes.Buffer
		cw := csv.NewWriter(&want)
		if err := cw.Write(csvRecord(*r)); err != nil {
			t.Fatal(err)
		}
		cw.Flush()
		if got := text.csv(r); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("row %d as CSV:\n got %q\nwant %q", i, got, want.Bytes())
		}
		wantJSON, err := json.Marshal(r)
		got, ok := text.json(r)
		if ok != (err == nil) {
			t.Fatalf("row %d: rowText could write it: %v; encoding/json's error: %v", i, ok, err)
		}
		if ok && !bytes.Equal(got, append(wantJSON, '\n')) {
			t.Fatalf("row %d as JSON:\n got %s\nwant %s", i, got, wantJSON)
		}
	}
}

func TestRowTextWritesWhatEncodingCSVAndJSONWrite(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]SampleRow, 4000)
	for i := range rows {
		rows[i] = randomRow(rng)
	}
	// Runs of rows with the same command and source, as a span's are,
	// and a change between them.
	for i := 1000; i < 3000; i++ {
		rows[i].Command, rows[i].Source = rows[999].Command, rows[999].Source
	}
	bad := rows[5]
	bad.PowerWatts.GPU = wire.Num(math.NaN())
	inf := wire.Num(math.Inf(-1))
	bad2 := rows[6]
	bad2.EnergyJoules.System = &inf
	checkRowText(t, append(rows, bad, bad2))
}

func FuzzRowText(f *testing.F) {
	f.Add(uint64(1), 17.6894, "nominal", "Mac15,8")
	f.Add(uint64(2), 1e-7, "a,\"b\"", "<&>")
	f.Fuzz(func(t *testing.T, seed uint64, x float64, s1, s2 string) {
		r := randomRow(rand.New(rand.NewPCG(seed, 0)))
		r.StartSeconds, r.PowerWatts.CPU = wire.Num(x), wire.Num(-x)
		r.ThermalPressure, r.Source.HWModel, r.Command = s1, s2, []string{s2, s1}
		checkRowText(t, []SampleRow{r})
	})
}

// BenchmarkRowText is a row's text in each format, by hand and by the
// encoders it stands for, on the rows of a span (one command and source).
func BenchmarkRowText(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	rows := make([]SampleRow, 1024)
	// Rows as a recording's are: watts of a few tens, a window of 100 ms.
	for i := range rows {
		w := func() wire.Num { return wire.Num(rng.Float64() * 40) }
		j := func() wire.Num { return wire.Num(rng.Float64() * 4) }
		d := wire.Num(rng.Float64() * 1e-3)
		t := 0.1 * float64(i)
		rows[i] = SampleRow{SchemaVersion: 1, Type: "window", Index: i, StartSeconds: wire.Num(t), EndSeconds: wire.Num(t + 0.1),
			StartUnix: UnixTime(1.8e9 + t), EndUnix: UnixTime(1.8e9 + t + 0.1), InsideSeconds: 0.1,
			PowerWatts:      wire.Components{Total: w(), CPU: w(), GPU: w(), ANE: 0, DRAM: &d},
			EnergyJoules:    wire.Components{Total: j(), CPU: j(), GPU: j(), ANE: 0, DRAM: &d},
			ThermalPressure: "Nominal", Source: wire.Source{Tool: "ioreport", HWModel: "Mac15,8", OSBuild: "25A354"}}
	}
	b.Run("csv", func(b *testing.B) {
		var t rowText
		for i := 0; b.Loop(); i++ {
			t.csv(&rows[i%len(rows)])
		}
	})
	b.Run("ndjson", func(b *testing.B) {
		var t rowText
		for i := 0; b.Loop(); i++ {
			t.json(&rows[i%len(rows)])
		}
	})
	b.Run("encoding/csv", func(b *testing.B) {
		w := csv.NewWriter(io.Discard)
		for i := 0; b.Loop(); i++ {
			_ = w.Write(csvRecord(rows[i%len(rows)]))
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_, _ = json.Marshal(&rows[i%len(rows)])
		}
	})
}
