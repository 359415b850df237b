package powermetrics

import (
	"bytes"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// The fast path reads a document in the exact shape that powermetrics
// writes: the usual prolog, one dict of dicts, arrays and scalars, white
// space between elements, nothing else. It checks every byte of that shape
// as it goes, takes the dozen values exopower needs and skips the rest
// without building it. Anything outside the shape (comments, entities
// other than XML's own five and character references, attributes,
// numbers spelt otherwise than powermetrics spells them, text it cannot
// vouch for, a key of the wrong type, nesting deeper than maxSkipDepth)
// sends the document to the full decoder, which then decides; so the fast
// path yields exactly what the full decoder would, or nothing. The
// differential tests hold it to that. Every document it reads passes the
// full decoder's checkMarkup (markup.go): numbers as plist writes them,
// nesting well within MaxNesting.

var (
	xmlDecl = []byte(`<?xml version="1.0" encoding="UTF-8"?>`)
	doctype = []byte(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">`)
)

type kind uint8

const (
	kInvalid kind = iota
	kInteger
	kReal
	kString
	kDate
	kTrue
	kFalse
	kDict
	kArray
	kEmptyDict  // <dict/>
	kEmptyArray // <array/>
)

type scan struct {
	b []byte
	i int
}

func (s *scan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scan) lit(x []byte) bool {
	if bytes.HasPrefix(s.b[s.i:], x) {
		s.i += len(x)
		return true
	}
	return false
}

func (s *scan) litString(x string) bool {
	if len(s.b)-s.i >= len(x) && string(s.b[s.i:s.i+len(x)]) == x {
		s.i += len(x)
		return true
	}
	return false
}

// fastParse decodes doc in the strict shape, or reports false.
func fastParse(doc []byte, d *document) bool {
	s := scan{b: doc}
	if !s.lit(xmlDecl) {
		return false
	}
	s.ws()
	if s.lit(doctype) {
		s.ws()
	}
	if !s.litString(`<plist version="1.0">`) && !s.litString(`<plist>`) {
		return false
	}
	s.ws()
	if !s.litString("<dict>") || !s.topDict(d) {
		return false
	}
	s.ws()
	if !s.litString("</plist>") {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

// key reads the next key of a dict. done is true at </dict>.
func (s *scan) key() (k []byte, done, ok bool) {
	s.ws()
	if s.litString("</dict>") {
		return nil, true, true
	}
	end := -1
	if len(s.b)-s.i >= minTail {
		end = keyEnd(s.b, s.i)
	}
	if end < 0 {
		return nil, false, false
	}
	k, s.i = s.b[s.i+len("<key>"):end-len("</key>")], end
	s.ws()
	return k, false, true
}

// keyByte marks the bytes a key may hold, the letters, digits and _ of
// powermetrics's keys: a table, as every byte of every key goes through it.
var keyByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
	}
	return t
}()

// keyEnd reads <key>name</key> at b[i], which has minTail bytes from i,
// and returns the index after it, or -1.
func keyEnd(b []byte, i int) int {
	j := i + len("<key>") + keyLen(b[i+len("<key>"):])
	if j == i+len("<key>") || string(b[i:i+5]) != "<key>" || len(b)-j < minTail || string(b[j:j+6]) != "</key>" {
		return -1
	}
	return j + len("</key>")
}

// keyLen returns how many bytes at the start of r a key may hold.
func keyLen(r []byte) int {
	n := 0
	for n < len(r) && keyByte[r[n]] {
		n++
	}
	return n
}

// has reports whether b holds lit at i. lit is a constant at every call,
// which the compiler compares a word at a time, up to 8 bytes: longer
// tags are checked in two parts, as a call to memequal costs more than the
// rest of reading an element.
func has(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// skipWS returns the index of the first byte at or after i that is not
// white space.
func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == '\n' || b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// skipDigits returns the index of the first byte at or after i that is not
// a digit.
func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i]-'0' < 10 {
		i++
	}
	return i
}

// value reads the next value's opening tag and, for a scalar, its text
// and closing tag. A dict or array is left open for the caller.
func (s *scan) value() (kind, []byte) {
	k, text, next := valueAt(s.b, s.i)
	if k != kInvalid {
		s.i = next
	}
	return k, text
}

// valueAt reads the value whose opening tag is at b[i], choosing the tag by
// the byte after its <, and for a scalar its text, checked for its type,
// and closing tag. next is the index after what it read, which for a dict
// or array is its opening tag.
func valueAt(b []byte, i int) (k kind, text []byte, next int) {
	if len(b)-i < 2 {
		return kInvalid, nil, -1
	}
	end := -1
	switch b[i+1] {
	case 'i':
		if has(b, i, "<integer") && has(b, i+8, ">") {
			k, i = kInteger, i+len("<integer>")
			end = integerEnd(b, i)
		}
	case 'r':
		if has(b, i, "<real>") {
			k, i = kReal, i+len("<real>")
			end = realEnd(b, i)
		}
	case 's':
		if has(b, i, "<string>") {
			k, i = kString, i+len("<string>")
			end = stringEnd(b, i)
		}
	case 'd':
		if has(b, i, "<date>") {
			k, i = kDate, i+len("<date>")
			end = dateEnd(b, i)
		}
	}
	if k == kInvalid {
		k, next = tagAt(b, i)
		return k, nil, next
	}
	if end < 0 {
		return kInvalid, nil, -1
	}
	if next = closeEnd(b, end, k); next < 0 {
		return kInvalid, nil, -1
	}
	return k, b[i:end], next
}

// closeEnd reads the closing tag of a scalar of kind k at b[i] and returns
// the index after it, or -1.
func closeEnd(b []byte, i int, k kind) int {
	switch {
	case k == kInteger && has(b, i, "</intege") && has(b, i+8, "r>"):
		return i + len("</integer>")
	case k == kReal && has(b, i, "</real>"):
		return i + len("</real>")
	case k == kString && has(b, i, "</string") && has(b, i+8, ">"):
		return i + len("</string>")
	case k == kDate && has(b, i, "</date>"):
		return i + len("</date>")
	}
	return -1
}

// tagAt reads the opening tag of a dict or array, or a value that is a
// tag alone, at b[i], and returns its kind and the index after it.
func tagAt(b []byte, i int) (kind, int) {
	switch {
	case has(b, i, "<dict>"):
		return kDict, i + len("<dict>")
	case has(b, i, "<array>"):
		return kArray, i + len("<array>")
	case has(b, i, "<true/>"):
		return kTrue, i + len("<true/>")
	case has(b, i, "<false/>"):
		return kFalse, i + len("<false/>")
	case has(b, i, "<dict/>"):
		return kEmptyDict, i + len("<dict/>")
	case has(b, i, "<array/>"):
		return kEmptyArray, i + len("<array/>")
	}
	return kInvalid, -1
}

// integerEnd returns the index after the text of an <integer> at b[i], as
// isInteger accepts it, or -1. The digits end where the text does, at a <.
func integerEnd(b []byte, i int) int {
	d := i
	if d < len(b) && b[d] == '-' {
		d++
	}
	end := skipDigits(b, d)
	if end == d || end-d > 18 && !isInteger(b[i:end]) {
		return -1
	}
	return end
}

// realEnd returns the index after the text of a <real> at b[i], as
// strconv.ParseFloat reads it, or -1. It accepts what powermetrics writes
// with %g: -?d+(.d+)?(e[+-]?d+)?, nan, inf and -inf. The grammar holds no
// <, so the text ends where the grammar does. A real beyond float64's
// range makes strconv.ParseFloat, and so the full decoder, refuse the whole
// document, even where exopower skips the real: one of at most 200 bytes
// with an exponent of at most two digits is below 10^299, well within,
// and only others are parsed to check.
func realEnd(b []byte, i int) int {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	if d := skipDigits(b, i); d > i {
		i = d
	} else if has(b, start, "nan<") || has(b, start, "inf<") || has(b, start, "-inf<") {
		return start + bytes.IndexByte(b[start:], '<')
	} else {
		return -1
	}
	if i < len(b) && b[i] == '.' {
		d := skipDigits(b, i+1)
		if d == i+1 {
			return -1
		}
		i = d
	}
	expDigits := 0
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := skipDigits(b, i)
		if expDigits = d - i; expDigits == 0 {
			return -1
		}
		i = d
	}
	if i-start > 200 || expDigits > 2 {
		if _, err := strconv.ParseFloat(string(b[start:i]), 64); err != nil {
			return -1
		}
	}
	return i
}

