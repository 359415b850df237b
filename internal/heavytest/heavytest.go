// Package heavytest is the one policy for the tests that push millions
// of windows or megabytes through exopower (soak, load and size-limit
// tests), and for those against real outside tools (a Prometheus server,
// hyperfine's Python scripts), whose time goes to those tools and to
// exopower's processes: they skip under the race detector, which would
// make them a test of itself and the slowest part of the suite, and
// .ci/run runs them without it, in a step of their own (go test -run
// Heavy). Their names begin with TestHeavy.
package heavytest

import "testing"

// Skip skips t under the race detector.
func Skip(t testing.TB) {
	t.Helper()
	if Race {
		t.Skip("a heavy test: .ci/run runs it without the race detector")
	}
}
