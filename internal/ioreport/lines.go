package ioreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"
)

// MaxLine bounds a recording's line: 364 channels take about 25 KB.
const MaxLine = 4 << 20

// maxLineRead is how far a line too long is read, and dropped, looking
// for its end: no reading is that long, and a stream with no line end
// (the NULs of /dev/zero) would be read for ever.
const maxLineRead = 4 * MaxLine

// bom is the UTF-8 byte order mark that some editors put before a file's
// first line.
var bom = []byte("\ufeff")

// errLongLine is a line over MaxLine: its reading is lost, and the
// reading after it read as usual.
var errLongLine = fmt.Errorf("longer than %d MiB, where a reading of 364 channels takes about 25 KB: its reading is left out", MaxLine>>20)

// errEndless is a line with no end within maxLineRead: the recording is
// read no further.
var errEndless = fmt.Errorf("more than %d MiB without a line's end: no recording's line, so the file is read no further", maxLineRead>>20)

// ErrBrokenHeader is a first line that says it is an IOReport
// recording's header ("type":"ioreport-recording") but cannot be read as
// one: a NaN, a field of the wrong type.
var ErrBrokenHeader = errors.New("a broken IOReport recording header")

// lineReader reads a recording line by line, each up to MaxLine bytes.
// The rest of a longer line is read and dropped, never held: that line
// is lost alone.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its end (\n or \r\n), and whether it
// was longer than MaxLine: then it holds the line's first MaxLine bytes.
// A last line without its end counts. It returns io.EOF at the end, and
// errEndless for a line that goes on past maxLineRead. The line is valid
// until the next call.
func (l *lineReader) next() (line []byte, long bool, err error) {
	l.buf = l.buf[:0]
	read := 0
	for {
		chunk, err := l.r.ReadSlice('\n')
		read += len(chunk)
		ended := err == nil
		if ended {
			chunk = bytes.TrimSuffix(chunk[:len(chunk)-1], []byte("\r"))
		}
		if room := MaxLine - len(l.buf); len(chunk) > room {
			chunk, long = chunk[:room], true
		}
		l.buf = append(l.buf, chunk...)
		switch {
		case ended, err == io.EOF && read > 0:
			return l.buf, long, nil
		case err != bufio.ErrBufferFull:
			return nil, false, err
		case read > maxLineRead:
			return nil, false, errEndless
		}
	}
}

// typeMark is what a first line says when it is an IOReport recording's
// header, with or without white space: compiled when first needed, not
// when exopower starts, which every command would pay for.
var typeMark = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"type"\s*:\s*"` + RecordingType + `"`)
})

// IsRecording says whether b, the start of a file (or its first line, as
// Sniff reads it), is an IOReport recording's: its first line, after an
// optional UTF-8 byte order mark, is a JSON object that names the type
// (`"type":"ioreport-recording"`). The line need not parse: a header
// that names the type and does not parse is a broken recording's, not
// something else's.
func IsRecording(b []byte) bool {
	first, _, _ := bytes.Cut(bytes.TrimPrefix(b, bom), []byte("\n"))
	first = bytes.TrimLeft(first, " \t\r")
	return bytes.HasPrefix(first, []byte("{")) && typeMark().Match(first)
}

// Sniff reads enough of r to tell whether it is an IOReport recording:
// its first line, however long, up to MaxLine bytes, or less where its
// first byte other than a byte order mark or white space is not '{'. It
// returns IsRecording's answer and r whole again. Only a read that fails
// is an error.
func Sniff(r io.Reader) (recording bool, whole io.Reader, err error) {
	var head []byte
	buf := make([]byte, 4<<10)
	for {
		n, err := r.Read(buf)
		head = append(head, buf[:n]...)
		switch {
		case err == io.EOF:
			return IsRecording(head), bytes.NewReader(head), nil
		case err != nil:
			return false, nil, err
		case told(head):
			return IsRecording(head), io.MultiReader(bytes.NewReader(head), r), nil
		}
	}
}

// told says whether head, the start of a file, tells already whether it
// is a recording: it holds the first line's end, or MaxLine bytes, or a
// first byte that cannot start a JSON object.
func told(head []byte) bool {
	if len(head) > MaxLine || bytes.IndexByte(head, '\n') >= 0 {
		return true
	}
	rest := bytes.TrimLeft(head, " \t\r")
	if bytes.HasPrefix(bom, rest) {
		return false // the byte order mark, or the start of it
	}
	rest = bytes.TrimLeft(bytes.TrimPrefix(rest, bom), " \t\r")
	return len(rest) > 0 && rest[0] != '{'
}

// parseHeader reads a recording's first line, b (without a byte order
// mark), of which long says it was cut at MaxLine. A newer schema is told
// first, whatever the rest of the line holds: its fields may be ones this
// exopower does not know.
func parseHeader(b []byte, long bool) (Header, error) {
	if !IsRecording(b) {
		return Header{}, ErrNotRecording
	}
	if v := schemaVersion(b); v > plugSchema {
		return Header{}, fmt.Errorf("an IOReport recording of schema_version %v: this exopower reads versions 1 and %d: %w", v, plugSchema, ErrNewerRecording)
	}
	var h Header
	if long {
		return h, fmt.Errorf("line 1: %w: longer than %d MiB", ErrBrokenHeader, MaxLine>>20)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("line 1: %w: %v", ErrBrokenHeader, err)
	}
	switch {
	case h.Type != RecordingType:
		return h, fmt.Errorf("line 1: %w: its \"type\" is %q", ErrBrokenHeader, h.Type)
	case h.SchemaVersion != 1 && h.SchemaVersion != plugSchema:
		return h, fmt.Errorf("line 1: %w: schema_version %d, where the first is 1", ErrBrokenHeader, h.SchemaVersion)
	}
	if err := h.Wall.check(); err != nil {
		return h, fmt.Errorf("line 1: %w: its plug's %v", ErrBrokenHeader, err)
	}
	return h, nil
}

// schemaVersion is the header's schema_version as far as b can be read
// (from its start to its first fault, which may come after it), or 0.
func schemaVersion(b []byte) float64 {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return 0
		}
		if key != "schema_version" {
			continue
		}
		var v json.Number
		if json.Unmarshal(value, &v) != nil {
			return 0
		}
		f, err := v.Float64()
		if err != nil {
			return 0
		}
		return f
	}
	return 0
}
