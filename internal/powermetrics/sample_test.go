package powermetrics_test

import (
	"fmt"
	"io"
	"os"
	"testing"
	"time"

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
		v, w      powermetrics.Values
		sum, diff powermetrics.Values
	}{
		{
			name: "zero changes nothing",
			v:    powermetrics.Values{CPU: 1.5, GPU: 2, ANE: 0.25, Total: 3.75},
			sum:  powermetrics.Values{CPU: 1.5, GPU: 2, ANE: 0.25, Total: 3.75},
			diff: powermetrics.Values{CPU: 1.5, GPU: 2, ANE: 0.25, Total: 3.75},
		},
		{
			name: "each component with its own",
			v:    powermetrics.Values{CPU: 1, GPU: 2, ANE: 4, Total: 7},
			w:    powermetrics.Values{CPU: 0.5, GPU: 0.25, ANE: 0.125, Total: 0.875},
			sum:  powermetrics.Values{CPU: 1.5, GPU: 2.25, ANE: 4.125, Total: 7.875},
			diff: powermetrics.Values{CPU: 0.5, GPU: 1.75, ANE: 3.875, Total: 6.125},
		},
		{
			name: "a larger w gives a negative difference",
			v:    powermetrics.Values{CPU: 1, Total: 1},
			w:    powermetrics.Values{CPU: 3, GPU: 1, Total: 4},
			sum:  powermetrics.Values{CPU: 4, GPU: 1, Total: 5},
			diff: powermetrics.Values{CPU: -2, GPU: -1, Total: -3},
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
		c, d powermetrics.Reported
		want powermetrics.Reported
	}{
		{"nothing and nothing is nothing", powermetrics.Reported{}, powermetrics.Reported{}, powermetrics.Reported{}},
		{"the CPU and the GPU are both", powermetrics.Reported{CPU: true}, powermetrics.Reported{GPU: true}, powermetrics.Reported{CPU: true, GPU: true}},
		{"one that has all has all", powermetrics.Reported{CPU: true, GPU: true, ANE: true}, powermetrics.Reported{}, powermetrics.Reported{CPU: true, GPU: true, ANE: true}},
		{"the ANE on both is the ANE", powermetrics.Reported{ANE: true}, powermetrics.Reported{ANE: true}, powermetrics.Reported{ANE: true}},
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
	v := powermetrics.Values{CPU: 2, GPU: 0.5, ANE: 0, Total: 2.5}
	tests := []struct {
		name string
		got  powermetrics.Values
		want powermetrics.Values
	}{
		{"watts times 4 s are joules", v.Scale(4), powermetrics.Values{CPU: 8, GPU: 2, ANE: 0, Total: 10}},
		{"scaling by 0 leaves nothing", v.Scale(0), powermetrics.Values{}},
		{"the maximum takes each component's larger", v.Max(powermetrics.Values{CPU: 1, GPU: 3, ANE: 0.25, Total: 4.25}),
			powermetrics.Values{CPU: 2, GPU: 3, ANE: 0.25, Total: 4.25}},
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
