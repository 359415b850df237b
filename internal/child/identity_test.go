package child

import (
	"errors"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/cli"
)

func TestSupplementaryGroups(t *testing.T) {
	// A Mac administrator's groups, as getgrouplist lists them: 23 of
	// them, the primary group (staff, 20) not first.
	admin := []uint32{12, 20, 61, 79, 80, 81, 98, 701, 33, 100, 204, 250, 395, 398, 399, 400, 702, 703, 704, 705, 706, 707, 708}
	for _, tt := range []struct {
		name    string
		primary uint32
		groups  []uint32
		limit   int
		want    []uint32
	}{
		{"primary first, each once", 20, []uint32{12, 20, 61, 12}, 0, []uint32{20, 12, 61}},
		{"primary not in the list", 65534, nil, 0, []uint32{65534}},
		{"no limit", 20, admin, 0, append([]uint32{20, 12}, admin[2:]...)},
		{"macOS's limit", 20, admin, 16, append([]uint32{20, 12}, admin[2:16]...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := supplementaryGroups(tt.primary, tt.groups, tt.limit)
			if !slices.Equal(got, tt.want) {
				t.Errorf("supplementaryGroups(%d, %v, %d) = %v, want %v", tt.primary, tt.groups, tt.limit, got, tt.want)
			}
			if tt.limit > 0 && len(got) > tt.limit {
				t.Errorf("%d groups, more than the limit %d", len(got), tt.limit)
			}
		})
	}
}

func TestWithUserSetsHomeUserAndLognameAndKeepsTheRest(t *testing.T) {
	u := &user.User{Username: "ada", HomeDir: "/Users/ada"}
	got := withUser([]string{"HOME=/var/root", "PATH=/bin", "USER=root", "TERM=xterm", "LOGNAME=root", "EMPTY="}, u)
	want := []string{"PATH=/bin", "TERM=xterm", "EMPTY=", "HOME=/Users/ada", "USER=ada", "LOGNAME=ada"}
	if !slices.Equal(got, want) {
		t.Errorf("withUser = %q, want %q", got, want)
	}
}

func TestParseGroupsRefusesIdsThatAreNotNumbers(t *testing.T) {
	if got, err := parseGroups("ada", []string{"20", "12"}); err != nil || !slices.Equal(got, []uint32{20, 12}) {
		t.Errorf("parseGroups = %v, %v", got, err)
	}
	_, err := parseGroups("ada", []string{"20", "S-1-5-32-544"})
	var ce *cli.Error
	if !errors.As(err, &ce) || ce.Status != 125 || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("err = %#v", err)
	}
	if want := `group id "S-1-5-32-544" of ada: unsupported operation`; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

// lookup makes a getenv of name=value pairs.
func lookup(kv ...string) func(string) string {
	return func(name string) string {
		for _, p := range kv {
			if k, v, _ := strings.Cut(p, "="); k == name {
				return v
			}
		}
		return ""
	}
}

// Identify's ways of running the command as exopower itself, or of
// refusing to guess.
func TestIdentify(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/var/root"}
	for _, tt := range []struct {
		name     string
		asRoot   bool
		euid     int
		getenv   func(string) string
		note     string
		status   int // of the *Error, 0 for none
		message  string
		hints    []string
		checkErr func(error) bool
	}{
		{name: "not root: the command runs as exopower", euid: 501, getenv: lookup("SUDO_UID=65534")},
		{name: "asked to run as root under sudo", asRoot: true, getenv: lookup("SUDO_UID=65534")},
		{name: "root without sudo says so", getenv: lookup(),
			note: "the command runs as root: exopower runs as root but not through sudo, so there is no other user to run it as"},
		{name: "sudo by root runs as root", getenv: lookup("SUDO_UID=0", "SUDO_GID=0")},
		{name: "a SUDO_UID that is not a number", getenv: lookup("SUDO_UID=ada"), status: 125,
			message: `SUDO_UID="ada" is not a user id`, hints: []string{"unset SUDO_UID, or pass --as-root to run the command as root"}},
		{name: "a SUDO_UID of nobody known", getenv: lookup("SUDO_UID=4000000000"), status: 125,
			message: "cannot find the user who ran sudo (SUDO_UID=4000000000): ", hints: []string{"pass --as-root to run the command as root"},
			checkErr: func(err error) bool { var u user.UnknownUserIdError; return errors.As(err, &u) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id, err := Identify(tt.asRoot, tt.euid, tt.getenv, environ)
			if tt.status == 0 {
				if err != nil || id.Cred != nil || id.Note != tt.note || !slices.Equal(id.Env, environ) {
					t.Errorf("Identify = %+v, %v; want no credential, note %q, the environment as it is", id, err, tt.note)
				}
				return
			}
			var ce *cli.Error
			if !errors.As(err, &ce) || ce.Status != tt.status || !strings.HasPrefix(err.Error(), tt.message) || !slices.Equal(ce.Hints, tt.hints) {
				t.Fatalf("err = %v (%#v), want status %d, message %q, hints %q", err, err, tt.status, tt.message, tt.hints)
			}
			if tt.checkErr != nil && !tt.checkErr(err) {
				t.Errorf("err %v does not wrap its cause", err)
			}
		})
	}
}

