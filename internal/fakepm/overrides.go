package fakepm

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Overrides let another process step the fake's power while the fake
// runs: a fake model server appends a line for each phase of each request
// it serves, and the fake powermetrics, which reads the file again for
// every window, reports those watts over those spans. The truth stays
// exact because every process reads the same file.
//
// An overrides file has a line per span:
//
//	FROM_UNIX_NS TO_UNIX_NS cpu,gpu,ane
//
// saying that over [FROM, TO), in Unix nanoseconds, the power is those
// watts instead of the profile's. Where spans overlap, the later line
// wins. Blank lines are skipped. A last line with no newline yet is being
// written by another process and is left for the next read.

// OverridesEnv names the environment variable that gives the fake the
// path of its overrides file.
const OverridesEnv = "FAKEPM_OVERRIDES"

// Override is a line of an overrides file: over [From, To), in Unix
// nanoseconds, the power is W instead of the profile's.
type Override struct {
	From, To int64
	W        Watts
}

// String is the override as a line of an overrides file, without the
// newline. Watts are written in full, so that a reader gets the same
// float64 back.
func (o Override) String() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return fmt.Sprintf("%d %d %s,%s,%s", o.From, o.To, f(o.W[0]), f(o.W[1]), f(o.W[2]))
}

// Overrides are an overrides file's lines, in the file's order: where they
// overlap, the later one wins.
type Overrides []Override

// ReadOverrides reads the overrides file at path. A file that does not
// exist holds no overrides: the process that writes it may not have
// started yet.
func ReadOverrides(path string) (Overrides, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("overrides: %w", err)
	}
	o, err := ParseOverrides(b)
	if err != nil {
		return nil, fmt.Errorf("overrides %s: %w", path, err)
	}
	return o, nil
}

// ParseOverrides reads the lines of an overrides file. The bytes after the
// last newline are a line still being written, and are left out.
func ParseOverrides(b []byte) (Overrides, error) {
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	var o Overrides
	for i, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		x, err := parseOverride(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %q: %w", i+1, line, err)
		}
		o = append(o, x)
	}
	return o, nil
}

func parseOverride(line string) (Override, error) {
	var x Override
	f := strings.Fields(line)
	if len(f) != 3 {
		return x, errors.New("want FROM_UNIX_NS TO_UNIX_NS cpu,gpu,ane")
	}
	var err error
	if x.From, err = strconv.ParseInt(f[0], 10, 64); err != nil {
		return x, fmt.Errorf("from %q is not Unix nanoseconds", f[0])
	}
	if x.To, err = strconv.ParseInt(f[1], 10, 64); err != nil {
		return x, fmt.Errorf("to %q is not Unix nanoseconds", f[1])
	}
	if x.To < x.From {
		return x, errors.New("it ends before it starts")
	}
	parts := strings.Split(f[2], ",")
	if len(parts) != 3 {
		return x, errors.New("want three watts, cpu,gpu,ane")
	}
	for i, p := range parts {
		if x.W[i], err = strconv.ParseFloat(p, 64); err != nil || x.W[i] < 0 || x.W[i] != x.W[i] {
			return x, fmt.Errorf("%q is not watts", p)
		}
	}
	return x, nil
}

// At returns the power at t: the last override whose span holds t, or
// else base's.
func (o Overrides) At(base Profile, t time.Time) Watts {
	ns := t.UnixNano()
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].From <= ns && ns < o[i].To {
			return o[i].W
		}
	}
	return base.At(t)
}

// Energy returns the exact energy in joules per component over [from, to]:
// base's energy where no override holds, and each override's watts times
// the time over which it holds and no later one does.
func (o Overrides) Energy(base Profile, from, to time.Time) Watts {
	var e Watts
	if !to.After(from) {
		return e
	}
	a, b := from.UnixNano(), to.UnixNano()
	// The overrides that meet [a, b), and the points where the power may
	// change from one source to another.
	var in Overrides
	cuts := []int64{a, b}
	for _, x := range o {
		if x.From < b && x.To > a {
			in = append(in, x)
			cuts = append(cuts, max(x.From, a), min(x.To, b))
		}
	}
	if len(in) == 0 {
		return base.Energy(from, to)
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]
		var part Watts
		if w, ok := in.over(lo, hi); ok {
			for c := range part {
				part[c] = w[c] * float64(hi-lo) / 1e9
			}
		} else {
			part = base.Energy(time.Unix(0, lo), time.Unix(0, hi))
		}
		for c := range e {
			e[c] += part[c]
		}
	}
	return e
}

// over returns the watts of the last override that holds all of [lo, hi),
// a span no override starts or ends inside.
func (o Overrides) over(lo, hi int64) (Watts, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].From <= lo && hi <= o[i].To {
			return o[i].W, true
		}
	}
	return Watts{}, false
}

// Power is a Profile with the overrides read at one moment applied: the
// power the fake reports.
type Power struct {
	Profile
	Overrides
}

// At returns the power at t, in watts per component.
func (p Power) At(t time.Time) Watts { return p.Overrides.At(p.Profile, t) }

// Energy returns the exact energy in joules per component over [from, to].
func (p Power) Energy(from, to time.Time) Watts { return p.Overrides.Energy(p.Profile, from, to) }

// EnergyLate is Profile.EnergyLate with the overrides applied.
func (p Power) EnergyLate(from, to time.Time, most time.Duration, got Watts) (Watts, time.Duration) {
	return energyLate(p, from, to, most, got)
}

// LivePower is a Profile and the path of an overrides file that may grow
// while the fake runs.
type LivePower struct {
	Profile Profile
	// Overrides is the overrides file's path; "" for none.
	Overrides string
}

// Read reads the overrides file as it is now.
func (l LivePower) Read() (Power, error) {
	p := Power{Profile: l.Profile}
	if l.Overrides == "" {
		return p, nil
	}
	var err error
	p.Overrides, err = ReadOverrides(l.Overrides)
	return p, err
}
