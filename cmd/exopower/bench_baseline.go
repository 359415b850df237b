package main

import (
	"fmt"
	"time"
)

// maxAutoBaseline is the most that --baseline auto measures the idle Mac
// before the first run and after the last, each: where the idle power
// wanders too much for the runs' needs to be met, the bench still ends.
const maxAutoBaseline = 5 * time.Second

// baselineFlag is --baseline: auto (the default), fitted to the runs, or
// a duration measured exactly; 0 is none.
type baselineFlag struct {
	d    time.Duration
	auto bool
}

// auto5s sets b to its default, auto, and returns it.
func (b *baselineFlag) auto5s() *baselineFlag {
	*b = baselineFlag{d: maxAutoBaseline, auto: true}
	return b
}

func (b *baselineFlag) String() string {
	if b.auto {
		return "auto"
	}
	return b.d.String()
}

func (b *baselineFlag) Type() string { return "D" }

func (b *baselineFlag) Set(v string) error {
	if v == "auto" {
		b.auto5s()
		return nil
	}
	// A negative duration is refused by validate, naming the flag.
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("it takes auto, 0 (none) or a duration such as 5s")
	}
	*b = baselineFlag{d: d}
	return nil
}
