package bench

import (
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// The words of a command line, as the shell-words crate (hyperfine's
// splitter for --shell=none) reads them.
func TestCommandsAreSplitIntoWordsAsAShellReadsThem(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{"prog 'a b' c", []string{"prog", "a b", "c"}},
		{"  a \t b\n c  ", []string{"a", "b", "c"}},
		{`"a b" c\ d`, []string{"a b", "c d"}},
		{`a'b'"c"d`, []string{"abcd"}},
		{`'a\b' "a\b" a\b`, []string{`a\b`, `a\b`, "ab"}},
		{`"\$ \` + "`" + ` \" \\ \n"`, []string{"$ ` \" \\ \\n"}},
		{"'' \"\"", []string{"", ""}},
		{"a#b #c d\ne", []string{"a#b", "e"}},
		{"#all comment", nil},
		{"a\\\nb \\\nc", []string{"ab", "c"}},
		{"\"a\\\nb\"", []string{"ab"}},
		{`a\`, []string{`a\`}},
		{`\`, []string{`\`}},
		{"", nil},
		{"   ", nil},
		{"$HOME a;b *", []string{"$HOME", "a;b", "*"}},
		{"é 'ü ß'", []string{"é", "ü ß"}},
	} {
		got, err := SplitWords(c.line)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", c.line, got, err, c.want)
		}
	}
	for _, line := range []string{"prog 'a b", `prog "a b`, `"a\`, `'`} {
		if got, err := SplitWords(line); !errors.Is(err, ErrOpenQuote) {
			t.Errorf("SplitWords(%q) = %q, %v; want %v", line, got, err, ErrOpenQuote)
		}
	}
}

// Where nothing is expanded (no $, `, glob or operator), the words are
// the ones sh gives its command.
func TestTheWordsAreTheShells(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, line := range []string{
		`prog 'a b' c`, `a\ b "c d" 'e'"f"g`, `"a\\b" 'a\\b' a\\b`, `'' ""`, `x "\"" '"' \'`,
		"a\\\nb", `tab	sep`, `"a\b\c"`, `"#" \# '#'`,
	} {
		want, err := exec.Command(sh, "-c", `for w in `+line+`; do printf '%s\0' "$w"; done`).Output()
		if err != nil {
			t.Fatalf("sh on %q: %v", line, err)
		}
		got, err := SplitWords(line)
		if err != nil {
			t.Fatalf("SplitWords(%q): %v", line, err)
		}
		if w := strings.Split(strings.TrimSuffix(string(want), "\x00"), "\x00"); !reflect.DeepEqual(got, w) {
			t.Errorf("SplitWords(%q) = %q, sh reads %q", line, got, w)
		}
	}
}
