package fakepm

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// result is what one run of the fake left.
type result struct {
	code           int
	stdout, stderr []byte
}

// runAs runs the fake in-process as user euid, with env as name, value
// pairs.
func runAs(euid int, args []string, env ...string) result {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr, envOf(env...), euid)
	return result{code, stdout.Bytes(), stderr.Bytes()}
}

// offline runs the fake in-process on simulated time, so that it ends at
// once and its windows are known.
func offline(args []string, env ...string) result {
	return runAs(0, args, append([]string{"FAKEPM_OFFLINE", "1"}, env...)...)
}

// documents splits a stream into its documents: every one after the first
// comes after a NUL byte.
func documents(t *testing.T, stream []byte) [][]byte {
	t.Helper()
	if len(stream) == 0 {
		return nil
	}
	if stream[0] == 0 {
		t.Error("the stream starts with a NUL byte")
	}
	return bytes.Split(stream, []byte{0})
}

// decodeAll decodes every document of a stream.
func decodeAll(t *testing.T, stream []byte) []decoded {
	t.Helper()
	var docs []decoded
	for _, b := range documents(t, stream) {
		docs = append(docs, decode(t, b))
	}
	return docs
}

const noise = "proc_pidpath() for pid 1 failed with 3\n"

func TestEachDocumentIsTheProfilesIntegralOverItsWindow(t *testing.T) {
	tests := []struct {
		name    string
		profile string
		layout  string
		args    []string
	}{
		{"the default square wave, sampled every 100 ms", DefaultProfile, "m1", []string{"-i", "100", "-n", "40"}},
		{"the default square wave, sampled every 1.3 s, on an M2 Ultra", DefaultProfile, "ultra", []string{"-i", "1300", "-n", "10"}},
		{"a constant power", "0=10,2,0.5", "pro", []string{"-i", "250", "-n", "10"}},
		{"steps longer than the windows", "period=2.5 0=1,0,0 1.25=30,10,5 2=0,0,0", "m1", []string{"-i", "100", "-n", "60"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prof, err := ParseProfile(tt.profile)
			if err != nil {
				t.Fatal(err)
			}
			r := offline(append([]string{"-f", "plist"}, tt.args...), "FAKEPM_PROFILE", tt.profile, "FAKEPM_LAYOUT", tt.layout)
			if r.code != 0 {
				t.Fatalf("exit status %d: %s", r.code, r.stderr)
			}
			from := offlineStart
			var total int64
			for i, d := range decodeAll(t, r.stdout) {
				to := from.Add(time.Duration(d.ElapsedNS))
				e := prof.Energy(from, to)
				p := d.Processor
				mj := [3]int64{p.CPUEnergy, p.GPUEnergy, p.ANEEnergy}
				mw := [3]float64{p.CPUPower, p.GPUPower, p.ANEPower}
				secs := time.Duration(d.ElapsedNS).Seconds()
				for c := range e {
					if want := int64(math.Round(e[c] * 1000)); mj[c] != want {
						t.Errorf("document %d, component %d: %d mJ, want %d (%.6f J over [%v, %v])", i, c, mj[c], want, e[c], from, to)
					}
					if want := float64(mj[c]) / secs; !closeTo(mw[c], want) {
						t.Errorf("document %d, component %d: %v mW, want %v", i, c, mw[c], want)
					}
				}
				if want := float64(mj[0]+mj[1]+mj[2]) / secs; !closeTo(p.CombinedPower, want) {
					t.Errorf("document %d: combined_power %v mW, want %v", i, p.CombinedPower, want)
				}
				if want := to.Truncate(time.Second); !d.Timestamp.Equal(want) {
					t.Errorf("document %d: timestamp %v, want %v (the window's end)", i, d.Timestamp, want)
				}
				total += mj[0] + mj[1] + mj[2]
				from = to
			}
			if total == 0 {
				t.Error("every document says 0 mJ")
			}
		})
	}
}

