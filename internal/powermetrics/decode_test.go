package powermetrics_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/heavytest"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/testfiles"
)

var allSamplers = map[string]bool{"cpu_power": true, "gpu_power": true, "thermal": true}

// doc renders a document with the given window and energies (joules).
func doc(elapsed time.Duration, cpu, gpu, ane float64) []byte {
	d := fakepm.Document{
		Elapsed:   elapsed,
		Timestamp: time.Date(2025, 7, 8, 5, 36, 24, 0, time.UTC),
		Energy:    fakepm.Watts{cpu, gpu, ane},
		Layout:    fakepm.Layouts["m1"],
		OSBuild:   "24F74",
		Samplers:  allSamplers,
		GPUIdle:   math.NaN(),
	}
	return d.Append(nil)
}

// stream joins documents as powermetrics does: a NUL before every document
// after the first.
func stream(docs ...[]byte) []byte {
	return bytes.Join(docs, []byte{0})
}

// clock returns a fake monotonic clock that moves 1 s per call.
func clock() func() time.Time {
	t := time.Unix(1000, 0)
	return func() time.Time { t = t.Add(time.Second); return t }
}

// decodeAll reads a stream to its end, returning the samples and the
// per-document errors in order.
func decodeAll(t *testing.T, r io.Reader) ([]power.Sample, []error) {
	t.Helper()
	d := powermetrics.NewDecoder(r, clock())
	var samples []power.Sample
	var errs []error
	for {
		s, err := d.Next()
		if err == io.EOF {
			return samples, errs
		}
		var de *powermetrics.DocumentError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("stream error: %v", err)
		}
		if err != nil {
			errs = append(errs, err)
			if errors.Is(err, powermetrics.ErrTooLarge) {
				return samples, errs
			}
			continue
		}
		samples = append(samples, s)
	}
}

func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)+1e-12
}

func TestDecodeValuesAreTheDocumentsOwn(t *testing.T) {
	// Energies in whole millijoules, as powermetrics writes them.
	windows := []struct {
		elapsed       time.Duration
		cpu, gpu, ane float64
	}{
		{108 * time.Millisecond, 0.431, 0.052, 0},
		{95 * time.Millisecond, 7.5, 3.25, 1.001},
		{1009 * time.Millisecond, 80.123, 52.607, 0.5}, // more than 70,000 mJ
	}
	var docs [][]byte
	for _, w := range windows {
		docs = append(docs, doc(w.elapsed, w.cpu, w.gpu, w.ane))
	}
	samples, errs := decodeAll(t, bytes.NewReader(stream(docs...)))
	if len(errs) > 0 || len(samples) != len(windows) {
		t.Fatalf("got %d samples, errors %v; want %d samples", len(samples), errs, len(windows))
	}
	for i, w := range windows {
		s := samples[i]
		if s.Index != i || s.Window != w.elapsed {
			t.Errorf("sample %d: Index %d, Window %v; want %d, %v", i, s.Index, s.Window, i, w.elapsed)
		}
		wantE := power.Values{CPU: w.cpu, GPU: w.gpu, ANE: w.ane, Total: w.cpu + w.gpu + w.ane}
		if !near(s.Energy.CPU, wantE.CPU, 1e-12) || !near(s.Energy.GPU, wantE.GPU, 1e-12) ||
			!near(s.Energy.ANE, wantE.ANE, 1e-12) || !near(s.Energy.Total, wantE.Total, 1e-12) {
			t.Errorf("sample %d: Energy %+v J, want %+v J", i, s.Energy, wantE)
		}
		secs := w.elapsed.Seconds()
		wantP := power.Values{CPU: w.cpu / secs, GPU: w.gpu / secs, ANE: w.ane / secs, Total: (w.cpu + w.gpu + w.ane) / secs}
		// Powers are written with six significant digits.
		if !near(s.Power.CPU, wantP.CPU, 1e-5) || !near(s.Power.GPU, wantP.GPU, 1e-5) ||
			!near(s.Power.ANE, wantP.ANE, 1e-5) || !near(s.Power.Total, wantP.Total, 1e-5) {
			t.Errorf("sample %d: Power %+v W, want %+v W", i, s.Power, wantP)
		}
		if s.HWModel != "MacBookPro17,1" || s.OSBuild != "24F74" || s.ThermalPressure != "Nominal" {
			t.Errorf("sample %d: source %q %q %q", i, s.HWModel, s.OSBuild, s.ThermalPressure)
		}
		if !s.Has.CPU || !s.Has.GPU || !s.Has.ANE {
			t.Errorf("sample %d: Has %+v, want all", i, s.Has)
		}
	}
}

