package powermetrics

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/testfiles"
)

// limitsBase returns a document as powermetrics writes it, and where a
// value can be put into its top dict.
func limitsBase(t testing.TB) (doc []byte, at int) {
	t.Helper()
	b, err := os.ReadFile("../../testdata/fake-m1-compact.plist")
	if err != nil {
		t.Fatal(err)
	}
	doc = documents(b)[0]
	at = bytes.Index(doc, []byte("<key>kern_bootargs</key>"))
	if at < 0 {
		t.Fatal("no kern_bootargs in the document")
	}
	return doc, at
}

// limitsDoc puts into doc at at a key whose value nests depth dicts and
// arrays (a dict where kinds has a 1 bit, cycling through its 64 bits),
// the innermost holding width integers and a string of strlen bytes, after
// a comment if comment is set. It returns the document and how deep its
// elements nest, plist and the top dict included.
func limitsDoc(doc []byte, at, depth, width, strlen int, kinds uint64, comment bool) ([]byte, int) {
	var b bytes.Buffer
	b.Write(doc[:at])
	if comment {
		b.WriteString("<!-- sent to the full decoder -->")
	}
	b.WriteString("<key>deep</key>")
	isDict := func(level int) bool { return kinds>>(level%64)&1 == 1 }
	for level := 0; level < depth; level++ {
		if level > 0 && isDict(level-1) {
			b.WriteString("<key>k</key>")
		}
		if isDict(level) {
			b.WriteString("<dict>")
		} else {
			b.WriteString("<array>")
		}
	}
	inner := isDict(depth - 1)
	for i := 0; i < width; i++ {
		if inner {
			b.WriteString("<key>k</key>")
		}
		b.WriteString("<integer>42</integer>")
	}
	if strlen > 0 {
		if inner {
			b.WriteString("<key>s</key>")
		}
		b.WriteString("<string>" + strings.Repeat("x", strlen) + "</string>")
	}
	for level := depth - 1; level >= 0; level-- {
		if isDict(level) {
			b.WriteString("</dict>")
		} else {
			b.WriteString("</array>")
		}
	}
	b.Write(doc[at:])
	nesting := 2 + depth
	if width > 0 || strlen > 0 {
		nesting++
	}
	return b.Bytes(), nesting
}

// chunkReader returns at most n bytes per Read, as a pipe does.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// FuzzLimits builds documents from its parameters, nested deep and wide
// and with long strings, and reads each between two good documents from a
// stream cut into reads of any size, against a size limit of 1 KiB to
// 256 KiB more than the good ones. Whatever the parameters, nothing
// crashes; a document over the
// limit ends the stream with ErrTooLarge; one nested deeper than
// MaxNesting is refused with ErrTooDeep and the stream goes on; any other
// is read, with the values of the document it was built from; and the
// fast path agrees with the full decoder.
func FuzzLimits(f *testing.F) {
	// The depth is one more than depth; a limit of 1 KiB more than the
	// good documents holds a 1-deep array with a string of 977 bytes, not
	// of 978. testdata/fuzz/FuzzLimits holds more.
	f.Add(uint32(0), uint16(3), uint32(10), uint64(0), uint8(10), uint32(0), false)
	f.Add(uint32(0), uint16(0), uint32(977), uint64(0), uint8(0), uint32(0), false)
	f.Add(uint32(0), uint16(0), uint32(978), uint64(0), uint8(0), uint32(100), false)
	f.Add(uint32(MaxNesting-3), uint16(0), uint32(0), uint64(0), uint8(10), uint32(0), false)
	f.Add(uint32(MaxNesting-2), uint16(0), uint32(0), uint64(1), uint8(10), uint32(65536), true)
	base, at := limitsBase(f)
	want, err := Parse(base)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, depth uint32, width uint16, strlen uint32, kinds uint64, limitShift uint8, chunk uint32, comment bool) {
		doc, nesting := limitsDoc(base, at, 1+int(depth%20_000), int(width%512), int(strlen%(512<<10)), kinds, comment)
		limit := len(base) + 1<<(10+limitShift%9)
		tooLarge, tooDeep := len(doc) > limit, nesting > MaxNesting
		if !tooLarge && (tooDeep || len(doc) <= 64<<10) {
			same(t, doc)
		}
		var r io.Reader = bytes.NewReader(bytes.Join([][]byte{base, doc, base}, []byte{0}))
		if chunk != 0 {
			r = &chunkReader{r, 64 + int(chunk%(1<<20))}
		}
		d := NewDecoder(r, time.Now)
		d.limit = limit
		var got []string
		for range 5 {
			s, err := d.Next()
			got = append(got, limitsOutcome(s, err, want))
			if err == io.EOF || EndsStream(err) {
				break
			}
		}
		wantOutcome := []string{"sample 0", "sample 1", "sample 2", "end"}
		switch {
		case tooLarge:
			wantOutcome = []string{"sample 0", "too large 1"}
		case tooDeep:
			wantOutcome = []string{"sample 0", "too deep 1", "sample 2", "end"}
		}
		if !reflect.DeepEqual(got, wantOutcome) {
			t.Fatalf("a %d-byte document nested %d deep, limit %d: %q, want %q", len(doc), nesting, limit, got, wantOutcome)
		}
	})
}