func TestCountFlagSetsTheNumberOfDocuments(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"-n 1 writes one document", []string{"-n", "1"}, 1},
		{"-n 7 writes seven", []string{"-n", "7"}, 7},
		{"offline, no -n writes ten", nil, 10},
		{"offline, -n 0 writes ten too", []string{"-n", "0"}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := offline(append([]string{"-f", "plist", "-i", "100"}, tt.args...))
			if got := len(documents(t, r.stdout)); r.code != 0 || got != tt.want {
				t.Errorf("exit status %d with %d documents, want 0 with %d", r.code, got, tt.want)
			}
			if !bytes.HasSuffix(r.stdout, []byte("</plist>\n")) {
				t.Error("the last document is not whole or is followed by a NUL")
			}
			if string(r.stderr) != noise {
				t.Errorf("stderr = %q, want powermetrics's noise %q", r.stderr, noise)
			}
		})
	}
}

// -o (powermetrics's --output-file) writes the stream to a file instead
// of stdout, the same bytes; as powermetrics, the fake writes its noise
// to stderr, one whole line. A fake that refuses leaves no file, and one
// that cannot make the file says so and ends with status 1.
func TestOutputFileFlagWritesTheStreamThere(t *testing.T) {
	args := []string{"-f", "plist", "-i", "100", "-s", "cpu_power,gpu_power,thermal", "-n", "5"}
	want := offline(args).stdout
	for _, flag := range []string{"-o", "--output-file"} {
		t.Run(flag, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace.plist")
			r := offline(append(args, flag, path))
			got, err := os.ReadFile(path)
			if r.code != 0 || len(r.stdout) != 0 || err != nil || !bytes.Equal(got, want) {
				t.Errorf("exit status %d, %d bytes on stdout, the file %d bytes (%v); want 0, nothing, and the %d bytes of the stream",
					r.code, len(r.stdout), len(got), err, len(want))
			}
			if string(r.stderr) != noise {
				t.Errorf("stderr = %q, want powermetrics's noise %q, a whole line", r.stderr, noise)
			}
		})
	}
	t.Run("a fake that refuses makes no file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "trace.plist")
		if r := offline(append(args, "-o", path), "FAKEPM_MODE", "notroot"); r.code != 1 {
			t.Errorf("exit status %d, want 1", r.code)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a fake that refused made %s (%v)", path, err)
		}
	})
	t.Run("a file that cannot be made", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "no", "such", "dir", "trace.plist")
		r := offline(append(args, "-o", path))
		if r.code != 1 || !strings.Contains(string(r.stderr), "fake powermetrics: open "+path) {
			t.Errorf("exit status %d, stderr %q; want 1 and the path", r.code, r.stderr)
		}
	})
}

// Real windows run a little long, and the fake's are uneven, shorter while
// power is high, so that a meter cannot assume even windows.
func TestIntervalFlagSetsTheWindowLengths(t *testing.T) {
	tests := []struct {
		name     string
		interval int
		profile  string
		min, max float64 // window length per interval
	}{
		{"at low power, windows of -i 100 are 0.864 to 1.296 times 100 ms", 100, "0=5,2,1", 0.864, 1.296},
		{"at low power, windows of -i 1000 are 0.864 to 1.296 times 1 s", 1000, "0=5,2,1", 0.864, 1.296},
		{"over 20 W, windows are 0.6 times as long", 100, "0=15,5,1", 0.5184, 0.7776},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := offline([]string{"-f", "plist", "-i", strconv.Itoa(tt.interval), "-n", "50"}, "FAKEPM_PROFILE", tt.profile)
			lengths := map[int64]bool{}
			var sum float64
			for i, d := range decodeAll(t, r.stdout) {
				k := float64(d.ElapsedNS) / float64(time.Duration(tt.interval)*time.Millisecond)
				if k < tt.min || k > tt.max {
					t.Errorf("window %d is %v intervals long, want %v to %v", i, k, tt.min, tt.max)
				}
				lengths[d.ElapsedNS] = true
				sum += k
			}
			if len(lengths) < 40 {
				t.Errorf("only %d different lengths among 50 windows", len(lengths))
			}
			if mid := (tt.min + tt.max) / 2; math.Abs(sum/50-mid) > 0.1*mid {
				t.Errorf("windows average %v intervals, want about %v", sum/50, mid)
			}
		})
	}
}

