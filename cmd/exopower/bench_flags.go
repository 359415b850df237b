package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/cli"
)

// parameterLists are the -L flags, as a flag value that takes NAME=VALUES:
// joinParameterLists turns hyperfine's two words into that one.
type parameterLists []bench.ParameterList

func (p *parameterLists) String() string {
	var s []string
	for _, l := range *p {
		s = append(s, l.Name+" "+strings.Join(l.Values, ","))
	}
	return strings.Join(s, "; ")
}

func (p *parameterLists) Type() string { return "NAME VALUES" }

func (p *parameterLists) Set(v string) error {
	name, values, _ := strings.Cut(v, "=")
	switch {
	case name == "" || strings.ContainsAny(name, "{}"):
		return fmt.Errorf("%q is no parameter name: name it in letters, such as -L n 1,2,3, and write {n} where it goes", name)
	case values == "":
		return fmt.Errorf("%s has no values: give them comma-separated, such as -L %s 1,2,3", name, name)
	}
	for _, l := range *p {
		if l.Name == name {
			return fmt.Errorf("%s is given twice: give all its values in one list", name)
		}
	}
	*p = append(*p, bench.ParameterList{Name: name, Values: strings.Split(values, ",")})
	return nil
}

// joinParameterLists makes each -L NAME VALUES (hyperfine's form, two
// words, which a flag cannot take) one flag, --parameter-list=NAME=VALUES.
// What follows -- is left as it is.
func joinParameterLists(args []string) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		if a != "-L" && a != "--parameter-list" {
			out = append(out, a)
			continue
		}
		if i+2 >= len(args) {
			return nil, fmt.Errorf("%s takes a NAME and its VALUES, comma-separated, such as %s n 1,2,3", a, a)
		}
		out = append(out, "--parameter-list="+args[i+1]+"="+args[i+2])
		i += 2
	}
	return out, nil
}

// parseBenchFlags parses bench's arguments itself (cobra's parsing is off,
// for -L's two words) into o; help is true for --help.
func parseBenchFlags(c *cobra.Command, args []string, o *benchOptions) (help bool, err error) {
	args, err = joinParameterLists(args)
	if err != nil {
		return false, cli.Fail(err, "usage: exopower bench [flags] COMMAND...")
	}
	if err := c.Flags().Parse(args); err != nil {
		return false, cli.Fail(err, "exopower bench --help shows the usage")
	}
	if help, _ := c.Flags().GetBool("help"); help {
		return true, nil
	}
	o.commands = c.Flags().Args()
	o.unitsSet = c.Flags().Changed("units")
	o.unitSet = c.Flags().Changed("unit")
	return false, nil
}

// validateUnits refuses units of work that cannot be counted, and
// compiles --units-from.
func (o *benchOptions) validateUnits() error {
	const hint = "--units 512 --unit token, or --units-from 'generated ([0-9]+) tokens' --unit token"
	switch {
	case o.unitsSet && !(o.units > 0):
		return cli.Fail(fmt.Errorf("--units %v: it takes the count of units of work in one run, above 0", o.units), hint)
	case o.unitsSet && o.unitsFrom != "":
		return cli.Fail(errors.New("--units and --units-from: give one of them"), hint)
	case o.unit == "" || strings.ContainsAny(o.unit, "\n|"):
		return cli.Fail(fmt.Errorf("--unit %q: it takes a name, such as token", o.unit), hint)
	case o.unitSet && !o.unitsSet && o.unitsFrom == "":
		return cli.Fail(fmt.Errorf("--unit %s names the unit that --units or --units-from counts: give one of them", o.unit), hint)
	case o.unitsFrom == "":
		return nil
	}
	re, err := regexp.Compile(o.unitsFrom)
	if err != nil {
		return cli.Fail(fmt.Errorf("--units-from: %v", err), hint)
	}
	if re.NumSubexp() < 1 {
		return cli.Fail(fmt.Errorf("--units-from %q has no group: its first (...) is where the count is read", o.unitsFrom), hint)
	}
	o.unitsRE = re
	return nil
}

// unitName is the unit for the report, or nil without units.
func (o *benchOptions) unitName() *string {
	if !o.unitsSet && o.unitsRE == nil {
		return nil
	}
	u := o.unit
	return &u
}