// limitsOutcome names what Next returned: a sample with the values of
// want, or which error.
func limitsOutcome(s power.Sample, err error, want power.Sample) string {
	var de *DocumentError
	switch {
	case err == io.EOF:
		return "end"
	case errors.As(err, &de) && errors.Is(err, ErrTooLarge):
		return "too large " + string(rune('0'+de.Index))
	case errors.As(err, &de) && errors.Is(err, ErrTooDeep):
		return "too deep " + string(rune('0'+de.Index))
	case err != nil:
		return err.Error()
	}
	i := s.Index
	s.Index, s.Arrival = want.Index, want.Arrival
	if !reflect.DeepEqual(s, want) {
		return "other values"
	}
	return "sample " + string(rune('0'+i))
}

// xmlDepth returns how deep the elements of doc nest as encoding/xml reads
// them, which the plist package does, up to where it stops; and whether
// it read all of doc without an error.
func xmlDepth(doc []byte) (most int, ok bool) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	depth := 0
	for {
		tok, err := d.Token()
		if err != nil {
			return most, err == io.EOF
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
			most = max(most, depth)
		case xml.EndElement:
			depth--
		}
	}
}

// FuzzMarkup holds checkMarkup's reading of nesting to encoding/xml's:
// whatever the bytes, a document that encoding/xml would read deeper than
// MaxNesting is refused before the plist package sees it, and one it reads
// whole and no deeper is not refused for its depth.
func FuzzMarkup(f *testing.F) {
	deep := strings.Repeat("<array>", MaxNesting) + strings.Repeat("</array>", MaxNesting)
	for _, s := range markupCases {
		f.Add([]byte(strings.ReplaceAll(s.doc, "DEEP", deep)))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		most, whole := xmlDepth(doc)
		err := checkMarkup(doc)
		if most > MaxNesting && err == nil {
			t.Fatalf("encoding/xml reads it %d deep, and checkMarkup lets it through", most)
		}
		if whole && most <= MaxNesting && errors.Is(err, ErrTooDeep) {
			t.Fatalf("encoding/xml reads it whole, %d deep, and checkMarkup refuses it: %v", most, err)
		}
	})
}

// markupCases are documents, DEEP standing for MaxNesting nested arrays,
// that hide or seem to hide elements from a reader of their markup.
var markupCases = []struct {
	name, doc string
	deep      bool // nested deeper than MaxNesting as encoding/xml reads it
}{
	{"deep", "<plist>DEEP</plist>", true},
	{"deep in a comment", "<plist><!-- DEEP --></plist>", false},
	{"deep in CDATA", "<plist><string><![CDATA[DEEP]]></string></plist>", false},
	{"deep in a processing instruction", "<plist><?pi DEEP ?></plist>", false},
	{"deep in a directive", `<!DOCTYPE plist [ <!ENTITY a "DEEP"> ]><plist></plist>`, false},
	{"deep after a directive with a quoted >", `<!DOCTYPE plist SYSTEM "><!--"><plist>DEEP</plist><!-- -->`, true},
	{"deep after a directive with a comment", `<!DOCTYPE plist [ <!-- > --> ]><plist>DEEP</plist>`, true},
	{"deep after a directive whose first byte is >", `<!>x><plist>DEEP</plist>`, true},
	{"deep after a comment with closing tags", "<plist><array><!-- </array></array></array> --><array>DEEP</array></array></plist>", true},
	{"deep in attributes that look self-closing", `<plist><array a="/>">` + strings.Repeat(`<array b='/>'>`, MaxNesting) + strings.Repeat("</array>", MaxNesting) + "</array></plist>", true},
	{"deep with prefixes", strings.Repeat("<x:array>", MaxNesting+1) + strings.Repeat("</x:array>", MaxNesting+1), true},
	{"self-closing at the limit", strings.Repeat("<array>", MaxNesting-1) + "<array/>" + strings.Repeat("</array>", MaxNesting-1), false},
	{"self-closing past the limit", strings.Repeat("<array>", MaxNesting) + "<true/>" + strings.Repeat("</array>", MaxNesting), true},
}

