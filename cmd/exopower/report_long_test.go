package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/fakepm"
)

// A recording with one window 20 times as long as the others: report
// counts it, and says in its warnings, text and JSON alike, that the Mac
// may have slept.
func TestReportWarnsOfAWindowFarLongerThanTheOthers(t *testing.T) {
	t.Parallel()
	var b []byte
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 10 {
		w := time.Second
		if i == 6 {
			w = 20 * time.Second
		}
		d := fakepm.Document{Elapsed: w, Timestamp: at, Energy: fakepm.Watts{5 * w.Seconds(), w.Seconds(), 0},
			Layout: fakepm.Layouts["m1"], Samplers: map[string]bool{"cpu_power": true, "gpu_power": true, "ane_power": true}}
		if i > 0 {
			b = append(b, 0)
		}
		b = d.Append(b)
		at = at.Add(w)
	}
	path := filepath.Join(t.TempDir(), "slept.plist")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "document 6 covers 20s, 20 times the recording's typical window (1s): the Mac may have slept"

	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"report", path}, &cli.Streams{Out: &out, Err: &errs, Getenv: func(string) string { return "" }}); code != 0 {
		t.Fatalf("report: exit status %d\n%s", code, errs.String())
	}
	if !strings.Contains(out.String(), "warning: "+want) || !strings.Contains(out.String(), "duration  29.0 s   10 samples, 100% covered") {
		t.Errorf("report's summary has no warning %q, or not 29 s:\n%s", want, out.String())
	}

	out.Reset()
	if code := run(context.Background(), []string{"report", "--json", path}, &cli.Streams{Out: &out, Err: &errs, Getenv: func(string) string { return "" }}); code != 0 {
		t.Fatalf("report --json: exit status %d\n%s", code, errs.String())
	}
	var sum struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if len(sum.Warnings) != 1 || sum.Warnings[0] != want {
		t.Errorf("warnings %q, want [%q]", sum.Warnings, want)
	}
}