// stringEnd returns the index after the text of a <string> at b[i], as
// isText accepts it, or -1.
func stringEnd(b []byte, i int) int {
	n := bytes.IndexByte(b[i:], '<')
	if n < 0 || !isText(b[i:i+n]) {
		return -1
	}
	return i + n
}

// dateEnd returns the index after the text of a <date> at b[i], an RFC
// 3339 time as the full decoder reads it, or -1.
func dateEnd(b []byte, i int) int {
	n := bytes.IndexByte(b[i:], '<')
	if n < 0 {
		return -1
	}
	if _, err := time.ParseInLocation(time.RFC3339, string(b[i:i+n]), time.UTC); err != nil {
		return -1
	}
	return i + n
}

// dict reads the entries of a dict whose opening tag has been read, up to
// its closing tag, handing each key and value to take, which reads or
// skips the value and reports whether it was in shape.
func (s *scan) dict(take func(k []byte, v kind, text []byte) bool) bool {
	for {
		k, done, ok := s.key()
		if !ok {
			return false
		}
		if done {
			return true
		}
		if v, text := s.value(); !take(k, v, text) {
			return false
		}
	}
}

// skip passes over a value whose opening tag value has read: nothing more
// for a scalar, everything up to its closing tag for a dict or array.
func (s *scan) skip(k kind) bool {
	switch k {
	case kInvalid:
		return false
	case kDict, kArray:
		i := skipNested(s.b, s.i, k)
		if i < 0 {
			return false
		}
		s.i = i
	}
	return true
}

