package bench

import (
	"cmp"
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ParameterList is one -L: a name and the values it takes in turn (or
// -P's range, its values written out).
type ParameterList struct {
	Name   string
	Values []string
}

// SplitValues splits -L's VALUES at its commas, as hyperfine does: "\,"
// is a comma within a value and "\\" a backslash; any other backslash
// stays as it is. An empty VALUES is one empty value, and so is what
// lies between two commas in a row.
func SplitValues(s string) []string {
	var (
		values []string
		v      strings.Builder
	)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && (s[i+1] == ',' || s[i+1] == '\\'):
			i++
			v.WriteByte(s[i])
		case c == ',':
			values = append(values, v.String())
			v.Reset()
		default:
			v.WriteByte(c)
		}
	}
	return append(values, v.String())
}

// Combinations are the parameters of every command to measure, one map
// (name -> value) each, in hyperfine's order: every value of every list
// with every value of the others, the first list varying fastest and the
// last slowest. (The commands, which Plan puts in that order too, vary
// faster still: each combination is measured with every command before
// the next.) No list gives one empty map: the command as it is.
func Combinations(lists []ParameterList) []map[string]string {
	out := []map[string]string{{}}
	for _, l := range lists {
		var next []map[string]string
		for _, v := range l.Values {
			for _, m := range out {
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

// maxScanValues is how many values -P may give, as hyperfine allows.
const maxScanValues = 100_000

// decimalRE is a number as -P takes it: digits with an optional sign
// and fraction, no exponent.
var decimalRE = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)

// ScanValues are the values of -P NAME MIN MAX with -D STEP (step ""
// without -D), as hyperfine counts them: MIN, MIN+STEP, ... up to MAX,
// in whole numbers when MIN, MAX and STEP (1 without -D) are 32-bit
// integers, else in decimals, exactly, written with as many decimal
// places as MIN has at first, then as many as MIN or STEP has (0, 0.25,
// 0.50, 0.75, 1.00); decimals need a STEP.
func ScanValues(lo, hi, step string) ([]string, error) {
	a, errA := strconv.ParseInt(lo, 10, 32)
	b, errB := strconv.ParseInt(hi, 10, 32)
	s, errS := strconv.ParseInt(cmp.Or(step, "1"), 10, 32)
	if errA == nil && errB == nil && errS == nil {
		return scan(decimal{big.NewInt(a), 0}, decimal{big.NewInt(b), 0}, decimal{big.NewInt(s), 0})
	}
	var ds [3]decimal
	for i, x := range []string{lo, hi, step} {
		if i == 2 && x == "" {
			return nil, &HyperfineError{Sentence: "A step size is required when the range bounds are floating point numbers. " +
				"The step size can be specified with the '-D/--parameter-step-size <DELTA>' parameter", Detail: ", such as -D 0.1"}
		}
		d, ok := parseDecimal(x)
		if !ok {
			return nil, &HyperfineError{Sentence: "Error while parsing parameter scan arguments", Detail: fmt.Sprintf(" (%q is not a number)", x)}
		}
		ds[i] = d
	}
	return scan(ds[0], ds[1], ds[2])
}

// decimal is n × 10^-scale, as written with scale decimal places.
type decimal struct {
	n     *big.Int
	scale int
}

func parseDecimal(s string) (decimal, bool) {
	if !decimalRE.MatchString(s) {
		return decimal{}, false
	}
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "+"), ".")
	n, ok := new(big.Int).SetString(whole+frac, 10)
	return decimal{n, len(frac)}, ok
}

// at is d with scale places, scale no less than d's.
func (d decimal) at(scale int) *big.Int {
	return new(big.Int).Mul(d.n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-d.scale)), nil))
}

func (d decimal) String() string {
	s := new(big.Int).Abs(d.n).String()
	if d.scale > 0 {
		if len(s) <= d.scale {
			s = strings.Repeat("0", d.scale-len(s)+1) + s
		}
		s = s[:len(s)-d.scale] + "." + s[len(s)-d.scale:]
	}
	if d.n.Sign() < 0 {
		s = "-" + s
	}
	return s
}

func scan(first, last, step decimal) ([]string, error) {
	scale := max(first.scale, last.scale, step.scale)
	lo, hi, st := first.at(scale), last.at(scale), step.at(scale)
	switch {
	case hi.Cmp(lo) < 0:
		return nil, &HyperfineError{Sentence: "Empty parameter range", Detail: fmt.Sprintf(": %s to %s; give the least value first", first, last)}
	case st.Sign() == 0:
		return nil, &HyperfineError{Sentence: "Zero is not a valid parameter step", Detail: ": a step of 0 never ends; give a step above 0"}
	}
	// As hyperfine reckons the count: (max - min + 1) / step, in the
	// bounds' and step's own units.
	one := decimal{big.NewInt(1), 0}.at(scale)
	count := new(big.Int).Quo(new(big.Int).Add(new(big.Int).Sub(hi, lo), one), st)
	if st.Sign() < 0 {
		return nil, fmt.Errorf("a step of %s never reaches %s: give a step above 0", step, last)
	}
	if count.Cmp(big.NewInt(maxScanValues)) > 0 {
		return nil, &HyperfineError{Sentence: "Parameter range is too large",
			Detail: fmt.Sprintf(": %s to %s in steps of %s has too many values, at most %d", first, last, step, maxScanValues)}
	}
	values := []string{first.String()}
	cur := first
	for {
		s := max(cur.scale, step.scale)
		cur = decimal{new(big.Int).Add(cur.at(s), step.at(s)), s}
		if cur.at(scale).Cmp(hi) > 0 {
			return values, nil
		}
		values = append(values, cur.String())
	}
}
