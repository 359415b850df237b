package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// identity is who the measured command runs as.
type identity struct {
	// cred is nil to run as exopower itself.
	cred *syscall.Credential
	env  []string
	note string
}

// commandIdentity decides who the command runs as. powermetrics needs
// root, so people type sudo exopower run -- cmd; the command must then run
// as the user who typed it (SUDO_UID, SUDO_GID, that user's groups, and
// HOME, USER and LOGNAME set for that user), never as root unless asRoot.
// The rest of the environment passes through unchanged.
func commandIdentity(asRoot bool, getenv func(string) string, environ []string) (identity, error) {
	id := identity{env: environ}
	if os.Geteuid() != 0 {
		return id, nil
	}
	uidText := getenv("SUDO_UID")
	switch {
	case asRoot:
		return id, nil
	case uidText == "":
		id.note = "the command runs as root: exopower runs as root but not through sudo, so there is no other user to run it as"
		return id, nil
	}
	uid, err := strconv.ParseUint(uidText, 10, 32)
	if err != nil {
		return id, fail(fmt.Errorf("SUDO_UID=%q is not a user id", uidText), "unset SUDO_UID, or pass --as-root to run the command as root")
	}
	if uid == 0 {
		return id, nil
	}
	u, err := user.LookupId(uidText)
	if err != nil {
		return id, fail(fmt.Errorf("cannot find the user who ran sudo (SUDO_UID=%s): %v", uidText, err),
			"pass --as-root to run the command as root")
	}
	gid, err := strconv.ParseUint(getenv("SUDO_GID"), 10, 32)
	if err != nil {
		if gid, err = strconv.ParseUint(u.Gid, 10, 32); err != nil {
			return id, fail(fmt.Errorf("no group for the user who ran sudo (SUDO_GID=%q)", getenv("SUDO_GID")))
		}
	}
	groups, err := u.GroupIds()
	if err != nil {
		return id, fail(fmt.Errorf("cannot list the groups of %s: %v", u.Username, err), "pass --as-root to run the command as root")
	}
	var gids []uint32
	for _, g := range groups {
		n, err := strconv.ParseUint(g, 10, 32)
		if err != nil {
			return id, fail(fmt.Errorf("group id %q of %s: %w", g, u.Username, errors.ErrUnsupported))
		}
		gids = append(gids, uint32(n))
	}
	id.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: supplementaryGroups(uint32(gid), gids, maxGroups)}
	id.env = withUser(environ, u)
	return id, nil
}

// withUser returns env with HOME, USER and LOGNAME set for u.
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
