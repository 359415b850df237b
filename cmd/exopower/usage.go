package main

import (
	"strings"

	"github.com/exopower/exopower/internal/output"
)

// The hints that report and plot add to a mistake of their arguments.

// howToRecord is report's hint when it was given no recording: how to
// make one.
func howToRecord(args []string) string {
	if len(args) > 0 {
		return ""
	}
	return "record one on a Mac: sudo powermetrics -f plist -i 100 -s cpu_power,gpu_power,thermal -n 100 -o trace.plist"
}

// pictureAfterInput is plot's hint when the picture was named after the
// input rather than given to -o.
func pictureAfterInput(args []string) string {
	if len(args) != 2 {
		return ""
	}
	last := args[1]
	if !strings.HasSuffix(last, ".svg") && !strings.HasSuffix(last, ".png") {
		return ""
	}
	return "the picture goes to -o: exopower plot " + output.ShellQuote(args[:1]) + " -o " + output.ShellQuote([]string{last})
}
