package powermetrics

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/testfiles"
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

// streams returns every fixture and every real capture (where
// EXOPOWER_TEST_CAPTURES names them), by name.
func streams(t testing.TB) map[string][]byte {
	globs := []string{"../../testdata/*.plist"}
	if dir, ok := testfiles.CapturesIfNamed(t); ok {
		globs = append(globs, filepath.Join(dir, "*.plist"))
	}
	out := map[string][]byte{}
	for _, glob := range globs {
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
	// The fixtures alone hold 16 documents; the real captures add more
	// where EXOPOWER_TEST_CAPTURES names them.
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
		{"<integer>1711489712</integer>", "<integer>0x10</integer>"},                                                    // hexadecimal, which the full decoder refuses
		{"<string>23E224</string>", "<string>23E&#X32;24</string>"},                                                     // a reference encoding/xml refuses
		{"<string>23E224</string>", "<string>23E&#xD800;24</string>"},                                                   // a surrogate, which encoding/xml reads as U+FFFD
		{"<string>23E224</string>", "<string>23E&eacute;24</string>"},                                                   // an entity XML does not define
		{"<string>23E224</string>", "<string>23E\r224</string>"},                                                        // a carriage return, which XML turns into a newline
		{"<key>hw_model</key>", "<key>hw_model</key><!-- a comment -->"},                                                // a comment
		{"<dict>", `<dict id="x">`},                                                                                     // an attribute
		{"<key>elapsed_ns</key><integer>", "<key>elapsed_ns</key><string>"},                                             // a key of the wrong type
		{"</integer>\n<key>hw_model</key>", "</integer>\n<key>elapsed_ns</key><real>1e+08</real>\n<key>hw_model</key>"}, // a repeated key
		{"<real>0.5</real>", "<real>5E-1</real>"},
		{"<real>0.5</real>", "<real>+0.5</real>"},
		{"<real>0.5</real>", "<real>Infinity</real>"},
		{"<real>0.5</real>", "<real>1e400</real>"}, // out of range, which the full decoder refuses even where exopower skips it
		{"<real>0.5</real>", "<real>-1.8e308</real>"},
		{"<real>0.5</real>", "<real>1" + strings.Repeat("0", 309) + "</real>"},
		{"<real>0.5</real>", "<real>1" + strings.Repeat("0", 300) + "e-5</real>"},
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

// skippedChanges change values inside the dicts and arrays the fast path
// skips, which it reads in a loop of its own: an integer, a real, a key
// and a closing tag deep in a cluster's dvfm_states. Each keeps the
// document in the fast path (fast) or sends it to the full decoder.
var skippedChanges = []struct {
	old, new string
	fast     bool
}{
	{freqEntry, "<key>freq</key><integer>123456789012345678</integer>", true},
	{freqEntry, "<key>freq</key><integer>-123456789012345678</integer>", true},
	{freqEntry, "<key>freq</key><integer>1234567890123456789</integer>", true},
	{freqEntry, "<key>freq</key><integer>18446744073709551615</integer>", true},
	{freqEntry, "<key>freq</key><integer>18446744073709551616</integer>", false},
	{freqEntry, "<key>freq</key><integer>-9223372036854775808</integer>", false},
	{freqEntry, "<key>freq</key><integer>0x10</integer>", false},
	{freqEntry, "<key>freq</key><integer>+600</integer>", false},
	{freqEntry, "<key>freq</key><integer></integer>", false},
	{freqEntry, "<key>freq</key><integer>-</integer>", false},
	{freqEntry, "<key>freq</key><integer/>", false},
	{freqEntry, "<key>freq</key><integer>600 </integer>", false},
	{freqEntry, "<key>freq</key><integer>600</integr>", false},
	{freqEntry, "<key>freq</key><integer><dict></dict>", false}, // an opening tag, then another value
	{freqEntry, "<key>freq</key><integer><true/></integer>", false},
	{freqEntry, "<key>freq</key>\n <integer>600</integer>", true},
	{freqEntry, "<key>freq</key><dict/>", true},
	{freqEntry, "<key>freq</key><array/>", true},
	{freqEntry, "<key>freq</key><array><true/><false/><dict/><array/></array>", true},
	{freqEntry, "<key>freq</key>" + strings.Repeat("<array>", 70) + strings.Repeat("</array>", 70), false}, // deeper than the fast path follows
	{freqEntry, "<key>freq</key><date>2025-07-08T05:36:24Z</date>", true},
	{freqEntry, "<key>freq</key><date>2025-13-08T05:36:24Z</date>", false},
	{freqEntry, "<key>freq</key><string>a &amp; b</string>", true},
	{freqEntry, "<key>freq</key><string>a & b</string>", false},
	{freqEntry, "<key>freq</key><data>AAAA</data>", false},
	{freqEntry, "<key>freq</key>", false},        // a key without a value
	{freqEntry, "<integer>600</integer>", false}, // a value without a key
	{freqEntry, "<key>fr-eq</key><integer>600</integer>", false},
	{freqEntry, "<key>CF$UID</key><integer>600</integer>", false},
	{freqEntry, "<key></key><integer>600</integer>", false},
	{freqEntry, "<key>freq</keys><integer>600</integer>", false},
	{freqEntry, "<key>freq</key><integer>600</integer></array>", false},
	{ratioEntry, "<key>used_ratio</key><real>nan</real>", true},
	{ratioEntry, "<key>used_ratio</key><real>-inf</real>", true},
	{ratioEntry, "<key>used_ratio</key><real>-1.5E-07</real>", true},
	{ratioEntry, "<key>used_ratio</key><real>1e400</real>", false},
	{ratioEntry, "<key>used_ratio</key><real>-nan</real>", false},
	{ratioEntry, "<key>used_ratio</key><real>.5</real>", false},
	{ratioEntry, "<key>used_ratio</key><real>0</reel>", false},
	{"</dict>\n<dict>", "</array>\n<dict>", false},
}

const (
	freqEntry  = "<key>freq</key><integer>600</integer>"
	ratioEntry = "<key>used_ratio</key><real>0</real>"
)

// Values inside skipped dicts and arrays: the fast path and the full
// decoder agree on each change, and the fast path keeps those it should.
func TestFastPathSkipsAsTheFullDecoderReads(t *testing.T) {
	b, err := os.ReadFile("../../testdata/fake-m1-compact.plist")
	if err != nil {
		t.Fatal(err)
	}
	doc := documents(b)[0]
	for _, c := range skippedChanges {
		mutated := bytes.Replace(doc, []byte(c.old), []byte(c.new), 1)
		if bytes.Equal(mutated, doc) {
			t.Errorf("%q is not in the document", c.old)
			continue
		}
		t.Run(c.new, func(t *testing.T) {
			if TakesFastPath(mutated) != c.fast {
				t.Errorf("in the fast path: %v, want %v", !c.fast, c.fast)
			}
			same(t, mutated)
		})
	}
}

// refDoc returns a small document in the fast path's shape with kept
// written as is in the three strings exopower keeps and skipped in one it
// skips, a task's name.
func refDoc(kept, skipped string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
<key>is_delta</key><true/>
<key>elapsed_ns</key><integer>100000000</integer>
<key>hw_model</key><string>` + kept + `</string>
<key>kern_osversion</key><string>` + kept + `</string>
<key>tasks</key><array><dict><key>pid</key><integer>1</integer><key>name</key><string>` + skipped + `</string></dict></array>
<key>processor</key><dict><key>cpu_energy</key><integer>100</integer><key>cpu_power</key><real>1000</real></dict>
<key>thermal_pressure</key><string>` + kept + `</string>
</dict>
</plist>
`)
}

// References that encoding/xml reads, with what they stand for.
var goodRefs = []struct{ text, want string }{
	{"python3 &amp; friends", "python3 & friends"},
	{"&lt;&gt;&quot;&apos;&amp;", `<>"'&`},
	{"a&amp;&amp;b&amp;", "a&&b&"},
	{"&#38;&#x26;&#x2a;&#x2A;", "&&**"},
	{"&#0038;&#x0000026;", "&&"},
	{"&#60;/string&#62;", "</string>"},
	{"&#9;&#10;&#13;", "\t\n\r"}, // a carriage return kept, unlike one written as is
	{"&#x2013; caf&#233;", "\u2013 caf\u00e9"},
	{"&#32;&#xD7FF;&#xE000;&#xFFFD;&#x10000;&#x10FFFF;", " \uD7FF\uE000\uFFFD\U00010000\U0010FFFF"},
}

// References that encoding/xml refuses: the full decoder reports the error.
var badRefs = []string{
	"&", "& friends", "&amp", "&amp ;", "&;", "&AMP;", "&nbsp;", "&eacute;", "&#;", "&#x;", "&#X26;", "&#xG;",
	"&#12a;", "&# 38;", "&#-38;", "&#0;", "&#1;", "&#x1F;", "&#xFFFE;", "&#xFFFF;", "&#x110000;",
	"&#99999999999999999999999;", "&#xFFFFFFFFFFFFFFFFF;", "&#38 ;", "&amp;&#0;",
}

// The fast path decodes in the strings exopower keeps, and checks in those
// it skips, the references that encoding/xml reads; anything else goes to
// the full decoder, which refuses it.
func TestFastPathReadsReferencesAsTheFullDecoderDoes(t *testing.T) {
	const plain = "24F74"
	if !TakesFastPath(refDoc(plain, plain)) {
		t.Fatal("the plain document does not take the fast path")
	}
	for _, c := range goodRefs {
		t.Run(c.text, func(t *testing.T) {
			for _, doc := range [][]byte{refDoc(c.text, plain), refDoc(plain, c.text)} {
				if !TakesFastPath(doc) {
					t.Errorf("not in the fast path:\n%s", doc)
				}
				same(t, doc)
			}
			s, err := Parse(refDoc(c.text, plain))
			if err != nil || s.HWModel != c.want || s.OSBuild != c.want || s.ThermalPressure != c.want {
				t.Errorf("%q %q %q (%v), want %q", s.HWModel, s.OSBuild, s.ThermalPressure, err, c.want)
			}
		})
	}
	for _, text := range badRefs {
		t.Run(text, func(t *testing.T) {
			for _, doc := range [][]byte{refDoc(text, plain), refDoc(plain, text)} {
				if TakesFastPath(doc) {
					t.Errorf("in the fast path:\n%s", doc)
				}
				if _, err := ParseFull(doc); err == nil {
					t.Errorf("the full decoder reads it")
				}
				same(t, doc)
			}
		})
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
	for _, c := range goodRefs {
		f.Add(refDoc(c.text, "x"))
		f.Add(refDoc("x", c.text))
	}
	for _, text := range []string{"&amp", "&nbsp;", "&#X26;", "&#0;", "&#xD800;", "&#x110000;"} {
		f.Add(refDoc(text, "x"))
		f.Add(refDoc("x", text))
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

// readsReal reports whether realEnd reads all of s as the text of a <real>.
func readsReal(s string) bool {
	return realEnd([]byte(s+"</real>"), 0) == len(s)
}

func TestRealEndMatchesStrconv(t *testing.T) {
	long := "1" + strings.Repeat("0", 250)
	for _, s := range []string{"0", "0.5", "-0.5", "1.02287e+09", "1e99", "1e-99", "1e308", "1.7976931348623157e+308", "1.7976931348623159e+308",
		"1.8e308", "-1.8e308", "1e400", "1e-400", "0e999", "1e0999", long, long + "e+58", long + "e+57", long + ".5e-5", "nan", "inf", "-inf"} {
		_, err := strconv.ParseFloat(s, 64)
		if readsReal(s) != (err == nil) {
			t.Errorf("realEnd reads %q: %v, but strconv says %v", s, readsReal(s), err)
		}
	}
	for _, s := range []string{"", "-", ".5", "5.", "1e", "1e+", "+1", "5E-1x", "0x10", "Infinity", "-nan", "nanx", "1_000"} {
		if readsReal(s) {
			t.Errorf("realEnd reads %q", s)
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

// numberCases are the texts of an <integer> or a <real>, and whether
// plist allows them.
var numberCases = []struct {
	integer bool
	text    string
	ok      bool
}{
	{true, "399", true},
	{true, "-12", true},
	{true, "007", true},
	{true, "0x10", false},
	{true, "0X10", false},
	{true, "-0x10", false},
	{true, "1_000", false},
	{true, " 12", false},
	{false, "4000.66", true},
	{false, "+4000.66", true},
	{false, "4000.", true},
	{false, "4.00066E+03", true},
	{false, "4.00066e3", true},
	{false, "NaN", true},
	{false, "-Infinity", true},
	{false, "1_000", false},
	{false, "1_000.5", false},
	{false, "0x1p4", false},
	{false, "0x1.8p1", false},
	{false, ".5", false},
	{false, "1e", false},
	{false, "-nan", false},
	{false, " 1", false},
}

// Numbers as the plist DTD writes them, and the words for infinity and
// not-a-number that Apple's parser reads; powermetrics writes a subset.
// Hexadecimal, Go's digit separators and other spellings that strconv
// reads are refused, by the fast path and the full decoder alike, in a
// value exopower keeps and in one it skips.
func TestNumbersAreReadAsPlistWritesThem(t *testing.T) {
	b, err := os.ReadFile("../../testdata/fake-m1-compact.plist")
	if err != nil {
		t.Fatal(err)
	}
	doc := documents(b)[0]
	const (
		keptInteger    = "<key>cpu_energy</key>\n<integer>399</integer>"
		skippedInteger = freqEntry
		keptReal       = "<key>cpu_power</key>\n<real>4000.66</real>"
		skippedReal    = ratioEntry
	)
	for _, c := range numberCases {
		kept, skipped, tag := keptReal, skippedReal, "real"
		if c.integer {
			kept, skipped, tag = keptInteger, skippedInteger, "integer"
		}
		for _, at := range []string{kept, skipped} {
			key := at[:strings.Index(at, "<"+tag+">")]
			if !bytes.Contains(doc, []byte(at)) {
				t.Fatalf("%q is not in the document", at)
			}
			mutated := bytes.Replace(doc, []byte(at), []byte(key+"<"+tag+">"+c.text+"</"+tag+">"), 1)
			t.Run(key+c.text, func(t *testing.T) {
				same(t, mutated)
				_, err := Parse(mutated)
				if c.ok && err != nil && !errors.Is(err, ErrImplausible) {
					t.Errorf("<%s>%s</%s> refused: %v", tag, c.text, tag, err)
				}
				if !c.ok && !errors.Is(err, ErrMalformed) {
					t.Errorf("<%s>%s</%s> read (%v), want the document refused as malformed", tag, c.text, tag, err)
				}
			})
		}
	}
}
