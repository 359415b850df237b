//go:build ioreportfake && linux

package ioreport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ebitengine/purego"

	"github.com/exopower/exopower/internal/fakemac"
	"github.com/exopower/exopower/internal/ioreport"
)

// The binding (lib.go) runs here against a fake of the parts of Core
// Foundation, libIOReport, IOKit and libSystem that it calls, written in
// C (fakelib/fake.c) and built by the test with gcc. The fake aborts on
// what would crash or misbehave on a Mac (a release too many, a use
// after free, a NULL, a wrong encoding, group, selector, structure size
// or SMC command order), so each scenario runs in a process of its own:
// this test binary again, the fake loaded from its init. An abort is a
// failed scenario, with the fake's message.

const (
	scenarioEnv = "EXOPOWER_TEST_BINDING_SCENARIO"
	fakeCaseEnv = "FAKE_IOREPORT_CASE"
	rtldNoload  = 0x4 // glibc's RTLD_NOLOAD: a handle only if loaded already
)

// fakeChannels are fake.c's channels; a counter at the k-th sample (the
// subscription's is the 0th) is base + step*k.
var fakeChannels = []struct {
	subgroup, name, unit string
	base, step           int64
}{
	{"", "EACC_CPU", "mJ", 200, 2},
	{"", "CPU Energy", "mJ", 1000, 7},
	{"", "GPU0", "mJ", 4, 1},
	{"", "GPU Energy", "nJ", 5000000000, 123456789},
	{"", "ISP", "mJ", 0, 5}, // a NULL subgroup, read as ""
	{"", "ANE", "mJ", 30, 3},
	{"", "DRAM", "mJ", 600, 11},
	{"", "PCIe Port 0 Energy", "uJ", 70, 13},
}

func counter(i, k int) int64 { return fakeChannels[i].base + fakeChannels[i].step*int64(k) }

// fakeLib is what the fake tells the tests.
type fakeLib struct {
	liveCF, liveIO, openSMC, smcCalls func() int64
	loadedOnMain                      func() int32
	indexCalls, valueCalls            func(int32) int64
}

// scenario is what one process does, over the fake in one of its cases.
type scenario struct {
	fake string
	run  func(t *testing.T, f *fakeLib)
}

var scenarios = map[string]scenario{
	"a Mac":                                   {"mac", aMac},
	"only the selected channels are read":     {"mac", onlyTheSelected},
	"a stream reads its plan's channels":      {"mac", aStream},
	"a recording reads every channel":         {"mac", aRecording},
	"no Energy Model group":                   {"no-group", subscribeFails("IOReport has no Energy Model group")},
	"the channels not copied":                 {"no-copy", subscribeFails("could not be copied")},
	"the subscription refused":                {"no-subscription", subscribeFails("refused the subscription")},
	"a stream whose subscription is refused":  {"no-subscription", streamFails("refused the subscription")},
	"no sample":                               {"no-samples", subscribeFails("gave no sample")},
	"no sample after the first":               {"no-samples-later", readFails("gave no sample")},
	"a sample without IOReportChannels":       {"no-key", subscribeFails(`no "IOReportChannels"`)},
	"a later sample without IOReportChannels": {"no-key-later", readFails(`no "IOReportChannels"`)},
	"a stream whose first reading fails":      {"no-key-later", streamFails(`no "IOReportChannels"`)},
	"a NULL channel":                          {"null-channel", subscribeFails("no channel 3")},
	"a later NULL channel":                    {"null-channel-later", readFails("no channel 3")},
	"a channel fewer later":                   {"fewer-later", readFails("IOReport gave 7 channels, where it had 8")},
	"no SMC":                                  {"no-smc", noSystemPower},
	"an SMC that refuses":                     {"smc-refuses", noSystemPower},
	"PSTR at 0 W":                             {"pstr-zero", zeroWatts},
	"a channel with no simple value":          {"no-simple", notSimple},
	"no matching dictionary for the SMC":      {"no-matching", noSystemPower},
}

