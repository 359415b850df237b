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
// hexadecimal integers, text it cannot vouch for, a key of the wrong type)
// sends the document to the full decoder, which then decides; so the fast
// path yields exactly what the full decoder would, or nothing. The
// differential tests hold it to that.

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
	if !s.litString("<key>") {
		return nil, false, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			s.i++
			continue
		}
		break
	}
	if s.i == start {
		return nil, false, false
	}
	k = s.b[start:s.i]
	if !s.litString("</key>") {
		return nil, false, false
	}
	s.ws()
	return k, false, true
}

// valueTags are the opening tags of the values the fast path reads; those
// with a closing tag hold text up to it, the others stand alone or open a
// dict or array.
var valueTags = []struct {
	open, close string
	k           kind
}{
	{"<integer>", "</integer>", kInteger},
	{"<real>", "</real>", kReal},
	{"<string>", "</string>", kString},
	{"<dict>", "", kDict},
	{"<array>", "", kArray},
	{"<true/>", "", kTrue},
	{"<false/>", "", kFalse},
	{"<date>", "</date>", kDate},
	{"<dict/>", "", kEmptyDict},
	{"<array/>", "", kEmptyArray},
}

// value reads the next value's opening tag and, for a scalar, its text
// and closing tag. A dict or array is left open for the caller.
func (s *scan) value() (kind, []byte) {
	k, close := kInvalid, ""
	for _, t := range valueTags {
		if s.litString(t.open) {
			k, close = t.k, t.close
			break
		}
	}
	if close == "" {
		return k, nil
	}
	n := bytes.IndexByte(s.b[s.i:], '<')
	if n < 0 {
		return kInvalid, nil
	}
	text := s.b[s.i : s.i+n]
	s.i += n
	if !s.litString(close) {
		return kInvalid, nil
	}
	switch k {
	case kInteger:
		if !isInteger(text) {
			return kInvalid, nil
		}
	case kReal:
		if !isReal(text) {
			return kInvalid, nil
		}
	case kString:
		if !isText(text) {
			return kInvalid, nil
		}
	case kDate:
		if _, err := time.ParseInLocation(time.RFC3339, string(text), time.UTC); err != nil {
			return kInvalid, nil
		}
	}
	return k, text
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

// skip passes over a value whose opening tag value has read.
func (s *scan) skip(k kind) bool {
	switch k {
	case kInvalid:
		return false
	case kDict:
		return s.dict(func(_ []byte, v kind, _ []byte) bool { return s.skip(v) })
	case kArray:
		for {
			s.ws()
			if s.litString("</array>") {
				return true
			}
			if v, _ := s.value(); !s.skip(v) {
				return false
			}
		}
	}
	return true
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
// no 0x prefix, which the full decoder reads as hexadecimal).
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

// isReal accepts what powermetrics writes with %g, a subset of what
// strconv.ParseFloat reads: -?d+(.d+)?(e[+-]?d+)?, nan and inf, within
// float64's range (see realFits).
func isReal(t []byte) bool {
	switch string(t) {
	case "nan", "inf", "-inf":
		return true
	}
	i := 0
	if i < len(t) && t[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		return i > start
	}
	if !digits() {
		return false
	}
	if i < len(t) && t[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(t) && realFits(t)
}

// realFits reports whether t, which isReal's grammar accepts, is within
// float64's range: strconv.ParseFloat, and so the full decoder, refuses a
// real beyond it, even one that exopower skips. One of at most 200 bytes
// with an exponent of at most two digits is below 10^299, well within, and
// is not parsed; powermetrics writes no other.
func realFits(t []byte) bool {
	if len(t) <= 200 {
		e := bytes.IndexAny(t, "eE")
		if e < 0 {
			return true
		}
		exp := t[e+1:]
		if exp[0] == '+' || exp[0] == '-' {
			exp = exp[1:]
		}
		if len(exp) <= 2 {
			return true
		}
	}
	_, err := strconv.ParseFloat(string(t), 64)
	return err == nil
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
