package powermetrics

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

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