func TestSeedSetsTheUnevenWindows(t *testing.T) {
	args := []string{"-f", "plist", "-i", "100", "-n", "5"}
	one, again, two := offline(args, "FAKEPM_SEED", "1"), offline(args), offline(args, "FAKEPM_SEED", "2")
	if !bytes.Equal(one.stdout, again.stdout) {
		t.Error("seed 1 and no seed, which is seed 1, wrote different streams")
	}
	if bytes.Equal(one.stdout, two.stdout) {
		t.Error("seeds 1 and 2 wrote the same stream")
	}
}

func TestEnvironmentSetsLayoutAndIndent(t *testing.T) {
	args := []string{"-f", "plist", "-i", "100", "-n", "2"}
	r := offline(args, "FAKEPM_LAYOUT", "ultra", "FAKEPM_INDENT", "1")
	docs := decodeAll(t, r.stdout)
	if len(docs) != 2 || docs[1].HWModel != "Mac14,14" || len(docs[1].Processor.Clusters) != 6 {
		t.Errorf("FAKEPM_LAYOUT=ultra: %d documents of %q", len(docs), docs[len(docs)-1].HWModel)
	}
	if !bytes.Contains(r.stdout, []byte("\n  <key>elapsed_ns</key>")) {
		t.Error("FAKEPM_INDENT=1 did not indent")
	}
	if r := offline(args); bytes.Contains(r.stdout, []byte("\n  <key>")) {
		t.Error("without FAKEPM_INDENT the documents are indented")
	}
}

func TestSamplersFlagChoosesTheDicts(t *testing.T) {
	tests := []struct {
		name                    string
		samplers                string
		processor, gpu, thermal bool
	}{
		{name: "by default cpu_power, gpu_power and thermal", processor: true, gpu: true, thermal: true},
		{name: "-s cpu_power writes only the processor dict", samplers: "cpu_power", processor: true},
		{name: "-s takes spaces after its commas", samplers: "gpu_power, thermal", gpu: true, thermal: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"-f", "plist", "-i", "100", "-n", "1"}
			if tt.samplers != "" {
				args = append(args, "-s", tt.samplers)
			}
			d := decodeAll(t, offline(args).stdout)[0]
			if (d.Processor != nil) != tt.processor || (d.GPU != nil) != tt.gpu || (d.ThermalPressure != nil) != tt.thermal {
				t.Errorf("processor %v, gpu %v, thermal %v; want %v, %v, %v",
					d.Processor != nil, d.GPU != nil, d.ThermalPressure != nil, tt.processor, tt.gpu, tt.thermal)
			}
		})
	}
}

func TestModesBreakTheStreamAsTheySay(t *testing.T) {
	const die = "powermetrics: IOReportCreateSubscription failed (fake failure)\n"
	tests := []struct {
		name       string
		mode       string
		n          string
		wantCode   int
		wantDocs   int
		wantStderr string
	}{
		{"no mode writes -n documents", "", "4", 0, 4, noise},
		{"empty ends at once, having written nothing", "empty", "4", 0, 0, ""},
		{"notroot refuses as powermetrics does for a user who is not root", "notroot", "4", 1, 0, "powermetrics must be invoked as the superuser\n"},
		{"die-after=2 fails with status 3 after two documents", "die-after=2", "4", 3, 2, noise + die},
		{"exit-after=2 exits with status 0 after two documents", "exit-after=2", "4", 0, 2, noise},
		{"-n ends the stream before die-after can", "die-after=3", "2", 0, 2, noise},
		{"modes combine, with spaces after the commas", "vm, exit-after=1", "4", 0, 1, noise},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := offline([]string{"-f", "plist", "-i", "100", "-n", tt.n}, "FAKEPM_MODE", tt.mode)
			docs := decodeAll(t, r.stdout)
			if r.code != tt.wantCode || len(docs) != tt.wantDocs || string(r.stderr) != tt.wantStderr {
				t.Errorf("exit status %d, %d documents, stderr %q; want %d, %d, %q",
					r.code, len(docs), r.stderr, tt.wantCode, tt.wantDocs, tt.wantStderr)
			}
		})
	}
}

