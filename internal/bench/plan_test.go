package bench

import (
	"fmt"
	"strings"
	"testing"
)

// jobsText is each job as "name: command [prepare|conclude]", a line each.
func jobsText(jobs []Job) string {
	var b strings.Builder
	for _, j := range jobs {
		fmt.Fprintf(&b, "%s: %s [%s|%s]\n", j.Name, j.Command, j.Prepare, j.Conclude)
	}
	return b.String()
}

// Two lists and two commands: the commands vary fastest, then the first
// list, then the second, as hyperfine's test_build_commands_cross_product
// has them; the reference comes first.
func TestAPlansJobsAreInHyperfinesOrder(t *testing.T) {
	p := Plan{Commands: []string{"echo {par1} {par2}", "printf {par1}{par2}"}, Reference: "ref", ReferenceName: "the ref",
		Lists: []ParameterList{{"par1", []string{"a", "b"}}, {"par2", []string{"z", "y"}}}}
	jobs, err := p.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	want := `the ref: ref [|]
echo a z: echo a z [|]
printf az: printf az [|]
echo b z: echo b z [|]
printf bz: printf bz [|]
echo a y: echo a y [|]
printf ay: printf ay [|]
echo b y: echo b y [|]
printf by: printf by [|]
`
	if got := jobsText(jobs); got != want {
		t.Errorf("jobs\n%s\nwant\n%s", got, want)
	}
}

// --prepare and --conclude: once for all, or once for each job in order
// (the reference first), with the parameters put in; any other count is
// refused, saying how many there are to give.
func TestHooksAreOneForAllOrOneForEachJob(t *testing.T) {
	p := Plan{Commands: []string{"A", "B"}, Reference: "R", Prepare: []string{"pR", "pA", "pB"}, Conclude: []string{"c{n}"},
		Lists: []ParameterList{{"n", []string{"1"}}}}
	jobs, err := p.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jobsText(jobs), "R: R [pR|c{n}]\nA: A [pA|c1]\nB: B [pB|c1]\n"; got != want {
		t.Errorf("jobs\n%s\nwant\n%s", got, want)
	}
	p.Prepare = []string{"pA", "pB"}
	if _, err := p.Jobs(); err == nil || err.Error() != "The '--prepare' option has to be provided just once or N times, where N=3 is the number of benchmark commands (including a potential reference). "+
		"It is given 2 times; once for each is in the order they are measured (--reference first)." {
		t.Errorf("2 prepares for 3 jobs: %v", err)
	}
	p = Plan{Commands: []string{"A"}, Lists: []ParameterList{{"n", []string{"1", "2"}}}, Conclude: []string{"c1", "c2", "c3"}}
	if _, err := p.Jobs(); err == nil || !strings.HasPrefix(err.Error(), "The '--conclude' option has to be provided just once or N times, where N=2 is") {
		t.Errorf("3 concludes for 2 jobs: %v", err)
	}
	p = Plan{Commands: []string{"A", "B"}, Outputs: []Output{{Kind: OutputPipe}, {Kind: OutputFile, Path: "./b"}}}
	if jobs, err := p.Jobs(); err != nil || jobs[0].Output.Kind != OutputPipe || jobs[1].Output.Path != "./b" {
		t.Errorf("outputs one each: %+v, %v", jobs, err)
	}
}

// -n names: without parameters one each for the first commands; with
// parameters one for all (the parameters put in) or one each.
func TestCommandNamesAsHyperfineCountsThem(t *testing.T) {
	for _, c := range []struct {
		what  string
		plan  Plan
		names string
		err   string
	}{
		{"fewer names than commands", Plan{Commands: []string{"a", "b"}, Names: []string{"first"}}, "first b", ""},
		{"a name each", Plan{Commands: []string{"a", "b"}, Names: []string{"A", "B"}, Reference: "r"}, "r A B", ""},
		{"more names than commands", Plan{Commands: []string{"a"}, Names: []string{"A", "B"}}, "",
			"Too many --command-name options: Expected 1 at most (one for each command), given 2"},
		{"one for all parameters", Plan{Commands: []string{"sleep {t}"}, Names: []string{"nap-{t}"}, Lists: []ParameterList{{"t", []string{"1", "2"}}}}, "nap-1 nap-2", ""},
		{"one per benchmark", Plan{Commands: []string{"a{t}", "b{t}"}, Names: []string{"1", "2", "3", "4"}, Lists: []ParameterList{{"t", []string{"1", "2"}}}}, "1 2 3 4", ""},
		{"neither", Plan{Commands: []string{"a{t}", "b{t}"}, Names: []string{"1", "2"}, Lists: []ParameterList{{"t", []string{"1", "2"}}}}, "",
			"'--command-name' has been specified 2 times. It has to appear exactly once, or exactly 4 times (number of benchmarks): " +
				"once, with {NAME} in it, or once for every command with every parameter's value"},
		{"a parameter's name twice", Plan{Commands: []string{"a"}, Lists: []ParameterList{{"y", []string{"1"}}, {"x", []string{"1"}}, {"y", []string{"2"}}, {"x", []string{"a"}}, {"x", []string{"b"}}}}, "",
			"Duplicate parameter names: x, y (give all of a parameter's values in one list)"},
	} {
		jobs, err := c.plan.Jobs()
		var names []string
		for _, j := range jobs {
			names = append(names, j.Name)
		}
		if got := strings.Join(names, " "); got != c.names || (err == nil) != (c.err == "") || err != nil && err.Error() != c.err {
			t.Errorf("%s: names %q, err %v; want %q, %q", c.what, got, err, c.names, c.err)
		}
	}
}

// A parameter that the command does not use is named after the command's
// name, as hyperfine names the benchmark (its test
// unused_parameters_are_shown_in_benchmark_name), so that benchmarks that
// differ only in it are told apart; the name alone is what JSON and CSV
// have.
func TestUnusedParametersAreNamedAfterTheCommand(t *testing.T) {
	for _, c := range []struct {
		what   string
		plan   Plan
		labels string
	}{
		{"one list the command does not use", Plan{Commands: []string{"echo test"}, Lists: []ParameterList{{"branch", []string{"master", "feature"}}}},
			"echo test (branch = master)|echo test (branch = feature)"},
		{"one used, one not, in the lists' order", Plan{Commands: []string{"echo {b}"}, Lists: []ParameterList{{"z", []string{"1"}}, {"b", []string{"x"}}, {"a", []string{"2"}}}},
			"echo x (z = 1, a = 2)"},
		{"all used", Plan{Commands: []string{"sleep {t}"}, Lists: []ParameterList{{"t", []string{"1", "2"}}}}, "sleep 1|sleep 2"},
		{"a name that uses it: the command does not", Plan{Commands: []string{"true"}, Names: []string{"nap-{t}"}, Lists: []ParameterList{{"t", []string{"1"}}}},
			"nap-1 (t = 1)"},
		{"no parameters, and the reference", Plan{Commands: []string{"a"}, Reference: "r"}, "r|a"},
	} {
		jobs, err := c.plan.Jobs()
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for _, j := range jobs {
			labels = append(labels, j.Label)
			if strings.Contains(j.Name, "(") {
				t.Errorf("%s: the name %q has the parameters: JSON and CSV keep them apart", c.what, j.Name)
			}
		}
		if got := strings.Join(labels, "|"); got != c.labels {
			t.Errorf("%s: labels %q, want %q", c.what, got, c.labels)
		}
	}
}
