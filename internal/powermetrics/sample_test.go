package powermetrics_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
)

func TestEndsStreamOnlyWhenNothingMoreCanBeRead(t *testing.T) {
	refused := func(err error) error { return &powermetrics.DocumentError{Index: 3, Err: err} }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"no error goes on", nil, false},
		{"the end of the stream ends it", io.EOF, true},
		{"a read error ends it", os.ErrClosed, true},
		{"a malformed document is passed over", refused(powermetrics.ErrMalformed), false},
		{"a malformed document wrapped again is passed over", fmt.Errorf("read: %w", refused(powermetrics.ErrMalformed)), false},
		{"a document with no power data is passed over", refused(powermetrics.ErrNoPowerData), false},
		{"a document too large to find the end of ends it", refused(powermetrics.ErrTooLarge), true},
		{"a truncated last document is passed over, for the end that follows", refused(powermetrics.ErrTruncated), false},
		{"ErrTooLarge outside a document error still ends it", powermetrics.ErrTooLarge, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := powermetrics.EndsStream(tt.err); got != tt.want {
				t.Errorf("EndsStream(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestValuesAddAndSubGoComponentByComponent(t *testing.T) {
	tests := []struct {
		name      string
		v, w      power.Values
		sum, diff power.Values
	}{
		{
			name: "zero changes nothing",
			v:    power.Values{CPU: 1.5, GPU: 2, ANE: 0.25, Total: 3.75},
			sum:  power.Values{CPU: 1.5, GPU: 2, ANE: 0.25, Total: 3.75},
			diff: power.Values{CPU: 1.5, GPU: 2, ANE: 0.25, Total: 3.75},
		},
		{
			name: "each component with its own",
			v:    power.Values{CPU: 1, GPU: 2, ANE: 4, Total: 7},
			w:    power.Values{CPU: 0.5, GPU: 0.25, ANE: 0.125, Total: 0.875},
			sum:  power.Values{CPU: 1.5, GPU: 2.25, ANE: 4.125, Total: 7.875},
			diff: power.Values{CPU: 0.5, GPU: 1.75, ANE: 3.875, Total: 6.125},
		},
		{
			name: "a larger w gives a negative difference",
			v:    power.Values{CPU: 1, Total: 1},
			w:    power.Values{CPU: 3, GPU: 1, Total: 4},
			sum:  power.Values{CPU: 4, GPU: 1, Total: 5},
			diff: power.Values{CPU: -2, GPU: -1, Total: -3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.v.Add(tt.w); got != tt.sum {
				t.Errorf("%+v.Add(%+v) = %+v, want %+v", tt.v, tt.w, got, tt.sum)
			}
			if got := tt.w.Add(tt.v); got != tt.sum {
				t.Errorf("%+v.Add(%+v) = %+v, want %+v", tt.w, tt.v, got, tt.sum)
			}
			if got := tt.v.Sub(tt.w); got != tt.diff {
				t.Errorf("%+v.Sub(%+v) = %+v, want %+v", tt.v, tt.w, got, tt.diff)
			}
			if got := tt.sum.Sub(tt.w); got != tt.v {
				t.Errorf("(v + w) - w = %+v, want v = %+v", got, tt.v)
			}
		})
	}
}

func TestComponentsOrHasWhatEitherReported(t *testing.T) {
	tests := []struct {
		name string
		c, d power.Reported
		want power.Reported
	}{
		{"nothing and nothing is nothing", power.Reported{}, power.Reported{}, power.Reported{}},
		{"the CPU and the GPU are both", power.Reported{CPU: true}, power.Reported{GPU: true}, power.Reported{CPU: true, GPU: true}},
		{"one that has all has all", power.Reported{CPU: true, GPU: true, ANE: true}, power.Reported{}, power.Reported{CPU: true, GPU: true, ANE: true}},
		{"the ANE on both is the ANE", power.Reported{ANE: true}, power.Reported{ANE: true}, power.Reported{ANE: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Or(tt.d); got != tt.want {
				t.Errorf("%+v.Or(%+v) = %+v, want %+v", tt.c, tt.d, got, tt.want)
			}
			if got := tt.d.Or(tt.c); got != tt.want {
				t.Errorf("%+v.Or(%+v) = %+v, want %+v", tt.d, tt.c, got, tt.want)
			}
		})
	}
}

func TestValuesScaleAndMaxGoComponentByComponent(t *testing.T) {
	v := power.Values{CPU: 2, GPU: 0.5, ANE: 0, Total: 2.5}
	tests := []struct {
		name string
		got  power.Values
		want power.Values
	}{
		{"watts times 4 s are joules", v.Scale(4), power.Values{CPU: 8, GPU: 2, ANE: 0, Total: 10}},
		{"scaling by 0 leaves nothing", v.Scale(0), power.Values{}},
		{"the maximum takes each component's larger", v.Max(power.Values{CPU: 1, GPU: 3, ANE: 0.25, Total: 4.25}),
			power.Values{CPU: 2, GPU: 3, ANE: 0.25, Total: 4.25}},
		{"the maximum with itself is itself", v.Max(v), v},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %+v, want %+v", tt.got, tt.want)
			}
		})
	}
}

