package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Plan is what a bench measures, as hyperfine's command line says it:
// the commands, their names, the parameters and the hooks.
type Plan struct {
	// Commands are the command lines to measure; Reference, when not
	// "", is measured first, as it is, and named ReferenceName (or
	// itself).
	Commands                 []string
	Reference, ReferenceName string
	// Names are -n's names: without Lists, one each for the first
	// commands; with Lists, one for all or one per job (the reference
	// not counted), each with the parameters put in it.
	Names []string
	// Lists are the parameters, each -L in turn (or -P's one).
	Lists []ParameterList
	// Setup and Cleanup run once before and after each job's runs;
	// Prepare and Conclude before and after each of its runs. Prepare,
	// Conclude and Outputs are none (the zero Output for Outputs), one
	// for all, or one per job in order, the reference first, as
	// hyperfine takes --prepare, --conclude and --output.
	Setup, Cleanup    string
	Prepare, Conclude []string
	Outputs           []Output
}

// Jobs are the plan's jobs in the order they are measured, which is
// hyperfine's: the reference, then each combination of the parameters
// (Combinations' order) with every command in turn.
func (p Plan) Jobs() ([]Job, error) {
	type job struct {
		command, name string
		params        map[string]string
		unused        string
	}
	combos := Combinations(p.Lists)
	if err := p.checkNames(len(combos) * len(p.Commands)); err != nil {
		return nil, err
	}
	var js []job
	if p.Reference != "" {
		js = append(js, job{p.Reference, p.ReferenceName, map[string]string{}, ""})
	}
	k := 0 // the job's place, the reference not counted
	for _, params := range combos {
		for _, c := range p.Commands {
			var name string
			switch {
			case len(p.Lists) > 0 && len(p.Names) == 1:
				name = p.Names[0]
			case k < len(p.Names):
				name = p.Names[k]
			}
			k++
			js = append(js, job{c, Substitute(name, params), maps.Clone(params), unusedParameters(c, p.Lists, params)})
		}
	}
	n := len(js)
	for _, h := range []struct {
		flag string
		n    int
	}{{"--prepare", len(p.Prepare)}, {"--conclude", len(p.Conclude)}, {"--output", len(p.Outputs)}} {
		if h.n > 1 && h.n != n {
			return nil, &HyperfineError{
				Sentence: fmt.Sprintf("The '%s' option has to be provided just once or N times, where N=%d is the number of benchmark commands (including a potential reference).", h.flag, n),
				Detail:   fmt.Sprintf(" It is given %d times; once for each is in the order they are measured%s.", h.n, referenceFirst(p.Reference)),
			}
		}
	}
	out := make([]Job, n)
	for i, j := range js {
		s := func(x string) string { return Substitute(x, j.params) }
		out[i] = Job{Name: j.name, Command: s(j.command), Params: j.params,
			Setup: s(p.Setup), Prepare: s(pick(p.Prepare, i)), Conclude: s(pick(p.Conclude, i)), Cleanup: s(p.Cleanup)}
		if out[i].Name == "" {
			out[i].Name = out[i].Command
		}
		out[i].Label = out[i].Name + j.unused
		if len(p.Outputs) > 0 {
			out[i].Output = p.Outputs[min(i, len(p.Outputs)-1)]
		}
	}
	return out, nil
}

// unusedParameters are the parameters that command (before they are put
// in) does not use, as hyperfine names them after the command's name, so
// that benchmarks that differ only in them are told apart: " (branch =
// master, n = 1)", in the lists' order; "" when it uses them all.
func unusedParameters(command string, lists []ParameterList, params map[string]string) string {
	var unused []string
	for _, l := range lists {
		if !strings.Contains(command, "{"+l.Name+"}") {
			unused = append(unused, l.Name+" = "+params[l.Name])
		}
	}
	if len(unused) == 0 {
		return ""
	}
	return " (" + strings.Join(unused, ", ") + ")"
}

// checkNames refuses, as hyperfine does, a parameter's name given to
// more than one list, and a count of -n's names that fits neither the
// commands nor the benches (every command with every combination).
func (p Plan) checkNames(benches int) error {
	if dup := duplicateNames(p.Lists); len(dup) > 0 {
		return &HyperfineError{Sentence: "Duplicate parameter names: " + strings.Join(dup, ", "),
			Detail: " (give all of a parameter's values in one list)"}
	}
	switch {
	case len(p.Lists) == 0 && len(p.Names) > len(p.Commands):
		return &HyperfineError{Sentence: fmt.Sprintf("Too many --command-name options: Expected %d at most", len(p.Commands)),
			Detail: fmt.Sprintf(" (one for each command), given %d", len(p.Names))}
	case len(p.Lists) > 0 && len(p.Names) > 1 && len(p.Names) != benches:
		return &HyperfineError{
			Sentence: fmt.Sprintf("'--command-name' has been specified %d times. It has to appear exactly once, or exactly %d times (number of benchmarks)", len(p.Names), benches),
			Detail:   ": once, with {NAME} in it, or once for every command with every parameter's value"}
	}
	return nil
}

// duplicateNames are the names that more than one list has, each once,
// sorted, as hyperfine lists them.
func duplicateNames(lists []ParameterList) []string {
	seen := map[string]int{}
	var dup []string
	for _, l := range lists {
		if seen[l.Name]++; seen[l.Name] == 2 {
			dup = append(dup, l.Name)
		}
	}
	slices.Sort(dup)
	return dup
}

// pick is the i-th of one per job, or the one for all, or "".
func pick(xs []string, i int) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return xs[i]
}

func referenceFirst(ref string) string {
	if ref == "" {
		return ""
	}
	return " (--reference first)"
}

// Jobs are Plan's jobs of commands without names, their hooks each one
// for all.
func Jobs(commands []string, reference string, lists []ParameterList, h Hooks) []Job {
	one := func(s string) []string {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	p := Plan{Commands: commands, Reference: reference, Lists: lists, Setup: h.Setup, Cleanup: h.Cleanup,
		Prepare: one(h.Prepare), Conclude: one(h.Conclude)}
	// One of each hook and no name: nothing can be miscounted.
	jobs, _ := p.Jobs()
	return jobs
}
