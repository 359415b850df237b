package child

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
)

// Look finds the command name as a shell would, in the directories of
// pathList (the value of PATH) unless name has a slash in it, so that a
// missing or unusable command is reported before anything is measured.
// It returns the path to start, or an *Error with status 127 when there
// is no such command and 126 when it cannot be executed. PATH is the
// caller's to give: this package does not read the environment.
func Look(name, pathList string) (string, error) {
	if strings.Contains(name, "/") {
		// exec.LookPath does not search PATH for a name with a slash: it
		// only checks, as exec will, that the file can be executed.
		if _, err := exec.LookPath(name); err != nil {
			return "", startFailure(name, err)
		}
		return name, nil
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
		if _, err := exec.LookPath(path); err != nil {
			// As a shell does: something by that name that cannot be
			// executed does not hide one further on in PATH.
			continue
		}
		if !filepath.IsAbs(path) {
			// As exec.LookPath refuses it: a command found through a
			// relative entry in PATH is one that whoever controls the
			// current directory chose.
			return "", &Error{Status: statusCannotExecute, Err: fmt.Errorf("%s: cannot execute: %w", name, exec.ErrDot)}
		}
		return path, nil
	}
	return "", &Error{Status: statusNotFound, Err: &notFoundError{name, exec.ErrNotFound}}
}

// startFailure maps a failure to find or start the command to 127 when
// there is no such file and 126 otherwise, with the innermost cause as
// the message ("permission denied"), as a shell words it.
func startFailure(name string, err error) *Error {
	if errors.Is(err, fs.ErrNotExist) {
		return &Error{Status: statusNotFound, Err: &notFoundError{name, err}}
	}
	return &Error{Status: statusCannotExecute, Err: fmt.Errorf("%s: cannot execute: %w", name, unwrapAll(err))}
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
