// Package usage answers a mistake on the command line, the same way for
// every command of exopower: what was wrong, the nearest thing that would
// be right when there is one ("did you mean --interval?"), and that
// command's own help, never the root's, which lists no flag of a command.
package usage

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/exopower/exopower/internal/cli"
)

// Fail is a mistake of usage on c: err, the hints given, then c's
// usage line and where its help is.
func Fail(c *cobra.Command, err error, hints ...string) error {
	hints = append(hints, "usage: "+c.UseLine(), c.CommandPath()+" --help says more")
	return cli.Fail(err, hints...)
}

// FlagFail answers a flag that c could not take (cobra's FlagErrorFunc,
// set on the root and so every command's): an unknown flag gets the
// nearest of c's flags, or the commands that have it; a flag without its
// value or with a bad one, what it takes. own are hints of c's own about
// err, which stand in for these.
func FlagFail(c *cobra.Command, err error, own ...string) error {
	hints := own
	var unknown *pflag.NotExistError
	var missing *pflag.ValueRequiredError
	var invalid *pflag.InvalidValueError
	switch {
	case len(own) > 0:
	case errors.As(err, &unknown):
		hints = append(hints, unknownFlagHints(c, unknown.GetSpecifiedName(), unknown.GetSpecifiedShortnames() != "")...)
	case errors.As(err, &missing):
		hints = append(hints, takes(missing.GetFlag()))
	case errors.As(err, &invalid):
		hints = append(hints, invalidHint(c, invalid))
	}
	help := c.CommandPath() + " --help lists its flags"
	if c.HasAvailableSubCommands() {
		help = c.CommandPath() + " --help lists its commands"
	}
	return cli.Fail(err, append(hints, help)...)
}

// invalidHint says what the flag of e takes; or, for a one-letter flag
// whose value reads as the rest of a long flag's name (-interval is -i
// with the value nterval), that a long flag takes two dashes.
func invalidHint(c *cobra.Command, e *pflag.InvalidValueError) string {
	f, v := e.GetFlag(), e.GetValue()
	if f.Shorthand != "" && len(v) >= 3 && strings.Trim(v, "abcdefghijklmnopqrstuvwxyz-.") == "" {
		if long := nearestFlag(c, f.Shorthand+v); long != "" {
			return "did you mean --" + long + "? A long flag takes two dashes"
		}
	}
	return takes(f)
}

// unknownFlagHints suggests, for a flag name that c does not have (a
// letter when short), the nearest of c's own flags, or else the commands
// that take it.
func unknownFlagHints(c *cobra.Command, name string, short bool) []string {
	if short {
		// One letter: no distance tells a near one, but case does.
		for _, s := range []string{strings.ToLower(name), strings.ToUpper(name)} {
			if f := c.Flags().ShorthandLookup(s); s != name && f != nil && !f.Hidden {
				return []string{fmt.Sprintf("did you mean -%s (--%s)?", s, f.Name)}
			}
		}
		return nil
	}
	if near := nearestFlag(c, name); near != "" {
		return []string{"did you mean --" + near + "?"}
	}
	// A flag of other commands, given to the root or to a command that
	// lacks it: say whose it is.
	var near string
	var others []string
	for _, o := range c.Root().Commands() {
		if o == c || o.Hidden {
			continue
		}
		if n := nearestFlag(o, name); n != "" && (near == "" || n == near) {
			near, others = n, append(others, o.Name())
		}
	}
	if len(others) == 0 {
		return nil
	}
	whose := fmt.Sprintf("--%s is a flag of %s", near, c.Root().Name()+" "+and(others))
	if near != name {
		whose = "did you mean --" + near + "? It is a flag of " + c.Root().Name() + " " + and(others)
	}
	if c == c.Root() {
		return []string{whose + ", given after the command's name"}
	}
	return []string{whose + ", not of " + c.CommandPath()}
}

// and joins words as a sentence lists them: "a, b and c".
func and(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// takes says what flag f takes, from its help: "--interval DURATION:
// sample interval, such as 100ms or 1s".
func takes(f *pflag.Flag) string {
	name, usage := pflag.UnquoteUsage(f)
	flag := "--" + f.Name
	if name != "" {
		flag += " " + strings.ToUpper(name)
	}
	return flag + ": " + usage
}

// nearestFlag returns the long flag of c nearest to name: within two
// edits (a third of the name's length for a long one), or the one flag
// that name begins; "" when none is near, or two are equally near.
func nearestFlag(c *cobra.Command, name string) string {
	if len(name) < 2 {
		return ""
	}
	best, bestD, tie := "", max(2, len(name)/3)+1, false
	var prefixed []string
	seen := map[string]bool{}
	visit := func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" || seen[f.Name] {
			return
		}
		seen[f.Name] = true
		if strings.HasPrefix(f.Name, name) {
			prefixed = append(prefixed, f.Name)
		}
		switch d := distance(strings.ToLower(name), f.Name); {
		case d < bestD:
			best, bestD, tie = f.Name, d, false
		case d == bestD:
			tie = true
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	switch {
	case best != "" && !tie:
		return best
	case len(prefixed) == 1:
		return prefixed[0]
	}
	return ""
}

// distance is the number of edits between a and b (a letter left out,
// added, changed, or two side by side swapped: the optimal string
// alignment distance), in bytes: flags are ASCII.
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// NoArgs is the Args of a command that takes no argument: one given is
// named, with the nearest of the command's subcommands, or its usage.
func NoArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if c.HasAvailableSubCommands() {
		return UnknownCommand(c, args[0])
	}
	return Fail(c, fmt.Errorf("%s takes no arguments, and got %s", c.CommandPath(), quoted(args)))
}

// UnknownCommand says that c has no command name, with the nearest
// command's name when there is one.
func UnknownCommand(c *cobra.Command, name string) error {
	err := fmt.Errorf("%s has no command %q", c.CommandPath(), name)
	var hints []string
	if near := c.SuggestionsFor(name); len(near) > 0 {
		hints = append(hints, "did you mean "+c.CommandPath()+" "+near[0]+"?")
	}
	hints = append(hints, c.CommandPath()+" --help lists its commands")
	return cli.Fail(err, hints...)
}

// OneArg is the Args of a command that takes one argument, what: "FILE,
// the recording to read (- for stdin)". more, when not nil, may add a
// hint for the arguments given.
func OneArg(what string, more func(args []string) string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) == 1 {
			return nil
		}
		got := "none"
		if len(args) > 1 {
			got = fmt.Sprintf("%d: %s", len(args), quoted(args))
		}
		var hints []string
		if more != nil {
			if h := more(args); h != "" {
				hints = append(hints, h)
			}
		}
		return Fail(c, fmt.Errorf("%s takes one %s, and got %s", c.CommandPath(), what, got), hints...)
	}
}

// quoted writes arguments as Go quotes them, so that an empty one or one
// with spaces shows.
func quoted(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(q, " ")
}
