package safe

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// A string from elsewhere is written as what it is: control characters
// and bytes that are not UTF-8 as escapes, and no more than MaxText
// runes.
func TestTextIsSafeToWriteAnywhere(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain words", "plain words"},
		{"a\x1b]0;title\x07b", `a\x1b]0;title\x07b`},
		{"line\nbreak\rover", `line\x0abreak\x0dover`},
		{"c1 \u009b here", `c1 \u009b here`},
		{"mac\u202e1cam", `mac\u202e1cam`},
		{"bad \xff byte", `bad \xff byte`},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := strings.Repeat("é", MaxText+10)
	if got := Text(long); utf8.RuneCountInString(got) != MaxText+1 || !strings.HasSuffix(got, "…") {
		t.Errorf("a long text: %d runes, %q at its end", utf8.RuneCountInString(got), got[len(got)-6:])
	}
}

// A piece of a secret of PieceLen bytes is taken out wherever it stands:
// the whole secret, a part of it, two run together; what is left has no
// piece of it. A secret of 4 to 7 bytes is taken out whole; one shorter
// withholds the text that holds it.
func TestRedactionTakesOutEveryPieceOfASecret(t *testing.T) {
	const key = "sk-0123456789abcdef"
	var s Secrets
	s.Add(key, "[the key]")
	s.Add("pw4567", "[redacted]")
	s.Add("abc", "[never]")
	for _, c := range []struct{ in, want string }{
		{"no secret here", "no secret here"},
		{"key " + key + " end", "key [the key] end"},
		{"half " + key[:10], "half [the key]"},
		{"tail " + key[9:] + "!", "tail [the key]!"},
		{key + key, "[the key][the key]"},
		{"short: pw4567.", "short: [redacted]."},
		{"seven 0123456 stays", "seven 0123456 stays"},
		{"abc is too short to add", "abc is too short to add"},
	} {
		if got := s.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	s.Withhold("pw")
	if got := s.Redact("the pw is"); got != Withheld {
		t.Errorf("a text holding a withheld secret: %q", got)
	}
	// Whatever surrounds it, no piece of the key survives, cut or not.
	rng := rand.New(rand.NewPCG(1, 2))
	var k Secrets
	k.Add(key, "[the key]")
	for range 2000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			switch rng.IntN(3) {
			case 0:
				i := rng.IntN(len(key))
				b.WriteString(key[i:min(len(key), i+rng.IntN(len(key)))])
			case 1:
				b.WriteString("xyz-012 ")
			default:
				b.WriteString(key)
			}
		}
		for _, out := range []string{k.Redact(b.String()), k.Text(strings.Repeat("a", MaxText-rng.IntN(20)) + b.String())} {
			for i := 0; i+PieceLen <= len(key); i++ {
				if strings.Contains(out, key[i:i+PieceLen]) {
					t.Fatalf("%q gave %q, which keeps %q", b.String(), out, key[i:i+PieceLen])
				}
			}
		}
	}
}
