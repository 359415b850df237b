//go:build !darwin

package powermetrics

import "syscall"

// SampleSignal stands in for SIGINFO, which only BSDs have. No real
// powermetrics runs off macOS: the fake one (internal/fakepm) answers this.
const SampleSignal = syscall.SIGUSR1

func canSignal() bool { return true }
