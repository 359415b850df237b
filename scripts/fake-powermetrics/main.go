// Command fake-powermetrics stands in for Apple's powermetrics on machines
// that have none: it writes the real -f plist format with the power of a
// known profile. See internal/fakepm for its flags and environment.
package main

import (
	"os"

	"github.com/exopower/exopower/internal/fakepm"
)

func main() {
	os.Exit(fakepm.Main(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}
