// Package cluster measures one span over several Macs. Each node is a
// Member: this Mac (LocalMember, over its own stream) or an exopower serve
// (Remote, over HTTP); either opens and closes a span and streams its
// windows. Setup reaches the nodes named by the flags; BeginAll and EndAll
// open and end the spans on all at once, and Total sums the nodes' energy.
package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// Local names this Mac among the nodes: it is measured through its own
// powermetrics, as exopower run measures without --node.
const Local = "local"

// Target is one node to measure: this Mac, or an exopower serve by URL.
type Target struct {
	Local bool
	URL   *url.URL // nil for Local
}

// Name is how the target was given, for messages.
func (t Target) Name() string {
	if t.Local {
		return Local
	}
	return t.URL.String()
}

// ParseTargets reads the --node values and the lines of a --nodes file
// (one URL a line; blank lines and # comments skipped). A node is "local"
// or an http(s) URL with a host and no path beyond "/"; credentials in a
// URL are refused, since every user can read a command line (ps). The
// same node twice is an error. No error shows a password.
func ParseTargets(nodes []string, file io.Reader) ([]Target, error) {
	return parseTargets(nodes, file, "--nodes")
}

// parseTargets is ParseTargets, its errors about the file's lines
// prefixed with name.
func parseTargets(nodes []string, file io.Reader, name string) ([]Target, error) {
	all := append([]string{}, nodes...)
	if file != nil {
		lines, err := nodeLines(file, name)
		if err != nil {
			return nil, err
		}
		all = append(all, lines...)
	}
	seen := map[string]bool{}
	var ts []Target
	for _, n := range all {
		t, err := parseTarget(n)
		if err != nil {
			return nil, err
		}
		key := t.Name()
		if seen[key] {
			return nil, fmt.Errorf("node %s is named twice", key)
		}
		seen[key] = true
		ts = append(ts, t)
	}
	return ts, nil
}

// nodeLines are the nodes of a --nodes file, each checked, its errors
// naming the line. A line of several fields is not quoted: it may be a
// line of a credentials file, password and all, given as --nodes.
func nodeLines(file io.Reader, name string) ([]string, error) {
	var lines []string
	sc := bufio.NewScanner(file)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if f := strings.Fields(line); len(f) > 1 {
			return nil, fmt.Errorf("%s line %d: %d fields, want one URL a line (a file of URL USER PASSWORD is for --node-credentials)", name, n, len(f))
		}
		if _, err := parseTarget(line); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, n, err)
		}
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return lines, nil
}

// parseTarget reads one node. Its errors quote s with any password in it
// replaced by xxxxx.
func parseTarget(s string) (Target, error) {
	if s == Local {
		return Target{Local: true}, nil
	}
	shown := redact(s)
	u, err := url.Parse(s)
	switch {
	case err != nil && shown != s:
		// url.Parse's own error quotes s, and parts of it.
		return Target{}, fmt.Errorf("node %q is not a URL", shown)
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Target{}, fmt.Errorf("node %q: %w", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return Target{}, fmt.Errorf("node %q is not an http:// or https:// URL (or %q for this Mac)", shown, Local)
	case u.Host == "":
		return Target{}, fmt.Errorf("node %q has no host", shown)
	case u.User != nil:
		return Target{}, fmt.Errorf("node %q has credentials in it, which every user can read on the command line: give them with --node-credentials or the environment", shown)
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return Target{}, fmt.Errorf("node %q: give the serve's address only, such as %s://%s", shown, u.Scheme, u.Host)
	}
	u.Path = ""
	u.Host = strings.ToLower(u.Host)
	return Target{URL: u}, nil
}

// redact is s, a URL as given, with the password of a user:password@ in
// it replaced by xxxxx, as url.URL.Redacted does, whether or not s parses.
func redact(s string) string {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + len("://")
	}
	// The last @, not the first before a /: a password typed with a / or
	// a # in it, unescaped, is still a password. A node has no path.
	at := strings.LastIndex(s[start:], "@")
	if at < 0 {
		return s
	}
	user, _, hasPassword := strings.Cut(s[start:start+at], ":")
	if !hasPassword {
		return s
	}
	return s[:start] + user + ":xxxxx" + s[start+at:]
}