func TestVMModeWritesDocumentsWithNoPower(t *testing.T) {
	r := offline([]string{"-f", "plist", "-i", "100", "-n", "3"}, "FAKEPM_MODE", "vm")
	docs := decodeAll(t, r.stdout)
	if len(docs) != 3 {
		t.Fatalf("%d documents, want 3", len(docs))
	}
	for i, d := range docs {
		if d.Processor != nil || d.GPU != nil || d.ThermalPressure != nil || d.ElapsedNS == 0 {
			t.Errorf("document %d: %+v, want a header and nothing else", i, d)
		}
	}
}

func TestGarbageModeWritesBytesThatAreNoPlistAfterADocument(t *testing.T) {
	args := []string{"-f", "plist", "-i", "100", "-n", "4"}
	plain := offline(args)
	r := offline(args, "FAKEPM_MODE", "garbage-after=2")
	docs := documents(t, plain.stdout)
	garbage := "\x00\x01\xfe\xffnot a plist\x00garbage</plist>\n"
	want := string(docs[0]) + "\x00" + string(docs[1]) + garbage + "\x00" + string(docs[2]) + "\x00" + string(docs[3])
	if r.code != 0 || string(r.stdout) != want {
		t.Errorf("exit status %d; the stream is not the plain one with %q after its second document", r.code, garbage)
	}
}

func TestNeedrootRefusesAnyoneButRootOrSudo(t *testing.T) {
	tests := []struct {
		name     string
		euid     int
		env      []string
		wantCode int
	}{
		{"root is served", 0, nil, 0},
		{"an ordinary user is refused", 501, nil, 1},
		{"an ordinary user through sudo is served", 501, []string{"FAKEPM_SUDOED", "1"}, 0},
		{"without needroot an ordinary user is served", 501, []string{"FAKEPM_MODE", ""}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{"FAKEPM_OFFLINE", "1", "FAKEPM_MODE", "needroot"}, tt.env...)
			r := runAs(tt.euid, []string{"-f", "plist", "-i", "100", "-n", "1"}, env...)
			if r.code != tt.wantCode {
				t.Errorf("exit status %d, want %d (stderr %q)", r.code, tt.wantCode, r.stderr)
			}
			refused := "powermetrics must be invoked as the superuser\n"
			if tt.wantCode == 1 && (string(r.stderr) != refused || len(r.stdout) != 0) {
				t.Errorf("stdout %d bytes, stderr %q; want nothing and %q", len(r.stdout), r.stderr, refused)
			}
			if tt.wantCode == 0 && len(documents(t, r.stdout)) != 1 {
				t.Errorf("stdout %q, want one document", r.stdout)
			}
		})
	}
}

func TestPidAndArgsFilesAreWrittenBeforeTheRootCheck(t *testing.T) {
	tests := []struct {
		name string
		mode string
		code int
	}{
		{"a fake that runs writes them", "", 0},
		{"a fake that refuses a user who is not root writes them too", "notroot", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pidfile, argsfile := filepath.Join(dir, "pid"), filepath.Join(dir, "args")
			args := []string{"-f", "plist", "-i", "100", "-n", "1", "-s", "cpu_power,thermal"}
			r := offline(args, "FAKEPM_MODE", tt.mode, "FAKEPM_PIDFILE", pidfile, "FAKEPM_ARGSFILE", argsfile)
			if r.code != tt.code {
				t.Errorf("exit status %d, want %d", r.code, tt.code)
			}
			if b, err := os.ReadFile(pidfile); err != nil || string(b) != strconv.Itoa(os.Getpid())+"\n" {
				t.Errorf("pid file = %q, %v; want %d", b, err, os.Getpid())
			}
			if b, err := os.ReadFile(argsfile); err != nil || string(b) != strings.Join(args, " ")+"\n" {
				t.Errorf("args file = %q, %v; want %q", b, err, strings.Join(args, " "))
			}
		})
	}
}

