package powermetrics

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// checkMarkup reads a document's markup in one pass over its bytes before
// the full decoder reads it, and refuses what that decoder must not see:
// a document that does not start with '<', which the plist package would
// read as an OpenStep text list, recursively; elements nested deeper than
// MaxNesting, which would overflow the stack of its recursive XML parser;
// and an <integer> or <real> not written as plist writes numbers, which it
// would read through strconv (0x10, 1_000, 0x1p4). The fast path reads
// only documents that pass, so it runs on the full decoder's path alone.
//
// It lexes as encoding/xml does (comments, CDATA, processing instructions,
// directives, quoted attribute values) so that nothing can hide elements
// from it. Where the markup does not end, it stops: the XML decoder fails
// there too, no deeper than this pass has seen.
func checkMarkup(b []byte) error {
	i := startOfMarkup(b)
	if i < 0 || b[i] != '<' {
		return fmt.Errorf("%w: not an XML property list (it does not start with <)", ErrMalformed)
	}
	for depth := 0; i >= 0; {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 || i+j+1 >= len(b) {
			return nil
		}
		i += j
		switch b[i+1] {
		case '/':
			depth--
			i += 2
		case '?':
			i = skipPast(b, i+2, "?>")
		case '!':
			i = skipBang(b, i)
		default:
			name, end, empty := startTag(b, i)
			if end >= 0 && depth >= MaxNesting {
				return ErrTooDeep
			}
			if end >= 0 && !empty {
				depth++
				if err := checkNumber(b, end, localName(name)); err != nil {
					return err
				}
			}
			i = end
		}
	}
	return nil
}

// startOfMarkup returns the index of the first byte after a UTF-8 byte
// order mark and white space, which encoding/xml both pass over, or -1.
func startOfMarkup(b []byte) int {
	i := 0
	if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		i = 3
	}
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i == len(b) {
		return -1
	}
	return i
}

// isSpace reports whether c is XML's white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// skipPast returns the index after the first sep at or after b[i], or -1.
func skipPast(b []byte, i int, sep string) int {
	if i > len(b) {
		return -1
	}
	k := bytes.Index(b[i:], []byte(sep))
	if k < 0 {
		return -1
	}
	return i + k + len(sep)
}

// skipBang returns the index after the comment, CDATA section or
// directive (<!DOCTYPE ...>) at b[i], or -1 where it does not end or
// encoding/xml refuses it.
func skipBang(b []byte, i int) int {
	switch {
	case has(b, i, "<!--"):
		// encoding/xml ends a comment at its first "--", which must be
		// followed by '>'.
		k := skipPast(b, i+4, "--")
		if k < 0 || k >= len(b) || b[k] != '>' {
			return -1
		}
		return k + 1
	case has(b, i, "<![CDATA["):
		return skipPast(b, i+len("<![CDATA["), "]]>")
	case has(b, i, "<!-"), has(b, i, "<!["):
		return -1
	}
	// A directive ends at a '>' outside quotes and outside the <...>
	// nested in it, which may be comments; encoding/xml takes the byte
	// after "<!" without a look.
	var quote byte
	depth := 0
	for j := i + 3; j < len(b); j++ {
		switch c := b[j]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			if depth == 0 {
				return j + 1
			}
			depth--
		case c == '<' && has(b, j, "<!--"):
			if j = skipPast(b, j+4, "-->"); j < 0 {
				return -1
			}
			j--
		case c == '<':
			depth++
		}
	}
	return -1
}

// startTag reads the start tag at b[i]: its name, the index after it (-1
// where it does not end) and whether it closes itself, as <dict/> does.
// A quoted attribute value may hold a '>'.
func startTag(b []byte, i int) (name []byte, end int, empty bool) {
	j := i + 1
	for j < len(b) && (b[j] >= utf8.RuneSelf || isNameByte(b[j])) {
		j++
	}
	name = b[i+1 : j]
	var quote byte
	for ; j < len(b); j++ {
		switch c := b[j]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return name, j + 1, b[j-1] == '/'
		}
	}
	return name, -1, false
}

// isNameByte is encoding/xml's: the ASCII bytes a name may hold.
func isNameByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '_' || c == ':' || c == '.' || c == '-'
}

// localName returns the part of an element's name that the plist package
// reads, after a namespace prefix as encoding/xml splits it off.
func localName(name []byte) []byte {
	if k := bytes.IndexByte(name, ':'); k > 0 && k < len(name)-1 && bytes.Count(name, []byte(":")) == 1 {
		return name[k+1:]
	}
	return name
}

// checkNumber checks the text of an element whose start tag ends at b[i],
// if it is an <integer> or a <real>: plain text up to its end tag, written
// as the plist DTD writes numbers.
func checkNumber(b []byte, i int, tag []byte) error {
	isInt, isReal := string(tag) == "integer", string(tag) == "real"
	if !isInt && !isReal {
		return nil
	}
	n := bytes.IndexByte(b[i:], '<')
	switch {
	case n < 0:
		return nil
	case i+n+1 < len(b) && b[i+n+1] != '/':
		return fmt.Errorf("%w: markup inside <%s>, where plist has only a number", ErrMalformed, tag)
	}
	text := b[i : i+n]
	if isInt && !isPlistInteger(text) {
		return fmt.Errorf("%w: <integer> %q is not a base-10 integer, as plist writes them", ErrMalformed, clip(text))
	}
	if isReal && !isPlistReal(text) {
		return fmt.Errorf("%w: <real> %q is not a decimal number, nan or inf, as plist writes them", ErrMalformed, clip(text))
	}
	return nil
}

// clip shortens text for an error message.
func clip(text []byte) string {
	if len(text) > 40 {
		return string(text[:40]) + "..."
	}
	return string(text)
}

// isPlistInteger accepts what the plist DTD calls "a (possibly signed)
// integer number in base 10": the '-' sign only, as the plist package
// refuses a '+'.
func isPlistInteger(t []byte) bool {
	i := 0
	if len(t) > 0 && t[0] == '-' {
		i++
	}
	return len(t) > i && skipDigits(t, i) == len(t)
}

// isPlistReal accepts the plist DTD's reals, ("+" | "-")? d+ ("." d*)?
// ("E" ("+" | "-") d+)?, with a lower-case e and an optional exponent sign
// as powermetrics writes them with %g; and the words Apple's parser reads,
// nan, inf and infinity in any case, the last two with a sign.
func isPlistReal(t []byte) bool {
	i := 0
	if len(t) > 0 && (t[0] == '+' || t[0] == '-') {
		i++
	}
	d := skipDigits(t, i)
	if d == i {
		w := t[i:]
		return bytes.EqualFold(w, []byte("inf")) || bytes.EqualFold(w, []byte("infinity")) ||
			i == 0 && bytes.EqualFold(w, []byte("nan"))
	}
	if i = d; i < len(t) && t[i] == '.' {
		i = skipDigits(t, i+1)
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		if i++; i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		d := skipDigits(t, i)
		if d == i {
			return false
		}
		i = d
	}
	return i == len(t)
}
