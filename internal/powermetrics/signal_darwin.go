package powermetrics

import (
	"os"
	"syscall"
)

// SampleSignal makes powermetrics take a sample at once.
const SampleSignal = syscall.SIGINFO

// canSignal: powermetrics runs as root, and only root may signal it.
func canSignal() bool { return os.Geteuid() == 0 }