// maxSkipDepth is how deep skipNested follows dicts and arrays, the bits of
// its stack; powermetrics nests a few levels, and deeper documents go to
// the full decoder.
const maxSkipDepth = 64

// minTail is fewer than the bytes from the start of any tag inside the top
// dict to the end of a document in shape, whose </dict></plist> (15 bytes)
// follow the tag. Where fewer are left, the document goes to the full
// decoder; where minTail are, a tag of up to minTail bytes is compared
// without a check of the length.
const minTail = 16

// skipNested passes over the rest of a dict (or an array) whose opening tag
// ends at b[i], and returns the index after its closing tag, or -1. Most of
// a document is skipped, so this is one loop over it, reading the common
// elements inline, rather than calls per element: a bit stack, set for a
// dict, tells each level's closing tag and whether its values have keys.
// Every tag it reads has minTail bytes from its start, which spares most
// checks of the document's length.
func skipNested(b []byte, i int, k kind) int {
	stack := dictBit(k)
	for depth := 1; ; {
		if i = skipWS(b, i); len(b)-i < minTail {
			return -1
		}
		if b[i+1] == '/' {
			if i = nestedCloseEnd(b, i, stack); i < 0 || depth == 1 {
				return i
			}
			depth--
			stack >>= 1
			continue
		}
		if stack&1 != 0 {
			if string(b[i:i+5]) != "<key>" {
				return -1
			}
			i += 5
			start := i
			for i < len(b) && keyByte[b[i]] {
				i++
			}
			if i == start || len(b)-i < minTail || string(b[i:i+6]) != "</key>" {
				return -1
			}
			if i = skipWS(b, i+6); len(b)-i < minTail {
				return -1
			}
		}
		if b[i+1] == 'i' && string(b[i:i+8]) == "<integer" && b[i+8] == '>' {
			if end := shortIntegerEnd(b, i+9); end >= 0 {
				if len(b)-end < minTail || string(b[end:end+8]) != "</intege" || string(b[end+8:end+10]) != "r>" {
					return -1
				}
				i = end + len("</integer>")
				continue
			}
		}
		if b[i+1] == 'r' && string(b[i:i+6]) == "<real>" {
			if i = realEnd(b, i+6); i < 0 || !has(b, i, "</real>") {
				return -1
			}
			i += len("</real>")
			continue
		}
		k, _, next := valueAt(b, i)
		switch k {
		case kInvalid:
			return -1
		case kDict, kArray:
			if depth == maxSkipDepth {
				return -1
			}
			depth++
			stack = stack<<1 | dictBit(k)
		}
		i = next
	}
}

