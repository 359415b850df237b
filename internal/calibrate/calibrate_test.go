package calibrate

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// truth is a Mac and a plug whose powers are known at every instant:
// the system draws idle + perLevel × the load's level, and a drift
// over time that no level controls; the SoC a share of it; the wall is
// a + b × the system's, exactly.
type truth struct {
	a, b           float64
	idle, perLevel float64
	drift          float64 // W per second, from t0
	t0, now        time.Time
	level          int
	levelAt        []levelChange
	stallAtStep    int // 1-based; 0: none
	steps          int
}

type levelChange struct {
	at    time.Time
	level int
}

func (tr *truth) Set(level int) {
	tr.level = level
	tr.levelAt = append(tr.levelAt, levelChange{tr.now, level})
}

func (tr *truth) Now() time.Time { return tr.now }

func (tr *truth) Sleep(_ context.Context, d time.Duration) error {
	tr.now = tr.now.Add(d)
	return nil
}

// system is the mean system power over [from, to]: the level set last
// before from holds over it (Run sets it before the span), and the
// drift is linear, so its mean is its value at the middle.
func (tr *truth) system(from, to time.Time) float64 {
	mid := from.Add(to.Sub(from) / 2).Sub(tr.t0).Seconds()
	return tr.idle + tr.perLevel*float64(tr.level) + tr.drift*mid
}

func (tr *truth) Begin(context.Context) (time.Time, func(context.Context, time.Time) (Reading, error)) {
	from := tr.now
	return from, func(_ context.Context, to time.Time) (Reading, error) {
		tr.steps++
		s := tr.system(from, to)
		r := Reading{Wall: tr.a + tr.b*s, System: s, HasSystem: true, SoC: 0.5*s - 5, WallCoverage: 1, MacCoverage: 1}
		if tr.stallAtStep == tr.steps {
			r.WallCoverage = 0.4
		}
		return r, nil
	}
}

func newTruth(a, b float64) *truth {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	return &truth{a: a, b: b, idle: 8, perLevel: 0.3, drift: 0.01, t0: t0, now: t0}
}

func ladder(tr *truth, levels ...int) Config {
	return Config{Levels: levels, Step: 20 * time.Second, Settle: 5 * time.Second, Now: tr.Now, Sleep: tr.Sleep}
}

