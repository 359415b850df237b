//go:build !race

package heavytest

// Race says whether the race detector is on.
const Race = false
