package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/config"
	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"

	"github.com/exopower/exopower/internal/access"
)

// Limits of the web config and of the password checks.
const (
	// MaxWebConfigBytes bounds the web config file and each file it
	// names (certificate, key, client CAs): a larger one is a fault of
	// the file, not something to read without end (a link to
	// /dev/zero is not a regular file, and is refused before that).
	MaxWebConfigBytes = 1 << 20
	// MaxPasswordChecks bounds the password checks (bcrypt, tens to
	// hundreds of milliseconds each, one at a time) running or waiting
	// at once; one more is answered 503 at once, so that a flood of
	// wrong guesses holds no answer up for longer than these take.
	MaxPasswordChecks = 8
	// MaxBcryptCost is the dearest bcrypt cost a user's hash may have:
	// checks run one at a time, and at this cost (0.94 s a check where
	// it was measured, docs/serve.md; each step up doubles it) the last
	// of MaxPasswordChecks waiting is answered within Prometheus's
	// default scrape timeout of 10 s. A dearer hash is a fault of the
	// file: at cost 31, one check took more than a day, every other
	// check waiting behind it.
	MaxBcryptCost = 14
	// cacheSize bounds the passwords remembered as right, as
	// exporter-toolkit bounds its cache.
	cacheSize = 100
)

// WebConfig is a Prometheus web config file (--web.config.file) as
// serve's start read and checked it. serve decides from it, once, whether
// it speaks TLS; its users are the last good ones until the file sets
// others.
type WebConfig struct {
	path  string
	state *webState
	tls   *tls.Config // built from it when it sets TLS
}

// LoadWebConfig reads and checks the web config at path as exporter-
// toolkit's own check does (strict YAML, its headers, bcrypt hashes, the
// TLS files), reading only regular files and at most
// MaxWebConfigBytes of each. A path of "" is no web config: nil.
func LoadWebConfig(path string) (*WebConfig, error) {
	if path == "" {
		return nil, nil
	}
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	st := check(path, b, false)
	if len(bytes.TrimSpace(b)) == 0 {
		// An empty file sets nothing, as exporter-toolkit takes it: no
		// passwords, no TLS. Under a running serve, it is a fault (a
		// save under way), but nothing was in force before it here.
		c, _ := parseWebConfig(path, b)
		st = &webState{raw: b, cfg: c}
	}
	if st.cfg == nil {
		return nil, st.err
	}
	wc := &WebConfig{path: path, state: st}
	if st.cfg.TLSConfig.IsEnabled() {
		if wc.tls, err = buildTLS(&st.cfg.TLSConfig); err != nil {
			return nil, err
		}
	}
	return wc, nil
}

// Users is how many users the web config lets in with a password.
func (w *WebConfig) Users() int {
	if w == nil {
		return 0
	}
	return len(w.state.cfg.Users)
}

// HasUser reports whether the web config sets a password for user.
func (w *WebConfig) HasUser(user string) bool {
	if w == nil {
		return false
	}
	_, ok := w.state.cfg.Users[user]
	return ok
}

// UserNames are the users the web config sets, in order.
func (w *WebConfig) UserNames() []string {
	if w == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(w.state.cfg.Users))
}

// TLS reports whether the web config sets TLS, and so whether serve
// speaks it for as long as it runs.
func (w *WebConfig) TLS() bool { return w != nil && w.tls != nil }

// webConfig is the web config in force at each request: the file as it
// is now, read again at every request (exporter-toolkit reads it at
// every request too), or, while the file cannot be used, the last one
// that set users. exporter-toolkit's handler answers 500 to every client
// while the file cannot be parsed, and lets every client in while it is
// empty, as `cat new > web.yml` leaves it for a moment; serve keeps the
// last users instead, so that a save neither locks Prometheus out nor
// lets anyone in. Only a serve that has never had users serves this
// machine without a password while the file cannot be used.
type webConfig struct {
	path   string
	beyond bool      // serve listens beyond loopback
	tls    bool      // serve speaks TLS: its start's web config set it
	http2  bool      // over TLS, HTTP/2 too: its start's web config did not turn it off
	log    io.Writer // serve's log, for what is wrong with the file

	mu   sync.Mutex
	last *webState // of the bytes last read
	// good is the last config that set users: in force while the file
	// cannot be used, or sets no users (a save cut short may leave a
	// file whose users are yet to come).
	good *webState
	said string // the file's fault last logged, "" when none

	// ok remembers the passwords found right, by a hash of the user, the
	// password's hash and the password given, so that Prometheus's
	// scrapes do not wait on bcrypt; a wrong guess is never remembered,
	// so that guesses cannot push a right password out. checks counts
	// the checks running or waiting; slot, held by the one running,
	// runs them one at a time, and is waited for only as long as the
	// client is there.
	okMu    sync.Mutex
	ok      map[[sha256.Size]byte]bool
	checks  atomic.Int32
	slot    chan struct{}
	compare func(hash, password []byte) error // bcrypt's, but in tests

	tlsMu   sync.Mutex
	lastTLS *tls.Config // the last TLS config built, served while the file cannot be used
	saidTLS string
}

