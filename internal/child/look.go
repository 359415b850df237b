package child

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/exopower/exopower/internal/access"
	"github.com/exopower/exopower/internal/cli"
)

// Look finds the command name as a shell would, in the directories of
// pathList (the value of PATH) unless name has a slash in it, so that a
// missing or unusable command is reported before anything is measured.
// cred is who the command will run as (nil: exopower's own user): under
// sudo the checks are the invoking user's, not root's, so that a file
// only root may run is refused before anything starts. It returns the
// path to start, or a *cli.Error with status 127 when there is no such
// command (or a script's interpreter is missing, as zsh and bash say) and
// 126 when it cannot be executed. PATH is the caller's to give: this
// package does not read the environment.
func Look(name, pathList string, cred *syscall.Credential) (string, error) {
	if strings.Contains(name, "/") {
		// A name with a slash is not searched for: it is only checked, as
		// exec will, that the file can be executed.
		if err := usable(name, cred); err != nil {
			return "", startFailure(name, err)
		}
		return found(name)
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			// An empty entry in PATH means the current directory.
			dir = "."
		}
		path := filepath.Join(dir, name)
		if !strings.Contains(path, "/") {
			path = "./" + path
		}
		if usable(path, cred) != nil {
			// As a shell does: something by that name that cannot be
			// executed does not hide one further on in PATH.
			continue
		}
		if !filepath.IsAbs(path) {
			// As exec.LookPath refuses it: a command found through a
			// relative entry in PATH is one that whoever controls the
			// current directory chose.
			return "", &cli.Error{Status: cli.StatusCannotExecute, Err: fmt.Errorf("%s: cannot execute: %w", name, exec.ErrDot)}
		}
		return found(path)
	}
	return "", &cli.Error{Status: cli.StatusNotFound, Err: &notFoundError{name, exec.ErrNotFound}}
}

// found returns path, unless it is a script whose interpreter is missing.
func found(path string) (string, error) {
	if err := interpreterMissing(path); err != nil {
		return "", err
	}
	return path, nil
}

// usable reports why path cannot be executed by cred (by exopower's own
// user when nil), or nil when it can.
func usable(path string, cred *syscall.Credential) error {
	if cred == nil {
		_, err := exec.LookPath(path)
		return err
	}
	// access(2) would answer for root, who may run any file with an x bit.
	// The kernel's own rule, for the user: every directory on the way
	// searchable, the file a regular one with its x bit for that user.
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if err := access.Check(dir, cred, access.Execute); err != nil {
			return err
		}
		if dir == "/" {
			break
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return syscall.EISDIR
	}
	return access.Check(path, cred, access.Execute)
}

// interpreterMissing returns a *cli.Error with status 127 when path is a
// script whose #! line names an interpreter that does not exist: exec
// then fails with "no such file" for a file that is there, and the user
// would look for the wrong one.
func interpreterMissing(path string) error {
	interp := interpreter(path)
	if interp == "" {
		return nil
	}
	if _, err := os.Stat(interp); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return &cli.Error{Status: cli.StatusNotFound,
		Err:   fmt.Errorf("%s: bad interpreter: %s: %w", path, interp, syscall.ENOENT),
		Hints: []string{"install " + interp + ", or change the first line of " + path + " to name an interpreter that is there"}}
}

// interpreter returns the program that a #! line at the start of path
// names (the kernel takes the first word of the line), or "".
func interpreter(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.Read(head)
	head = head[:n]
	if !bytes.HasPrefix(head, []byte("#!")) {
		return ""
	}
	line, _, _ := bytes.Cut(head[2:], []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// startFailure maps a failure to find or start the command to 127 when
// there is no such file and 126 otherwise, with the innermost cause as
// the message ("permission denied"), as a shell words it.
func startFailure(name string, err error) *cli.Error {
	if errors.Is(err, fs.ErrNotExist) {
		if e, ok := interpreterMissing(name).(*cli.Error); ok {
			// The script is there and its interpreter went away since
			// Look; say which is missing.
			return e
		}
		return &cli.Error{Status: cli.StatusNotFound, Err: &notFoundError{name, err}}
	}
	return &cli.Error{Status: cli.StatusCannotExecute, Err: fmt.Errorf("%s: cannot execute: %w", name, unwrapAll(err))}
}

func unwrapAll(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}
