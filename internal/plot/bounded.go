package plot

import (
	"fmt"
	"io"
)

// maxRun bounds a line of the JSON and CSV that plot reads, and a run of
// nothing but white space: no row of a samples file, no line of watch
// --node --json and no line of a bench's JSON comes near it, while an
// input with no line end (NUL bytes) or of white space for ever would be
// held in memory until it ran out. It is the size limit of a
// powermetrics document, which plot's recordings are held to.
const maxRun = 16 << 20

// bounded reads r, and fails once a line runs past maxRun bytes or white
// space runs past maxRun bytes with nothing else. It reads no more than
// one byte past either.
type bounded struct {
	r           io.Reader
	line, blank int // bytes since the last line end; white space since the last other byte
	lines       int // the line being read
	blankFrom   int // the line where the white space began
	err         error
}

func newBounded(r io.Reader) *bounded { return &bounded{r: r, lines: 1} }

func (b *bounded) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	// A read of k bytes lengthens either run by k at most.
	p = p[:min(len(p), maxRun+1-max(b.line, b.blank))]
	n, err := b.r.Read(p)
	for _, c := range p[:n] {
		if b.blank == 0 {
			b.blankFrom = b.lines
			if c == '\n' {
				b.blankFrom++ // white space from the next line on
			}
		}
		switch c {
		case '\n':
			b.line, b.lines, b.blank = 0, b.lines+1, b.blank+1
		case ' ', '\t', '\r':
			b.line, b.blank = b.line+1, b.blank+1
		default:
			b.line, b.blank = b.line+1, 0
		}
	}
	switch {
	case b.line > maxRun:
		b.err = fmt.Errorf("line %d: more than %d MiB without a line's end: no file that plot reads has such a line", b.lines, maxRun>>20)
	case b.blank > maxRun:
		b.err = fmt.Errorf("line %d: more than %d MiB of nothing but white space: no file that plot reads has that", b.blankFrom, maxRun>>20)
	case err != nil && err != io.EOF:
		b.err = err
	}
	if b.err != nil {
		return 0, b.err
	}
	return n, err
}
