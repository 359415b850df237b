package serve

import (
	"fmt"
	"net/http"
	"slices"
)

// Roles. Every user of the web config may scrape (/metrics, /v1/status),
// as Prometheus does; the span role opens, reads and ends spans and
// streams the windows, as exopower --node does; the process role also
// opens spans that name a process (?pid=), which read that process's
// tree ten times a second and tell its energy, and spans that name an
// app (?app=), which tell an app's. The web config is
// exporter-toolkit's, which Prometheus's own tools read too, so the roles
// are serve's flags (Config.SpanUsers, Config.ProcessUsers), not keys of
// the file.

// spanUser reports whether user has the span role: every user where
// Config.SpanUsers is nil, and the process role grants it.
func (s *Server) spanUser(user string) bool {
	return s.cfg.SpanUsers == nil || slices.Contains(s.cfg.SpanUsers, user) || s.processUser(user)
}

// processUser reports whether user has the process role.
func (s *Server) processUser(user string) bool {
	return slices.Contains(s.cfg.ProcessUsers, user)
}

// refuseSpans says why r may not open, read or end spans, nor stream
// the windows, or "" when it may: a user without the span role may only
// scrape. A client without a password is checked by guard (this machine
// only).
func (s *Server) refuseSpans(r *http.Request) string {
	user, ok := userOf(r)
	if !ok || s.spanUser(user) {
		return ""
	}
	return fmt.Sprintf("user %s may only scrape (/metrics, /v1/status): spans and the stream of windows need the span role, "+
		"which serve grants with --web.span-users, or the process role (--web.process-users), which grants it too", user)
}

// refuseProcesses says why r may not open a span that names a process
// (?pid=) or an app (?app=, which tells an app's activity as a process's
// span tells a process's), as what says, or "" when it may. A user
// of the web config needs the process role. Without a password, a
// client of this machine may where serve does not run as root: the
// kernel lets serve read its own user's processes only, and so the
// client only those. As root, serve would read any user's for any user
// of the Mac, whose uid a TCP client does not tell; only a serve told
// that anyone may (a Mac of one user) lets them.
func (s *Server) refuseProcesses(r *http.Request, what string) string {
	user, ok := userOf(r)
	switch {
	case ok && !s.processUser(user):
		return fmt.Sprintf("user %s may not open spans that name %s: they need the process role, which serve grants with --web.process-users", user, what)
	case !ok && s.cfg.Root && !s.cfg.ProcessSpansWithoutPassword:
		return "serve runs as root, which may read every user's processes, and cannot tell which user of this Mac asks without a password: " +
			"spans that name " + what + " need a password of the web config with the process role (--web.process-users); " +
			"to follow your own processes, run serve as yourself (a LaunchAgent), or, on a Mac of one user, start serve with --web.process-spans-without-password"
	}
	return ""
}
