package access

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// NotFileError is a path to read that names something other than a
// regular file: a FIFO, whose open would wait for a writer, a device,
// a directory or a socket.
type NotFileError struct {
	Path string
	What string // "a FIFO", "a directory", ...
}

func (e *NotFileError) Error() string { return e.Path + " is " + e.What + ", not a file" }

// maxLinks is how many symbolic links a path may lead through, as the
// kernels allow (Linux 40, macOS 32).
const maxLinks = 32

// Open opens path to read, as the user cred may (nil: exopower's own
// user, as the kernel judges), and only when it names a regular file.
// It never blocks: what is not a regular file is refused before it is
// opened, and opened without waiting (O_NONBLOCK) should it become one
// meanwhile, then refused. Under sudo, root may open what the user may
// not: for cred, every directory on the way must be searchable and the
// file readable by that user's bits, as in Check. The path is walked one
// name at a time from directories already opened, links followed by
// hand, and the file's bits are read from the file opened, so that
// nothing swapped in between the check and the open is read. The
// errors: *NotFileError, an *fs.PathError wrapping fs.ErrPermission (its
// Path the directory that may not be searched, or the file), or the
// system's error as an *fs.PathError.
func Open(path string, cred *syscall.Credential) (*os.File, error) {
	if path == "" {
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOENT}
	}
	if cred == nil {
		return openOwn(path)
	}
	return openAs(path, cred)
}

// openOwn is Open for exopower's own user: the kernel resolves the path.
func openOwn(path string) (*os.File, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if !regular(&st) {
		return nil, &NotFileError{Path: path, What: what(&st)}
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return opened(fd, path, nil)
}

// openAs is Open for cred: the walk the kernel does, with cred's bits.
func openAs(path string, cred *syscall.Credential) (*os.File, error) {
	w := walk{path: path, dirName: ".", names: split(path)}
	if filepath.IsAbs(path) {
		w.dirName = "/"
	}
	dir, err := unix.Open(w.dirName, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, w.fail(err)
	}
	w.dir = dir
	defer func() { unix.Close(w.dir) }()
	for len(w.names) > 0 {
		name := w.names[0]
		w.names = w.names[1:]
		var st unix.Stat_t
		if err := unix.Fstat(w.dir, &st); err != nil {
			return nil, w.fail(err)
		}
		if !permits(st.Uid, st.Gid, uint32(st.Mode), cred, Execute) {
			return nil, &fs.PathError{Op: "search", Path: w.dirName, Err: fs.ErrPermission}
		}
		if err := unix.Fstatat(w.dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return nil, w.fail(err)
		}
		switch {
		case uint32(st.Mode)&unix.S_IFMT == unix.S_IFLNK:
			err = w.follow(name)
		case len(w.names) > 0:
			err = w.enter(name)
		default:
			return w.open(name, &st, cred)
		}
		if err != nil {
			return nil, err
		}
	}
	// The path ends at a directory: "/", "." or "dir/..".
	return nil, &NotFileError{Path: path, What: "a directory"}
}

// walk is openAs's way along a path: the directory walked to so far
// (dirName its name for messages), the names still to walk, and how many
// links it followed.
type walk struct {
	path    string
	dir     int
	dirName string
	names   []string
	links   int
}

func (w *walk) fail(err error) error { return &fs.PathError{Op: "open", Path: w.path, Err: err} }

// follow reads the link name in the directory: the walk goes on along
// its target, from the root for an absolute one.
func (w *walk) follow(name string) error {
	if w.links++; w.links > maxLinks {
		return w.fail(syscall.ELOOP)
	}
	target, err := readlink(w.dir, name)
	if err != nil {
		return w.fail(err)
	}
	if filepath.IsAbs(target) {
		root, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return w.fail(err)
		}
		unix.Close(w.dir)
		w.dir, w.dirName = root, "/"
	}
	w.names = append(split(target), w.names...)
	return nil
}

// enter steps into the directory name. O_NOFOLLOW: a directory swapped
// for a link since the Fstatat is an error, not a way around the walk.
func (w *walk) enter(name string) error {
	next, err := unix.Openat(w.dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return w.fail(err)
	}
	unix.Close(w.dir)
	w.dir, w.dirName = next, filepath.Join(w.dirName, name)
	return nil
}

// open opens name, the end of the walk, whose Lstat is st, for cred.
func (w *walk) open(name string, st *unix.Stat_t, cred *syscall.Credential) (*os.File, error) {
	if !regular(st) {
		return nil, &NotFileError{Path: w.path, What: what(st)}
	}
	fd, err := unix.Openat(w.dir, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, w.fail(err)
	}
	return opened(fd, w.path, cred)
}

// opened is the file fd, once it is seen to be a regular file that cred
// (nil: anyone) may read; otherwise fd is closed.
func opened(fd int, path string, cred *syscall.Credential) (*os.File, error) {
	var st unix.Stat_t
	err := unix.Fstat(fd, &st)
	switch {
	case err != nil:
		err = &fs.PathError{Op: "stat", Path: path, Err: err}
	case !regular(&st):
		err = &NotFileError{Path: path, What: what(&st)}
	case cred != nil && !permits(st.Uid, st.Gid, uint32(st.Mode), cred, Read):
		err = &fs.PathError{Op: "read", Path: path, Err: fs.ErrPermission}
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// split is path's names, without the empty ones and ".", which change
// nothing: "a//b/./c/" is a, b, c.
func split(path string) []string {
	var names []string
	for _, n := range strings.Split(path, "/") {
		if n != "" && n != "." {
			names = append(names, n)
		}
	}
	return names
}

// readlink is the target of the link name in dir.
func readlink(dir int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

func regular(st *unix.Stat_t) bool { return uint32(st.Mode)&unix.S_IFMT == unix.S_IFREG }

// what says what st is, for a message.
func what(st *unix.Stat_t) string {
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFLNK:
		return "a symbolic link"
	}
	return fmt.Sprintf("of type %#o", uint32(st.Mode)&unix.S_IFMT)
}
