package child

import (
	"errors"
	"fmt"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/exopower/exopower/internal/cli"
)

// Identity is who the command runs as, and with which environment.
type Identity struct {
	// Cred is the user, group and groups to run the command as; nil to
	// run it as exopower itself.
	Cred *syscall.Credential
	// Env is the command's whole environment.
	Env []string
	// Note, when not empty, is worth telling the user before the command
	// starts.
	Note string
}

// Identify decides who the command runs as. powermetrics needs root, so
// people type sudo exopower run -- cmd; the command must then run as the
// user who typed it (SUDO_UID, SUDO_GID, that user's groups, and HOME,
// USER and LOGNAME set for that user), never as root unless asRoot. The
// rest of environ passes through unchanged. euid is exopower's effective
// user id; getenv reads exopower's environment, of which environ is the
// whole. The nodes' credentials (EXOPOWER_NODE_USER and
// EXOPOWER_NODE_PASSWORD) are exopower's, to reach the nodes: the command
// never gets them.
func Identify(asRoot bool, euid int, getenv func(string) string, environ []string) (Identity, error) {
	id := Identity{Env: withoutNodeCredentials(environ)}
	if euid != 0 || asRoot {
		return id, nil
	}
	uidText := getenv("SUDO_UID")
	if uidText == "" {
		id.Note = "the command runs as root: exopower runs as root but not through sudo, so there is no other user to run it as"
		return id, nil
	}
	uid, err := strconv.ParseUint(uidText, 10, 32)
	if err != nil {
		return id, cli.Fail(fmt.Errorf("SUDO_UID=%q is not a user id", uidText), "unset SUDO_UID, or pass --as-root to run the command as root")
	}
	if uid == 0 {
		return id, nil
	}
	u, err := user.LookupId(strconv.FormatUint(uid, 10))
	if err != nil {
		return id, cli.Fail(fmt.Errorf("cannot find the user who ran sudo (SUDO_UID=%s): %w", uidText, err),
			"pass --as-root to run the command as root")
	}
	cred, err := credential(u, uint32(uid), getenv("SUDO_GID"))
	if err != nil {
		return id, err
	}
	id.Cred = cred
	id.Env = withUser(id.Env, u)
	return id, nil
}

// withoutNodeCredentials returns a copy of env without the variables
// of exopower's own that the command does not get: the nodes' password,
// which a command that prints its environment (or a crash report that
// does) would show, and the user that goes with it, of no use to the
// command alone and half of the pair to an exopower run inside the
// command, which would send it with no password.
func withoutNodeCredentials(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k != "EXOPOWER_NODE_USER" && k != "EXOPOWER_NODE_PASSWORD" {
			out = append(out, kv)
		}
	}
	return out
}

// credential is u's: uid, the group sudo names (gidText, SUDO_GID) or
// else u's primary group, and u's groups.
func credential(u *user.User, uid uint32, gidText string) (*syscall.Credential, error) {
	gid, err := strconv.ParseUint(gidText, 10, 32)
	if err != nil {
		if gid, err = strconv.ParseUint(u.Gid, 10, 32); err != nil {
			return nil, cli.Fail(fmt.Errorf("no group for the user who ran sudo (SUDO_GID=%q)", gidText))
		}
	}
	groups, err := u.GroupIds()
	if err != nil {
		return nil, cli.Fail(fmt.Errorf("cannot list the groups of %s: %w", u.Username, err), "pass --as-root to run the command as root")
	}
	gids, err := parseGroups(u.Username, groups)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uid, Gid: uint32(gid), Groups: supplementaryGroups(uint32(gid), gids, maxGroups)}, nil
}

// parseGroups reads the numeric group ids that os/user gives as text.
// Only Windows has ids that are not numbers.
func parseGroups(username string, groups []string) ([]uint32, error) {
	gids := make([]uint32, 0, len(groups))
	for _, g := range groups {
		n, err := strconv.ParseUint(g, 10, 32)
		if err != nil {
			return nil, cli.Fail(fmt.Errorf("group id %q of %s: %w", g, username, errors.ErrUnsupported))
		}
		gids = append(gids, uint32(n))
	}
	return gids, nil
}

// withUser returns env with HOME, USER and LOGNAME set for u: under sudo
// they name root, and a command run as u would write its dotfiles into
// root's home.
func withUser(env []string, u *user.User) []string {
	set := map[string]string{"HOME": u.HomeDir, "USER": u.Username, "LOGNAME": u.Username}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"HOME", "USER", "LOGNAME"} {
		out = append(out, k+"="+set[k])
	}
	return out
}

// supplementaryGroups is the list the command's process gets: the primary
// group first, then the user's other groups, each once, and no more than
// limit of them when limit > 0. macOS's setgroups(2) refuses more than 16
// groups, and an administrator of a Mac is commonly in more than that, so
// there the list is cut as sudo cuts it for sudo -u: the first 16, the
// primary group among them.
func supplementaryGroups(primary uint32, groups []uint32, limit int) []uint32 {
	out := []uint32{primary}
	for _, g := range groups {
		if limit > 0 && len(out) == limit {
			break
		}
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}
