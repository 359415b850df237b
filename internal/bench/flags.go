package bench

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
)

// hyperfine's command line as exopower bench takes it: the flags of
// several words (-L NAME VALUES, -P NAME MIN MAX), --baseline's value,
// the flags refused, and hyperfine's words for a value it cannot read.
// Options (options.go) says what the flags mean.

// ParameterLists are the -L flags, as a flag value that takes NAME and
// VALUES joined by a NUL (which no argument can hold):
// JoinMultiWordFlags turns hyperfine's two words into that one.
type ParameterLists []ParameterList

func (p *ParameterLists) String() string {
	var s []string
	for _, l := range *p {
		s = append(s, l.Name+" "+strings.Join(l.Values, ","))
	}
	return strings.Join(s, "; ")
}

func (p *ParameterLists) Type() string { return "NAME VALUES" }

func (p *ParameterLists) Set(v string) error {
	name, values, ok := strings.Cut(v, "\x00")
	if !ok {
		return errors.New("it takes a NAME and its VALUES, two words, such as -L n 1,2,3")
	}
	if err := checkParameterName(name, "-L n 1,2,3"); err != nil {
		return err
	}
	// A name given twice is refused with the plan, as hyperfine refuses
	// it, naming every such name.
	*p = append(*p, ParameterList{Name: name, Values: SplitValues(values)})
	return nil
}

func checkParameterName(name, example string) error {
	if name == "" || strings.ContainsAny(name, "{}") {
		return fmt.Errorf("%q is no parameter name: name it in letters, such as %s, and write {n} where it goes", name, example)
	}
	return nil
}

// ParameterScan is -P NAME MIN MAX, its words joined by NULs.
type ParameterScan struct{ name, min, max string }

func (p *ParameterScan) String() string {
	if p.name == "" {
		return ""
	}
	return p.name + " " + p.min + " " + p.max
}

func (p *ParameterScan) Type() string { return "NAME MIN MAX" }

func (p *ParameterScan) Set(v string) error {
	w := strings.Split(v, "\x00")
	switch {
	case len(w) != 3:
		return errors.New("it takes a NAME, MIN and MAX, three words, such as -P n 1 8")
	case p.name != "":
		return errors.New("it is given twice: give one range, or -L's lists for every combination")
	}
	if err := checkParameterName(w[0], "-P n 1 8"); err != nil {
		return err
	}
	p.name, p.min, p.max = w[0], w[1], w[2]
	return nil
}

// multiWord are the flags of several words, as hyperfine takes them, and
// how many.
var multiWord = map[string]struct {
	long  string
	words int
	usage string
}{
	"-L": {"--parameter-list", 2, "a NAME and its VALUES, comma-separated, such as -L n 1,2,3"},
	"-P": {"--parameter-scan", 3, "a NAME, the least value and the most, such as -P n 1 8"},
}

// JoinMultiWordFlags makes each -L NAME VALUES and -P NAME MIN MAX
// (hyperfine's forms, which a flag cannot take) one flag, its words
// joined by NULs. What follows -- is left as it is.
func JoinMultiWordFlags(args []string) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		f, ok := multiWord[a]
		if !ok {
			for short, g := range multiWord {
				if a == g.long {
					f, ok, a = g, true, short
				}
			}
		}
		if !ok {
			out = append(out, a)
			continue
		}
		if i+f.words >= len(args) {
			return nil, fmt.Errorf("%s takes %s", a, f.usage)
		}
		out = append(out, f.long+"="+strings.Join(args[i+1:i+1+f.words], "\x00"))
		i += f.words
	}
	return out, nil
}

// maxAutoBaseline is the most that --baseline auto measures the idle Mac
// before the first run and after the last, each: where the idle power
// wanders too much for the runs' needs to be met, the bench still ends.
const maxAutoBaseline = 5 * time.Second

// BaselineFlag is --baseline: auto (the default), fitted to the runs, or
// a duration measured exactly; 0 is none.
type BaselineFlag struct {
	d    time.Duration
	auto bool
}

// Auto sets b to its default, auto, and returns it.
func (b *BaselineFlag) Auto() *BaselineFlag {
	*b = BaselineFlag{d: maxAutoBaseline, auto: true}
	return b
}

func (b *BaselineFlag) String() string {
	if b.auto {
		return "auto"
	}
	return b.d.String()
}

func (b *BaselineFlag) Type() string { return "D" }

func (b *BaselineFlag) Set(v string) error {
	if v == "auto" {
		b.Auto()
		return nil
	}
	// A negative duration is refused by validate, naming the flag.
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("it takes auto, 0 (none) or a duration such as 5s")
	}
	*b = BaselineFlag{d: d}
	return nil
}

// FlagError is err, from parsing bench's flags, with hyperfine's words
// for a number it cannot read, and -L's and -P's words shown as they
// were given, not as the one value that JoinMultiWordFlags made of them.
func FlagError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
		return err
	}
	f, v := bad.GetFlag(), bad.GetValue()
	what := "is not a number"
	if ne := (*strconv.NumError)(nil); errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		what = "is out of range"
	}
	switch f.Value.Type() {
	case "int":
		if what == "is not a number" {
			what = "is not a whole number"
		}
		return &HyperfineError{Sentence: fmt.Sprintf("Could not read numeric integer argument to '--%s'", f.Name), Detail: fmt.Sprintf(": %q %s", v, what)}
	case "float64":
		return &HyperfineError{Sentence: fmt.Sprintf("Could not read numeric floating point argument to '--%s'", f.Name), Detail: fmt.Sprintf(": %q %s", v, what)}
	}
	if strings.Contains(v, "\x00") {
		return fmt.Errorf("-%s %s: %w", f.Shorthand, output.ShellQuote(strings.Split(v, "\x00")), errors.Unwrap(err))
	}
	return err
}

// Refused are hyperfine's flags that exopower cannot honour, and why:
// they are refused, not taken and ignored.
var Refused = []struct {
	Long, Short, Why string
}{
	{"debug-mode", "", "--debug-mode: hyperfine's mode that fakes the times of sleep commands; exopower measures what runs, and has no such mode"},
	{"version", "V", "-V/--version: exopower bench has no version of its own; exopower version prints exopower's"},
}

// Parsed takes what the command line gave: the flags given, by their
// long names, and the commands. A flag of Refused is refused here.
func (o *Options) Parsed(given map[string]bool, commands []string) error {
	for _, r := range Refused {
		if given[r.Long] {
			return cli.Fail(errors.New(r.Why), "exopower bench --help lists the flags it takes")
		}
	}
	o.Given, o.Commands = given, commands
	return nil
}
