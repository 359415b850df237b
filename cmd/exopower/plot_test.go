package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/cli"
)

// exopower runs the CLI in-process and returns its stdout, failing the
// test on a non-zero status.
func exopower(t *testing.T, args ...string) string {
	t.Helper()
	var out, errs bytes.Buffer
	if code := run(context.Background(), args, &cli.Streams{Out: &out, Err: &errs, Getenv: func(string) string { return "" }}); code != 0 {
		t.Fatalf("exopower %s: exit status %d\n%s", strings.Join(args, " "), code, errs.String())
	}
	return out.String()
}

// svgTexts checks that path is an SVG document and returns its texts.
func svgTexts(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	var texts []string
	var root string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not valid XML: %v", path, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = e.Name.Local
			}
		case xml.CharData:
			texts = append(texts, strings.TrimSpace(string(e)))
		}
	}
	if root != "svg" {
		t.Fatalf("%s is <%s>, not <svg>", path, root)
	}
	return strings.Join(texts, "\n")
}

func TestPlotOfARecordingAndOfItsSamplesShowTheReportsEnergy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := filepath.Join("..", "..", "testdata", "fake-ultra-compact.plist")
	samples := filepath.Join(dir, "w.ndjson")
	if err := os.WriteFile(samples, []byte(exopower(t, "report", "--samples", "ndjson", rec)), 0o644); err != nil {
		t.Fatal(err)
	}
	energy := strings.TrimSpace(exopower(t, "report", "--json", rec))
	for _, in := range []string{rec, samples} {
		svg := filepath.Join(dir, filepath.Base(in)+".svg")
		exopower(t, "plot", in, "-o", svg)
		texts := svgTexts(t, svg)
		for _, name := range []string{"total", "CPU", "GPU", "ANE", "exopower plot: " + filepath.Base(in)} {
			if !strings.Contains(texts, name) {
				t.Errorf("%s: no %q among its texts:\n%s", svg, name, texts)
			}
		}
		if want := energyInTitle(t, energy); !strings.Contains(texts, want) {
			t.Errorf("%s: the title does not say %q:\n%s", svg, want, texts)
		}
	}
}

// energyInTitle is how a plot's title writes a summary's total energy.
func energyInTitle(t *testing.T, summaryJSON string) string {
	t.Helper()
	i := strings.Index(summaryJSON, `"energy_joules":{"total":`)
	if i < 0 {
		t.Fatalf("no energy in %s", summaryJSON)
	}
	rest := summaryJSON[i+len(`"energy_joules":{"total":`):]
	var v float64
	if _, err := fmt.Sscan(rest[:strings.IndexByte(rest, ',')], &v); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%.4g J over", v)
}

func TestPlotWritesAPNGOfTheSizeAsked(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "p.png")
	exopower(t, "plot", "--width", "640", "--height", "320", filepath.Join("..", "..", "testdata", "fake-m1-compact.plist"), "-o", out)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s does not decode as PNG: %v", out, err)
	}
	if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 320 {
		t.Errorf("the PNG is %dx%d, want 640x320", b.Dx(), b.Dy())
	}
}