func newWebConfig(start *WebConfig, beyond bool, log io.Writer) *webConfig {
	if log == nil {
		log = io.Discard
	}
	wc := &webConfig{beyond: beyond, log: log, slot: make(chan struct{}, 1), compare: bcrypt.CompareHashAndPassword}
	if start != nil {
		wc.path, wc.last = start.path, start.state
		if len(start.state.cfg.Users) > 0 {
			wc.good = start.state
		}
		wc.tls, wc.lastTLS = start.tls != nil, start.tls
		wc.http2 = start.state.cfg.HTTPConfig.HTTP2
	}
	return wc
}

// webState is what one reading of the web config says, or the config in
// force after it.
type webState struct {
	raw []byte
	// cfg is the config in force; nil when there is none (no file, or
	// one that cannot be used while no config with users was ever in
	// force).
	cfg *web.Config
	// fault says what is wrong with the file as it is now, after "the
	// web config PATH": for serve's log and this machine's clients only,
	// as it may quote the file. "" when nothing is.
	fault string
	err   error // the fault as an error, for serve's start
	// kept says that cfg is the last good config, kept while the file
	// is at fault.
	kept    bool
	limiter *rate.Limiter
	// cost is the highest bcrypt cost among the users: every check
	// does the work of one comparison at it (work), so that the time of
	// an answer tells neither which users exist nor which one was asked.
	cost int
}

// users reports whether the config in force demands a password.
func (st *webState) users() bool { return st.cfg != nil && len(st.cfg.Users) > 0 }

// readFile reads the file at path, only if it is a regular file (a FIFO
// would block the open, a device the read, for good) and at most
// MaxWebConfigBytes of it.
func readFile(path string) ([]byte, error) {
	f, err := access.Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxWebConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxWebConfigBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes: no web config or file it names is", path, MaxWebConfigBytes)
	}
	return b, nil
}

// faultOf says what err, of reading the file, is, after "the web config
// PATH", which names the path already.
func faultOf(err error) string {
	var nf *access.NotFileError
	var pe *fs.PathError
	switch {
	case errors.As(err, &nf):
		return "is " + nf.What + ", not a file"
	case errors.As(err, &pe):
		return "cannot be read: " + pe.Err.Error()
	}
	return "cannot be read: " + err.Error()
}

// extraHTTPHeaders are the headers a web config may set, and the values
// it may give them (any, when none are listed): exporter-toolkit's, which
// it keeps to itself.
var extraHTTPHeaders = map[string][]string{
	"Strict-Transport-Security": nil,
	"X-Content-Type-Options":    {"nosniff"},
	"X-Frame-Options":           {"deny", "sameorigin"},
	"X-XSS-Protection":          nil,
	"Content-Security-Policy":   nil,
}

// parseWebConfig reads b, the bytes of the web config at path, as
// exporter-toolkit reads and checks a web config: strictly, with its
// defaults, its headers and bcrypt hashes checked, the paths in it
// relative to the file's directory. The TLS files are not read.
func parseWebConfig(path string, b []byte) (*web.Config, error) {
	c := &web.Config{
		TLSConfig:  web.TLSConfig{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13},
		HTTPConfig: web.HTTPConfig{HTTP2: true},
	}
	if err := yaml.UnmarshalStrict(b, c); err != nil {
		return nil, err
	}
	for k, v := range c.HTTPConfig.Header {
		values, ok := extraHTTPHeaders[k]
		if !ok {
			return nil, fmt.Errorf("HTTP header %q can not be configured", k)
		}
		if len(values) > 0 && !slices.Contains(values, v) {
			return nil, fmt.Errorf("invalid value for %s. Expected one of: %q, but got: %q", k, values, v)
		}
	}
	for _, user := range slices.Sorted(maps.Keys(c.Users)) {
		if err := checkHash(user, []byte(c.Users[user])); err != nil {
			return nil, err
		}
	}
	c.TLSConfig.SetDirectory(filepath.Dir(path))
	return c, nil
}

