package output

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Error is a summary that cannot be written where it was asked to go,
// with what to do instead.
type Error struct {
	Err   error
	hints []string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Hints returns the steps that fix the failure, for people to read.
func (e *Error) Hints() []string { return e.hints }

func failure(err error, hints ...string) error { return &Error{err, hints} }

// CheckPath refuses, before anything starts, an -o path that can be
// seen now never to take the summary: one that names a directory, or whose
// directory is missing or not writable. A failure at the end is still
// possible (the directory may go away while the command runs), and is
// handled where the summary is written.
func CheckPath(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return failure(fmt.Errorf("-o %s is a directory", path), "name a file, such as "+filepath.Join(path, "summary.json"))
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failure(fmt.Errorf("-o %s: directory %s does not exist", path, dir), "create it first, or choose another path")
	case err != nil:
		return failure(fmt.Errorf("-o %s: %w", path, err), "choose another path")
	case !fi.IsDir():
		return failure(fmt.Errorf("-o %s: %s is not a directory", path, dir), "choose another path")
	}
	if err := syscall.Access(dir, 2 /* W_OK */); err != nil {
		return failure(fmt.Errorf("-o %s: cannot write in %s: %w", path, dir, err), "choose a path you can write to")
	}
	return nil
}

// WriteFileAtomic writes a file through a temporary file beside it and a
// rename, so that the path holds the whole summary or what it held
// before, never part of it. Under sudo the file goes to the invoking user.
func WriteFileAtomic(path string, write func(io.Writer) error, owner *syscall.Credential) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if owner != nil {
		if err := f.Chown(int(owner.Uid), int(owner.Gid)); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
