package fakepm

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// Late is the most by which the tests let a meter's timeline trail the
// fake's clock (see EnergyLate). The delay from the fake's closing a
// window to exopower's reading it is under a millisecond on an idle
// machine and reached 15 ms on a loaded 2-core machine running the
// race-instrumented suite, six tests at a time.
const Late = 40 * time.Millisecond

// CheckEnergy holds a meter's energy over [from, to], as exopower writes
// it, to the truth's (a Profile, or a Power with overrides): total, CPU, GPU and ANE each within pct percent,
// allowing the meter's timeline to trail the fake's clock by up to Late.
// It returns a line saying how near it came, and a line for each
// component further off than pct.
func CheckEnergy(what string, read wire.Components, p Truth, from, to time.Time, pct float64) (string, []string) {
	total, got := float64(read.Total), Watts{float64(read.CPU), float64(read.GPU), float64(read.ANE)}
	truth, late := p.EnergyLate(from, to, Late, got)
	worst, errs := 0.0, []string(nil)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"total", total, truth.Total()}, {"cpu", got[0], truth[0]}, {"gpu", got[1], truth[1]}, {"ane", got[2], truth[2]}} {
		e := math.Abs(c.got-c.want) / c.want * 100
		if e > pct {
			errs = append(errs, fmt.Sprintf("%s: %s energy %.5f J, true %.5f J (%v late): off by %.3f%%, more than %v%%", what, c.name, c.got, c.want, late, e, pct))
		}
		worst = max(worst, e)
	}
	return fmt.Sprintf("%s: %.4f J, true %.4f J with the timeline %v late (%.4f J on time); the components off by %.3f%% at most", what, total, truth.Total(), late, p.Energy(from, to).Total(), worst), errs
}

// HoldEnergy is CheckEnergy in a test.
func HoldEnergy(t testing.TB, what string, read wire.Components, p Truth, from, to time.Time, pct float64) {
	t.Helper()
	near, errs := CheckEnergy(what, read, p, from, to, pct)
	for _, e := range errs {
		t.Error(e)
	}
	t.Log(near)
}
