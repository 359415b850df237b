package bench

import "errors"

// ErrOpenQuote is SplitWords's error for a line that ends inside quotes,
// or just after a backslash within double quotes.
var ErrOpenQuote = errors.New("a quote is not closed")

// SplitWords splits line into words as a POSIX shell reads a simple
// command, and as hyperfine does for --shell=none and --shell (with the
// shell-words crate): blanks (space, tab, newline) separate words;
// single quotes keep everything up to the next one; double quotes keep
// everything up to the next unescaped one, a backslash in them escaping
// only $, `, ", \ and a newline (which it removes); an unquoted backslash
// keeps the next character as it is (and a newline after it is removed);
// a # that begins a word begins a comment, to the end of the line.
// Nothing else is special: no variable, glob, tilde, redirection or
// operator is expanded, so "a;b" and "$HOME" are words as written. An
// unterminated quote is ErrOpenQuote; a line of blanks has no words.
func SplitWords(line string) ([]string, error) {
	const (
		between = iota // between words
		unquoted
		single
		double
		comment
	)
	var (
		words []string
		word  []rune
		state = between
	)
	r := []rune(line)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch state {
		case between, unquoted:
			switch {
			case c == ' ' || c == '\t' || c == '\n':
				if state == unquoted {
					words, word = append(words, string(word)), nil
				}
				state = between
			case c == '#' && state == between:
				state = comment
			case c == '\'':
				state = single
			case c == '"':
				state = double
			case c == '\\':
				if i+1 == len(r) {
					// A backslash at the end stands for itself.
					word = append(word, c)
				} else if i++; r[i] != '\n' {
					word = append(word, r[i])
				} else if state == between {
					// A backslash-newline between words joins nothing.
					continue
				}
				state = unquoted
			default:
				word = append(word, c)
				state = unquoted
			}
		case single:
			if c == '\'' {
				state = unquoted
			} else {
				word = append(word, c)
			}
		case double:
			switch {
			case c == '"':
				state = unquoted
			case c == '\\' && i+1 == len(r):
				return nil, ErrOpenQuote
			case c == '\\':
				i++
				switch r[i] {
				case '\n':
				case '$', '`', '"', '\\':
					word = append(word, r[i])
				default:
					word = append(word, c, r[i])
				}
			default:
				word = append(word, c)
			}
		case comment:
			if c == '\n' {
				state = between
			}
		}
	}
	switch state {
	case single, double:
		return nil, ErrOpenQuote
	case unquoted:
		words = append(words, string(word))
	}
	return words, nil
}
