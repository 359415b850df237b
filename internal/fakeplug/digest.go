package fakeplug

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
)

// realm is the fake Shelly's id, which its digest challenge names.
const realm = "shellyplusplugs-fa1ce0000001"

// digestOK says whether r carries a SHA-256 digest (RFC 7616, qop auth)
// of user admin and the fake's password, to a nonce the fake gave; if
// not, it answers 401 with a new challenge.
func (f *Fake) digestOK(w http.ResponseWriter, r *http.Request) bool {
	p := digestParams(r.Header.Get("Authorization"))
	f.mu.Lock()
	known := f.nonces[p["nonce"]]
	f.mu.Unlock()
	if known && p["username"] == "admin" && p["realm"] == realm && p["uri"] == r.URL.RequestURI() &&
		p["response"] == DigestResponse("admin", f.cfg.Password, realm, r.Method, p["uri"], p["nonce"], p["nc"], p["cnonce"]) {
		return true
	}
	var b [8]byte
	rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	f.mu.Lock()
	f.nonces[nonce] = true
	f.mu.Unlock()
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Digest qop="auth", realm=%q, nonce=%q, algorithm=SHA-256`, realm, nonce))
	http.Error(w, `{"code":401,"message":"Unauthorized"}`, http.StatusUnauthorized)
	return false
}

// DigestResponse is RFC 7616's response for qop auth with SHA-256.
func DigestResponse(user, password, realm, method, uri, nonce, nc, cnonce string) string {
	ha1 := sha(user + ":" + realm + ":" + password)
	ha2 := sha(method + ":" + uri)
	return sha(ha1 + ":" + nonce + ":" + nc + ":" + cnonce + ":auth:" + ha2)
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// digestParams reads the name=value pairs of a Digest Authorization
// header, values quoted or not (a value holds no comma here).
func digestParams(h string) map[string]string {
	p := map[string]string{}
	rest, ok := strings.CutPrefix(h, "Digest ")
	if !ok {
		return p
	}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok {
			p[k] = strings.Trim(v, `"`)
		}
	}
	return p
}