func TestDecodeStampsArrivalWhenTheClosingTagArrives(t *testing.T) {
	a, b := doc(100*time.Millisecond, 1, 1, 0), doc(100*time.Millisecond, 2, 2, 0)
	s := stream(a, b)
	// Deliver the stream in three reads: a up to the middle of its closing
	// tag; the rest of that tag and most of b; the rest of b. Every
	// document ends "</plist>\n": the cut is three bytes into the tag.
	// The clock ticks once per read.
	cut1, cut2 := len(a)-6, len(s)-3
	r := &chunks{parts: [][]byte{s[:cut1], s[cut1:cut2], s[cut2:]}}
	d := powermetrics.NewDecoder(r, clock())
	first, err := d.Next()
	if err != nil {
		t.Fatal(err)
	}
	second, err := d.Next()
	if err != nil {
		t.Fatal(err)
	}
	base := time.Unix(1000, 0)
	if got := first.Arrival.Sub(base); got != 2*time.Second {
		t.Errorf("first document stamped at read %v, want the second read", got)
	}
	if got := second.Arrival.Sub(base); got != 3*time.Second {
		t.Errorf("second document stamped at read %v, want the third read", got)
	}
}

// chunks returns its parts one per Read.
type chunks struct{ parts [][]byte }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	c.parts[0] = c.parts[0][n:]
	if len(c.parts[0]) == 0 {
		c.parts = c.parts[1:]
	}
	return n, nil
}

func TestDecodeTakesOneByteAtATime(t *testing.T) {
	s := stream(doc(time.Second, 1, 2, 3), doc(time.Second, 4, 5, 6))
	samples, errs := decodeAll(t, iotest.OneByteReader(bytes.NewReader(s)))
	if len(samples) != 2 || len(errs) != 0 || samples[1].Energy.ANE != 6 {
		t.Fatalf("got %d samples, %v", len(samples), errs)
	}
}

func TestDecodeRefusesWithTheDocumentsIndex(t *testing.T) {
	good := doc(100*time.Millisecond, 1, 1, 0)
	replace := func(old, new string) []byte {
		return bytes.Replace(good, []byte(old), []byte(new), 1)
	}
	tests := []struct {
		name string
		bad  []byte
		want error
	}{
		{"malformed XML", replace("</dict>", "</array>"), powermetrics.ErrMalformed},
		{"garbage bytes", []byte("\x01\x02garbage \xff\xfe</plist>"), powermetrics.ErrMalformed},
		{"text that is not XML", []byte(`{ hello = world; }</plist>`), powermetrics.ErrMalformed},
		{"no power data, as in a virtual machine", fakeVM(), powermetrics.ErrNoPowerData},
		{"an Intel Mac's format", intelDoc(), powermetrics.ErrIntel},
		{"power that is not a number", replace("<key>cpu_power</key>\n<real>10000</real>", "<key>cpu_power</key>\n<real>nan</real>"), powermetrics.ErrImplausible},
		{"negative power", replace("<key>cpu_power</key>\n<real>10000</real>", "<key>cpu_power</key>\n<real>-5</real>"), powermetrics.ErrImplausible},
		{"power over 10 kW", replace("<key>cpu_power</key>\n<real>10000</real>", "<key>cpu_power</key>\n<real>1.2e+07</real>"), powermetrics.ErrImplausible},
		{"energy beyond 10 kW over the window", replace("<key>cpu_energy</key>\n<integer>1000</integer>", "<key>cpu_energy</key>\n<integer>2000000</integer>"), powermetrics.ErrImplausible},
		{"negative energy", replace("<key>cpu_energy</key>\n<integer>1000</integer>", "<key>cpu_energy</key>\n<integer>-1000</integer>"), powermetrics.ErrImplausible},
		{"a window of zero", replace("<integer>100000000</integer>", "<integer>0</integer>"), powermetrics.ErrImplausible},
		{"a window of eight days", replace("<integer>100000000</integer>", "<integer>691200000000000</integer>"), powermetrics.ErrImplausible},
		{"a negative window", replace("<integer>100000000</integer>", "<integer>-100000000</integer>"), powermetrics.ErrImplausible},
		{"no window", replace("<key>elapsed_ns</key><integer>100000000</integer>", ""), powermetrics.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if bytes.Equal(tt.bad, good) {
				t.Fatal("the test's replacement changed nothing")
			}
			samples, errs := decodeAll(t, bytes.NewReader(stream(good, tt.bad, good)))
			if len(samples) != 2 {
				t.Errorf("got %d samples, want the 2 good ones on either side", len(samples))
			}
			var de *powermetrics.DocumentError
			if len(errs) != 1 || !errors.As(errs[0], &de) || de.Index != 1 || !errors.Is(errs[0], tt.want) {
				t.Fatalf("errors %v, want one for document 1 wrapping %v", errs, tt.want)
			}
			if !strings.HasPrefix(errs[0].Error(), "document 1: ") {
				t.Errorf("error %q does not name the document", errs[0])
			}
		})
	}
}

