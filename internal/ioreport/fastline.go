package ioreport

import (
	"bytes"
	"strconv"
)

// fastLine is a reading's line in the one shape Recorder writes it:
// {"mono_ns":N,"unix_ns":N,"channels":[[S,S,S,S,N],...]}, with
// ,"smc":{"PSTR":F} before the end or not, no space, names of plain
// ASCII. It reads such a line without encoding/json, which costs most of
// a report's time, and says false for any other line, which the full
// decoder then reads: the two agree on every line the fast one reads
// (FuzzFastLine). channels are the last line's, kept where this line's
// are the same, and values a buffer the reading may use.
func fastLine(b []byte, channels []Channel, values []int64) (l parsedLine, ok bool) {
	p := lineScanner{b: b}
	if !p.lit(`{"mono_ns":`) || !p.int(&l.monoNS) || !p.lit(`,"unix_ns":`) || !p.int(&l.unixNS) || !p.lit(`,"channels":[`) {
		return l, false
	}
	l.channels, l.values = channels, values[:0]
	fresh := false // l.channels are this line's own
	for i := 0; !p.lit("]"); i++ {
		if i > 0 && !p.lit(",") {
			return l, false
		}
		var c [4][]byte
		var v int64
		if !p.lit("[") || !p.str(&c[0]) || !p.lit(",") || !p.str(&c[1]) || !p.lit(",") || !p.str(&c[2]) || !p.lit(",") || !p.str(&c[3]) ||
			!p.lit(",") || !p.int(&v) || !p.lit("]") {
			return l, false
		}
		l.values = append(l.values, v)
		if !fresh && i < len(l.channels) && l.channels[i] == (Channel{string(c[0]), string(c[1]), string(c[2]), string(c[3])}) {
			continue // the comparison of a conversion allocates nothing
		}
		if !fresh {
			// Channels of their own from here: the last line's are
			// left as they are.
			fresh = true
			l.channels = append(make([]Channel, 0, max(i+1, len(l.channels))), l.channels[:i]...)
		}
		l.channels = append(l.channels, Channel{string(c[0]), string(c[1]), string(c[2]), string(c[3])})
	}
	l.channels = l.channels[:len(l.values):len(l.values)]
	if p.lit(`,"smc":{"PSTR":`) {
		if !p.float(&l.pstr) || !p.lit("}") {
			return l, false
		}
		l.hasPSTR = true
	}
	return l, p.lit("}") && p.i == len(b)
}

// parsedLine is what a reading's line says.
type parsedLine struct {
	monoNS, unixNS int64
	channels       []Channel
	values         []int64
	pstr           float64
	hasPSTR        bool
}

type lineScanner struct {
	b []byte
	i int
}

// lit reads s.
func (p *lineScanner) lit(s string) bool {
	if !bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		return false
	}
	p.i += len(s)
	return true
}

// str reads a string of printable ASCII without escapes, which is its
// own value.
func (p *lineScanner) str(s *[]byte) bool {
	if !p.lit(`"`) {
		return false
	}
	start := p.i
	for ; p.i < len(p.b) && p.b[p.i] != '"'; p.i++ {
		if c := p.b[p.i]; c < 0x20 || c > 0x7e || c == '\\' {
			return false
		}
	}
	if p.i == len(p.b) {
		return false
	}
	*s = p.b[start:p.i]
	p.i++
	return true
}

// number reads a JSON number's bytes; integral says it has no fraction
// or exponent.
func (p *lineScanner) number() (num []byte, integral bool) {
	start := p.i
	p.i += p.count("-", 1)
	switch digits := p.digits(); {
	case digits == 0, digits > 1 && p.b[p.i-digits] == '0':
		return nil, false
	}
	integral = true
	if p.lit(".") {
		if integral = false; p.digits() == 0 {
			return nil, false
		}
	}
	if p.count("eE", 1) == 1 {
		p.i++
		p.i += p.count("+-", 1)
		if integral = false; p.digits() == 0 {
			return nil, false
		}
	}
	return p.b[start:p.i], integral
}

// count is how many of the next bytes, up to most, are among set.
func (p *lineScanner) count(set string, most int) int {
	n := 0
	for p.i+n < len(p.b) && n < most && bytes.IndexByte([]byte(set), p.b[p.i+n]) >= 0 {
		n++
	}
	return n
}

func (p *lineScanner) digits() int {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

// int reads an integer that fits an int64.
func (p *lineScanner) int(v *int64) bool {
	num, integral := p.number()
	if !integral {
		return false
	}
	x, err := strconv.ParseInt(string(num), 10, 64)
	*v = x
	return err == nil
}

// float reads a number that fits a float64, as encoding/json reads it.
func (p *lineScanner) float(v *float64) bool {
	num, _ := p.number()
	if num == nil {
		return false
	}
	x, err := strconv.ParseFloat(string(num), 64)
	*v = x
	return err == nil
}
