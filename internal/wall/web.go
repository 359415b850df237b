package wall

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/icholy/digest"
)

// maxBody bounds a plug's answer: the largest a plug sends (a Tasmota's
// Status 0) is a few kilobytes.
const maxBody = 64 << 10

// maxHeader bounds the headers of a plug's answer.
const maxHeader = 16 << 10

// errTooLarge is a body beyond maxBody.
var errTooLarge = errors.New("its answer is larger than 64 KiB")

// web is a plug over HTTP: one client, bounded in time and bytes, that
// follows no redirect and takes no proxy from the environment (a proxy
// would see the credentials, and cannot reach a plug on the LAN anyway).
type web struct {
	addr    string // the target as printed
	base    string // scheme://host:port
	client  *http.Client
	tr      *http.Transport
	timeout time.Duration
	secrets *secrets
	creds   Credentials
	// auth adds the credentials to a request, as the plug's kind wants.
	auth func(*http.Request)
	// closed ends every request at Close.
	closed context.Context
	close  context.CancelFunc
}

// newWeb is a client of t's host; digestAuth puts Shelly Gen2+'s digest
// authentication over it.
func newWeb(t Target, c Credentials, digestAuth bool) *web {
	scheme := "http"
	if t.Scheme == "has" {
		scheme = "https"
	}
	// Each request's context bounds its dial, handshake and answer
	// (get); a timer of the transport's own would race it and say less.
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            (&net.Dialer{}).DialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		MaxResponseHeaderBytes: maxHeader,
		MaxIdleConnsPerHost:    1,
		IdleConnTimeout:        30 * time.Second,
		// A compressed answer would be inflated before maxBody counts it.
		DisableCompression: true,
	}
	var rt http.RoundTripper = bounded{tr}
	if digestAuth && c.Password != "" {
		rt = &digest.Transport{Username: "admin", Password: c.Password, Transport: rt}
	}
	w := &web{
		addr: t.String(), base: scheme + "://" + t.Host, tr: tr, timeout: t.timeout(),
		secrets: newSecrets(c), creds: c, auth: func(*http.Request) {},
		client: &http.Client{
			Transport:     rt,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	w.closed, w.close = context.WithCancel(context.Background())
	return w
}

// bounded cuts every body at maxBody, also the ones the digest transport
// drains itself.
type bounded struct{ rt http.RoundTripper }

func (b bounded) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := b.rt.RoundTrip(r)
	if err == nil {
		res.Body = &limitedBody{ReadCloser: res.Body, left: maxBody}
	}
	return res, err
}

type limitedBody struct {
	io.ReadCloser
	left int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.ReadCloser.Read(p)
	l.left -= int64(n)
	return n, err
}

// answer is a plug's answer to one request.
type answer struct {
	status int
	body   []byte
	header http.Header
}

// get asks for path with the query q (to which w.auth may add), within
// the timeout. shown names the request in errors, without credentials.
func (w *web) get(ctx context.Context, path string, q url.Values, shown string) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	stop := context.AfterFunc(w.closed, cancel)
	defer stop()
	u := w.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return answer{}, fmt.Errorf("%s: %s: %s", w.addr, shown, w.secrets.text(err.Error()))
	}
	w.auth(req)
	res, err := w.client.Do(req)
	if err != nil {
		return answer{}, w.failed(ctx, shown, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, w.failed(ctx, shown, err)
	}
	return answer{status: res.StatusCode, body: body, header: res.Header}, nil
}

// failed is the error of a request that got no whole answer, in words
// that hold no URL (whose query may hold Tasmota's password).
func (w *web) failed(ctx context.Context, shown string, err error) error {
	switch {
	case w.closed.Err() != nil:
		return fmt.Errorf("%s: %s: %w", w.addr, shown, ErrClosed)
	case errors.Is(err, errTooLarge):
		return fmt.Errorf("%s: %s: %w", w.addr, shown, errTooLarge)
	case ctx.Err() == context.DeadlineExceeded:
		return fmt.Errorf("%s: %s: no answer within %v: %w", w.addr, shown, w.timeout, context.DeadlineExceeded)
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %s: %w", w.addr, shown, ctx.Err())
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s: %s: %s", w.addr, shown, w.secrets.text(err.Error()))
}

// refused is the error of an answer whose status is not 200, or nil.
func (w *web) refused(a answer, shown string) error {
	switch {
	case a.status == http.StatusOK:
		return nil
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden:
		return w.authError(fmt.Sprintf("%s: answered %d", shown, a.status))
	case a.status >= 300 && a.status < 400:
		return fmt.Errorf("%s: %s: answered with a redirect (%d) to %q, which exopower does not follow: give the device's own address",
			w.addr, shown, a.status, w.secrets.text(a.header.Get("Location")))
	}
	return fmt.Errorf("%s: %s: answered %d: %s", w.addr, shown, a.status, w.secrets.text(string(a.body)))
}

// authError says that the plug asks for credentials, or refused those
// given.
func (w *web) authError(what string) error {
	if w.creds == (Credentials{}) {
		return &AuthError{Address: w.addr, Reason: what + ": the plug asks for credentials; give them in the credentials file or the environment"}
	}
	return &AuthError{Address: w.addr, Reason: what + ": the plug refused the credentials given; check them"}
}

// getJSON asks for path and decodes its answer, which must be 200, into
// v.
func (w *web) getJSON(ctx context.Context, path string, q url.Values, shown string, v any) error {
	a, err := w.get(ctx, path, q, shown)
	if err != nil {
		return err
	}
	if err := w.refused(a, shown); err != nil {
		return err
	}
	return w.decode(a, shown, v)
}

func (w *web) decode(a answer, shown string, v any) error {
	if err := json.Unmarshal(a.body, v); err != nil {
		return fmt.Errorf("%s: %s: its answer is not the JSON expected: %s", w.addr, shown, w.secrets.text(err.Error()))
	}
	return nil
}

// Close ends every request under way and lets the connections go.
func (w *web) Close() error {
	w.close()
	w.tr.CloseIdleConnections()
	return nil
}

// reading is the check of r, as an error of the plug.
func (w *web) reading(r Reading, shown string) (Reading, error) {
	if err := check(r); err != nil {
		return Reading{}, fmt.Errorf("%s: %s: %w", w.addr, shown, err)
	}
	return r, nil
}