func TestTheLadderFindsTheTrueLineOfTheWallAgainstTheSystem(t *testing.T) {
	tr := newTruth(4.5, 1.13)
	steps, err := Run(context.Background(), ladder(tr, 0, 25, 50, 100), tr, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 4 || steps[3].Seconds != 15 {
		t.Fatalf("steps %+v: want four, each measured for 15 s of its 20", steps)
	}
	fits, err := FitSteps(steps)
	if err != nil {
		t.Fatal(err)
	}
	f := fits.System
	if f == nil || math.Abs(f.InterceptWatts-4.5) > 1e-9 || math.Abs(f.Slope-1.13) > 1e-12 || f.RMSWatts > 1e-9 || f.RSquared < 1-1e-12 {
		t.Fatalf("system fit %+v: want a = 4.5 W, b = 1.13 exactly, no residual", f)
	}
	// The SoC is 0.5 × system - 5: the wall is a + b × (2 soc + 10).
	if s := fits.SoC; s == nil || math.Abs(s.Slope-2.26) > 1e-9 || math.Abs(s.InterceptWatts-(4.5+11.3)) > 1e-9 {
		t.Fatalf("SoC fit %+v: want b = 2.26, a = 15.8 W", s)
	}
	// The load was set at each step's start, and its order kept.
	for i, want := range []int{0, 25, 50, 100} {
		if tr.levelAt[i].level != want || !tr.levelAt[i].at.Equal(tr.t0.Add(time.Duration(i)*20*time.Second)) {
			t.Fatalf("load changes %+v: want %d at %d s", tr.levelAt, want, 20*i)
		}
	}
}

func TestLinearOnHandComputedPoints(t *testing.T) {
	// y = 1 + 2x, but for the middle point 1 W above: the mean of y is
	// 1/3 above the line, the slope unmoved (the middle x is the mean),
	// the residuals -1/3, 2/3, -1/3.
	f, err := Linear([]Point{{0, 1}, {1, 4}, {2, 5}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.Slope-2) > 1e-12 || math.Abs(f.InterceptWatts-4.0/3) > 1e-12 {
		t.Fatalf("%+v: want b = 2, a = 4/3", f)
	}
	if math.Abs(f.RMSWatts-math.Sqrt(2.0/9)) > 1e-12 || math.Abs(f.MaxResidualWatts-2.0/3) > 1e-12 {
		t.Fatalf("%+v: want RMS √(2/9), largest 2/3", f)
	}
	// syy = 8.6667, ss = 2/3.
	if want := 1 - (2.0/3)/(26.0/3); math.Abs(f.RSquared-want) > 1e-12 {
		t.Fatalf("R² %v, want %v", f.RSquared, want)
	}
	if f.MinWatts != 0 || f.MaxWatts != 2 || f.Points != 3 {
		t.Fatalf("%+v: want the range 0 to 2 W over 3 points", f)
	}
}

func TestAFitThatCannotBeTrustedIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		levels []int
		tune   func(*truth)
		want   string
	}{
		{"with two distinct levels", []int{0, 100, 100, 0}, nil, "2 distinct levels"},
		{"with a slope below what an adapter gives", []int{0, 50, 100}, func(tr *truth) { tr.b = 0.7 }, "slope is 0.700"},
		{"with a slope above what an adapter loses", []int{0, 50, 100}, func(tr *truth) { tr.b = 1.8 }, "slope is 1.800"},
		{"with the wall below nothing at idle", []int{0, 50, 100}, func(tr *truth) { tr.a = -6 }, "below nothing"},
		{"where the load did not raise the Mac's power", []int{0, 50, 100}, func(tr *truth) { tr.perLevel, tr.drift = 0.01, 0 }, "did not raise it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTruth(4.5, 1.13)
			if tc.tune != nil {
				tc.tune(tr)
			}
			steps, err := Run(context.Background(), ladder(tr, tc.levels...), tr, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := FitSteps(steps); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a refusal that says %q", err, tc.want)
			}
		})
	}
}

func TestAPlugThatStalledEndsTheLadderAtTheStep(t *testing.T) {
	tr := newTruth(4.5, 1.13)
	tr.stallAtStep = 2
	steps, err := Run(context.Background(), ladder(tr, 0, 25, 50, 100), tr, tr, nil)
	if err == nil || !strings.Contains(err.Error(), "step 2 (25 %): the plug's readings covered 40 %") || len(steps) != 2 {
		t.Fatalf("got %v after %d steps: want step 2 refused, and no step after it", err, len(steps))
	}
}

func TestWithTheSoCAloneTheSoCsFitIsTheCalibration(t *testing.T) {
	tr := newTruth(4.5, 1.13)
	steps, _ := Run(context.Background(), ladder(tr, 0, 50, 100), tr, tr, nil)
	for i := range steps {
		steps[i].SystemWatts = nil // as powermetrics reads it
	}
	fits, err := FitSteps(steps)
	if err != nil || fits.System != nil || fits.SoC == nil || math.Abs(fits.SoC.Slope-2.26) > 1e-9 {
		t.Fatalf("%+v, %v: want the SoC's fit alone", fits, err)
	}
}