// Under sudo by a user, the command gets that user's ids, groups, HOME,
// USER and LOGNAME. nobody (65534) is a user on any system.
func TestIdentifyTheUserWhoRanSudo(t *testing.T) {
	nobody, err := user.LookupId("65534")
	if err != nil {
		t.Skip("no user 65534:", err)
	}
	environ := []string{"PATH=/bin", "HOME=/var/root", "USER=root", "LOGNAME=root", "SUDO_UID=65534"}
	for _, tt := range []struct {
		name, sudoGID, wantGID string
	}{
		{"the group sudo names", "65534", "65534"},
		{"the user's own group when sudo names none", "", nobody.Gid},
		{"the user's own group when sudo names none that is a number", "staff", nobody.Gid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id, err := Identify(false, 0, lookup("SUDO_UID=65534", "SUDO_GID="+tt.sudoGID), environ)
			if err != nil {
				t.Fatal(err)
			}
			if id.Cred == nil || id.Cred.Uid != 65534 || strconv.FormatUint(uint64(id.Cred.Gid), 10) != tt.wantGID || len(id.Cred.Groups) == 0 || id.Cred.Groups[0] != id.Cred.Gid {
				t.Fatalf("credential %+v, want uid 65534, gid %s first among the groups", id.Cred, tt.wantGID)
			}
			want := []string{"PATH=/bin", "SUDO_UID=65534", "HOME=" + nobody.HomeDir, "USER=" + nobody.Username, "LOGNAME=" + nobody.Username}
			if !slices.Equal(id.Env, want) || id.Note != "" {
				t.Errorf("environment %q, note %q; want %q", id.Env, id.Note, want)
			}
		})
	}
}

// A user whose primary group is not a number, and no SUDO_GID: there is
// no group to run the command with.
func TestCredentialWithoutAGroup(t *testing.T) {
	_, err := credential(&user.User{Username: "ghost", Uid: "4000000000", Gid: "ghosts"}, 4000000000, "")
	var ce *cli.Error
	if !errors.As(err, &ce) || ce.Status != 125 || err.Error() != `no group for the user who ran sudo (SUDO_GID="")` {
		t.Errorf("err = %v (%#v)", err, err)
	}
}

// The nodes' credentials in the environment are exopower's, to reach the
// nodes: the measured command never gets them, whoever it runs as. A
// command that prints its environment (or a crash report that does)
// would show the password.
func TestTheCommandDoesNotGetTheNodesCredentials(t *testing.T) {
	environ := []string{"PATH=/bin", "EXOPOWER_NODE_USER=ops", "EXOPOWER_NODE_PASSWORD=s3cret", "EXOPOWER_NODE_PASSWORDS=kept", "HOME=/var/root"}
	// HOME, USER and LOGNAME are the user's under sudo, and beside the point.
	want := []string{"PATH=/bin", "EXOPOWER_NODE_PASSWORDS=kept"}
	for _, tt := range []struct {
		name   string
		asRoot bool
		euid   int
		getenv func(string) string
	}{
		{"not root", false, 501, lookup()},
		{"root asked to run it as root", true, 0, lookup("SUDO_UID=65534")},
		{"root without sudo", false, 0, lookup()},
		{"sudo by root", false, 0, lookup("SUDO_UID=0")},
		{"sudo by a user", false, 0, lookup("SUDO_UID=65534", "SUDO_GID=65534")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id, err := Identify(tt.asRoot, tt.euid, tt.getenv, environ)
			if err != nil {
				if _, lerr := user.LookupId("65534"); lerr != nil {
					t.Skip("no user 65534:", lerr)
				}
				t.Fatal(err)
			}
			got := slices.DeleteFunc(slices.Clone(id.Env), func(kv string) bool {
				return strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "USER=") || strings.HasPrefix(kv, "LOGNAME=")
			})
			if !slices.Equal(got, want) {
				t.Errorf("environment %q, want %q besides HOME, USER and LOGNAME", id.Env, want)
			}
			if slices.ContainsFunc(id.Env, func(kv string) bool { return strings.Contains(kv, "s3cret") || strings.Contains(kv, "=ops") }) {
				t.Errorf("environment %q holds the nodes' credentials", id.Env)
			}
		})
	}
	if !slices.Equal(environ[:3], []string{"PATH=/bin", "EXOPOWER_NODE_USER=ops", "EXOPOWER_NODE_PASSWORD=s3cret"}) {
		t.Errorf("exopower's own environment changed: %q", environ)
	}
}
