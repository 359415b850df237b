package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

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
