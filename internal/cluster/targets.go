// Package cluster measures one span over several Macs. Each node is a
// Member: this Mac (LocalMember, over its own stream) or an exopower serve
// (Remote, over HTTP); either opens and closes a span and streams its
// windows. Setup reaches the nodes named by the flags; BeginAll and EndAll
// open and end the spans on all at once, and Total sums the nodes' energy.
package cluster

import (
	"bufio"
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
// same node twice is an error.
func ParseTargets(nodes []string, file io.Reader) ([]Target, error) {
	all := append([]string{}, nodes...)
	if file != nil {
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line != "" && !strings.HasPrefix(line, "#") {
				all = append(all, line)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("--nodes: %w", err)
		}
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

func parseTarget(s string) (Target, error) {
	if s == Local {
		return Target{Local: true}, nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return Target{}, fmt.Errorf("node %q: %w", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return Target{}, fmt.Errorf("node %q is not an http:// or https:// URL (or %q for this Mac)", s, Local)
	case u.Host == "":
		return Target{}, fmt.Errorf("node %q has no host", s)
	case u.User != nil:
		return Target{}, fmt.Errorf("node %q has credentials in it, which every user can read on the command line: give them with --node-credentials or the environment", u.Redacted())
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return Target{}, fmt.Errorf("node %q: give the serve's address only, such as %s://%s", s, u.Scheme, u.Host)
	}
	u.Path = ""
	u.Host = strings.ToLower(u.Host)
	return Target{URL: u}, nil
}
