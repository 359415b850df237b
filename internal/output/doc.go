// Package output writes what exopower measured: the live sinks of
// exopower watch (a panel redrawn in place on a terminal, one line per
// window otherwise, NDJSON with --json) and the summary of a span, as JSON
// or as text for people.
//
// JSON never passes through lipgloss; text is styled only through a
// renderer bound to its writer, so that NO_COLOR, CI, TERM=dumb and a
// writer that is not a terminal give plain text.
package output
