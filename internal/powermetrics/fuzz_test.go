package powermetrics_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/powermetrics"
)

// FuzzDecoder feeds the decoder arbitrary streams, seeded from testdata.
// Whatever the bytes, it must not panic or loop, every error must be a
// document error or the end of the stream, and every sample it lets
// through must hold plausible numbers.
func FuzzDecoder(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*.plist"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		// The fuzzer slows to a crawl on inputs of 100 KB: the first two
		// documents of each fixture carry the same shapes.
		f.Add(firstDocuments(b, 2))
	}
	f.Add(doc(100*time.Millisecond, 1, 2, 3))
	f.Add(intelDoc())
	f.Add([]byte("\x00\x00</plist>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := powermetrics.NewDecoder(bytes.NewReader(b), time.Now)
		for n := 0; ; n++ {
			if n > len(b)+1 {
				t.Fatalf("more results (%d) than bytes in the stream (%d)", n, len(b))
			}
			s, err := d.Next()
			if err == io.EOF || errors.Is(err, powermetrics.ErrTruncated) || errors.Is(err, powermetrics.ErrTooLarge) {
				return
			}
			var de *powermetrics.DocumentError
			if err != nil && !errors.As(err, &de) {
				t.Fatalf("error %v is neither a document error nor the end", err)
			}
			if err != nil {
				continue
			}
			for _, v := range []float64{s.Power.CPU, s.Power.GPU, s.Power.ANE, s.Power.Total, s.Energy.CPU, s.Energy.GPU, s.Energy.ANE} {
				if math.IsNaN(v) || v < 0 || math.IsInf(v, 0) {
					t.Fatalf("sample %d: implausible value %v in %+v", s.Index, v, s)
				}
			}
			if s.Window <= 0 {
				t.Fatalf("sample %d: window %v", s.Index, s.Window)
			}
		}
	})
}

// firstDocuments returns the first n documents of a stream, NUL included.
func firstDocuments(b []byte, n int) []byte {
	end := 0
	for i := 0; i < n; i++ {
		j := bytes.Index(b[end:], []byte("</plist>"))
		if j < 0 {
			return b
		}
		end += j + len("</plist>")
	}
	return b[:end]
}
