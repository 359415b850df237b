package serve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Who may ask what. A web page in a browser on this machine is a client
// of serve too, one that its user did not choose: it must not hold the
// spans' places (a page's "simple" POSTs need no permission of serve's)
// nor read serve through a name of its own that it points at 127.0.0.1
// (DNS rebinding). Programs (curl, exopower --node, Prometheus) send
// neither Origin nor Sec-Fetch-Site, and a Host of the name they dialled.

// authKey marks a request's context with the user of the web config
// whose password it gave.
type authKey struct{}

// userOf is the user of the web config whose password r gave; ok is
// false when it gave none.
func userOf(r *http.Request) (user string, ok bool) {
	user, ok = r.Context().Value(authKey{}).(string)
	return user, ok
}

// basicUser is the user that r's basic authentication names.
func basicUser(r *http.Request) string {
	user, _, _ := r.BasicAuth()
	return user
}

// authenticated reports whether r gave a password of the web config.
func authenticated(r *http.Request) bool {
	_, ok := userOf(r)
	return ok
}

// gate lets a request through to next as the web config in force says
// (webConfig.load): with a password when it sets users (401 without);
// without one otherwise, from this machine only while the file cannot be
// used, and to one of this machine's names only (Host).
func (s *Server) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := s.web.load()
		if st.cfg != nil && st.cfg.TLSConfig.IsEnabled() && !s.web.tls {
			// Passwords would go in clear text, which the file says
			// they must not: serve takes TLS only at its start.
			fail(w, http.StatusServiceUnavailable, fmt.Sprintf("the web config %s sets TLS, and serve speaks plain HTTP until it is started again: start serve again to serve TLS", s.web.path))
			return
		}
		if st.limiter != nil && !st.limiter.Allow() {
			fail(w, http.StatusTooManyRequests, fmt.Sprintf("too many requests: the web config %s allows %v a request (rate_limit), %d at once", s.web.path, st.cfg.RateLimiterConfig.Interval, st.cfg.RateLimiterConfig.Burst))
			return
		}
		if st.cfg != nil {
			for k, v := range st.cfg.HTTPConfig.Header {
				w.Header().Set(k, v)
			}
		}
		switch {
		case st.users():
			switch s.web.password(st, r) {
			case busy:
				w.Header().Set("Retry-After", "1")
				fail(w, http.StatusServiceUnavailable, fmt.Sprintf("%d passwords are being checked (bcrypt, one at a time), the most there may be: try again in a second", MaxPasswordChecks))
				return
			case gone:
				// Its client went away: no one is likely to read this.
				fail(w, http.StatusServiceUnavailable, "the request ended before its password was checked")
				return
			case wrong:
				msg := "a user and password of the web config (--web.config.file) are needed"
				if st.kept && loopback(r) {
					msg += fmt.Sprintf(" (the web config %s %s: its last users stay in force until it is fixed)", s.web.path, st.fault)
				}
				if !s.pageOfAnotherName(r) {
					w.Header().Set("WWW-Authenticate", "Basic")
				}
				fail(w, http.StatusUnauthorized, msg)
				return
			}
			// A client with a password may name serve as it likes:
			// Prometheus scrapes by DNS names.
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, basicUser(r))))
			return
		case st.fault != "" && !loopback(r):
			// 503 rather than 401 or 403: nothing the client can send
			// would do, and the fault is serve's file, which may be
			// mid-save; Prometheus marks the target down meanwhile. What
			// is wrong may quote the file (a password put in the wrong
			// place): serve's log says it, and this machine's clients.
			fail(w, http.StatusServiceUnavailable, fmt.Sprintf("the web config %s cannot be used (serve's log says why); serve answers this machine only until the file is fixed (it reads it at every request)", s.web.path))
			return
		}
		if !s.ownHost(r.Host) {
			fail(w, http.StatusForbidden, fmt.Sprintf("Host %q is not a name of this machine: without a password, serve answers only requests to localhost, 127.0.0.1, ::1 or this machine's hostname, so that no web page reaches it through a name of its own (DNS rebinding); reach serve as localhost or 127.0.0.1, or set passwords with --web.config.file", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// pageOfAnotherName reports whether r comes from a web page (its browser
// says so in Sec-Fetch-Site) and names serve by a name not of this
// machine's: a page whose name its DNS rebinds to 127.0.0.1, which must
// not have the browser ask its user for serve's password under that
// name. Programs send no Sec-Fetch-Site, nor does a browser at a URL its
// user typed ("none").
func (s *Server) pageOfAnotherName(r *http.Request) bool {
	site := r.Header.Get("Sec-Fetch-Site")
	return site != "" && site != "none" && !s.ownHost(r.Host)
}

// hostnames are the names of this machine that a request without a
// password may give as its Host, besides the loopback ones: each name
// given, and the .local form of its first label (Bonjour's).
func hostnames(names []string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSuffix(strings.ToLower(n), ".")
		if n == "" {
			continue
		}
		m[n] = true
		label, _, _ := strings.Cut(n, ".")
		m[label+".local"] = true
	}
	return m
}

// ownHost reports whether host (a request's Host, with or without a port)
// names this machine: localhost or a name under it, a loopback address,
// or one of its hostnames.
func (s *Server) ownHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap().IsLoopback()
	}
	return s.hosts[host]
}

// simpleTypes are the content types a web page may POST to any origin
// without asking it (a form, or fetch in no-cors mode). No client of
// serve sends a body.
var simpleTypes = []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"}

// crossOrigin says why r, a request for spans or the stream, comes from
// a web page of another origin, or "" when it does not. A POST is
// checked by net/http's CrossOriginProtection (Sec-Fetch-Site, else
// Origin against Host) and for the content types of a form; a GET of a
// span or of the stream (which holds a place among the spans) by the
// same headers, as CrossOriginProtection lets every GET through.
func (s *Server) crossOrigin(r *http.Request) string {
	const how = "a web page of another origin may not open, read or end spans, nor hold a stream; programs send no Origin or Sec-Fetch-Site, and a browser-based tool must be served from serve's own origin, through a reverse proxy that gives a password (--web.config.file)"
	site, origin := r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Origin")
	if r.Method == http.MethodPost {
		if err := s.cop.Check(r); err != nil {
			return fmt.Sprintf("a request of another origin (Origin %q, Sec-Fetch-Site %q): %s", origin, site, how)
		}
		ct := strings.ToLower(strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0]))
		for _, t := range simpleTypes {
			if ct == t {
				return fmt.Sprintf("a POST of Content-Type %s, as a web page's form sends: no request needs a body; send none and no Content-Type (curl -X POST URL)", ct)
			}
		}
		return ""
	}
	// A GET of a span or of the stream. The browser would keep a span's
	// reading from the page (serve sends no CORS headers), but a stream
	// holds a place, and no page of another origin needs either.
	if site == "cross-site" || site == "same-site" {
		return fmt.Sprintf("a request of another site (Sec-Fetch-Site %q): %s", site, how)
	}
	if origin != "" {
		if u, err := url.Parse(origin); err != nil || u.Host != r.Host {
			return fmt.Sprintf("a request of another origin (Origin %q, Host %q): %s", origin, r.Host, how)
		}
	}
	return ""
}
