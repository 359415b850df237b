package fakepm

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.sha256 from the fake's output")

// Other packages' tests and fixtures depend on the fake's exact bytes, so
// every document shape and a set of offline streams are pinned by their
// SHA-256. A change here must be one that those packages can take.
func TestOutputIsUnchanged(t *testing.T) {
	got := map[string]string{}
	for name, b := range goldenDocuments() {
		got["document "+name] = sum(b)
	}
	for name, b := range BenchDocuments() {
		got["bench "+name] = sum(b)
	}
	for _, r := range goldenRuns {
		var stdout, stderr bytes.Buffer
		code := Main(r.args, &stdout, &stderr, envOf(append([]string{"FAKEPM_OFFLINE", "1"}, r.env...)...))
		got["run "+r.name] = sum([]byte(fmt.Sprintf("%d\x00%s\x00%s", code, stdout.Bytes(), stderr.Bytes())))
	}
	path := filepath.Join("testdata", "golden.sha256")
	if *update {
		writeGolden(t, path, got)
		return
	}
	want := readGolden(t, path)
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s: no longer produced", name)
		} else if g != w {
			t.Errorf("%s: output changed (sha256 %s, want %s)", name, g, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: not in %s; run go test -update", name, path)
		}
	}
}

// goldenDocuments returns a document for every layout, every set of the
// samplers the fake knows, and the options that change a document's shape.
func goldenDocuments() map[string][]byte {
	docs := map[string][]byte{}
	all := []string{"cpu_power", "gpu_power", "thermal"}
	variants := []struct {
		name string
		set  func(*Document)
	}{
		{"plain", func(*Document) {}},
		{"indented", func(d *Document) { d.Indent = true }},
		{"nan-idle", func(d *Document) { d.GPUIdle = math.NaN() }},
		{"idle-out-of-range", func(d *Document) { d.GPUIdle = 1.7 }},
		{"tasks", func(d *Document) { d.Tasks = 3 }},
	}
	for layout := range Layouts {
		for mask := 0; mask < 1<<len(all); mask++ {
			samplers := map[string]bool{}
			var names []string
			for i, s := range all {
				if mask&(1<<i) != 0 {
					samplers[s] = true
					names = append(names, s)
				}
			}
			for _, v := range variants {
				d := Document{
					Elapsed:   1023721416 * time.Nanosecond,
					Timestamp: time.Date(2025, 7, 8, 5, 36, 24, 987654321, time.FixedZone("CEST", 2*3600)),
					Energy:    Watts{0.8554999, 1.2345, 0.0004999},
					Layout:    Layouts[layout],
					OSBuild:   "24F74",
					Samplers:  samplers,
					GPUIdle:   0.42,
				}
				v.set(&d)
				docs[fmt.Sprintf("%s [%s] %s", layout, strings.Join(names, ","), v.name)] = d.Append(nil)
			}
		}
	}
	return docs
}

// goldenRuns are offline runs of the fake, whose output depends on nothing
// but their arguments and environment.
var goldenRuns = []struct {
	name string
	args []string
	env  []string
}{
	{"three documents", []string{"-f", "plist", "-i", "100", "-n", "3"}, nil},
	{"ten documents when -n is left out", []string{"-f", "plist", "-i", "1000"}, nil},
	{"pro layout, indented", []string{"-f", "plist", "-i", "100", "-n", "2"}, []string{"FAKEPM_LAYOUT", "pro", "FAKEPM_INDENT", "1"}},
	{"ultra layout", []string{"-f", "plist", "-i", "100", "-n", "5"}, []string{"FAKEPM_LAYOUT", "ultra"}},
	{"another seed", []string{"-f", "plist", "-i", "100", "-n", "5"}, []string{"FAKEPM_SEED", "2"}},
	{"a constant profile", []string{"-f", "plist", "-i", "250", "-n", "4"}, []string{"FAKEPM_PROFILE", "0=10,2,0.5"}},
	{"cpu_power only", []string{"-f", "plist", "-i", "100", "-n", "2", "-s", "cpu_power"}, nil},
	{"gpu_power and thermal", []string{"-f", "plist", "-i", "100", "-n", "2", "-s", "gpu_power, thermal"}, nil},
	{"vm", []string{"-f", "plist", "-i", "100", "-n", "2"}, []string{"FAKEPM_MODE", "vm"}},
	{"garbage after 2", []string{"-f", "plist", "-i", "100", "-n", "4"}, []string{"FAKEPM_MODE", "garbage-after=2"}},
	{"die after 2", []string{"-f", "plist", "-i", "100", "-n", "4"}, []string{"FAKEPM_MODE", "die-after=2"}},
	{"exit after 2", []string{"-f", "plist", "-i", "100", "-n", "4"}, []string{"FAKEPM_MODE", "exit-after=2"}},
	{"empty", []string{"-f", "plist", "-i", "100", "-n", "4"}, []string{"FAKEPM_MODE", "empty"}},
	{"notroot", []string{"-f", "plist", "-i", "100", "-n", "4"}, []string{"FAKEPM_MODE", "notroot"}},
	{"needroot, sudoed", []string{"-f", "plist", "-i", "100", "-n", "1"}, []string{"FAKEPM_MODE", "needroot", "FAKEPM_SUDOED", "1"}},
	{"an unknown flag", []string{"-f", "plist", "-x"}, nil},
	{"-h", []string{"-h"}, nil},
	{"text format", []string{"-i", "100"}, nil},
	{"interval 0", []string{"-f", "plist", "-i", "0"}, nil},
	{"a bad profile", []string{"-f", "plist"}, []string{"FAKEPM_PROFILE", "0=1,1"}},
	{"a bad layout", []string{"-f", "plist"}, []string{"FAKEPM_LAYOUT", "m9"}},
	{"a bad mode", []string{"-f", "plist"}, []string{"FAKEPM_MODE", "vm,loud"}},
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// envOf returns a getenv over name, value pairs.
func envOf(pairs ...string) func(string) string {
	env := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		env[pairs[i]] = pairs[i+1]
	}
	return func(k string) string { return env[k] }
}

func readGolden(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		h, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		want[name] = h
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return want
}

func writeGolden(t *testing.T, path string, got map[string]string) {
	t.Helper()
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "%s  %s\n", got[name], name)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
