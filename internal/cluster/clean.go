package cluster

import (
	"fmt"

	"github.com/exopower/exopower/internal/safe"
	"github.com/exopower/exopower/internal/wire"
)

// Text that a node supplies (its name, warnings, source, ids, the words
// of its errors) reaches the user's terminal through every output. A
// node is a machine on the network, not the user: its text is made safe
// here, once, where it comes in. Control characters (C0, tab and
// newline included, DEL and C1) are written as escapes, \x1b or \u009b,
// so that a title-setting OSC or a clear screen shows as what it is
// rather than acting, and a \r cannot draw over a line.

// maxWarnings is how many warnings of one node's span are kept: a serve
// gives a few; more would bury the summary.
const maxWarnings = 32

// clean makes s, a string a node supplied, safe to write anywhere
// (safe.Text).
func clean(s string) string { return safe.Text(s) }

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
