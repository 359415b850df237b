package bench

import (
	"maps"
	"slices"
	"strings"
)

// ParameterList is one -L: a name and the values it takes in turn.
type ParameterList struct {
	Name   string
	Values []string
}

// Combinations are the parameters of every command to measure, one map
// (name -> value) each: every value of every list with every value of
// the others, the first list varying slowest, as hyperfine orders them.
// No list gives one empty map: the command as it is.
func Combinations(lists []ParameterList) []map[string]string {
	out := []map[string]string{{}}
	for _, l := range lists {
		var next []map[string]string
		for _, m := range out {
			for _, v := range l.Values {
				c := maps.Clone(m)
				c[l.Name] = v
				next = append(next, c)
			}
		}
		out = next
	}
	return out
}

// Substitute puts each parameter's value for {NAME} in s, in one pass:
// a value that holds another's {NAME} is left as it is.
func Substitute(s string, params map[string]string) string {
	var pairs []string
	for _, name := range slices.Sorted(maps.Keys(params)) {
		pairs = append(pairs, "{"+name+"}", params[name])
	}
	return strings.NewReplacer(pairs...).Replace(s)
}