func TestBadCommandLinesAreUsageErrors(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		env        []string
		wantStderr []string
	}{
		{"an unknown flag", []string{"-f", "plist", "-x"}, nil, []string{"flag provided but not defined: -x", "FAKEPM_MODE"}},
		{"a count that is no number", []string{"-f", "plist", "-n", "many"}, nil, []string{`invalid value "many" for flag -n`}},
		{"the text format, which is powermetrics's default", []string{"-i", "100"}, nil, []string{`fake powermetrics writes -f plist only, not "text"`}},
		{"-i 0, samples on demand only", []string{"-f", "plist", "-i", "0"}, nil, []string{"-i 0 (samples on demand only) is not supported"}},
		{"a negative interval", []string{"-f", "plist", "-i", "-5"}, nil, []string{"-i 0 (samples on demand only) is not supported"}},
		{"a profile that does not parse", []string{"-f", "plist"}, []string{"FAKEPM_PROFILE", "0=1,1"}, []string{`fake powermetrics: profile: step "0=1,1"`}},
		{"an unknown layout", []string{"-f", "plist"}, []string{"FAKEPM_LAYOUT", "m9"}, []string{`fake powermetrics: no layout "m9" (m1, pro, ultra)`}},
		{"an unknown mode", []string{"-f", "plist"}, []string{"FAKEPM_MODE", "vm,loud"}, []string{`fake powermetrics: unknown FAKEPM_MODE "loud"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is a usage error", func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			r := offline(tt.args, append([]string{"FAKEPM_PIDFILE", pidfile}, tt.env...)...)
			if r.code != 64 || len(r.stdout) != 0 {
				t.Errorf("exit status %d with %d bytes on stdout, want 64 and nothing", r.code, len(r.stdout))
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(string(r.stderr), w) {
					t.Errorf("stderr %q does not say %q", r.stderr, w)
				}
			}
			if _, err := os.Stat(pidfile); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a fake that did not start wrote its pid file (%v)", err)
			}
		})
	}
}

// Help asked for is no error: -h prints the usage to stdout, where a pager
// reads it, and the fake exits 0 without starting. A bad flag prints it
// to stderr, with status 64 (TestBadCommandLinesAreUsageErrors).
func TestHelpAskedForIsNoError(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		t.Run(arg, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			r := offline([]string{"-f", "plist", arg}, "FAKEPM_PIDFILE", pidfile)
			if r.code != 0 || string(r.stdout) != Usage || len(r.stderr) != 0 {
				t.Errorf("exit status %d, stdout %q, stderr %q; want 0, the usage and nothing", r.code, r.stdout, r.stderr)
			}
			if _, err := os.Stat(pidfile); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a fake asked for its help started (its pid file: %v)", err)
			}
		})
	}
}

func TestWriteBenchDocsModeWritesThemAndEnds(t *testing.T) {
	dir := t.TempDir()
	r := offline([]string{"-f", "plist"}, "FAKEPM_WRITE_BENCH_DOCS", dir)
	if r.code != 0 || len(r.stdout) != 0 {
		t.Errorf("exit status %d with %d bytes on stdout, want 0 and nothing", r.code, len(r.stdout))
	}
	for name := range BenchDocuments() {
		if _, err := os.Stat(filepath.Join(dir, name+".plist")); err != nil {
			t.Error(err)
		}
	}
	r = offline([]string{"-f", "plist"}, "FAKEPM_WRITE_BENCH_DOCS", filepath.Join(dir, "missing"))
	if r.code != 1 || !strings.HasPrefix(string(r.stderr), "fake powermetrics: open ") {
		t.Errorf("into a missing folder: exit status %d, stderr %q; want 1 and the error", r.code, r.stderr)
	}
}

type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestAFakeThatCannotWriteEndsWithStatus1(t *testing.T) {
	var stderr bytes.Buffer
	code := Main([]string{"-f", "plist", "-i", "100"}, brokenPipe{}, &stderr, envOf("FAKEPM_OFFLINE", "1"))
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
}
