package bench

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"syscall"
)

// Failures are the exit statuses of a measured command (and of its
// warmup runs) that the bench measures all the same, as hyperfine's
// --ignore-failure: none (the zero value), any (All), or those in Codes.
// A command killed by signal N has the status 128+N, as hyperfine counts
// it too.
type Failures struct {
	All   bool
	Codes []int
}

// Ignores says whether a run that ended with status is measured all the
// same.
func (f Failures) Ignores(status int) bool {
	return status == 0 || f.All || slices.Contains(f.Codes, status)
}

// OutputKind is where a command's output goes: hyperfine's --output.
type OutputKind int

const (
	// OutputInherit sends the output to Config.Stdout and Config.Stderr
	// (nil: the null device): --show-output, --output=inherit.
	OutputInherit OutputKind = iota
	// OutputNull sends both to the null device: --output=null.
	OutputNull
	// OutputPipe sends stdout through a pipe that exopower reads and
	// discards, stderr to the null device: --output=pipe, for programs
	// that see /dev/null and skip their writing.
	OutputPipe
	// OutputFile sends stdout to a file, stderr to the null device.
	OutputFile
)

// Output is where the output of a job's command, and of its hooks, goes.
type Output struct {
	Kind OutputKind
	// Path is OutputFile's file. It is made anew (emptied) for every
	// command that writes to it, hooks included, as hyperfine makes it:
	// it keeps the last one's output.
	Path string
}

// createAs opens path to write, emptied, as hyperfine's --output=FILE
// does for every command. A file it makes belongs to the user cred (nil:
// exopower's own), who runs the commands; that user may write the path,
// as --output's check before the first run made sure.
func createAs(path string, cred *syscall.Credential) (*os.File, error) {
	_, err := os.Stat(path)
	made := errors.Is(err, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOCTTY, 0o666)
	if err != nil {
		return nil, err
	}
	if made && cred != nil {
		if err := f.Chown(int(cred.Uid), int(cred.Gid)); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}