func TestCommandLineIsWhatExopowerRuns(t *testing.T) {
	got := powermetrics.CommandLine(100*time.Millisecond, "-n", "100", "-o", "trace.plist")
	if want := "sudo powermetrics -f plist -b 0 -i 100 -s cpu_power,gpu_power,thermal -n 100 -o trace.plist"; got != want {
		t.Errorf("CommandLine = %q, want %q", got, want)
	}
}

func TestARefusedDocumentSaysWhatBecomesOfTheStream(t *testing.T) {
	var _ power.Refusal = &powermetrics.DocumentError{}
	for _, c := range []struct {
		err                     error
		reason                  string
		ends, unmeasurable, cut bool
	}{
		{powermetrics.ErrTruncated, "truncated", false, false, true},
		{powermetrics.ErrTooLarge, "too_large", true, false, false},
		{powermetrics.ErrImplausible, "implausible", false, false, false},
		{powermetrics.ErrNoPowerData, "no_power_data", false, true, false},
		{powermetrics.ErrIntel, "other", false, true, false},
		{powermetrics.ErrTooDeep, "malformed", false, false, false},
		{errors.New("something else"), "other", false, false, false},
	} {
		de := &powermetrics.DocumentError{Index: 4, Err: fmt.Errorf("wrapped: %w", c.err)}
		if de.Reason() != c.reason || de.Ends() != c.ends || de.Unmeasurable() != c.unmeasurable || de.Cut() != c.cut {
			t.Errorf("%v: reason %q, ends %v, unmeasurable %v, cut %v; want %q, %v, %v, %v", c.err,
				de.Reason(), de.Ends(), de.Unmeasurable(), de.Cut(), c.reason, c.ends, c.unmeasurable, c.cut)
		}
		if powermetrics.EndsStream(de) != c.ends {
			t.Errorf("%v: EndsStream = %v, want %v", c.err, !c.ends, c.ends)
		}
	}
}

// Every reason a refusal can give is among Reasons, which serve publishes
// from the start.
func TestReasonsHoldEveryReason(t *testing.T) {
	all := powermetrics.Reasons()
	for _, err := range []error{powermetrics.ErrTruncated, powermetrics.ErrTooLarge, powermetrics.ErrImplausible,
		powermetrics.ErrNoPowerData, powermetrics.ErrMalformed, powermetrics.ErrTooDeep, powermetrics.ErrIntel, io.EOF} {
		if r := (&powermetrics.DocumentError{Err: err}).Reason(); !slices.Contains(all, r) {
			t.Errorf("%v: reason %q is not in Reasons %q", err, r, all)
		}
	}
}
