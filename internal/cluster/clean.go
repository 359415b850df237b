package cluster

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/exopower/exopower/internal/wire"
)

// Text that a node supplies (its name, warnings, source, ids, the words
// of its errors) reaches the user's terminal through every output. A
// node is a machine on the network, not the user: its text is made safe
// here, once, where it comes in. Control characters (C0, tab and
// newline included, DEL and C1) are written as escapes, \x1b or \u009b,
// so that a title-setting OSC or a clear screen shows as what it is
// rather than acting, and a \r cannot draw over a line.

// maxText is how long one string from a node may be, in runes: a name or
// a warning is a line, and a longer one says nothing the first part does
// not.
const maxText = 512

// maxWarnings is how many warnings of one node's span are kept: a serve
// gives a few; more would bury the summary.
const maxWarnings = 32

// clean makes s, a string a node supplied, safe to write anywhere:
// control characters escaped, bytes that are not UTF-8 escaped the same
// way, and at most maxText runes.
func clean(s string) string {
	safe := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if control(r) || r == utf8.RuneError && n == 1 {
			safe = false
			break
		}
		i += n
	}
	if safe && utf8.RuneCountInString(s) <= maxText {
		return s
	}
	var b strings.Builder
	runes := 0
	for i := 0; i < len(s); runes++ {
		if runes == maxText {
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

func cleanSource(s wire.Source) wire.Source {
	return wire.Source{Tool: clean(s.Tool), HWModel: clean(s.HWModel), OSBuild: clean(s.OSBuild)}
}

// cleanWarnings cleans a node's warnings, and keeps at most maxWarnings
// of them, saying how many more there were.
func cleanWarnings(ws []string) []string {
	out := []string{}
	for i, w := range ws {
		if i == maxWarnings {
			out = append(out, fmt.Sprintf("and %d more warnings, not shown", len(ws)-maxWarnings))
			break
		}
		out = append(out, clean(w))
	}
	return out
}

// Clean is clean for the text of other servers than a node, such as a
// language-model server's error message.
func Clean(s string) string { return clean(s) }
