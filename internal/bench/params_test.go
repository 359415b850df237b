package bench

import (
	"reflect"
	"strings"
	"testing"
)

// -L's values, as hyperfine's tokenize splits them (its own tests' cases).
func TestParameterValuesSplitAtCommasButEscapedOnes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`a\,b,c`, []string{"a,b", "c"}},
		{``, []string{""}},
		{`foo`, []string{"foo"}},
		{` `, []string{" "}},
		{`hello\, world!`, []string{"hello, world!"}},
		{`\,`, []string{","}},
		{`\,\,\,`, []string{",,,"}},
		{`\n`, []string{`\n`}},
		{`\\`, []string{`\`}},
		{`\\\,`, []string{`\,`}},
		{`foo,bar,baz`, []string{"foo", "bar", "baz"}},
		{`hello world,foo`, []string{"hello world", "foo"}},
		{`foo,,bar`, []string{"foo", "", "bar"}},
		{`,bar`, []string{"", "bar"}},
		{`bar,`, []string{"bar", ""}},
		{`,,`, []string{"", "", ""}},
		{`a\`, []string{`a\`}},
		{`ü\,é,ß`, []string{"ü,é", "ß"}},
	} {
		if got := SplitValues(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitValues(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The first list varies fastest, as in hyperfine's
// test_build_commands_cross_product.
func TestCombinationsVaryTheFirstListFastest(t *testing.T) {
	got := Combinations([]ParameterList{{"par1", []string{"a", "b"}}, {"par2", []string{"z", "y"}}})
	want := []map[string]string{{"par1": "a", "par2": "z"}, {"par1": "b", "par2": "z"}, {"par1": "a", "par2": "y"}, {"par1": "b", "par2": "y"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Combinations = %v, want %v", got, want)
	}
	if got := Combinations(nil); len(got) != 1 || len(got[0]) != 0 {
		t.Errorf("Combinations(nil) = %v, want one empty map", got)
	}
}

func TestSubstituteIsOnePass(t *testing.T) {
	got := Substitute("sleep {t}; echo {n} {t} {x}", map[string]string{"t": "{n}", "n": "3"})
	if want := "sleep {n}; echo 3 {n} {x}"; got != want {
		t.Errorf("Substitute = %q, want %q", got, want)
	}
}

// -P's values, as hyperfine 1.15 writes them (each case run through it).
func TestParameterScanValuesAreHyperfines(t *testing.T) {
	for _, c := range []struct {
		min, max, step, want string
	}{
		{"1", "8", "", "1 2 3 4 5 6 7 8"},
		{"1", "7", "3", "1 4 7"},
		{"0", "10", "3", "0 3 6 9"},
		{"-2", "1", "", "-2 -1 0 1"},
		{"0", "1", "0.25", "0 0.25 0.50 0.75 1.00"},
		{"0.3", "0.7", "0.2", "0.3 0.5 0.7"},
		{"0.30", "0.7", "0.2", "0.30 0.50 0.70"},
		{"1", "2", "0.5", "1 1.5 2.0"},
		{"0", "1", "0.33", "0 0.33 0.66 0.99"},
		{"0", "1", "0.1", "0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0"},
		{"-0.5", "0.5", "0.5", "-0.5 0.0 0.5"},
		{"5", "5", "", "5"},
	} {
		got, err := ScanValues(c.min, c.max, c.step)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("ScanValues(%s, %s, %q) = %q, %v; want %s", c.min, c.max, c.step, got, err, c.want)
		}
	}
	for _, c := range []struct{ min, max, step, err string }{
		{"1.5", "3", "", "A step size is required when the range bounds are floating point numbers. The step size can be specified with the '-D/--parameter-step-size <DELTA>' parameter"},
		{"2", "1", "", "Empty parameter range: 2 to 1"},
		{"0", "1", "0", "Zero is not a valid parameter step"},
		{"0", "10", "-1", "never reaches 10"},
		{"0", "100000", "", "Parameter range is too large: 0 to 100000 in steps of 1 has too many values"},
		{"a", "3", "1", "Error while parsing parameter scan arguments (\"a\" is not a number)"},
		{"1", "3", "1e1", "Error while parsing parameter scan arguments (\"1e1\" is not a number)"},
	} {
		if got, err := ScanValues(c.min, c.max, c.step); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("ScanValues(%s, %s, %q) = %q, %v; want an error with %q", c.min, c.max, c.step, got, err, c.err)
		}
	}
	if got, err := ScanValues("1", "99999", ""); err != nil || len(got) != 99999 {
		t.Errorf("99999 values: %d, %v", len(got), err)
	}
}
