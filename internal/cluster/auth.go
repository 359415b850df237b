package cluster

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/exopower/exopower/internal/cli"
)

// targets reads the nodes, their credentials and CAs.
func (n Nodes) targets(getenv func(string) string) ([]Target, Auth, error) {
	var file io.Reader
	if n.File != "" {
		f, err := os.Open(n.File)
		if err != nil {
			return nil, Auth{}, cli.Fail(fmt.Errorf("--nodes: %w", err))
		}
		defer f.Close()
		file = f
	}
	ts, err := ParseTargets(n.URLs, file)
	if err == nil && len(ts) == 0 {
		err = errors.New("--nodes names no node")
	}
	if err != nil {
		return nil, Auth{}, cli.Fail(err, "name each node once, as http://HOST:PORT of its exopower serve, or local for this Mac")
	}
	var creds io.Reader
	if n.Credentials != "" {
		f, err := os.Open(n.Credentials)
		if err != nil {
			return nil, Auth{}, cli.Fail(fmt.Errorf("--node-credentials: %w", err))
		}
		defer f.Close()
		creds = f
	}
	auth, err := LoadAuth(creds, getenv)
	if err != nil {
		return nil, Auth{}, cli.Fail(err)
	}
	return ts, auth, nil
}

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