func fakeVM() []byte {
	d := fakepm.Document{Elapsed: time.Second, Layout: fakepm.Layouts["m1"], Samplers: map[string]bool{"thermal": true}}
	return d.Append(nil)
}

func intelDoc() []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict>
<key>is_delta</key><true/><key>elapsed_ns</key><integer>1000000000</integer>
<key>hw_model</key><string>MacBookPro16,1</string>
<key>processor</key><dict><key>package_joules</key><real>12.5</real><key>package_watts</key><real>12.5</real></dict>
</dict></plist>`)
}

func TestDecodeRepeatedKeysTakeTheLastValue(t *testing.T) {
	d := bytes.Replace(doc(time.Second, 1, 1, 0), []byte("<key>cpu_power</key>"),
		[]byte("<key>cpu_power</key><real>777</real><key>cpu_power</key>"), 1)
	samples, errs := decodeAll(t, bytes.NewReader(d))
	if len(samples) != 1 || len(errs) > 0 {
		t.Fatalf("samples %d, errors %v", len(samples), errs)
	}
	if samples[0].Power.CPU != 1 {
		t.Errorf("Power.CPU = %v W, want the last value, 1 W", samples[0].Power.CPU)
	}
}

func TestDecodeDropsATruncatedLastDocument(t *testing.T) {
	a, b := doc(time.Second, 1, 1, 0), doc(time.Second, 2, 2, 0)
	s := stream(a, b, b[:len(b)/2])
	samples, errs := decodeAll(t, bytes.NewReader(s))
	if len(samples) != 2 {
		t.Errorf("got %d samples, want the 2 before the cut", len(samples))
	}
	var de *powermetrics.DocumentError
	if len(errs) != 1 || !errors.Is(errs[0], powermetrics.ErrTruncated) || !errors.As(errs[0], &de) || de.Index != 2 {
		t.Errorf("errors %v, want document 2 truncated", errs)
	}
}

func TestDecodeTellsATailOfOtherBytesFromACutDocument(t *testing.T) {
	a := doc(time.Second, 1, 1, 0)
	for _, tt := range []struct {
		name, tail string
		want       error
	}{
		{"cut in its first bytes", "<?xm", powermetrics.ErrTruncated},
		{"cut in its header", "<?xml version=\"1.0\"?>\n<!DOCTYPE plist", powermetrics.ErrTruncated},
		{"text", "# README\nnot a recording\n", powermetrics.ErrMalformed},
		{"binary", "\x00\xff\xfe\x01", powermetrics.ErrMalformed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			samples, errs := decodeAll(t, bytes.NewReader(stream(a, []byte(tt.tail))))
			var de *powermetrics.DocumentError
			if len(samples) != 1 || len(errs) != 1 || !errors.Is(errs[0], tt.want) || !errors.As(errs[0], &de) || de.Index != 1 {
				t.Errorf("%d samples, errors %v; want 1 sample and document 1 refused with %q", len(samples), errs, tt.want)
			}
		})
	}
}

func TestDecodeEmptyStreamEndsAtOnce(t *testing.T) {
	for _, s := range []string{"", "\n", "\x00\n  "} {
		samples, errs := decodeAll(t, strings.NewReader(s))
		if len(samples)+len(errs) != 0 {
			t.Errorf("%q: %d samples, %v", s, len(samples), errs)
		}
	}
}

func TestHeavyDecodeTakesLargeDocumentsAndRefusesHugeOnes(t *testing.T) {
	heavytest.Skip(t)
	pad := strings.Repeat("x", 12<<20)
	big := bytes.Replace(doc(time.Second, 1, 1, 0), []byte("<key>kern_bootargs</key><string></string>"),
		[]byte("<key>kern_bootargs</key><string>"+pad+"</string>"), 1)
	samples, errs := decodeAll(t, bytes.NewReader(stream(big, doc(time.Second, 2, 2, 0))))
	if len(samples) != 2 || len(errs) != 0 {
		t.Fatalf("a 12 MiB document: %d samples, %v", len(samples), errs)
	}
	huge := append([]byte("<?xml version=\"1.0\"?><plist><dict><key>x</key><string>"), make([]byte, powermetrics.MaxDocumentSize+1)...)
	samples, errs = decodeAll(t, bytes.NewReader(stream(doc(time.Second, 1, 1, 0), huge)))
	if len(samples) != 1 || len(errs) != 1 || !errors.Is(errs[0], powermetrics.ErrTooLarge) {
		t.Fatalf("a document over 16 MiB: %d samples, %v", len(samples), errs)
	}
}

// The fixtures in testdata come from scripts/make-fixtures.sh.
func TestDecodeFixtures(t *testing.T) {
	tests := []struct {
		file      string
		samples   int
		model     string
		truncated bool
	}{
		{"fake-m1-compact.plist", 6, "MacBookPro17,1", false},
		{"fake-pro-indented.plist", 4, "MacBookPro18,2", false},
		{"fake-ultra-compact.plist", 3, "Mac14,14", false},
		{"fake-m1-truncated.plist", 3, "MacBookPro17,1", true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", "testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			samples, errs := decodeAll(t, bytes.NewReader(b))
			if len(samples) != tt.samples {
				t.Errorf("%d samples, want %d (errors %v)", len(samples), tt.samples, errs)
			}
			if tt.truncated != (len(errs) == 1 && errors.Is(errs[0], powermetrics.ErrTruncated)) || (!tt.truncated && len(errs) > 0) {
				t.Errorf("errors %v, truncated tail expected: %v", errs, tt.truncated)
			}
			for _, s := range samples {
				if s.HWModel != tt.model || s.Window <= 0 || !s.Has.CPU || !s.Has.GPU {
					t.Errorf("sample %d: %+v", s.Index, s)
				}
				if !near(s.Power.Total, s.Power.CPU+s.Power.GPU+s.Power.ANE, 1e-5) {
					t.Errorf("sample %d: combined %v W is not CPU+GPU+ANE %+v", s.Index, s.Power.Total, s.Power)
				}
			}
		})
	}
}

func readCapture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testfiles.Captures(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeRealCaptures(t *testing.T) {
	t.Run("M1, macOS 13.3, re-indented", func(t *testing.T) {
		samples, errs := decodeAll(t, bytes.NewReader(readCapture(t, "m1-macos13.3-cpu_gpu_thermal-reindented.plist")))
		if len(samples) != 1 || len(errs) != 0 {
			t.Fatalf("%d samples, %v", len(samples), errs)
		}
		s := samples[0]
		want := power.Sample{Window: 2019178750, HWModel: "MacBookPro17,1", OSBuild: "22E252", ThermalPressure: "Nominal",
			Power: power.Values{CPU: 0.0440773, GPU: 0.0153528, ANE: 0, Total: 0.0594301}, Energy: power.Values{CPU: 0.089, GPU: 0.031, ANE: 0, Total: 0.120}}
		checkSample(t, s, want)
	})
	t.Run("M2 Ultra, macOS 14.4.1, repeated keys in the gpu dict", func(t *testing.T) {
		samples, errs := decodeAll(t, bytes.NewReader(readCapture(t, "m2ultra-macos14.4.1-cpu_gpu_thermal.plist")))
		if len(samples) != 1 || len(errs) != 0 {
			t.Fatalf("%d samples, %v", len(samples), errs)
		}
		want := power.Sample{Window: 1023721416, HWModel: "Mac14,14", OSBuild: "23E224", ThermalPressure: "Nominal",
			Power: power.Values{CPU: 0.835188, GPU: 70.9246, ANE: 0, Total: 71.7598}, Energy: power.Values{CPU: 0.855, GPU: 72.607, ANE: 0, Total: 73.462}}
		checkSample(t, samples[0], want)
	})
	t.Run("M4 Pro, macOS 15.5, gpu_power only", func(t *testing.T) {
		samples, errs := decodeAll(t, bytes.NewReader(readCapture(t, "m4pro-macos15.5-gpu_power-5samples.plist")))
		if len(samples) != 5 || len(errs) != 0 {
			t.Fatalf("%d samples, %v", len(samples), errs)
		}
		mj := []float64{19, 107, 788, 146, 126}
		ns := []time.Duration{5004758375, 5014447083, 5010073541, 5014230916, 5009178500}
		for i, s := range samples {
			if s.Has.CPU || !s.Has.GPU || s.Has.ANE {
				t.Errorf("sample %d: Has %+v, want the GPU only", i, s.Has)
			}
			if s.Window != ns[i] || !near(s.Energy.GPU, mj[i]/1000, 1e-12) || !near(s.Power.GPU, mj[i]/1000/ns[i].Seconds(), 1e-12) {
				t.Errorf("sample %d: window %v, GPU %v J %v W; want %v, %v mJ", i, s.Window, s.Energy.GPU, s.Power.GPU, ns[i], mj[i])
			}
		}
	})
	t.Run("M4 Pro, macOS 15.5, battery only: no power data", func(t *testing.T) {
		samples, errs := decodeAll(t, bytes.NewReader(readCapture(t, "m4pro-macos15.5-battery-3samples.plist")))
		if len(samples) != 0 || len(errs) != 3 {
			t.Fatalf("%d samples, %v", len(samples), errs)
		}
		for i, err := range errs {
			var de *powermetrics.DocumentError
			if !errors.As(err, &de) || de.Index != i || !errors.Is(err, powermetrics.ErrNoPowerData) {
				t.Errorf("error %d: %v", i, err)
			}
		}
	})
}

// Every capture in the folder of real captures decodes without a stream error, so a
// capture added there is checked without a test of its own.
func TestDecodeEveryCapture(t *testing.T) {
	entries, err := os.ReadDir(testfiles.Captures(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".plist") {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			samples, errs := decodeAll(t, bytes.NewReader(readCapture(t, e.Name())))
			for _, err := range errs {
				if !errors.Is(err, powermetrics.ErrNoPowerData) {
					t.Errorf("%v", err)
				}
			}
			if len(samples)+len(errs) == 0 {
				t.Error("no document")
			}
		})
	}
}

func checkSample(t *testing.T, s, want power.Sample) {
	t.Helper()
	if s.Window != want.Window || s.HWModel != want.HWModel || s.OSBuild != want.OSBuild || s.ThermalPressure != want.ThermalPressure {
		t.Errorf("window %v, source %q %q %q; want %v, %q %q %q", s.Window, s.HWModel, s.OSBuild, s.ThermalPressure,
			want.Window, want.HWModel, want.OSBuild, want.ThermalPressure)
	}
	// The powers written have six digits; the decoder takes the same
	// power from the energy, to more of them.
	for _, c := range []struct {
		name      string
		got, want float64
		rel       float64
	}{
		{"CPU W", s.Power.CPU, want.Power.CPU, 5e-6}, {"GPU W", s.Power.GPU, want.Power.GPU, 5e-6},
		{"ANE W", s.Power.ANE, want.Power.ANE, 5e-6}, {"total W", s.Power.Total, want.Power.Total, 5e-6},
		{"CPU J", s.Energy.CPU, want.Energy.CPU, 1e-12}, {"GPU J", s.Energy.GPU, want.Energy.GPU, 1e-12},
		{"ANE J", s.Energy.ANE, want.Energy.ANE, 1e-12}, {"total J", s.Energy.Total, want.Energy.Total, 1e-12},
	} {
		if !near(c.got, c.want, c.rel) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// When a power disagrees with its energy by more than the six digits it is
// written with, its window was not elapsed_ns (the tasks sampler shortens
// it): the written power is then the better average, and is kept.
func TestDecodeKeepsAPowerThatItsEnergyDoesNotMatch(t *testing.T) {
	d := bytes.Replace(doc(time.Second, 1, 1, 0), []byte("<key>cpu_power</key>\n<real>1000</real>"),
		[]byte("<key>cpu_power</key>\n<real>1052.63</real>"), 1)
	samples, errs := decodeAll(t, bytes.NewReader(d))
	if len(samples) != 1 || len(errs) > 0 {
		t.Fatalf("samples %d, errors %v", len(samples), errs)
	}
	if s := samples[0]; !near(s.Power.CPU, 1.05263, 1e-12) || s.Energy.CPU != 1 {
		t.Errorf("CPU %v W, %v J; want the written 1.05263 W and 1 J", s.Power.CPU, s.Energy.CPU)
	}
}

// nested returns a document with elements nested levels deep inside its
// top dict, after a comment, which sends it past the fast path to the full
// decoder. open and close are one level's tags.
func nested(levels int, open, close string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<!-- nested -->\n" +
		`<plist version="1.0"><dict><key>deep</key>` + strings.Repeat(open, levels) + strings.Repeat(close, levels) +
		"</dict></plist>\n")
}

// A document nested a million levels deep would overflow the stack of the
// plist package's recursive parser, which ends the process for good (no
// recover catches it): it is refused before that parser sees it, and the
// stream goes on with the next document.
func TestHeavyDecodeRefusesADocumentNestedTooDeep(t *testing.T) {
	heavytest.Skip(t)
	const levels = 1_000_000
	good := doc(time.Second, 1, 1, 0)
	for _, tt := range []struct {
		name string
		deep []byte
		want error
	}{
		{"arrays", nested(levels, "<array>", "</array>"), powermetrics.ErrTooDeep},
		{"dicts and arrays", nested(levels/3, "<dict><key>k</key><array>", "</array></dict>"), powermetrics.ErrTooDeep},
		{"plist elements", []byte(`<?xml version="1.0"?>` + strings.Repeat("<plist>", 2*levels) + "</plist>"), powermetrics.ErrTooDeep},
		// The plist package reads a document that does not start with
		// '<' as an OpenStep text list, recursively too: it is not XML,
		// and refused as such before the plist package sees it.
		{"an OpenStep text list", []byte(strings.Repeat("(", 10*levels) + "</plist>"), powermetrics.ErrMalformed},
		{"an OpenStep text list after white space", []byte(" \n" + strings.Repeat("{k=", 3*levels) + "</plist>"), powermetrics.ErrMalformed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.deep) > powermetrics.MaxDocumentSize {
				t.Fatalf("the document has %d bytes, over the size limit", len(tt.deep))
			}
			samples, errs := decodeAll(t, bytes.NewReader(stream(good, tt.deep, good)))
			var de *powermetrics.DocumentError
			if len(samples) != 2 || samples[1].Index != 2 {
				t.Errorf("%d samples, want the good documents on either side", len(samples))
			}
			if len(errs) != 1 || !errors.As(errs[0], &de) || de.Index != 1 || !errors.Is(errs[0], tt.want) || !errors.Is(errs[0], powermetrics.ErrMalformed) {
				t.Fatalf("errors %v, want document 1 refused with %q", errs, tt.want)
			}
		})
	}
}

// The depth limit counts elements from the root: a document nested exactly
// that deep is read, one level more is refused, whichever path reads it.
func TestDecodeDepthLimitIsExact(t *testing.T) {
	base := doc(time.Second, 1, 1, 0)
	at := []byte("<key>kern_bootargs</key>")
	for _, tt := range []struct {
		name    string
		comment string
	}{{"fast path", ""}, {"full decoder", "<!-- to the full decoder -->"}} {
		// plist and the top dict are two levels; the nested arrays the rest.
		for _, depth := range []int{64, powermetrics.MaxNesting, powermetrics.MaxNesting + 1, 200} {
			levels := depth - 2
			d := bytes.Replace(base, at, []byte(tt.comment+"<key>deep</key>"+strings.Repeat("<array>", levels)+strings.Repeat("</array>", levels)+string(at)), 1)
			_, err := powermetrics.Parse(d)
			_, full := powermetrics.ParseFull(d)
			if depth <= powermetrics.MaxNesting && (err != nil || full != nil) {
				t.Errorf("%s, %d deep: %v (full decoder %v), want a sample", tt.name, depth, err, full)
			}
			if depth > powermetrics.MaxNesting && (!errors.Is(err, powermetrics.ErrTooDeep) || fmt.Sprint(full) != fmt.Sprint(err)) {
				t.Errorf("%s, %d deep: %v (full decoder %v), want it refused as nested too deep", tt.name, depth, err, full)
			}
		}
	}
}

// The total is CPU + GPU + ANE, the components shown, whatever
// combined_power says; the sample keeps combined_power, and says when it
// disagrees by more than the six digits it and the components are written
// with.
func TestDecodeTotalIsTheSumOfTheComponents(t *testing.T) {
	base := doc(time.Second, 1, 2, 0.5)
	const written = "<key>combined_power</key>\n<real>3500</real>"
	if !bytes.Contains(base, []byte(written)) {
		t.Fatalf("no %q in the document", written)
	}
	for _, tt := range []struct {
		name, combined string
		watts          float64
		disagrees      bool
	}{
		{"combined_power as powermetrics writes it", written, 3.5, false},
		{"combined_power off by its last digit", "<key>combined_power</key>\n<real>3500.01</real>", 3.50001, false},
		{"combined_power 10% higher", "<key>combined_power</key>\n<real>3850</real>", 3.85, true},
		{"combined_power a little lower", "<key>combined_power</key>\n<real>3499.9</real>", 3.4999, true},
		{"combined_power far lower", "<key>combined_power</key>\n<real>1000</real>", 1, true},
		{"no combined_power", "", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := bytes.Replace(base, []byte(written), []byte(tt.combined), 1)
			samples, errs := decodeAll(t, bytes.NewReader(d))
			if len(samples) != 1 || len(errs) != 0 {
				t.Fatalf("%d samples, %v", len(samples), errs)
			}
			s := samples[0]
			if p := s.Power; p.Total != p.CPU+p.GPU+p.ANE || !near(p.Total, 3.5, 1e-12) {
				t.Errorf("Power %+v: the total is not CPU + GPU + ANE = 3.5 W", p)
			}
			if !near(s.CombinedPower, tt.watts, 1e-12) || s.CombinedDisagrees != tt.disagrees {
				t.Errorf("CombinedPower %v W, disagrees %v; want %v W, %v", s.CombinedPower, s.CombinedDisagrees, tt.watts, tt.disagrees)
			}
		})
	}
}

// sized returns a document of exactly n bytes up to the end of its
// </plist>, its kern_bootargs padded.
func sized(t *testing.T, n int) []byte {
	t.Helper()
	d := doc(time.Second, 1, 1, 0)
	at := []byte("<key>kern_bootargs</key><string></string>")
	pad := n - (bytes.LastIndex(d, []byte("</plist>")) + len("</plist>"))
	if pad < 0 || !bytes.Contains(d, at) {
		t.Fatalf("cannot pad a %d-byte document to %d bytes", len(d), n)
	}
	return bytes.Replace(d, at, []byte("<key>kern_bootargs</key><string>"+strings.Repeat("x", pad)+"</string>"), 1)
}

// pipeReads returns at most n bytes from r per Read, as a pipe does.
type pipeReads struct {
	r io.Reader
	n int
}

func (p *pipeReads) Read(b []byte) (int, error) { return p.r.Read(b[:min(len(b), p.n)]) }

// MaxDocumentSize holds however the bytes arrive: a file's reads return
// all that fits at once, a pipe's 64 KiB at a time. A document of exactly
// the limit is read from both; one a byte over it, or twice the limit, is
// refused from both with the same error, which ends the stream; so is one half as large again, which a file delivers whole before the limit is checked.
func TestHeavyDecodeSizeLimitHoldsHoweverTheBytesArrive(t *testing.T) {
	heavytest.Skip(t)
	const limit = powermetrics.MaxDocumentSize
	readers := []struct {
		name string
		r    func([]byte) io.Reader
	}{
		{"all at once, as from a file", func(b []byte) io.Reader { return bytes.NewReader(b) }},
		{"64 KiB at a time, as from a pipe", func(b []byte) io.Reader { return &pipeReads{bytes.NewReader(b), 64 << 10} }},
	}
	for _, size := range []int{limit, limit + 1, limit + limit/2} {
		s := stream(doc(time.Second, 1, 1, 0), sized(t, size), doc(time.Second, 2, 2, 0))
		var first string
		for _, rd := range readers {
			samples, errs := decodeAll(t, rd.r(s))
			if size <= limit {
				if len(samples) != 3 || len(errs) != 0 {
					t.Errorf("%d bytes, %s: %d samples, %v; want all 3", size, rd.name, len(samples), errs)
				}
				continue
			}
			var de *powermetrics.DocumentError
			if len(samples) != 1 || len(errs) != 1 || !errors.As(errs[0], &de) || de.Index != 1 || !errors.Is(errs[0], powermetrics.ErrTooLarge) {
				t.Errorf("%d bytes, %s: %d samples, %v; want the first, then document 1 too large", size, rd.name, len(samples), errs)
				continue
			}
			if first == "" {
				first = errs[0].Error()
			} else if errs[0].Error() != first {
				t.Errorf("%d bytes, %s: %q, but %q from a file", size, rd.name, errs[0], first)
			}
		}
	}
}

// A document cut short and followed by a whole one (powermetrics
// restarted, two recordings joined) is lost alone, with its own index;
// the next is read on its own, with its own.
func TestDecodeSplitsADocumentCutShortFromTheNextOne(t *testing.T) {
	a, b, c := doc(time.Second, 1, 1, 0), doc(time.Second, 2, 2, 0), doc(time.Second, 3, 3, 0)
	half := b[:len(b)/2]
	inTag := b[:bytes.Index(b, []byte("<key>cpu_energy</key>"))+4]
	for _, tt := range []struct {
		name string
		s    []byte
		want error
	}{
		{"with the NUL between documents", stream(a, half, c), powermetrics.ErrTruncated},
		{"without it, as a restarted powermetrics writes", append(stream(a, half), c...), powermetrics.ErrTruncated},
		{"cut inside a tag", stream(a, inTag, c), powermetrics.ErrTruncated},
		{"cut in its first bytes", stream(a, []byte("<?xm"), c), powermetrics.ErrTruncated},
		{"bytes that are no document", stream(a, []byte("garbage \xff\n"), c), powermetrics.ErrMalformed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			samples, errs := decodeAll(t, bytes.NewReader(tt.s))
			if len(samples) != 2 || samples[0].Index != 0 || samples[1].Index != 2 || samples[1].Energy.CPU != 3 {
				t.Errorf("samples %+v, want documents 0 and 2, whole", samples)
			}
			var de *powermetrics.DocumentError
			if len(errs) != 1 || !errors.As(errs[0], &de) || de.Index != 1 || !errors.Is(errs[0], tt.want) {
				t.Errorf("errors %v, want document 1 refused with %q", errs, tt.want)
			}
		})
	}
	t.Run("two cut short at the end of the stream", func(t *testing.T) {
		samples, errs := decodeAll(t, bytes.NewReader(stream(a, half, c[:len(c)/2])))
		if len(samples) != 1 || len(errs) != 2 {
			t.Fatalf("%d samples, errors %v; want 1 sample and 2 lost documents", len(samples), errs)
		}
		for i, err := range errs {
			var de *powermetrics.DocumentError
			if !errors.As(err, &de) || de.Index != i+1 || !errors.Is(err, powermetrics.ErrTruncated) {
				t.Errorf("error %d: %v, want document %d truncated", i, err, i+1)
			}
		}
	})
}

// A window is held to what its Mac can draw: 200 W of CPU is beyond an
// M1 MacBook Pro's SoC, refused naming the CPU, its power and the bound,
// and within an M2 Ultra's (it was held to 10 kW whatever the Mac).
func TestAWindowIsHeldToWhatItsMacCanDraw(t *testing.T) {
	for _, c := range []struct {
		layout string
		refuse bool
	}{{"m1", true}, {"ultra", false}} {
		d := fakepm.Document{Elapsed: 100 * time.Millisecond, Timestamp: time.Date(2025, 7, 8, 5, 36, 24, 0, time.UTC),
			Energy: fakepm.Watts{20, 1, 0}, Layout: fakepm.Layouts[c.layout], OSBuild: "24F74", Samplers: allSamplers, GPUIdle: math.NaN()}
		samples, errs := decodeAll(t, bytes.NewReader(d.Append(nil)))
		var ie *power.ImplausibleError
		switch {
		case c.refuse && (len(errs) != 1 || !errors.As(errs[0], &ie) || ie.Rail != power.CPU ||
			!strings.Contains(errs[0].Error(), "the CPU reads 200 W over 100ms, beyond the 150 W that a Mac with a plain M1 to M5 can draw")):
			t.Errorf("%s: samples %d, errors %v: want the CPU's window refused", c.layout, len(samples), errs)
		case !c.refuse && (len(errs) != 0 || len(samples) != 1):
			t.Errorf("%s: samples %d, errors %v: want the window", c.layout, len(samples), errs)
		}
	}
}

// The SoC's parts together are held to the SoC's bound, with or without
// combined_power: 140 W on each of an M1's CPU, GPU and ANE is 420 W of
// SoC, beyond its 150 W, though each part is within it.
func TestTheSoCsPartsTogetherAreHeldToItsBound(t *testing.T) {
	d := fakepm.Document{Elapsed: 100 * time.Millisecond, Timestamp: time.Date(2025, 7, 8, 5, 36, 24, 0, time.UTC),
		Energy: fakepm.Watts{14, 14, 14}, Layout: fakepm.Layouts["m1"], OSBuild: "24F74", Samplers: allSamplers, GPUIdle: math.NaN()}
	b := regexp.MustCompile(`<key>combined_power</key>\s*<[a-z]+>[^<]*</[a-z]+>\s*`).ReplaceAll(d.Append(nil), nil)
	if bytes.Contains(b, []byte("combined_power")) {
		t.Fatal("combined_power is still there")
	}
	_, errs := decodeAll(t, bytes.NewReader(b))
	var ie *power.ImplausibleError
	if len(errs) != 1 || !errors.As(errs[0], &ie) || !ie.Total || !strings.Contains(errs[0].Error(), "the SoC (CPU + GPU + ANE) reads 420 W over 100ms, beyond the 150 W") {
		t.Errorf("errors %v: want the SoC's 420 W refused", errs)
	}
}
