package llm

import (
	"net/url"
	"strings"

	"github.com/exopower/exopower/internal/cluster"
)

// A server knows the key, and may send it back anywhere: in a header, a
// redirect's address, a line the transport quotes in its error, any
// field of any chunk. So every string that comes from the server or the
// transport passes one redaction (Client.text) before it is cleaned,
// cut or stored, and the URL's own credentials (its user, its password,
// its query's values) are held to the same rule.

// pieceLen is the length of the shortest piece of a secret that is taken
// out wherever it stands: a server that sends part of the key, or a cut
// that falls inside it, leaves no piece this long.
const pieceLen = 8

// The marks that stand where a secret was.
const (
	keyMark = "[the key]"
	urlMark = "[redacted]"
)

// secrets are what exopower must never write: the API key and the URL's
// credentials.
type secrets struct {
	// pieces maps every pieceLen-byte piece of a long secret to its mark.
	pieces map[string]string
	// whole are the secrets shorter than pieceLen, taken out whole.
	whole map[string]string
}

// newSecrets are the key and the credentials of u.
func newSecrets(key string, u *url.URL) *secrets {
	s := &secrets{pieces: map[string]string{}, whole: map[string]string{}}
	if u != nil {
		if u.User != nil {
			s.add(u.User.Username(), urlMark)
			if p, ok := u.User.Password(); ok {
				s.add(p, urlMark)
			}
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				s.add(v, urlMark)
			}
		}
	}
	// The key last: its mark wins a piece that both share.
	s.add(key, keyMark)
	return s
}

func (s *secrets) add(secret, mark string) {
	switch {
	case len(secret) >= pieceLen:
		for i := 0; i+pieceLen <= len(secret); i++ {
			s.pieces[secret[i:i+pieceLen]] = mark
		}
	case len(secret) >= 6:
		// Shorter than this, a "secret" is a word of the text: a
		// query's ?stream=true would take every "true" out.
		s.whole[secret] = mark
	}
}

// redact is str with every piece of a secret in it replaced by its mark:
// overlapping pieces, and so a whole key, make one mark.
func (s *secrets) redact(str string) string {
	if s == nil || len(s.pieces) == 0 && len(s.whole) == 0 {
		return str
	}
	var b strings.Builder
	last := 0 // str[:last] is written
	for i := 0; i+pieceLen <= len(str); {
		mark, ok := s.pieces[str[i:i+pieceLen]]
		if !ok {
			i++
			continue
		}
		end := i + pieceLen
		for end < len(str) && s.covered(str, end) {
			end++
		}
		b.WriteString(str[last:i])
		b.WriteString(mark)
		last, i = end, end
	}
	b.WriteString(str[last:])
	out := b.String()
	for w, mark := range s.whole {
		out = strings.ReplaceAll(out, w, mark)
	}
	return out
}

// covered says whether the byte at end extends a run of pieces: the
// piece that ends with it is one.
func (s *secrets) covered(str string, end int) bool {
	_, ok := s.pieces[str[end+1-pieceLen:end+1]]
	return ok
}

// maxRaw bounds what of a server's string is redacted and cleaned:
// cluster.Clean keeps 512 runes, which no more than this many bytes
// hold, so a cut here never shows a piece that the redaction would have
// taken out.
const maxRaw = 8 << 10

// text makes s, a string from the server or the transport, safe to print
// and store: the secrets taken out first, then control characters
// escaped and the length cut.
func (c *Client) text(s string) string {
	if len(s) > maxRaw {
		s = s[:maxRaw]
	}
	return cluster.Clean(c.secrets.redact(s))
}

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
			name = cluster.Clean(name) + "=" + urlMark
		}
		parts = append(parts, name)
	}
	return s + "?" + strings.Join(parts, "&")
}
