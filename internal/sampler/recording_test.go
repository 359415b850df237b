package sampler

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/testfiles"
)

// fileTruth adds up what a recording says of itself, read with regular
// expressions rather than the decoder: the windows' lengths and the
// processor dict's energies, in joules.
func fileTruth(t *testing.T, b []byte) (time.Duration, [3]float64) {
	t.Helper()
	var d time.Duration
	for _, m := range regexp.MustCompile(`<key>elapsed_ns</key><integer>(\d+)</integer>`).FindAllSubmatch(b, -1) {
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		d += time.Duration(n)
	}
	var e [3]float64
	for i, k := range []string{"cpu", "gpu", "ane"} {
		re := regexp.MustCompile(`<key>` + k + `_energy</key>\s*<integer>(\d+)</integer>\s*<key>` + k + `_power</key>`)
		for _, m := range re.FindAllSubmatch(b, -1) {
			n, _ := strconv.ParseFloat(string(m[1]), 64)
			e[i] += n / 1000
		}
	}
	return d, e
}

func record(t *testing.T, b []byte) (Result, error) {
	return Recording(powermetrics.NewRecording(bytes.NewReader(b)), "powermetrics")
}

func TestRecordingIsTheSumOfItsWindows(t *testing.T) {
	for _, name := range []string{"fake-m1-compact.plist", "fake-pro-indented.plist", "fake-ultra-compact.plist"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", "testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			r, err := record(t, b)
			if err != nil {
				t.Fatal(err)
			}
			dur, e := fileTruth(t, b)
			if r.Duration != dur {
				t.Errorf("duration %v, the windows add up to %v", r.Duration, dur)
			}
			for i, got := range []float64{r.Energy.CPU, r.Energy.GPU, r.Energy.ANE} {
				if relErr(got, e[i]) > 1e-12 {
					t.Errorf("component %d: %.6f J, the file's energies add up to %.6f J", i, got, e[i])
				}
			}
			if relErr(r.Energy.Total, e[0]+e[1]+e[2]) > 1e-12 || r.Coverage != 1 || len(r.Warnings) != 0 {
				t.Errorf("total %.6f J (file %.6f J), coverage %v, warnings %q", r.Energy.Total, e[0]+e[1]+e[2], r.Coverage, r.Warnings)
			}
			if want := r.Energy.Total / dur.Seconds(); relErr(r.Average.Total, want) > 1e-12 {
				t.Errorf("average %v W, want %v W", r.Average.Total, want)
			}
		})
	}
}

func TestRecordingWithATruncatedTail(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fake-m1-truncated.plist"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := record(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples != 3 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "document 3: truncated") {
		t.Errorf("samples %d, warnings %q", r.Samples, r.Warnings)
	}
}

