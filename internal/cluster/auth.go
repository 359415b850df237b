package cluster

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/exopower/exopower/internal/access"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
)

// targets reads the nodes, their credentials and CAs, before anything
// starts: the files as the user who ran sudo may (ReadAs), never waiting
// on one (a FIFO), and never showing what a file holds that the user
// may not read. It warns, through Warn, of a credentials file that others
// may read and of a password that would cross the network in clear text.
func (s Setup) targets(getenv func(string) string) ([]Target, Auth, error) {
	var as *syscall.Credential
	if s.ReadAs != nil {
		var err error
		if as, err = s.ReadAs(); err != nil {
			return nil, Auth{}, err
		}
	}
	var file io.Reader
	if s.File != "" {
		f, err := openFlag("--nodes", s.File, as)
		if err != nil {
			return nil, Auth{}, err
		}
		defer f.Close()
		file = f
	}
	ts, err := parseTargets(s.URLs, file, "--nodes "+s.File)
	if err == nil && len(ts) == 0 {
		err = errors.New("--nodes names no node")
	}
	if err != nil {
		return nil, Auth{}, cli.Fail(err, "name each node once, as http://HOST:PORT of its exopower serve, or local for this Mac")
	}
	var creds io.Reader
	if s.Credentials != "" {
		f, err := openFlag("--node-credentials", s.Credentials, as)
		if err != nil {
			return nil, Auth{}, err
		}
		defer f.Close()
		s.warnExposed(f)
		creds = f
	}
	auth, err := LoadAuth(creds, getenv)
	if err != nil {
		return nil, Auth{}, cli.Fail(err, "write each line as URL USER PASSWORD, such as https://mac2:10241 ops PASSWORD")
	}
	if s.CAFile != "" {
		// Read here, as the user, once: what is trusted is what was
		// checked.
		f, err := openFlag("--node-ca", s.CAFile, as)
		if err != nil {
			return nil, Auth{}, err
		}
		auth.ca, err = io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, Auth{}, cli.Fail(fmt.Errorf("--node-ca %s: %w", s.CAFile, err))
		}
	}
	s.warnClearText(ts, auth)
	return ts, auth, nil
}

// openFlag opens path, which flag names, to read as the user as (nil:
// exopower's own), or says why not, naming the flag and the path and
// never what the file holds.
func openFlag(flag, path string, as *syscall.Credential) (*os.File, error) {
	f, err := access.Open(path, as)
	if err == nil {
		return f, nil
	}
	var nf *access.NotFileError
	var pe *fs.PathError
	switch {
	case errors.As(err, &nf):
		return nil, cli.Fail(fmt.Errorf("%s %w", flag, err), "name a regular file: it is read whole before anything starts")
	case as != nil && errors.Is(err, fs.ErrPermission) && errors.As(err, &pe):
		what := "read it"
		if pe.Op == "search" {
			what = "search " + pe.Path
		}
		return nil, cli.Fail(fmt.Errorf("%s %s: the user who ran sudo (uid %d) may not %s", flag, path, as.Uid, what),
			"give a file that user may read: under sudo, exopower reads the nodes' files as the user who ran it")
	case errors.As(err, &pe):
		err = pe.Err
	}
	return nil, cli.Fail(fmt.Errorf("%s %s: %w", flag, path, err))
}

// warnExposed warns of a credentials file f that others than its owner
// may read or change, as ssh warns of a key; and of a link, naming the
// file it leads to, whose mode is the one that counts. A link is not
// refused: a file kept elsewhere (a dotfiles repository, a mounted
// secret) is commonly linked to, and under sudo it is read through the
// link only as far as the user may read.
func (s Setup) warnExposed(f *os.File) {
	if s.Warn == nil {
		return
	}
	path := s.Credentials
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			s.Warn(fmt.Sprintf("--node-credentials %s is a link to %s: the nodes' passwords are read from there", path, target))
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		s.Warn(fmt.Sprintf("--node-credentials %s has mode %04o: users other than its owner may read or change the nodes' passwords in it; chmod 600 %s",
			path, perm, output.ShellQuote([]string{path})))
	}
}

// warnClearText warns, once a node, of credentials that would go to an
// http:// node: basic auth sends the password as it is, for anyone on
// the network between to read. A node on this machine's loopback is
// spared: the password does not leave the machine (an ssh tunnel's end,
// say).
func (s Setup) warnClearText(ts []Target, auth Auth) {
	if s.Warn == nil {
		return
	}
	for _, t := range ts {
		if t.Local || t.URL.Scheme != "http" || auth.forTarget(t) == nil || loopback(t.URL.Hostname()) {
			continue
		}
		s.Warn(fmt.Sprintf("node %s gets its password in clear text (basic auth over http://), which anyone on the network between may read: "+
			"serve it over https (--web.config.file with tls_server_config) and name it https://%s, with --node-ca for its CA", t.Name(), t.URL.Host))
	}
}

// loopback says whether host is this machine, by name or address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Credentials are a node's basic-auth user and password.
type Credentials struct{ User, Password string }

// Auth says which credentials each node gets: from a file of lines
// "URL USER PASSWORD", else EXOPOWER_NODE_USER and EXOPOWER_NODE_PASSWORD,
// never from the command line.
type Auth struct {
	byURL    map[string]Credentials
	fallback *Credentials
	ca       []byte // the --node-ca file's PEM, read as the user (nil: none)
}

// LoadAuth reads the credentials file (nil: none) and the environment.
// Its errors name the line, never what it holds: a line that is wrong
// may hold a password anywhere in it.
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
				return Auth{}, fmt.Errorf("--node-credentials line %d: want URL USER PASSWORD, 3 fields, not %d", n, len(f))
			}
			t, err := parseTarget(f[0])
			if err != nil || t.Local {
				return Auth{}, fmt.Errorf("--node-credentials line %d: the first field is not a node's URL, such as https://HOST:PORT "+
					"(no user, password or path in it)", n)
			}
			a.byURL[t.Name()] = Credentials{f[1], f[2]}
		}
		if err := sc.Err(); err != nil {
			return Auth{}, fmt.Errorf("--node-credentials: %w", err)
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

// TLSConfig trusts the system's CAs, and those of caFile when given (a
// regular file: a FIFO is refused, not waited on).
func TLSConfig(caFile string) (*tls.Config, error) {
	if caFile == "" {
		return &tls.Config{MinVersion: tls.VersionTLS12}, nil
	}
	f, err := access.Open(caFile, nil)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pem, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return caConfig(caFile, pem)
}

// caConfig trusts the system's CAs and those in pem, read from caFile.
func caConfig(caFile string, pem []byte) (*tls.Config, error) {
	if pem == nil {
		return &tls.Config{MinVersion: tls.VersionTLS12}, nil
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