func TestTheEstimateIsTheFitsLineOverTheSpan(t *testing.T) {
	c := &Calibration{System: &Fit{InterceptWatts: 4.5, Slope: 1.13, RMSWatts: 0.4, MinWatts: 8, MaxWatts: 40},
		SoC: &Fit{InterceptWatts: 15.8, Slope: 2.26, RMSWatts: 0.6, MinWatts: 0, MaxWatts: 16}}
	// 30 s at 20 W of system: the wall drew 4.5 + 22.6 = 27.1 W.
	e, err := c.Estimate(30, 20, true, 5)
	if err != nil || e.From != FromSystem || math.Abs(e.Joules-813) > 1e-9 || math.Abs(e.UncertaintyJoules-12) > 1e-9 || e.Extrapolated {
		t.Fatalf("%+v, %v: want 813 J ± 12 J from the system's fit", e, err)
	}
	// Without the system's power, the SoC's fit: 15.8 + 2.26 × 5.
	e, err = c.Estimate(10, 0, false, 5)
	if err != nil || e.From != FromSoC || math.Abs(e.Joules-271) > 1e-9 || math.Abs(e.UncertaintyJoules-6) > 1e-9 {
		t.Fatalf("%+v, %v: want 271 J ± 6 J from the SoC's fit", e, err)
	}
	if e, _ := c.Estimate(10, 90, true, 5); !e.Extrapolated {
		t.Fatal("90 W of a ladder that reached 40 W: want it said to be outside the fit's range")
	}
	c.SoC = nil
	if _, err := c.Estimate(10, 0, false, 5); !errors.Is(err, ErrNoFitForSource) {
		t.Fatalf("got %v: want the system's fit refused for a span of the SoC alone", err)
	}
}

func TestAFitOfAnotherMacIsRefused(t *testing.T) {
	mine, _ := Identify("Mac14,14", "C02XK0AAJGH5")
	c := &Calibration{Mac: mine}
	if err := c.For(mine); err != nil {
		t.Fatalf("its own Mac refused: %v", err)
	}
	other, _ := Identify("Mac14,14", "C02XK0AAJGH6")
	if err := c.For(other); err == nil || !strings.Contains(err.Error(), "another Mac14,14") {
		t.Fatalf("got %v: want another Mac of the model refused", err)
	}
	model, _ := Identify("Mac15,3", "C02XK0AAJGH5")
	if err := c.For(model); err == nil || !strings.Contains(err.Error(), "of a Mac14,14, and this Mac is a Mac15,3") {
		t.Fatalf("got %v: want another model refused", err)
	}
	if _, err := Identify("Mac14,14", " "); err == nil {
		t.Fatal("a Mac without a serial was identified: any Mac's fit would do for it")
	}
}

func TestTheFileIsWrittenWholeAndPrivateWithoutTheSerial(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config", "exopower")
	mac, _ := Identify("Mac14,14", "C02XK0AAJGH5")
	c := &Calibration{SchemaVersion: SchemaVersion, Type: TypeCalibration, Mac: mac, CalibratedAt: "2026-12-07T10:00:00Z",
		System: &Fit{InterceptWatts: 4.5, Slope: 1.13, MinWatts: 8, MaxWatts: 40}}
	if err := Save(dir, c, nil); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, filepath.Dir(dir): 0o700 | os.ModeDir, filepath.Join(dir, FileName): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
			t.Fatalf("%s: %v, %v: want mode %v", path, fi.Mode(), err, want)
		}
	}
	old, err := os.Open(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	c2 := *c
	c2.CalibratedAt = "2026-12-08T10:00:00Z"
	if err := Save(dir, &c2, nil); err != nil {
		t.Fatal(err)
	}
	// Replaced, not rewritten in place: a reader of the old file still
	// reads it whole.
	if got, err := Decode(old); err != nil || got.CalibratedAt != c.CalibratedAt {
		t.Fatalf("the old file, read after the new was saved: %+v, %v", got, err)
	}
	got, err := Load(dir, nil)
	if err != nil || got.CalibratedAt != c2.CalibratedAt || got.System.Slope != 1.13 {
		t.Fatalf("%+v, %v: want the new calibration", got, err)
	}
	entries, _ := os.ReadDir(dir)
	b, _ := os.ReadFile(filepath.Join(dir, FileName))
	if len(entries) != 1 || strings.Contains(string(b), "C02XK0AAJGH5") || !strings.Contains(string(b), mac.SerialSHA256) {
		t.Fatalf("%d files left; the file holds the serial, or not its digest:\n%s", len(entries), b)
	}
	if err := Remove(dir, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Remove: %v, want none", err)
	}
	if err := Remove(dir, nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Remove of none: %v, want it said", err)
	}
}

func TestUnderSudoTheFileIsTheUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give the file to another user")
	}
	home := t.TempDir()
	if err := os.Chown(home, 4321, 4321); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".config", "exopower")
	user := &syscall.Credential{Uid: 4321, Gid: 4321}
	c := &Calibration{SchemaVersion: SchemaVersion, Type: TypeCalibration, Mac: Mac{"Mac14,14", "ab"}, SoC: &Fit{Slope: 2}}
	if err := Save(dir, c, user); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Dir(dir), dir, filepath.Join(dir, FileName)} {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil || st.Uid != 4321 || st.Gid != 4321 {
			t.Fatalf("%s: owned by %d:%d (%v), want the user's 4321:4321", p, st.Uid, st.Gid, err)
		}
	}
	// Where the user may not write, root does not either.
	locked := filepath.Join(t.TempDir(), "exopower")
	if err := os.Mkdir(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Save(locked, c, user); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("saved into root's directory for the user: %v", err)
	}
	// A user's ~/.config that links to a folder of root's alone: root
	// makes nothing there for them.
	rootOnly := t.TempDir()
	os.Chmod(rootOnly, 0o700)
	linked := t.TempDir()
	os.Chown(linked, 4321, 4321)
	if err := os.Symlink(rootOnly, filepath.Join(linked, ".config")); err != nil {
		t.Fatal(err)
	}
	if err := Save(filepath.Join(linked, ".config", "exopower"), c, user); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("saved through a link into root's folder: %v", err)
	}
	if entries, _ := os.ReadDir(rootOnly); len(entries) != 0 {
		t.Errorf("made in root's folder: %v", entries)
	}
}

func TestTheLoadBurnsTheCPUAndStopsWhole(t *testing.T) {
	l := &CPULoad{Cores: 1}
	start := cpuTime(t)
	l.Set(50)
	deadline := time.Now().Add(10 * time.Second)
	for cpuTime(t)-start < 30*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatal("no CPU burnt in 10 s at 50 %")
		}
		time.Sleep(5 * time.Millisecond)
	}
	l.Set(100)
	l.Stop()
	l.Stop()
	// Stop waits for every goroutine's Done; one may still be returning
	// from its deferred call after that, but none is in spin.
	buf := make([]byte, 1<<20)
	if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Contains(stacks, "calibrate.spin") {
		t.Fatalf("a busy goroutine is left after Stop:\n%s", stacks)
	}
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano())
}

// A file edited, or left by an older exopower, is held to the bounds a
// fit was held to when it was made, and its text is made safe.
func TestALoadedFitIsHeldToTheBounds(t *testing.T) {
	mac, _ := Identify("Mac14,14", "C02XK0AAJGH5")
	for _, c := range []struct {
		name string
		fit  Fit
	}{
		{"a negative slope", Fit{Slope: -5, MinWatts: 8, MaxWatts: 40}},
		{"a negative error", Fit{Slope: 1.1, RMSWatts: -3, MinWatts: 8, MaxWatts: 40}},
		{"no range", Fit{Slope: 1.1, MinWatts: 8, MaxWatts: 8}},
	} {
		var b bytes.Buffer
		Encode(&b, &Calibration{SchemaVersion: SchemaVersion, Type: TypeCalibration, Mac: mac, System: &c.fit})
		if _, err := Decode(&b); err == nil || !strings.Contains(err.Error(), "calibrate again") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	var b bytes.Buffer
	Encode(&b, &Calibration{SchemaVersion: SchemaVersion, Type: TypeCalibration, Mac: mac, CalibratedAt: "\x1b[2Jtoday", Plug: Plug{Model: "SNPL\x1b]0;owned\a"},
		System: &Fit{Slope: 1.1, MinWatts: 8, MaxWatts: 40}})
	if got, err := Decode(&b); err != nil || strings.ContainsAny(got.Plug.Model+got.Date(), "\x1b\a") {
		t.Errorf("%v: %q %q", err, got.Plug.Model, got.Date())
	}
}
