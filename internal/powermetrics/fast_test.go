package powermetrics

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

// documents splits a stream into its documents, as the Decoder does.
func documents(b []byte) [][]byte {
	var docs [][]byte
	for {
		b = bytes.TrimLeft(b, "\x00 \t\r\n")
		i := bytes.Index(b, []byte("</plist>"))
		if i < 0 {
			return docs
		}
		docs = append(docs, b[:i+len("</plist>")])
		b = b[i+len("</plist>"):]
	}
}

// streams returns every fixture and every shared capture, by name.
func streams(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for _, glob := range []string{"../../testdata/*.plist", "../../../shared/powermetrics-captures/*.plist"} {
		names, _ := filepath.Glob(glob)
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(n)] = b
		}
	}
	return out
}

// same checks that the fast path and the full decoder agree on doc.
func same(t *testing.T, doc []byte) {
	t.Helper()
	fast, ferr := Parse(doc)
	full, uerr := ParseFull(doc)
	if (ferr == nil) != (uerr == nil) || (ferr != nil && ferr.Error() != uerr.Error()) {
		t.Fatalf("errors differ: fast path %v, full decoder %v", ferr, uerr)
	}
	if !reflect.DeepEqual(fast, full) {
		t.Fatalf("values differ:\nfast %+v\nfull %+v", fast, full)
	}
}

// Every document of every fixture and capture takes the fast path and
// gives exactly what the full decoder gives.
func TestFastPathMatchesTheFullDecoder(t *testing.T) {
	n := 0
	for name, b := range streams(t) {
		for i, doc := range documents(b) {
			var d document
			if !fastParse(doc, &d) {
				t.Errorf("%s document %d: not in the shape the fast path takes", name, i)
			}
			same(t, doc)
			n++
		}
	}
	// The fixtures alone hold 16 documents; the shared captures add more
	// where they are beside the checkout.
	if n < 16 {
		t.Errorf("only %d documents compared", n)
	}
}

// Documents just outside the shape go to the full decoder, and still agree.
func TestFastPathLeavesOtherShapesToTheFullDecoder(t *testing.T) {
	b, err := os.ReadFile("../../testdata/fake-m1-compact.plist")
	if err != nil {
		t.Fatal(err)
	}
	doc := documents(b)[0]
	for _, c := range []struct{ old, new string }{
		{"<integer>1711489712</integer>", "<integer>0x10</integer>"},                                                    // hexadecimal, which the full decoder reads
		{"<string>23E224</string>", "<string>23E&#50;24</string>"},                                                      // an entity
		{"<string>23E224</string>", "<string>23E\r224</string>"},                                                        // a carriage return, which XML turns into a newline
		{"<key>hw_model</key>", "<key>hw_model</key><!-- a comment -->"},                                                // a comment
		{"<dict>", `<dict id="x">`},                                                                                     // an attribute
		{"<key>elapsed_ns</key><integer>", "<key>elapsed_ns</key><string>"},                                             // a key of the wrong type
		{"</integer>\n<key>hw_model</key>", "</integer>\n<key>elapsed_ns</key><real>1e+08</real>\n<key>hw_model</key>"}, // a repeated key
		{"<real>0.5</real>", "<real>5E-1</real>"},
		{"<real>0.5</real>", "<real>+0.5</real>"},
		{"<real>0.5</real>", "<real>Infinity</real>"},
		{"<key>is_delta</key><true/>", "<key>is_delta</key><true></true>"},
		{"</dict>\n</plist>", "</dict>\njunk after the root\n</plist>"},
	} {
		mutated := bytes.Replace(doc, []byte(c.old), []byte(c.new), 1)
		if bytes.Equal(mutated, doc) {
			t.Errorf("%q is not in the document", c.old)
			continue
		}
		t.Run(c.new, func(t *testing.T) { same(t, mutated) })
	}
}

// FuzzFastPath holds the fast path to the full decoder on any input.
func FuzzFastPath(f *testing.F) {
	for _, b := range streams(f) {
		for i, doc := range documents(b) {
			if i < 2 {
				f.Add(doc)
			}
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		same(t, doc)
	})
}

func TestFastPathIsTaken(t *testing.T) {
	b, err := os.ReadFile("../../testdata/fake-ultra-compact.plist")
	if err != nil {
		t.Fatal(err)
	}
	var d document
	if !fastParse(documents(b)[0], &d) || d.Processor == nil || d.Processor.CPUPower == nil || d.HWModel != "Mac14,14" {
		t.Errorf("fast path: %+v", d)
	}
}

func TestIsIntegerMatchesStrconv(t *testing.T) {
	for _, s := range []string{"0", "007", "-0", "12", "-12", "1749599894123456789", "18446744073709551615", "18446744073709551616",
		"99999999999999999999", "184467440737095516150", "-999999999999999999", "-9223372036854775808", "", "-", "1e3", "0x10", "+1", " 1"} {
		_, err := strconv.ParseUint(s, 10, 64)
		if len(s) > 0 && s[0] == '-' {
			_, err = strconv.ParseInt(s, 10, 64)
		}
		if isInteger([]byte(s)) && err != nil {
			t.Errorf("isInteger(%q) is true, but strconv says %v", s, err)
		}
	}
	for _, s := range []string{"0", "1749599894123456789", "18446744073709551615", "-999999999999999999"} {
		if !isInteger([]byte(s)) {
			t.Errorf("isInteger(%q) is false", s)
		}
	}
}

func TestIndexEndTag(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{
		{"", -1}, {"</plist>", 0}, {"plist>", -1}, {"/plist>", -1}, {"<plist></plist>", 7},
		{"<key>plist></key></plist>", 17}, {"x</plist></plist>", 1}, {"</plis", -1},
	} {
		if got := indexEndTag([]byte(c.s)); got != c.want || got != bytes.Index([]byte(c.s), []byte("</plist>")) {
			t.Errorf("indexEndTag(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}
