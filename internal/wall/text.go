package wall

import (
	"encoding/base64"
	"net/url"
	"strings"

	"github.com/exopower/exopower/internal/cluster"
)

// A plug knows the credentials it was given and may send them back
// anywhere: in an error's text, a model's name, a redirect's address. So
// every string from a plug or the transport passes secrets.text before
// it is printed or becomes part of an error: the credentials taken out
// (as given, escaped for a URL, and as HTTP Basic's base64), then
// control characters escaped and the length cut by cluster.Clean.

// pieceLen is the length of the shortest piece of a long secret taken
// out wherever it stands, so that a plug that sends part of a password,
// or a cut that falls inside it, leaves no piece this long.
const pieceLen = 8

// tinyLen is the length under which a secret is a word any text may
// hold: a text that holds one is withheld whole rather than redacted.
const tinyLen = 4

// mark stands where a secret was.
const mark = "[redacted]"

// withheld stands for a text that held a secret too short to take out.
const withheld = "(withheld: it holds a credential)"

// secrets are the credentials, in every form a plug may echo them.
type secrets struct {
	pieces map[string]bool
	whole  []string
	tiny   []string
}

func newSecrets(c Credentials) *secrets {
	s := &secrets{pieces: map[string]bool{}}
	var forms []string
	for _, v := range []string{c.Password, c.Token} {
		if v != "" {
			forms = append(forms, v, url.QueryEscape(v), url.PathEscape(v))
		}
	}
	// admin is every Shelly's and Tasmota's user, known to all: taking
	// it out would only mangle words like "administrator".
	if c.User != "" && c.User != "admin" {
		forms = append(forms, c.User, url.QueryEscape(c.User))
	}
	if c.User != "" || c.Password != "" {
		forms = append(forms, base64.StdEncoding.EncodeToString([]byte(basicUser(c)+":"+c.Password)))
	}
	for _, f := range forms {
		s.add(f)
	}
	return s
}

func (s *secrets) add(v string) {
	switch {
	case len(v) >= pieceLen:
		for i := 0; i+pieceLen <= len(v); i++ {
			s.pieces[v[i:i+pieceLen]] = true
		}
	case len(v) >= tinyLen:
		s.whole = append(s.whole, v)
	default:
		s.tiny = append(s.tiny, v)
	}
}

// redact is str with every run of a secret's pieces replaced by mark.
func (s *secrets) redact(str string) string {
	for _, t := range s.tiny {
		if strings.Contains(str, t) {
			return withheld
		}
	}
	var b strings.Builder
	last := 0
	for i := 0; i+pieceLen <= len(str); {
		if !s.pieces[str[i:i+pieceLen]] {
			i++
			continue
		}
		end := i + pieceLen
		for end < len(str) && s.pieces[str[end+1-pieceLen:end+1]] {
			end++
		}
		b.WriteString(str[last:i])
		b.WriteString(mark)
		last, i = end, end
	}
	b.WriteString(str[last:])
	out := b.String()
	for _, w := range s.whole {
		out = strings.ReplaceAll(out, w, mark)
	}
	return out
}

// text makes str, from a plug or the transport, safe to print. The
// secrets are taken out before the length is cut (cluster.Clean keeps
// 512 runes), so that a cut never leaves part of one; str is at most a
// bounded body.
func (s *secrets) text(str string) string {
	return cluster.Clean(s.redact(str))
}

// basicUser is the user a plug's HTTP Basic or query credentials name:
// admin, every Shelly Gen1's and Tasmota's, unless another is given.
func basicUser(c Credentials) string {
	if c.User == "" {
		return "admin"
	}
	return c.User
}