// Every scenario passes in a process of its own.
func TestTheBindingAgainstAFakeOfMacOSsLibraries(t *testing.T) {
	if os.Getenv(scenarioEnv) != "" {
		t.Skip("this is a scenario's process")
	}
	so := fakemac.Build(t, "macOS's libraries")
	fakemac.Scenarios(t, scenarios, "TestBindingScenario", func(name string) []string {
		return []string{scenarioEnv + "=" + name, fakeCaseEnv + "=" + scenarios[name].fake, ioreport.FakeLibraryEnv + "=" + so}
	})
}

// TestBindingScenario is one scenario, in the process that
// TestTheBindingAgainstAFakeOfMacOSsLibraries started for it. Before it
// runs, the fake must have been loaded already, on the main thread: the
// binding loads its libraries when the package is initialised, since
// Core Foundation must be initialised on the main thread.
func TestBindingScenario(t *testing.T) {
	name := os.Getenv(scenarioEnv)
	if name == "" {
		t.Skip("run in a process of its own by TestTheBindingAgainstAFakeOfMacOSsLibraries")
	}
	h, err := purego.Dlopen(os.Getenv(ioreport.FakeLibraryEnv), purego.RTLD_NOW|rtldNoload)
	if err != nil {
		t.Fatalf("the libraries were not loaded when the package was initialised (%v): Core Foundation would be initialised off the main thread", err)
	}
	var f fakeLib
	for fptr, name := range map[any]string{&f.liveCF: "fake_live_cf", &f.liveIO: "fake_live_io", &f.openSMC: "fake_open_smc",
		&f.smcCalls: "fake_smc_calls", &f.loadedOnMain: "fake_loaded_on_main_thread", &f.indexCalls: "fake_index_calls", &f.valueCalls: "fake_value_calls"} {
		purego.RegisterLibFunc(fptr, h, name)
	}
	if f.loadedOnMain() != 1 {
		t.Fatal("the libraries were loaded off the main thread")
	}
	scenarios[name].run(t, &f)
}

// nothingLeft fails where a Core Foundation or IOKit object is alive or
// an SMC connection open.
func (f *fakeLib) nothingLeft(t *testing.T, when string) {
	t.Helper()
	if cf, io, smc := f.liveCF(), f.liveIO(), f.openSMC(); cf != 0 || io != 0 || smc != 0 {
		t.Errorf("%s: %d Core Foundation objects alive, %d IOKit objects not released, %d SMC connections open", when, cf, io, smc)
	}
}

func open(t *testing.T) ioreport.Library {
	t.Helper()
	lib, err := ioreport.Open()
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func subscribe(t *testing.T, lib ioreport.Library) []int64 {
	t.Helper()
	channels, err := lib.Subscribe()
	if err != nil {
		t.Fatal(err)
	}
	if len(channels) != len(fakeChannels) {
		t.Fatalf("%d channels, want %d", len(channels), len(fakeChannels))
	}
	for i, c := range channels {
		want := ioreport.Channel{Group: ioreport.Group, Subgroup: fakeChannels[i].subgroup, Name: fakeChannels[i].name, Unit: fakeChannels[i].unit}
		if c != want {
			t.Errorf("channel %d: %+v, want %+v", i, c, want)
		}
	}
	return make([]int64, len(channels))
}

// readsAt checks a reading of every channel against the fake's counters
// at its k-th sample.
func readsAt(t *testing.T, lib ioreport.Library, values []int64, k int) {
	t.Helper()
	if err := lib.Read(values); err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		if v != counter(i, k) {
			t.Errorf("sample %d: %s reads %d, want %d", k, fakeChannels[i].name, v, counter(i, k))
		}
	}
}

