package wall

import (
	"encoding/base64"
	"net/url"

	"github.com/exopower/exopower/internal/safe"
)

// A plug knows the credentials it was given and may send them back
// anywhere: in an error's text, a model's name, a redirect's address. So
// every string from a plug or the transport passes secrets.text before
// it is printed or becomes part of an error: the credentials taken out
// (as given, escaped for a URL, and as HTTP Basic's base64), then
// control characters escaped and the length cut (package safe).

// mark stands where a secret was.
const mark = "[redacted]"

// secrets are the credentials, in every form a plug may echo them.
type secrets struct{ safe.Secrets }

func newSecrets(c Credentials) *secrets {
	s := &secrets{}
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
		if len(f) >= 4 {
			s.Add(f, mark)
		} else {
			// A secret this short is a word any text may hold: a text
			// that holds it is withheld whole.
			s.Withhold(f)
		}
	}
	return s
}

// text makes str, from a plug or the transport, safe to print: the
// secrets taken out before the length is cut, so that a cut never leaves
// part of one (safe.Secrets.Text).
func (s *secrets) text(str string) string { return s.Text(str) }

// basicUser is the user a plug's HTTP Basic or query credentials name:
// admin, every Shelly Gen1's and Tasmota's, unless another is given.
func basicUser(c Credentials) string {
	if c.User == "" {
		return "admin"
	}
	return c.User
}
