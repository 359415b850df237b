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
	s := splitter{r: []rune(line)}
	for ; s.i < len(s.r); s.i++ {
		switch c := s.r[s.i]; s.state {
		case atBlank, inWord:
			s.outside(c)
		case inSingle:
			if c == '\'' {
				s.state = inWord
			} else {
				s.word = append(s.word, c)
			}
		case inDouble:
			if !s.double(c) {
				return nil, ErrOpenQuote
			}
		case inComment:
			if c == '\n' {
				s.state = atBlank
			}
		}
	}
	switch s.state {
	case inSingle, inDouble:
		return nil, ErrOpenQuote
	case inWord:
		s.words = append(s.words, string(s.word))
	}
	return s.words, nil
}

// Where SplitWords stands in a line.
const (
	atBlank   = iota // between words
	inWord           // in a word, outside quotes
	inSingle         // within single quotes
	inDouble         // within double quotes
	inComment        // in a comment, to the end of the line
)

// splitter is SplitWords's reading of a line: the character it is at,
// the words so far, the word being read, and where it stands.
type splitter struct {
	r     []rune
	i     int
	words []string
	word  []rune
	state int
}

// outside reads c, outside quotes: between words or in one.
func (s *splitter) outside(c rune) {
	switch {
	case c == ' ' || c == '\t' || c == '\n':
		if s.state == inWord {
			s.words, s.word = append(s.words, string(s.word)), nil
		}
		s.state = atBlank
	case c == '#' && s.state == atBlank:
		s.state = inComment
	case c == '\'':
		s.state = inSingle
	case c == '"':
		s.state = inDouble
	case c == '\\':
		if s.i+1 == len(s.r) {
			// A backslash at the end stands for itself.
			s.word = append(s.word, c)
		} else if s.i++; s.r[s.i] != '\n' {
			s.word = append(s.word, s.r[s.i])
		} else if s.state == atBlank {
			// A backslash-newline between words joins nothing.
			return
		}
		s.state = inWord
	default:
		s.word = append(s.word, c)
		s.state = inWord
	}
}

// double reads c within double quotes; false for a backslash that ends
// the line, which leaves the quote open.
func (s *splitter) double(c rune) bool {
	switch {
	case c == '"':
		s.state = inWord
	case c == '\\' && s.i+1 == len(s.r):
		return false
	case c == '\\':
		s.i++
		switch s.r[s.i] {
		case '\n':
		case '$', '`', '"', '\\':
			s.word = append(s.word, s.r[s.i])
		default:
			s.word = append(s.word, c, s.r[s.i])
		}
	default:
		s.word = append(s.word, c)
	}
	return true
}
