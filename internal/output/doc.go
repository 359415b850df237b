// Package output writes what exopower measured: the summary of a span,
// built from a sampler result and delivered as JSON or text to stdout,
// stderr or an -o file (written as the user who ran sudo); the live sinks
// of exopower watch (a panel redrawn in place on a terminal, one line per
// window otherwise, NDJSON with --json, and the same over several nodes);
// the Feed and the one wait loop (Follow) of every live output; and the
// rows of --samples.
//
// JSON never passes through lipgloss; text is styled only through a
// renderer bound to its writer, so that NO_COLOR, CI, TERM=dumb and a
// writer that is not a terminal give plain text.
package output
