package llm

import (
	"net/url"
	"strings"

	"github.com/exopower/exopower/internal/safe"
)

// A server knows the key, and may send it back anywhere: in a header, a
// redirect's address, a line the transport quotes in its error, any
// field of any chunk. So every string that comes from the server or the
// transport passes one redaction (Client.text) before it is cleaned,
// cut or stored, and the URL's own credentials (its user, its password,
// its query's values) are held to the same rule.

// The marks that stand where a secret was.
const (
	keyMark = "[the key]"
	urlMark = "[redacted]"
)

// newSecrets are the key and the credentials of u: its user, its
// password, and its query's values of 6 bytes or more (a shorter value
// is a word of the text: ?stream=true would take every "true" out), each
// as given and in the forms a URL escapes it to, which is how a server
// that quotes its request line sends it back.
func newSecrets(key string, u *url.URL) *safe.Secrets {
	s := &safe.Secrets{}
	add := func(v, mark string) {
		for _, form := range []string{v, url.QueryEscape(v), url.PathEscape(v)} {
			s.Add(form, mark)
		}
	}
	if u != nil {
		if u.User != nil {
			add(u.User.Username(), urlMark)
			if p, ok := u.User.Password(); ok {
				add(p, urlMark)
			}
		}
		for _, pair := range strings.Split(u.RawQuery, "&") {
			_, raw, _ := strings.Cut(pair, "=")
			if v, err := url.QueryUnescape(raw); err == nil && len(v) >= 6 {
				add(v, urlMark)
			}
			if len(raw) >= 6 {
				s.Add(raw, urlMark)
			}
		}
	}
	// The key last: its mark wins a piece that both share. A key too
	// short to take out of a text by its pieces is taken out where it
	// stands as a word of its own.
	add(key, keyMark)
	if len(key) < 4 {
		s.AddWord(key, keyMark)
	}
	return s
}

// text makes s, a string from the server or the transport, safe to print
// and store: the secrets taken out first, then control characters
// escaped and the length cut.
func (c *Client) text(s string) string { return c.secrets.Text(s) }

// Where is the endpoint as exopower prints and stores it: without a
// user or password, and with the query's values hidden, since a server
// may take its key there (?api_key=...).
func Where(u *url.URL) string {
	v := *u
	v.User, v.Fragment, v.RawFragment, v.RawQuery, v.ForceQuery = nil, "", "", "", false
	s := v.String()
	if u.RawQuery == "" {
		return s
	}
	var parts []string
	for _, pair := range strings.Split(u.RawQuery, "&") {
		name, _, hasValue := strings.Cut(pair, "=")
		if !hasValue {
			// A bare word may be the key itself (?sk-...).
			name = urlMark
		} else {
			name = safe.Text(name) + "=" + urlMark
		}
		parts = append(parts, name)
	}
	return s + "?" + strings.Join(parts, "&")
}