// A Mac: the channels named, the counters of each sample, PSTR through
// key info and then its bytes; after Close nothing is left, a second
// Close does nothing, and a read fails without calling into IOReport.
func aMac(t *testing.T, f *fakeLib) {
	lib := open(t)
	values := subscribe(t, lib)
	for k := 1; k <= 3; k++ {
		readsAt(t, lib, values, k)
	}
	for range 2 {
		if w, ok := lib.SystemPower(); w != 42.5 || !ok {
			t.Errorf("system power %v W, %v; want 42.5 W", w, ok)
		}
	}
	// Key info once, then the bytes at each reading.
	if n := f.smcCalls(); n != 3 {
		t.Errorf("%d calls of the SMC, want 3", n)
	}
	if hw, _ := lib.Machine(); hw != "ioreportfake" {
		t.Errorf("machine %q", hw)
	}
	if err := lib.Close(); err != nil {
		t.Fatal(err)
	}
	f.nothingLeft(t, "after Close")
	if err := lib.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if err := lib.Read(values); err == nil {
		t.Error("a read after Close did not fail")
	}
	if _, ok := lib.SystemPower(); ok {
		t.Error("the SMC read after Close")
	}
	f.nothingLeft(t, "after a second Close")
}

// After Select, a read calls into IOReport for the selected channels
// only and leaves the others as they were; nil selects every one again.
func onlyTheSelected(t *testing.T, f *fakeLib) {
	lib := open(t)
	values := subscribe(t, lib)
	plan := ioreport.NewPlan(fakeChannelList())
	indices := plan.Indices()
	if !slices.Equal(indices, []int{1, 3, 5, 6}) {
		t.Fatalf("the plan reads %v, want CPU Energy, GPU Energy, ANE and DRAM (1, 3, 5, 6)", indices)
	}
	lib.Select(indices)
	for i := range values {
		values[i] = -7
	}
	var index, value [8]int64
	for i := range fakeChannels {
		index[i], value[i] = f.indexCalls(int32(i)), f.valueCalls(int32(i))
	}
	for range 2 {
		if err := lib.Read(values); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range values {
		want, calls := int64(-7), int64(0)
		if slices.Contains(indices, i) {
			want, calls = counter(i, 2), 2
		}
		di, dv := f.indexCalls(int32(i))-index[i], f.valueCalls(int32(i))-value[i]
		if v != want || di != calls || dv != calls {
			t.Errorf("%s: %d, %d calls of CFArrayGetValueAtIndex and %d of IOReportSimpleGetIntegerValue; want %d, %d calls each", fakeChannels[i].name, v, di, dv, want, calls)
		}
	}
	lib.Select(nil)
	readsAt(t, lib, values, 3)
	lib.Close()
	f.nothingLeft(t, "after Close")
}

func fakeChannelList() []ioreport.Channel {
	var cs []ioreport.Channel
	for _, c := range fakeChannels {
		cs = append(cs, ioreport.Channel{Group: ioreport.Group, Subgroup: c.subgroup, Name: c.name, Unit: c.unit})
	}
	return cs
}

// A stream over the binding: a window is the counters' step, in their
// units, and only the plan's channels are read; Stop leaves nothing.
func aStream(t *testing.T, f *fakeLib) {
	s, err := ioreport.NewStream(open(t), time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The first window, at once whatever the interval (not a reading
	// asked for microseconds after the first: the fake's counters step
	// by a sample's energy however short the sample, and a GPU's 0.12 J
	// in microseconds is no power a Mac draws).
	smp, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	// A sample's step: CPU 7 mJ, GPU 123456789 nJ, ANE 3 mJ, DRAM 11 mJ.
	if soc := 0.007 + 0.123456789 + 0.003; math.Abs(smp.Energy.Total-soc) > 1e-12 || math.Abs(smp.Energy.DRAM-0.011) > 1e-12 || !smp.Has.System {
		t.Errorf("a window of %v J (DRAM %v J, system %v), want %v J (DRAM 0.011 J, and the system's)", smp.Energy.Total, smp.Energy.DRAM, smp.Has.System, soc)
	}
	for i, c := range fakeChannels {
		want := int64(0)
		if c.name == "CPU Energy" || c.name == "GPU Energy" || c.name == "ANE" || c.name == "DRAM" {
			want = 2 // the first reading and the window's
		}
		if n := f.valueCalls(int32(i)); n != want {
			t.Errorf("%s read %d times, want %d", c.name, n, want)
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	f.nothingLeft(t, "after Stop")
}

// A recording reads every channel: it is also the whole inventory.
func aRecording(t *testing.T, f *fakeLib) {
	lib := open(t)
	var buf bytes.Buffer
	n, err := ioreport.Record(context.Background(), lib, time.Millisecond, 3, &buf, nil)
	if err != nil || n != 3 {
		t.Fatalf("%d readings, %v", n, err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for i, c := range fakeChannels {
		b, _ := json.Marshal([]any{ioreport.Group, c.subgroup, c.name, c.unit, counter(i, 3)})
		if n := f.valueCalls(int32(i)); n != 3 || !strings.Contains(lines[len(lines)-1], string(b)) {
			t.Errorf("%s read %d times, want 3; the last line %s holds no %s", c.name, n, lines[len(lines)-1], b)
		}
	}
	lib.Close()
	f.nothingLeft(t, "after Close")
}

// subscribeFails: the subscription fails with an error that says want,
// and leaves nothing open, before Close as after it.
func subscribeFails(want string) func(*testing.T, *fakeLib) {
	return func(t *testing.T, f *fakeLib) {
		lib := open(t)
		if _, err := lib.Subscribe(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Subscribe: %v, want an error saying %q", err, want)
		}
		f.nothingLeft(t, "after the failed subscription")
		lib.Close()
		f.nothingLeft(t, "after Close")
	}
}

// readFails: a read fails with an error that says want; Close leaves
// nothing.
func readFails(want string) func(*testing.T, *fakeLib) {
	return func(t *testing.T, f *fakeLib) {
		lib := open(t)
		values := subscribe(t, lib)
		if err := lib.Read(values); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read: %v, want an error saying %q", err, want)
		}
		lib.Close()
		f.nothingLeft(t, "after Close")
	}
}

// streamFails: a stream does not start, saying want, and leaves nothing
// open.
func streamFails(want string) func(*testing.T, *fakeLib) {
	return func(t *testing.T, f *fakeLib) {
		if _, err := ioreport.NewStream(open(t), time.Hour, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewStream: %v, want an error saying %q", err, want)
		}
		f.nothingLeft(t, "after the stream failed to start")
	}
}

// No SMC, or one that refuses: the counters are read, the system's power
// is not, and no SMC call is made.
func noSystemPower(t *testing.T, f *fakeLib) {
	lib := open(t)
	readsAt(t, lib, subscribe(t, lib), 1)
	if w, ok := lib.SystemPower(); ok {
		t.Errorf("system power %v W from no SMC", w)
	}
	if n := f.smcCalls(); n != 0 {
		t.Errorf("%d calls of an SMC that is not open", n)
	}
	lib.Close()
	f.nothingLeft(t, "after Close")
}

// PSTR at 0 W is read as it is: 0 W, ok. (What 0 W means is for the
// readings above the binding to say.)
func zeroWatts(t *testing.T, f *fakeLib) {
	lib := open(t)
	if w, ok := lib.SystemPower(); w != 0 || !ok {
		t.Errorf("system power %v W, %v; want 0 W, ok", w, ok)
	}
	lib.Close()
	f.nothingLeft(t, "after Close")
}

// A channel with no simple value (INT64_MIN) reads 0.
func notSimple(t *testing.T, f *fakeLib) {
	lib := open(t)
	values := subscribe(t, lib)
	if err := lib.Read(values); err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		want := counter(i, 1)
		if fakeChannels[i].name == "ISP" {
			want = 0
		}
		if v != want {
			t.Errorf("%s reads %d, want %d", fakeChannels[i].name, v, want)
		}
	}
	lib.Close()
	f.nothingLeft(t, "after Close")
}