// bcryptHash is the shape of a bcrypt hash: the version, the cost in
// two digits, then the salt (22 characters) and the hash (31) in
// bcrypt's base64 alphabet. Compiled when a web config is first read, not
// when exopower starts, which every command would pay for.
var bcryptHash = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\$2[abxy]?\$[0-9]{2}\$[./A-Za-z0-9]{53}$`)
})

// checkHash says what is wrong with hash, user's in the web config, for
// serve to check a password with it. exporter-toolkit's own check
// (bcrypt.Cost, whose errors are kept) reads only the version and the
// cost: a hash with a character no bcrypt hash has in its salt was
// taken, and its checks failed at once, which told that user from the
// others by time; one cut short or lengthened never let its user in.
// A cost above MaxBcryptCost is refused as no login can afford it.
func checkHash(user string, hash []byte) error {
	cost, err := bcrypt.Cost(hash)
	if err != nil {
		return err
	}
	const remake = "make the hash again with cost 10 to 12 (htpasswd -nBC 12 %s, which asks for the password)"
	if !bcryptHash().Match(hash) {
		return fmt.Errorf("user %s's password hash is no bcrypt hash, which has 60 characters: $2y$ (or $2a$, $2b$), the cost in two digits, $, then 53 of ./A-Za-z0-9; "+remake, user, user)
	}
	if cost > MaxBcryptCost {
		return fmt.Errorf("user %s's bcrypt cost %d is above %d, the most serve accepts: a check at cost %d takes %s on this machine's CPU, and holds every other check up meanwhile; "+remake,
			user, cost, MaxBcryptCost, cost, roughly(checkTime(cost)), user)
	}
	return nil
}

// checkTime is about how long one bcrypt comparison at cost takes on
// this machine's CPU: the quickest of three at the lowest cost (about a
// millisecond), doubled for each step above it, as bcrypt's work is.
func checkTime(cost int) time.Duration {
	quickest := time.Duration(math.MaxInt64)
	for range 3 {
		start := time.Now()
		bcrypt.CompareHashAndPassword(standIn(bcrypt.MinCost), nil)
		quickest = min(quickest, time.Since(start))
	}
	return quickest << (cost - bcrypt.MinCost)
}

// roughly says d as a person would: "about 1.4 days", "about 9 hours".
func roughly(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("about %.1f days", d.Hours()/24)
	case d >= 2*time.Hour:
		return fmt.Sprintf("about %.0f hours", d.Hours())
	case d >= 2*time.Minute:
		return fmt.Sprintf("about %.0f minutes", d.Minutes())
	}
	return "about " + d.Round(100*time.Millisecond).String()
}

// check says what the bytes b of the web config at path hold; beyond
// says that serve listens beyond loopback.
func check(path string, b []byte, beyond bool) *webState {
	if len(bytes.TrimSpace(b)) == 0 {
		return &webState{raw: b, fault: "is empty"}
	}
	c, err := parseWebConfig(path, b)
	if err != nil {
		return &webState{raw: b, fault: "cannot be used: " + err.Error(), err: err}
	}
	st := &webState{raw: b, cfg: c}
	if len(c.Users) == 0 && beyond {
		st.fault = "sets no basic_auth_users, and serve listens beyond this machine"
	}
	if rl := c.RateLimiterConfig; rl.Interval != 0 {
		st.limiter = rate.NewLimiter(rate.Every(rl.Interval), rl.Burst)
	}
	for _, hash := range c.Users {
		n, _ := bcrypt.Cost([]byte(hash))
		st.cost = max(st.cost, n)
	}
	return st
}

// read reads the file and says what it holds now. Bytes unchanged since
// the last request are not checked again.
func (wc *webConfig) read() *webState {
	b, err := readFile(wc.path)
	if err != nil {
		return &webState{fault: faultOf(err)}
	}
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.last == nil || !bytes.Equal(b, wc.last.raw) {
		wc.last = check(wc.path, b, wc.beyond)
	}
	return wc.last
}

// load says which config is in force for a request now: the file's,
// unless it cannot be used or sets no users while a config with users
// has been in force, which then stays in force. What is wrong with the
// file goes to serve's log as it is found, and when it is put right.
func (wc *webConfig) load() *webState {
	if wc.path == "" {
		return &webState{}
	}
	st := wc.read()
	wc.mu.Lock()
	defer wc.mu.Unlock()
	switch {
	case st.users():
		wc.good = st
	case wc.good != nil:
		fault := st.fault
		if st.cfg != nil {
			fault = "sets no basic_auth_users, though a version with users was in force (to serve without passwords, start serve again)"
		}
		kept := *wc.good
		kept.fault, kept.kept = fault, true
		st = &kept
	}
	if st.fault != wc.said {
		switch {
		case st.fault == "":
			fmt.Fprintf(wc.log, "exopower serve: the web config %s is in force again\n", wc.path)
		case st.kept:
			fmt.Fprintf(wc.log, "exopower serve: the web config %s %s: its last users stay in force until it is fixed\n", wc.path, st.fault)
		default:
			fmt.Fprintf(wc.log, "exopower serve: the web config %s %s: other machines get 503, and this machine is served without a password, until it is fixed\n", wc.path, st.fault)
		}
		wc.said = st.fault
	}
	return st
}

// standIn is a hash of bcrypt's shape at cost that no password matches
// (its hash is no hash of its salt's): comparing a password with it is
// the work of bcrypt at cost, and no more.
func standIn(cost int) []byte {
	return fmt.Appendf(nil, "$2a$%02d$%s", cost, strings.Repeat(".", 53))
}

// work is the hashes that a password for user is compared with, which
// add up to the work of one comparison at the dearest cost, whoever the
// user: for a known user, their hash and then a stand-in at each cost
// from theirs up to the dearest (bcrypt's work doubles at each step:
// 2^c + 2^c + 2^(c+1) + ... + 2^(d-1) = 2^d); for a user the config
// does not know, a stand-in at the dearest cost. Before, a user of cost
// 10 was answered in 56 ms, one of cost 12 and unknown users in 223 ms.
func work(hash []byte, known bool, dearest int) [][]byte {
	if !known {
		return [][]byte{standIn(dearest)}
	}
	hashes := [][]byte{hash}
	cost, _ := bcrypt.Cost(hash)
	for c := cost; c < dearest; c++ {
		hashes = append(hashes, standIn(c))
	}
	return hashes
}

// verdict is what a password check found.
type verdict int

const (
	wrong verdict = iota // no password, or none of a user of the config
	right                // the password of a user of the config
	busy                 // MaxPasswordChecks were running or waiting: not checked
	gone                 // the request's context ended before the check did: given up
)

// password says whether r gives the password of a user of st, checked
// as exporter-toolkit checks it (bcrypt, one check at a time, an unknown
// user's password compared all the same), every check the work of one
// comparison at st's dearest cost.
func (wc *webConfig) password(st *webState, r *http.Request) verdict {
	user, pass, given := r.BasicAuth()
	if !given {
		return wrong
	}
	hash, known := st.cfg.Users[user]
	key := sha256.Sum256(fmt.Appendf(nil, "%x:%x:%x", user, string(hash), pass))
	if known {
		wc.okMu.Lock()
		ok := wc.ok[key]
		wc.okMu.Unlock()
		if ok {
			return right
		}
	}
	if wc.checks.Add(1) > MaxPasswordChecks {
		wc.checks.Add(-1)
		return busy
	}
	match, done := wc.compareAll(r.Context(), work([]byte(hash), known, st.cost), []byte(pass))
	wc.checks.Add(-1)
	switch {
	case !done:
		return gone
	case !known || !match:
		return wrong
	}
	wc.remember(key)
	return right
}

// compareAll compares pass with each of hashes, holding the slot, and
// says whether it matched the first; done is false when ctx ended first
// (the client went away): the slot is waited for no longer, and no
// comparison is begun, but one begun runs to its end, as bcrypt cannot
// be stopped (MaxBcryptCost bounds it).
func (wc *webConfig) compareAll(ctx context.Context, hashes [][]byte, pass []byte) (match, done bool) {
	select {
	case wc.slot <- struct{}{}:
	case <-ctx.Done():
		return false, false
	}
	defer func() { <-wc.slot }()
	for i, h := range hashes {
		if ctx.Err() != nil {
			return false, false
		}
		if err := wc.compare(h, pass); i == 0 {
			match = err == nil
		}
	}
	return match, true
}

// remember takes note that key's password is right.
func (wc *webConfig) remember(key [sha256.Size]byte) {
	wc.okMu.Lock()
	if wc.ok == nil {
		wc.ok = map[[sha256.Size]byte]bool{}
	}
	if len(wc.ok) >= cacheSize {
		for k := range wc.ok { // any one: only right passwords are here
			delete(wc.ok, k)
			break
		}
	}
	wc.ok[key] = true
	wc.okMu.Unlock()
}

// buildTLS is the TLS config that c sets, as exporter-toolkit builds it,
// its files read once, here, as the web config is (regular files only,
// at most MaxWebConfigBytes each): exporter-toolkit would read them by
// name at every handshake, and wait for good on a FIFO.
func buildTLS(c *web.TLSConfig) (*tls.Config, error) {
	in := *c
	for _, f := range []struct {
		path *string
		set  func(string)
		what string
	}{
		{&in.TLSCertPath, func(s string) { in.TLSCert = s }, "cert_file"},
		{&in.TLSKeyPath, func(s string) { in.TLSKey = config.Secret(s) }, "key_file"},
		{&in.ClientCAs, func(s string) { in.ClientCAsText = s }, "client_ca_file"},
	} {
		if *f.path == "" {
			continue
		}
		b, err := readFile(*f.path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.what, err)
		}
		f.set(string(b))
		*f.path = ""
	}
	return web.ConfigToTLSConfig(&in)
}

// handshake is the TLS config for a connection being opened, from the
// web config as it is now, so that a certificate renewed, or a client CA
// taken away, counts from the next connection. While the file cannot be
// used (a save under way), the last TLS config built serves on; when it
// can, and sets TLS that cannot be built (a certificate, key or client CA
// file missing), the handshake fails: nothing it allowed is allowed on.
func (wc *webConfig) handshake(protos []string) func(*tls.ClientHelloInfo) (*tls.Config, error) {
	return func(*tls.ClientHelloInfo) (*tls.Config, error) {
		st := wc.read()
		var c *tls.Config
		var err error
		said := ""
		switch {
		case st.cfg == nil:
		case !st.cfg.TLSConfig.IsEnabled():
			said = "sets TLS no more: serve speaks TLS, with the last TLS config it took, until it is started again"
		default:
			if c, err = buildTLS(&st.cfg.TLSConfig); err != nil {
				said = "sets TLS that cannot be used, and TLS handshakes fail until it is fixed: " + err.Error()
			} else {
				c.NextProtos = protos
			}
		}
		wc.tlsMu.Lock()
		defer wc.tlsMu.Unlock()
		if said != wc.saidTLS {
			if said != "" {
				fmt.Fprintf(wc.log, "exopower serve: the web config %s %s\n", wc.path, said)
			}
			wc.saidTLS = said
		}
		switch {
		case err != nil:
			return nil, fmt.Errorf("the TLS of the web config %s: %w", wc.path, err)
		case c != nil:
			wc.lastTLS = c
		}
		return wc.lastTLS, nil
	}
}

// Serve serves hs on ln until hs is shut down: over TLS when the web
// config that serve's start checked set it (a file read again here could
// be a save under way, and serve would speak plain HTTP for good), in
// plain HTTP otherwise. As with exporter-toolkit, the TLS files are read
// again at every connection. A Listener's connections are tracked, so
// that an idle one makes room at the cap.
func (s *Server) Serve(hs *http.Server, ln net.Listener) error {
	if l, ok := ln.(*Listener); ok {
		hs.ConnState = l.track
	}
	if !s.web.tls {
		return hs.Serve(ln)
	}
	protos := []string{"h2", "http/1.1"}
	if !s.web.http2 {
		hs.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
		protos = []string{"http/1.1"}
	}
	s.web.tlsMu.Lock()
	first := s.web.lastTLS.Clone()
	first.NextProtos = protos
	s.web.lastTLS = first
	s.web.tlsMu.Unlock()
	hs.TLSConfig = first.Clone()
	hs.TLSConfig.GetConfigForClient = s.web.handshake(protos)
	return hs.ServeTLS(ln, "", "")
}
