package serve

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"
)

// webConfig is the Prometheus web config file (--web.config.file) as it
// is at each request: passwords set, changed or taken away under a
// running serve count from the next request. exporter-toolkit reads the
// file at every request too, but its handler answers 500 to every client
// when the file cannot be parsed, and lets every client in when it is
// empty, as an editor leaves it mid-save; serve reads it itself, so that
// both fail closed for other machines while this machine is served on,
// and so that the checks of Host and of spans know whether this request
// gave a password.
type webConfig struct {
	path   string
	beyond bool // serve listens beyond loopback

	mu   sync.Mutex
	last *webState // of the bytes last read, once checked

	// checked remembers bcrypt's verdicts, which take tens of
	// milliseconds each, by a hash of the user, the password's hash and
	// the password given; bcryptMu runs one comparison at a time. Both as
	// exporter-toolkit does.
	checkedMu sync.Mutex
	checked   map[[sha256.Size]byte]bool
	bcryptMu  sync.Mutex

	tlsMu   sync.Mutex
	lastTLS *tls.Config // the last TLS config that loaded
}

// webState is what one reading of the web config says.
type webState struct {
	raw []byte
	// cfg is the config; nil when the file cannot be used.
	cfg *web.Config
	// problem says what is wrong with the file, for other machines'
	// requests, which it refuses; "" when nothing is.
	problem string
	limiter *rate.Limiter
}

// users reports whether the config in force demands a password.
func (st *webState) users() bool { return st.cfg != nil && len(st.cfg.Users) > 0 }

// cacheSize bounds the verdicts remembered, as exporter-toolkit's does.
const cacheSize = 100

// fakeHash is compared with the password of a user the config does not
// know, so that the time of an answer does not tell which users exist:
// exporter-toolkit's, a bcrypt hash of "fakepassword".
const fakeHash = "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi"

// WebConfigUsers checks a web config file as exporters do (exporter-
// toolkit's own check) and counts the users it lets in with a password.
func WebConfigUsers(path string) (int, error) {
	if path == "" {
		return 0, nil
	}
	if err := web.Validate(path); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	c, err := parseWebConfig(path, b)
	if err != nil {
		return 0, err
	}
	return len(c.Users), nil
}

// parseWebConfig reads b as exporter-toolkit reads a web config: strictly,
// with its defaults, the paths in it relative to the file's directory.
func parseWebConfig(path string, b []byte) (*web.Config, error) {
	c := &web.Config{
		TLSConfig:  web.TLSConfig{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13},
		HTTPConfig: web.HTTPConfig{HTTP2: true},
	}
	if err := yaml.UnmarshalStrict(b, c); err != nil {
		return nil, err
	}
	c.TLSConfig.SetDirectory(filepath.Dir(path))
	return c, nil
}

// load reads the file and says what it holds now. A file unchanged since
// the last request is not checked again.
func (wc *webConfig) load() *webState {
	if wc.path == "" {
		return &webState{}
	}
	b, err := os.ReadFile(wc.path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said already
		}
		return &webState{problem: "cannot be read: " + err.Error()}
	}
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.last != nil && bytes.Equal(b, wc.last.raw) {
		return wc.last
	}
	st, settled := wc.check(b)
	if settled {
		wc.last = st
	}
	return st
}

// check says what the bytes b of the file hold, and whether they are
// what the file still holds, so that the verdict may be kept for them.
func (wc *webConfig) check(b []byte) (*webState, bool) {
	if len(bytes.TrimSpace(b)) == 0 {
		return &webState{raw: b, problem: "is empty"}, true
	}
	// exporter-toolkit's own check (its YAML, its headers, bcrypt hashes,
	// the TLS files) reads the file by its name: it holds for b only if
	// the file still holds b after it.
	verr := web.Validate(wc.path)
	if now, err := os.ReadFile(wc.path); err != nil || !bytes.Equal(now, b) {
		return &webState{problem: "changed while it was read (is it being written?)"}, false
	}
	if verr != nil {
		return &webState{raw: b, problem: "cannot be used: " + verr.Error()}, true
	}
	c, err := parseWebConfig(wc.path, b)
	if err != nil {
		return &webState{raw: b, problem: "cannot be used: " + err.Error()}, true
	}
	st := &webState{raw: b, cfg: c}
	if len(c.Users) == 0 && wc.beyond {
		st.problem = "sets no basic_auth_users, and serve listens beyond this machine"
	}
	if rl := c.RateLimiterConfig; rl.Interval != 0 {
		st.limiter = rate.NewLimiter(rate.Every(rl.Interval), rl.Burst)
	}
	return st, true
}

// password reports whether r gives the password of a user of c, checked
// as exporter-toolkit checks it.
func (wc *webConfig) password(c *web.Config, r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	hash, known := c.Users[user]
	if !known {
		hash = fakeHash
	}
	key := sha256.Sum256(fmt.Appendf(nil, "%x:%x:%x", user, string(hash), pass))
	wc.checkedMu.Lock()
	verdict, seen := wc.checked[key]
	wc.checkedMu.Unlock()
	if !seen {
		wc.bcryptMu.Lock()
		err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(pass))
		wc.bcryptMu.Unlock()
		verdict = known && err == nil
		wc.checkedMu.Lock()
		if wc.checked == nil || len(wc.checked) >= cacheSize {
			wc.checked = map[[sha256.Size]byte]bool{}
		}
		wc.checked[key] = verdict
		wc.checkedMu.Unlock()
	}
	return verdict
}

// Serve serves hs on ln until hs is shut down: over TLS when the web
// config sets it, in plain HTTP otherwise. As with exporter-toolkit, the
// certificates are read again at every connection; while the file
// cannot be used (or sets TLS no more), the last TLS config that loaded
// serves on, so that a file mid-save fails no handshake.
func (s *Server) Serve(hs *http.Server, ln net.Listener) error {
	st := s.web.load()
	if st.cfg == nil || !st.cfg.TLSConfig.IsEnabled() {
		return hs.Serve(ln)
	}
	first, err := web.ConfigToTLSConfig(&st.cfg.TLSConfig)
	if err != nil {
		return fmt.Errorf("the TLS of %s: %w", s.web.path, err)
	}
	protos := []string{"h2", "http/1.1"}
	if !st.cfg.HTTPConfig.HTTP2 {
		hs.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
		protos = []string{"http/1.1"}
	}
	first.NextProtos = protos
	s.web.lastTLS = first
	hs.TLSConfig = first.Clone()
	hs.TLSConfig.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		wc := s.web
		wc.tlsMu.Lock()
		defer wc.tlsMu.Unlock()
		if st := wc.load(); st.cfg != nil && st.cfg.TLSConfig.IsEnabled() {
			if c, err := web.ConfigToTLSConfig(&st.cfg.TLSConfig); err == nil {
				c.NextProtos = protos
				wc.lastTLS = c
			}
		}
		return wc.lastTLS, nil
	}
	return hs.ServeTLS(ln, "", "")
}