// checkMarkup refuses what encoding/xml reads deeper than MaxNesting, and
// nothing that it reads whole and no deeper, however the markup hides it.
func TestCheckMarkupReadsNestingAsEncodingXMLDoes(t *testing.T) {
	deep := strings.Repeat("<array>", MaxNesting) + strings.Repeat("</array>", MaxNesting)
	for _, c := range markupCases {
		t.Run(c.name, func(t *testing.T) {
			doc := []byte(strings.ReplaceAll(c.doc, "DEEP", deep))
			most, whole := xmlDepth(doc)
			if (most > MaxNesting) != c.deep || !whole {
				t.Fatalf("encoding/xml reads it %d deep (whole: %v): the case is wrong", most, whole)
			}
			if err := checkMarkup(doc); errors.Is(err, ErrTooDeep) != c.deep {
				t.Errorf("checkMarkup: %v, want it refused: %v", err, c.deep)
			}
		})
	}
}

// Numbers are checked wherever the plist package would read one, and only
// there.
func TestCheckMarkupChecksNumbersWhereThePlistPackageReadsThem(t *testing.T) {
	for _, c := range []struct {
		doc string
		ok  bool
	}{
		{"<plist><integer>12</integer></plist>", true},
		{"<plist><integer>0x12</integer></plist>", false},
		{"<plist><x:integer>0x12</x:integer></plist>", false},
		{"<plist><integer:x>0x12</integer:x></plist>", true},
		{"<plist><integers>0x12</integers></plist>", true},
		{`<plist><real a="1">1_0</real></plist>`, false},
		{"<plist><real><!-- -->1</real></plist>", false},
		{"<plist><real><![CDATA[1]]></real></plist>", false},
		{"<plist><integer>&#49;</integer></plist>", false},
		{"<plist><string>0x12</string></plist>", true},
		{"<plist><!-- <integer>0x12</integer> --></plist>", true},
		{"<plist><integer/></plist>", true},
	} {
		if err := checkMarkup([]byte(c.doc)); (err == nil) != c.ok || err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want it read: %v", c.doc, err, c.ok)
		}
	}
}

// NUL bytes and white space where a document should start count against
// the size limit, as a document's own bytes do: a stream of them
// (exopower report /dev/zero) ends with ErrTooLarge once it passes the
// limit, before any document or after one, instead of being read for
// ever at a core's full speed.
func TestNULsAndWhiteSpaceCountAgainstTheSizeLimit(t *testing.T) {
	base, _ := limitsBase(t)
	const limit = 1 << 20
	for _, c := range []struct {
		name  string
		head  []byte
		fill  byte
		index int
	}{
		{"NULs from the start", nil, 0, 0},
		{"NULs after a document", append(slices.Clip(base), 0), 0, 1},
		{"new lines after a document", append(slices.Clip(base), '\n'), '\n', 1},
	} {
		e := &testfiles.Endless{B: c.fill, Most: 8 * limit}
		d := NewDecoder(io.MultiReader(bytes.NewReader(c.head), e), time.Now)
		d.limit = limit
		for range c.index {
			if _, err := d.Next(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		_, err := d.Next()
		var de *DocumentError
		if !errors.As(err, &de) || de.Index != c.index || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "nothing but NUL bytes and white space in its first 1048576 bytes") {
			t.Errorf("%s: %v; want document %d refused as too large", c.name, err, c.index)

		}
		if e.Given > 2*limit {
			t.Errorf("%s: %d bytes read to refuse them, where the limit is %d", c.name, e.Given, limit)
		}
		if _, again := d.Next(); again != err {
			t.Errorf("%s: the stream goes on after the limit: %v", c.name, again)
		}
	}
}
