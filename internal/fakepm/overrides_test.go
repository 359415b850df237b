package fakepm

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/ioreport"
)

// ns is a time as Unix nanoseconds, for the overrides' lines.
func ns(t time.Time) int64 { return t.UnixNano() }

func TestParseOverridesReadsWholeLinesOnly(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Overrides
	}{
		{"an empty file", "", nil},
		{"one line", "10 20 1,2,3\n", Overrides{{10, 20, Watts{1, 2, 3}}}},
		{"a last line still being written is left out", "10 20 1,2,3\n30 40 4,5", Overrides{{10, 20, Watts{1, 2, 3}}}},
		{"a line with no newline at all is left out", "10 20 1,2,3", nil},
		{"blank lines are skipped", "\n10 20 1,2,3\n\n  \n30 40 0.25,0,1e-3\n",
			Overrides{{10, 20, Watts{1, 2, 3}}, {30, 40, Watts{0.25, 0, 0.001}}}},
		{"an empty span is taken", "10 10 1,2,3\n", Overrides{{10, 10, Watts{1, 2, 3}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOverrides([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseOverridesRefusesNonsense(t *testing.T) {
	for _, in := range []string{
		"10 20\n", "10 20 1,2,3 4\n", "x 20 1,2,3\n", "10 2.5 1,2,3\n", "20 10 1,2,3\n",
		"10 20 1,2\n", "10 20 1,2,-3\n", "10 20 1,NaN,3\n", "10 20 1,2,3\nnonsense\n",
	} {
		if o, err := ParseOverrides([]byte(in)); err == nil {
			t.Errorf("ParseOverrides(%q) took it: %v", in, o)
		} else {
			t.Logf("%q: %v", in, err)
		}
	}
}

func TestAnOverrideWritesTheLineItReads(t *testing.T) {
	o := Override{1_700_000_000_123_456_789, 1_700_000_000_223_456_789, Watts{0.1, 1.0 / 3, 17}}
	got, err := ParseOverrides([]byte(o.String() + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != o {
		t.Errorf("%q read back as %v, want %v", o.String(), got, o)
	}
}

func TestOverridesEnergyIsTheBaseOutsideAndTheirWattsInside(t *testing.T) {
	base, _ := ParseProfile("0=1,0.5,0.25")
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) int64 { return ns(t0.Add(time.Duration(ms) * time.Millisecond)) }
	o := Overrides{
		{at(100), at(300), Watts{10, 0, 0}},
		{at(200), at(400), Watts{0, 20, 0}}, // later: wins over [200, 300)
		{at(600), at(600), Watts{99, 99, 99}},
	}
	tests := []struct {
		name     string
		from, to int
		want     Watts
	}{
		{"a window with no override", 500, 1500, Watts{1, 0.5, 0.25}},
		{"a window inside the first override alone", 120, 170, Watts{0.5, 0, 0}},
		{"a window where the later line wins", 220, 270, Watts{0, 1, 0}},
		{"a window across both and the base on either side",
			0, 1000, Watts{0.1*1 + 0.1*10 + 0.6*1, 0.1*0.5 + 0.2*20 + 0.6*0.5, 0.1*0.25 + 0.6*0.25}},
		{"a window that ends where an override starts", 0, 100, Watts{0.1, 0.05, 0.025}},
		{"an empty window", 250, 250, Watts{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to := time.Unix(0, at(tt.from)), time.Unix(0, at(tt.to))
			got := o.Energy(base, from, to)
			for c := range got {
				if math.Abs(got[c]-tt.want[c]) > 1e-12 {
					t.Errorf("component %d: %.15f J, want %.15f J", c, got[c], tt.want[c])
				}
			}
			if p := (Power{base, o}).Energy(from, to); p != got {
				t.Errorf("Power.Energy %v, Overrides.Energy %v", p, got)
			}
		})
	}
}

func TestOverridesAtHoldsFromTheStartUpToTheEnd(t *testing.T) {
	base, _ := ParseProfile("0=1,1,1")
	o := Overrides{{100, 200, Watts{5, 5, 5}}, {150, 300, Watts{7, 7, 7}}}
	for _, c := range []struct {
		at   int64
		want float64
	}{{99, 1}, {100, 5}, {149, 5}, {150, 7}, {199, 7}, {299, 7}, {300, 1}} {
		if got := o.At(base, time.Unix(0, c.at)); got != (Watts{c.want, c.want, c.want}) {
			t.Errorf("At(%d ns) = %v, want %v W each", c.at, got, c.want)
		}
	}
}

// Energy is checked, over the default square wave and overrides that
// overlap each other and its steps, against a plain sum of At.
func TestOverridesEnergyMatchesASumOfThePower(t *testing.T) {
	base, _ := ParseProfile(DefaultProfile)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 7, time.UTC)
	at := func(ms float64) int64 { return ns(t0.Add(time.Duration(ms * 1e6))) }
	p := Power{base, Overrides{
		{at(280), at(320.5), Watts{3, 0, 1}},
		{at(310), at(700), Watts{40, 2, 0}},
		{at(650), at(1100), Watts{0, 0, 7}},
		{at(900), at(950), Watts{1, 1, 1}},
	}}
	const step = 10 * time.Microsecond
	for _, sp := range [][2]float64{{0, 2000}, {290, 315}, {305.5, 333}, {640, 1234.567}, {1050, 1600}} {
		from, to := time.Unix(0, at(sp[0])), time.Unix(0, at(sp[1]))
		var sum Watts
		for t := from; t.Before(to); t = t.Add(step) {
			w := p.At(t.Add(step / 2))
			for i := range sum {
				sum[i] += w[i] * step.Seconds()
			}
		}
		got := p.Energy(from, to)
		for i := range sum {
			if math.Abs(got[i]-sum[i]) > 1e-4 {
				t.Errorf("span %v ms: component %d: Energy %.9f J, sum %.9f J", sp, i, got[i], sum[i])
			}
		}
	}
}

func TestReadOverridesTakesAFileNotYetWrittenAsNone(t *testing.T) {
	dir := t.TempDir()
	o, err := ReadOverrides(filepath.Join(dir, "none"))
	if err != nil || o != nil {
		t.Errorf("a missing file: %v, %v; want no overrides and no error", o, err)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("1 2 3,4,5\n1 2 x\n"), 0o644)
	if _, err := ReadOverrides(bad); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a bad second line: %v, want an error naming line 2", err)
	}
}

// appendLine appends a line with one write on a file opened O_APPEND, as
// a writer of overrides must, so that lines never interleave.
func appendLine(path string, o Override) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(o.String() + "\n"))
	return errors.Join(err, f.Close())
}

// A reader that meets lines still being appended reads whole lines only.
func TestReadOverridesWhileLinesAreAppended(t *testing.T) {
	path := filepath.Join(t.TempDir(), "overrides")
	const lines = 500
	done := make(chan error)
	go func() {
		var err error
		for i := 0; i < lines && err == nil; i++ {
			err = appendLine(path, Override{int64(i) * 1000, int64(i)*1000 + 999, Watts{float64(i), 1.0 / 3, 0.125}})
		}
		done <- err
	}()
	for seen, writing := 0, true; writing || seen < lines; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			writing = false
		default: // read again while the writer goes on
		}
		o, err := ReadOverrides(path)
		if err != nil {
			t.Fatalf("after %d lines: %v", seen, err)
		}
		for i, x := range o {
			if x.From != int64(i)*1000 || x.W[0] != float64(i) || x.W[1] != 1.0/3 {
				t.Fatalf("line %d read as %v", i+1, x)
			}
		}
		if seen = len(o); !writing && seen < lines {
			t.Fatalf("the writer is done, and %d of %d lines are read", seen, lines)
		}
	}
}

// The fake's documents carry the overrides' watts: each one's energy is
// the Power's over its window, and differs from the profile's where a
// span falls in it.
func TestEachDocumentIsThePowerWithItsOverrides(t *testing.T) {
	const profile = "0=2,0.5,0.25"
	prof, _ := ParseProfile(profile)
	path := filepath.Join(t.TempDir(), "overrides")
	at := func(ms int) int64 { return ns(offlineStart.Add(time.Duration(ms) * time.Millisecond)) }
	for _, o := range []Override{{at(150), at(230), Watts{9, 1, 0}}, {at(230), at(560), Watts{20, 12, 3}}} {
		if err := appendLine(path, o); err != nil {
			t.Fatal(err)
		}
	}
	r := offline([]string{"-f", "plist", "-i", "100", "-n", "10"}, "FAKEPM_PROFILE", profile, OverridesEnv, path)
	if r.code != 0 {
		t.Fatalf("exit status %d: %s", r.code, r.stderr)
	}
	truth, err := ReadOverrides(path)
	if err != nil {
		t.Fatal(err)
	}
	from, changed := offlineStart, 0
	for i, d := range decodeAll(t, r.stdout) {
		to := from.Add(time.Duration(d.ElapsedNS))
		e := truth.Energy(prof, from, to)
		p := d.Processor
		if got, want := [3]int64{p.CPUEnergy, p.GPUEnergy, p.ANEEnergy}, mJ(e); got != want {
			t.Errorf("document %d over [%v, %v]: %v mJ, want %v", i, from, to, got, want)
		}
		if mJ(e) != mJ(prof.Energy(from, to)) {
			changed++
		}
		from = to
	}
	if changed < 3 {
		t.Errorf("the overrides changed %d documents, want the 3 or more their spans meet", changed)
	}
}

func mJ(e Watts) [3]int64 {
	return [3]int64{int64(math.Round(e[0] * 1000)), int64(math.Round(e[1] * 1000)), int64(math.Round(e[2] * 1000))}
}

func TestTheFakeRefusesAnOverridesFileItCannotRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "overrides")
	os.WriteFile(path, []byte("1 2 lots\n"), 0o644)
	r := offline([]string{"-f", "plist", "-i", "100", "-n", "2"}, OverridesEnv, path)
	if r.code != 64 || !strings.Contains(string(r.stderr), "line 1") {
		t.Errorf("exit status %d, stderr %q; want 64 and the line named", r.code, r.stderr)
	}
}