// nestedCloseEnd reads at b[i], which has minTail bytes from i, the
// closing tag of the dict or array whose bit tops skipNested's stack, and
// returns the index after it, or -1.
func nestedCloseEnd(b []byte, i int, stack uint64) int {
	if stack&1 != 0 && string(b[i:i+7]) == "</dict>" {
		return i + len("</dict>")
	}
	if stack&1 == 0 && string(b[i:i+8]) == "</array>" {
		return i + len("</array>")
	}
	return -1
}

// dictBit is the bit of skipNested's stack for k, a dict or an array.
func dictBit(k kind) uint64 {
	if k == kDict {
		return 1
	}
	return 0
}

// shortIntegerEnd returns the index after the text of an <integer> at b[i]
// if it is a base-10 integer that isInteger accepts whatever its digits,
// up to 19 of them or 18 after a '-', or else -1, leaving others to
// valueAt.
func shortIntegerEnd(b []byte, i int) int {
	most := 19
	if i < len(b) && b[i] == '-' {
		i, most = i+1, 18
	}
	d := i
	for i < len(b) && b[i]-'0' < 10 {
		i++
	}
	if n := i - d; n == 0 || n > most {
		return -1
	}
	return i
}

func (s *scan) topDict(d *document) bool {
	return s.dict(func(k []byte, v kind, text []byte) bool {
		switch string(k) {
		case "is_delta":
			if v != kTrue && v != kFalse {
				return false
			}
			b := v == kTrue
			d.IsDelta = &b
		case "elapsed_ns":
			return setNumber(&d.ElapsedNS, v, text)
		case "hw_model":
			return setString(&d.HWModel, v, text)
		case "kern_osversion":
			return setString(&d.KernOSVersion, v, text)
		case "thermal_pressure":
			return setString(&d.ThermalPressure, v, text)
		case "timestamp":
			if v != kDate {
				return false
			}
			t, err := time.ParseInLocation(time.RFC3339, string(text), time.UTC)
			d.Timestamp = t
			return err == nil
		case "processor":
			// A repeated dict is merged into the first, as the full
			// decoder does when it decodes into the same struct again.
			if d.Processor == nil {
				d.Processor = &processor{}
			}
			return v == kEmptyDict || v == kDict && s.processorDict(d.Processor)
		case "gpu":
			if d.GPU == nil {
				d.GPU = &gpuDict{}
			}
			return v == kEmptyDict || v == kDict && s.dict(func(k []byte, v kind, text []byte) bool {
				if string(k) == "gpu_energy" {
					return setNumber(&d.GPU.GPUEnergy, v, text)
				}
				return s.skip(v)
			})
		default:
			return s.skip(v)
		}
		return true
	})
}

func (s *scan) processorDict(p *processor) bool {
	return s.dict(func(k []byte, v kind, text []byte) bool {
		var dst **number
		switch string(k) {
		case "cpu_energy":
			dst = &p.CPUEnergy
		case "cpu_power":
			dst = &p.CPUPower
		case "gpu_energy":
			dst = &p.GPUEnergy
		case "gpu_power":
			dst = &p.GPUPower
		case "ane_energy":
			dst = &p.ANEEnergy
		case "ane_power":
			dst = &p.ANEPower
		case "combined_power":
			dst = &p.CombinedPower
		case "package_watts":
			dst = &p.PackageWatts
		case "package_joules":
			dst = &p.PackageJoules
		default:
			return s.skip(v)
		}
		return setNumber(dst, v, text)
	})
}

func setString(dst *string, v kind, text []byte) bool {
	if v != kString {
		return false
	}
	*dst = unescape(text)
	return true
}