func TestRecordingOfRealCaptures(t *testing.T) {
	dir := testfiles.Captures(t)
	b, err := os.ReadFile(filepath.Join(dir, "m4pro-macos15.5-gpu_power-5samples.plist"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := record(t, b)
	if err != nil {
		t.Fatal(err)
	}
	// gpu_energy 19 + 107 + 788 + 146 + 126 mJ, over five windows.
	if relErr(r.Energy.GPU, 1.186) > 1e-12 || r.Duration != 25052688415 {
		t.Errorf("GPU %v J over %v, want 1.186 J over 25.052688415s", r.Energy.GPU, r.Duration)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "no CPU, ANE power") {
		t.Errorf("warnings %q", r.Warnings)
	}
	b, err = os.ReadFile(filepath.Join(dir, "m4pro-macos15.5-battery-3samples.plist"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := record(t, b); !errors.Is(err, powermetrics.ErrNoPowerData) {
		t.Errorf("a battery-only recording: %v, want ErrNoPowerData", err)
	}
}

// A file that holds a recording twice: its timestamps go back. Both are
// summed, as the file says, and the warning says why that may be wrong.
func TestRecordingWhoseTimestampsGoBack(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fake-ultra-compact.plist"))
	if err != nil {
		t.Fatal(err)
	}
	twice := append(append(append([]byte{}, b...), 0), b...)
	r, err := record(t, twice)
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples != 6 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "document 3 is timestamped") ||
		!strings.Contains(r.Warnings[0], "more than one recording") {
		t.Errorf("samples %d, warnings %q", r.Samples, r.Warnings)
	}
}

// Documents refused anywhere in a recording, its first included, are
// counted in the warnings, each named.
func TestRecordingSaysHowManyDocumentsWereLost(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fake-m1-compact.plist"))
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(b, []byte{0})
	bad := []byte("<not a plist></plist>\n")
	tests := []struct {
		name    string
		at      []int // where bad documents go, in the joined stream
		samples int
		want    []string
	}{
		{"the first document", []int{0}, 6, []string{"1 powermetrics document could not be used", "document 0: malformed"}},
		{"the first two", []int{0, 1}, 6, []string{"2 powermetrics documents could not be used", "document 0: malformed", "document 1: malformed"}},
		{"one in the middle", []int{3}, 6, []string{"1 powermetrics document could not be used", "document 3: malformed"}},
		{"one first and one in the middle", []int{0, 4}, 6, []string{"2 powermetrics documents could not be used", "document 0: malformed", "document 4: malformed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stream [][]byte
			for i, d := 0, 0; d < len(docs); i++ {
				if slices.Contains(tt.at, i) {
					stream = append(stream, bad)
					continue
				}
				stream = append(stream, docs[d])
				d++
			}
			r, err := record(t, bytes.Join(stream, []byte{0}))
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(r.Warnings, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("no %q in the warnings %q", w, r.Warnings)
				}
			}
			if r.Samples != tt.samples {
				t.Errorf("%d samples, want %d", r.Samples, tt.samples)
			}
		})
	}
}

// recordingOf writes a recording whose windows have the given lengths, at
// 10 W of CPU throughout.
func recordingOf(windows ...time.Duration) []byte {
	var b []byte
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, w := range windows {
		d := fakepm.Document{Elapsed: w, Timestamp: at, Energy: fakepm.Watts{10 * w.Seconds(), 0, 0},
			Layout: fakepm.Layouts["m1"], Samplers: map[string]bool{"cpu_power": true, "gpu_power": true, "ane_power": true}}
		if i > 0 {
			b = append(b, 0)
		}
		b = d.Append(b)
		at = at.Add(w)
	}
	return b
}

// A recording has no interval of its own: a window far longer than its
// typical one (the median: the long window would raise the mean) counts
// like any other, with the same warning as a live stream's.
func TestALongWindowInARecordingCountsAndIsReported(t *testing.T) {
	s := time.Second
	tests := []struct {
		name    string
		windows []time.Duration
		want    []string
	}{
		{"one window 20 times the others", []time.Duration{s, s, s, s, s, 20 * s, s, s, s, s},
			[]string{"document 5 covers 20s, 20 times the recording's typical window (1s): the Mac may have slept"}},
		{"two of them", []time.Duration{s, 30 * s, s, s, s, 20 * s, s},
			[]string{"document 1 covers 30s, 30 times", "document 5 covers 20s, 20 times"}},
		{"uneven windows, none far longer", []time.Duration{s, 2 * s, 3 * s, s, 4 * s}, nil},
		{"long windows, all of them", []time.Duration{20 * s, 20 * s, 20 * s}, nil},
		{"short windows, one 40 times longer but under 5 s", []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 4 * s}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := record(t, recordingOf(tt.windows...))
			if err != nil {
				t.Fatal(err)
			}
			var sum time.Duration
			for _, w := range tt.windows {
				sum += w
			}
			if r.Duration != sum || !near(r.Energy.Total, 10*sum.Seconds(), 1e-9) || r.Coverage != 1 {
				t.Errorf("%v J over %v, coverage %v; want %v J over %v, all covered", r.Energy.Total, r.Duration, r.Coverage, 10*sum.Seconds(), sum)
			}
			slept := 0
			for _, w := range r.Warnings {
				if strings.Contains(w, "the Mac may have slept") {
					slept++
				}
			}
			all := strings.Join(r.Warnings, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("no %q in the warnings %q", w, r.Warnings)
				}
			}
			if slept != len(tt.want) {
				t.Errorf("%d warnings of sleep, want %d: %q", slept, len(tt.want), r.Warnings)
			}
		})
	}
}
