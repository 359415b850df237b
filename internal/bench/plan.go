package bench

import (
	"fmt"
	"maps"
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
	var js []job
	if p.Reference != "" {
		js = append(js, job{p.Reference, p.ReferenceName, map[string]string{}, ""})
	}
	combos := Combinations(p.Lists)
	benches := len(combos) * len(p.Commands)
	switch {
	case len(p.Lists) == 0 && len(p.Names) > len(p.Commands):
		return nil, fmt.Errorf("-n/--command-name is given %d times for %s: give at most one a command",
			len(p.Names), countOf(len(p.Commands), "command"))
	case len(p.Lists) > 0 && len(p.Names) > 1 && len(p.Names) != benches:
		return nil, fmt.Errorf("-n/--command-name is given %d times for %s (every command with every parameter): give it once, with {NAME} in it, or %d times",
			len(p.Names), countOf(benches, "benchmark"), benches)
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
			return nil, fmt.Errorf("%s is given %d times for %s: give it once for all, or once for each, in the order they are measured%s",
				h.flag, h.n, countOf(n, "benchmark"), referenceFirst(p.Reference))
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

// countOf is "1 command", "3 commands".
func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
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