// setNumber stores an <integer> or <real> as the full decoder's number
// type does: integers through uint64 (int64 when negative), reals as
// strconv reads them.
func setNumber(dst **number, v kind, text []byte) bool {
	var x float64
	switch v {
	case kInteger:
		neg := text[0] == '-'
		digits := text
		if neg {
			digits = text[1:]
		}
		var u uint64
		for _, c := range digits {
			u = u*10 + uint64(c-'0')
		}
		if neg {
			x = float64(-int64(u))
		} else {
			x = float64(u)
		}
	case kReal:
		f, err := strconv.ParseFloat(string(text), 64)
		if err != nil {
			return false
		}
		x = f
	default:
		return false
	}
	if *dst == nil {
		*dst = new(number)
	}
	**dst = number(x)
	return true
}

// isInteger accepts what strconv reads as a base-10 integer that fits:
// unsigned up to 2^64-1, negative down to -(10^18-1) (no sign but '-',
// no 0x prefix, which the full decoder refuses).
func isInteger(t []byte) bool {
	neg := len(t) > 0 && t[0] == '-'
	if neg {
		t = t[1:]
	}
	switch {
	case len(t) == 0, neg && len(t) > 18:
		return false
	case len(t) == 20 && string(t) > "18446744073709551615", len(t) > 20:
		return false
	}
	for _, c := range t {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isText accepts the text of a <string> that encoding/xml, under the full
// decoder, reads without error and that unescape turns into the same
// string: printable ASCII, tab and newline, and the references that
// reference reads. A ] (for ]]>), a carriage return (XML turns it into a
// newline), any byte outside printable ASCII and any other reference are
// left to the full decoder. References are read, not refused, so that a
// process name with an & in it does not cost the slow path on every sample.
func isText(t []byte) bool {
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '&':
			n, _, ok := reference(t[i:])
			if !ok {
				return false
			}
			i += n - 1
		case c < 0x20 && c != '\t' && c != '\n', c > 0x7e, c == ']':
			return false
		}
	}
	return true
}

// unescape returns the string that text, which isText accepted, stands for.
func unescape(t []byte) string {
	i := bytes.IndexByte(t, '&')
	if i < 0 {
		return string(t)
	}
	out := make([]byte, 0, len(t))
	for ; i >= 0; i = bytes.IndexByte(t, '&') {
		n, r, _ := reference(t[i:])
		out = utf8.AppendRune(append(out, t[:i]...), r)
		t = t[i+n:]
	}
	return string(append(out, t...))
}

// reference reads the reference at the start of t, which starts with &, as
// encoding/xml does in a document that declares no entities of its own:
// &lt; &gt; &amp; &apos; &quot;, and &#ddd; or &#xhhh; (lower-case x, digits
// of either case) for a character that XML allows. n is its length.
// encoding/xml refuses anything else, except a reference to a surrogate,
// which it reads as U+FFFD: that one too is left to the full decoder.
func reference(t []byte) (n int, r rune, ok bool) {
	end := bytes.IndexByte(t, ';')
	if end < 0 {
		return 0, 0, false
	}
	switch name := t[1:end]; string(name) {
	case "lt":
		r = '<'
	case "gt":
		r = '>'
	case "amp":
		r = '&'
	case "apos":
		r = '\''
	case "quot":
		r = '"'
	default:
		if r, ok = charRef(name); !ok {
			return 0, 0, false
		}
	}
	return end + 1, r, true
}

// charRef reads the #ddd or #xhhh of a character reference.
func charRef(name []byte) (rune, bool) {
	if len(name) < 2 || name[0] != '#' {
		return 0, false
	}
	digits, base := name[1:], rune(10)
	if digits[0] == 'x' {
		digits, base = digits[1:], 16
	}
	if len(digits) == 0 {
		return 0, false
	}
	var r rune
	for _, c := range digits {
		var d rune
		switch {
		case c >= '0' && c <= '9':
			d = rune(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = rune(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = rune(c-'A') + 10
		default:
			return 0, false
		}
		// Leading zeros are allowed, so the length is no bound: the
		// value is, long before a rune could overflow.
		if r = r*base + d; r > unicode.MaxRune {
			return 0, false
		}
	}
	return r, isXMLChar(r)
}

// isXMLChar is encoding/xml's isInCharacterRange: the characters that XML
// allows, which leave out the surrogates.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}
