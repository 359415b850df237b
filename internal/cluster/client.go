package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// Credentials are a node's basic-auth user and password.
type Credentials struct{ User, Password string }

// Auth says which credentials each node gets: from a file of lines
// "URL USER PASSWORD", else EXOPOWER_NODE_USER and EXOPOWER_NODE_PASSWORD,
// never from the command line.
type Auth struct {
	byURL    map[string]Credentials
	fallback *Credentials
}

// LoadAuth reads the credentials file (nil: none) and the environment.
func LoadAuth(file io.Reader, getenv func(string) string) (Auth, error) {
	a := Auth{byURL: map[string]Credentials{}}
	if file != nil {
		sc := bufio.NewScanner(file)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.Fields(line)
			if len(f) != 3 {
				return Auth{}, fmt.Errorf("--node-credentials line %d: want URL USER PASSWORD", n)
			}
			t, err := parseTarget(f[0])
			if err != nil || t.Local {
				return Auth{}, fmt.Errorf("--node-credentials line %d: %q is not a node URL", n, f[0])
			}
			a.byURL[t.Name()] = Credentials{f[1], f[2]}
		}
		if err := sc.Err(); err != nil {
			return Auth{}, err
		}
	}
	if u := getenv("EXOPOWER_NODE_USER"); u != "" {
		a.fallback = &Credentials{u, getenv("EXOPOWER_NODE_PASSWORD")}
	}
	return a, nil
}

func (a Auth) forTarget(t Target) *Credentials {
	if c, ok := a.byURL[t.Name()]; ok {
		return &c
	}
	return a.fallback
}

// TLSConfig trusts the system's CAs, and those of caFile when given.
func TLSConfig(caFile string) (*tls.Config, error) {
	if caFile == "" {
		return &tls.Config{MinVersion: tls.VersionTLS12}, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// Client talks to one node's exopower serve.
type Client struct {
	target Target
	hc     *http.Client
	cred   *Credentials
}

// NewClient returns a client of the serve that t names.
func NewClient(t Target, auth Auth, tlsConf *tls.Config) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Each transport its own copy: setting up HTTP/2 writes into it.
	tr.TLSClientConfig = tlsConf.Clone()
	tr.Proxy = nil // a node is reached directly
	return &Client{target: t, hc: &http.Client{Transport: tr}, cred: auth.forTarget(t)}
}

// Status asks the node how it is; it reports the round trip.
func (c *Client) Status(ctx context.Context) (wire.Status, time.Duration, error) {
	var st wire.Status
	rtt, err := c.do(ctx, http.MethodGet, "/v1/status", &st)
	if err == nil && st.Node == "" {
		err = errors.New("it answered, but not as exopower serve does")
	}
	return st, rtt, err
}

// Open opens a span on the node.
func (c *Client) Open(ctx context.Context) (wire.Opened, time.Duration, error) {
	var o wire.Opened
	rtt, err := c.do(ctx, http.MethodPost, "/v1/spans", &o)
	return o, rtt, err
}

// Read reads an open span so far.
func (c *Client) Read(ctx context.Context, id string) (wire.Reading, error) {
	var r wire.Reading
	_, err := c.do(ctx, http.MethodGet, "/v1/spans/"+url.PathEscape(id), &r)
	return r, err
}

// End ends a span and returns the node's measurement of it.
func (c *Client) End(ctx context.Context, id string) (wire.Reading, time.Duration, error) {
	var r wire.Reading
	rtt, err := c.do(ctx, http.MethodPost, "/v1/spans/"+url.PathEscape(id)+"/end", &r)
	return r, rtt, err
}

func (c *Client) do(ctx context.Context, method, path string, out any) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.target.URL.String()+path, nil)
	if err != nil {
		return 0, err
	}
	if c.cred != nil {
		req.SetBasicAuth(c.cred.User, c.cred.Password)
	}
	t0 := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	rtt := time.Since(t0)
	if err != nil {
		return rtt, err
	}
	if resp.StatusCode/100 != 2 {
		var e wire.Error
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return rtt, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, e.Error)
		}
		return rtt, fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(out); err != nil {
		return rtt, fmt.Errorf("%s %s: not exopower serve's answer: %w", method, path, err)
	}
	return rtt, nil
}

// Stream reads the node's windows as they come (GET /v1/windows) and hands
// each to f, until ctx ends or the node goes.
func (c *Client) Stream(ctx context.Context, f func(wire.SampleLine)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.target.URL.String()+"/v1/windows", nil)
	if err != nil {
		return err
	}
	if c.cred != nil {
		req.SetBasicAuth(c.cred.User, c.cred.Password)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /v1/windows: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var l wire.SampleLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("GET /v1/windows: not exopower serve's stream: %w", err)
		}
		f(l)
	}
	return sc.Err()
}
