// Package safe makes text that comes from elsewhere (a node, a model
// server, a metered plug, the transport) safe to print and store: its
// control characters escaped, its length cut, and the secrets it may
// echo taken out first. It imports nothing of exopower's, so that a
// source as well as a client may use it.
package safe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxText is how long one string from elsewhere may be, in runes: a
// name, a message or a warning is a line, and a longer one says nothing
// the first part does not.
const MaxText = 512

// Text makes s, a string another machine supplied, safe to write
// anywhere: control characters (C0, tab and newline included, DEL and
// C1, and Unicode's bidirectional overrides) written as escapes, \x1b or
// \u009b, so that a title-setting OSC or a clear screen shows as what it
// is rather than acting, and a \r cannot draw over a line; bytes that
// are not UTF-8 escaped the same way; and at most MaxText runes.
func Text(s string) string {
	ok := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if control(r) || r == utf8.RuneError && n == 1 {
			ok = false
			break
		}
		i += n
	}
	if ok && utf8.RuneCountInString(s) <= MaxText {
		return s
	}
	var b strings.Builder
	runes := 0
	for i := 0; i < len(s); runes++ {
		if runes == MaxText {
			b.WriteString("…")
			break
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && control(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case control(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// control says whether r is a C0 or C1 control character, DEL, or one of
// Unicode's bidirectional embeddings, overrides and isolates, which turn
// the rest of a line around on the screen ("mac\u202e1cam" shows as
// "mac1cam" backwards).
func control(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// PieceLen is the length of the shortest piece of a long secret that is
// taken out wherever it stands: text that holds part of a secret, or a
// cut that falls inside one, leaves no piece this long.
const PieceLen = 8

// maxRaw bounds what of a string is redacted and cleaned: Text keeps
// MaxText runes, which no more than this many bytes hold, so a cut here
// never shows a piece that the redaction would have taken out.
const maxRaw = 4 * 4 * MaxText

// Secrets are what must never be written: keys, passwords, tokens. The
// zero value holds none.
type Secrets struct {
	// pieces maps every PieceLen-byte piece of a long secret to its mark.
	pieces map[string]string
	// whole are the secrets of 4 to PieceLen-1 bytes, taken out whole.
	whole map[string]string
	// withheld are secrets too short to take out of a text: a text that
	// holds one is withheld whole.
	withheld []string
	// words are short secrets taken out where they stand as words, with
	// their marks.
	words [][2]string
}

// Add takes secret out of every text from now on, as mark. A secret
// shorter than 4 bytes is a word that any text may hold, and is not
// added: see Withhold.
func (s *Secrets) Add(secret, mark string) {
	if s.pieces == nil {
		s.pieces, s.whole = map[string]string{}, map[string]string{}
	}
	switch {
	case len(secret) >= PieceLen:
		for i := 0; i+PieceLen <= len(secret); i++ {
			s.pieces[secret[i:i+PieceLen]] = mark
		}
	case len(secret) >= 4:
		s.whole[secret] = mark
	}
}

// AddWord takes secret out of every text where it stands as a word of
// its own (no letter or digit just before or after it), as mark: for a
// secret too short to be taken out wherever it stands (Add), whose
// every occurrence inside other words would be mangled.
func (s *Secrets) AddWord(secret, mark string) {
	if secret != "" {
		s.words = append(s.words, [2]string{secret, mark})
	}
}

// Withheld is what stands for a text withheld for holding a short
// secret.
const Withheld = "(withheld: it holds a credential)"

// Withhold makes every text that holds secret, one too short to take out
// of it, Withheld.
func (s *Secrets) Withhold(secret string) {
	if secret != "" {
		s.withheld = append(s.withheld, secret)
	}
}

// Redact is str with every piece of a secret in it replaced by its mark:
// overlapping pieces, and so a whole secret, make one mark.
func (s *Secrets) Redact(str string) string {
	if s == nil {
		return str
	}
	for _, w := range s.withheld {
		if strings.Contains(str, w) {
			return Withheld
		}
	}
	var b strings.Builder
	last := 0 // str[:last] is written
	for i := 0; i+PieceLen <= len(str); {
		mark, ok := s.pieces[str[i:i+PieceLen]]
		if !ok {
			i++
			continue
		}
		end := i + PieceLen
		for end < len(str) && s.covered(str, end) {
			end++
		}
		b.WriteString(str[last:i])
		b.WriteString(mark)
		last, i = end, end
	}
	b.WriteString(str[last:])
	out := b.String()
	for w, mark := range s.whole {
		out = strings.ReplaceAll(out, w, mark)
	}
	for _, w := range s.words {
		out = replaceWord(out, w[0], w[1])
	}
	return out
}

// replaceWord is str with every occurrence of word that no letter or
// digit touches replaced by mark.
func replaceWord(str, word, mark string) string {
	var b strings.Builder
	for {
		i := strings.Index(str, word)
		if i < 0 {
			b.WriteString(str)
			return b.String()
		}
		end := i + len(word)
		alone := (i == 0 || !wordByte(str[i-1])) && (end == len(str) || !wordByte(str[end]))
		b.WriteString(str[:i])
		if alone {
			b.WriteString(mark)
		} else {
			b.WriteString(word)
		}
		str = str[end:]
	}
}

func wordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// covered says whether the byte at end extends a run of pieces: the
// piece that ends with it is one.
func (s *Secrets) covered(str string, end int) bool {
	_, ok := s.pieces[str[end+1-PieceLen:end+1]]
	return ok
}

// Text makes str safe to print and store: the secrets taken out first,
// then control characters escaped and the length cut (Text).
func (s *Secrets) Text(str string) string {
	if len(str) > maxRaw {
		str = str[:maxRaw]
	}
	return Text(s.Redact(str))
}
