package bench

import (
	"strings"
	"testing"
)

// hyperfine's --sort mean-time is the order of mean energy here.
func TestSortMeanTimeIsTheMeanEnergysOrder(t *testing.T) {
	o := Options{Sort: "mean-time"}
	if o.sortOrder() != SortMean {
		t.Errorf("--sort mean-time is %q in the report", o.sortOrder())
	}
}

// --style as hyperfine's: full and color colour stdout even when it is
// no terminal and NO_COLOR is set; basic and nocolor never; the progress
// line with auto, full and nocolor only, and never while a command's
// output goes to the terminal.
func TestBenchStylesAsHyperfines(t *testing.T) {
	env := map[string]string{"TERM": "xterm-256color", "NO_COLOR": "1"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		style           string
		tty, plain, bar bool
	}{
		{"auto", false, true, true}, {"auto", true, true, true},
		{"full", false, false, true}, {"color", false, false, false},
		{"basic", true, true, false}, {"nocolor", true, true, true},
		{"none", true, true, false},
	} {
		o := Options{Style: c.style, jobs: []Job{{Output: Output{Kind: OutputNull}}}}
		if st := Styles(o.Style, &strings.Builder{}, c.tty, getenv); st.Plain != c.plain {
			t.Errorf("--style %s, a terminal %v: plain %v, want %v", c.style, c.tty, st.Plain, c.plain)
		}
		if o.progress() != c.bar {
			t.Errorf("--style %s: progress %v, want %v", c.style, o.progress(), c.bar)
		}
		o.jobs = append(o.jobs, Job{Output: Output{Kind: OutputInherit}})
		if o.progress() {
			t.Errorf("--style %s: a progress line while a command writes to the terminal", c.style)
		}
	}
}