// The fake IOReport's counters take in a span appended while it is open.
func TestTheFakeIOReportCountsTheOverrides(t *testing.T) {
	prof, _ := ParseProfile("0=1,1,1")
	path := filepath.Join(t.TempDir(), "overrides")
	t0 := time.Unix(1_700_000_000, 0)
	now := t0
	f := NewLiveIOReport(LivePower{prof, path}, "", func() time.Time { return now })
	defer f.Close()
	cpu := slices.IndexFunc(FakeChannels, func(c ioreport.Channel) bool { return c.Name == "CPU Energy" })
	values := make([]int64, len(FakeChannels))
	read := func() int64 {
		t.Helper()
		if err := f.Read(values); err != nil {
			t.Fatal(err)
		}
		return values[cpu]
	}
	now = t0.Add(time.Second)
	if got := read(); got != 1000 {
		t.Errorf("before any override: %d mJ, want 1000", got)
	}
	// Half a second at 11 W in the second that follows.
	if err := appendLine(path, Override{ns(t0.Add(1250 * time.Millisecond)), ns(t0.Add(1750 * time.Millisecond)), Watts{11, 0, 0}}); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(2 * time.Second)
	if got := read(); got != 1000+500+5500 {
		t.Errorf("with the override: %d mJ, want %d", got, 1000+500+5500)
	}
	os.WriteFile(path, []byte("x\n"), 0o644)
	if err := f.Read(values); err == nil {
		t.Error("a read over a broken overrides file succeeded")
	}
}
