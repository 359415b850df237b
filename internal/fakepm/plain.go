package fakepm

import "os"

// PlainEnv names the environment variable that gives the path of a fake
// powermetrics built without the race detector (from
// scripts/fake-powermetrics, as fake-powermetrics), which .ci/run builds.
// The tests that start the fake as a subprocess of exopower start that one
// rather than their own race-instrumented binary: such a process costs
// about 0.2 s of CPU to start, four times a plain one, the suite starts
// hundreds, and the CPU is what a loaded 2-core machine lacks. A fake
// that is slow to write its documents also delays them, which the tests
// that hold energy against real time see. Fakepm's own tests, and the
// code under test, keep the race detector.
const PlainEnv = "EXOPOWER_TEST_FAKE_POWERMETRICS"

// Plain returns the plain fake powermetrics's path, or "" when there is
// none (the tests then start their own binary as the fake).
func Plain() string { return os.Getenv(PlainEnv) }
