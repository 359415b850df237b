// Command make-recording writes an IOReport recording of one channel, as
// exopower record writes it, with the fake's power: the input of the
// report benchmark (scripts/bench-report.sh), made rather than kept.
//
//	go run ./scripts/make-recording -n 1000000 -o readings.ndjson
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
)

func main() {
	n := flag.Int("n", 1000000, "how many readings")
	interval := flag.Duration("i", 100*time.Millisecond, "the time between readings")
	profile := flag.String("profile", fakepm.DefaultProfile, "the power, as fake-powermetrics takes it")
	out := flag.String("o", "-", "where to write it (- for stdout)")
	flag.Parse()
	if err := write(*out, *profile, *interval, *n); err != nil {
		fmt.Fprintln(os.Stderr, "make-recording:", err)
		os.Exit(1)
	}
}

func write(path, profile string, interval time.Duration, n int) error {
	prof, err := fakepm.ParseProfile(profile)
	if err != nil {
		return err
	}
	if path == "-" {
		return fakepm.WriteBenchRecording(os.Stdout, prof, interval, n)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fakepm.WriteBenchRecording(f, prof, interval, n); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
