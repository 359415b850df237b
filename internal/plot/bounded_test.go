package plot

import (
	"io"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/heavytest"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/testfiles"
)

// What plot reads as JSON or CSV (a bench's JSON, the lines of watch
// --node --json, a samples file) is refused once a line runs past
// 16 MiB, or white space does: a start of each, then NUL bytes, spaces or
// line ends for ever, held a gigabyte in memory for 200 MB read. A heavy
// test: it reads 16 MiB six times, byte by byte, which the race detector
// makes 12 s of the suite.
func TestHeavyAnInputWithNoEndIsRefusedAt16MiB(t *testing.T) {
	heavytest.Skip(t)
	header := strings.Join(output.SamplesHeader, ",") + "\n"
	for _, c := range []struct {
		head string
		fill byte
		want string
	}{
		{`{"type":"bench",`, ' ', "line 1: more than 16 MiB without a line's end"},
		{`{"type":"sample",`, '\n', "line 2: more than 16 MiB of nothing but white space"},
		{`{"type":"window",`, '\t', "line 1: more than 16 MiB without a line's end"},
		{"index,", 0, "line 1: more than 16 MiB without a line's end"},
		{header, ' ', "line 2: more than 16 MiB of nothing but white space"},
		{header, '\n', "line 2: more than 16 MiB of nothing but white space"},
	} {
		e := &testfiles.Endless{B: c.fill, Most: 2*maxRun + 1<<20}
		_, err := Read(io.MultiReader(strings.NewReader(c.head), e), "endless")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q and %q for ever: %v; want %q", c.head, c.fill, err, c.want)
		}
		if e.Given > 2*maxRun {
			t.Errorf("%q and %q for ever: %d bytes read to refuse them", c.head, c.fill, e.Given)
		}
	}
}
