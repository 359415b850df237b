package output

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/exopower/exopower/internal/access"
	"github.com/exopower/exopower/internal/cli"
)

// CheckPath refuses, before anything starts, a path to write to (given
// by flag, such as -o, which the messages name) that can be
// seen now never to take the summary: one that names a directory or a
// socket, a descriptor that is not open, a loop of links, or a file whose
// directory is missing or not writable. A link is judged by what it
// points to. A FIFO or a device is only looked at: opening a FIFO would
// wait for its reader. A failure at the end is still possible (the
// directory may go away while the command runs), and is handled where the
// summary is written. as is the user the summary is written for (nil:
// exopower's own): under sudo, root would write through a link, or into a
// file or directory, that the user who ran sudo may not, so the path must
// be one that user could write.
func CheckPath(flag, path string, as *syscall.Credential) error {
	if path == "" {
		return nil
	}
	t, err := resolve(path)
	if err != nil {
		return cli.Fail(fmt.Errorf("%s %s: %w", flag, path, bare(err)), "choose another path")
	}
	name := path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 && t.fd < 0 {
		name = fmt.Sprintf("%s (a link to %s)", path, t.path)
	}
	switch {
	case t.fd >= 0:
		return nil
	case t.fi != nil && t.fi.IsDir():
		return cli.Fail(fmt.Errorf("%s %s is a directory", flag, name), "name a file, such as "+filepath.Join(path, "summary.json"))
	case t.fi != nil && t.fi.Mode()&fs.ModeSocket != 0:
		return cli.Fail(fmt.Errorf("%s %s is a socket, which cannot be opened to write to", flag, name), "name a file, a FIFO or a device")
	}
	if t.fi != nil && !t.fi.Mode().IsRegular() {
		return checkUser(flag, name, t.path, as, access.Write)
	}
	if err := checkDir(flag, name, filepath.Dir(t.path)); err != nil {
		return err
	}
	if t.fi != nil {
		return checkUser(flag, name, t.path, as, access.Write)
	}
	return checkUser(flag, name, filepath.Dir(t.path), as, access.Write|access.Execute)
}

// checkUser refuses path when as, the user who ran sudo, may not do want
// to it.
func checkUser(flag, name, path string, as *syscall.Credential, want uint32) error {
	if as == nil {
		return nil
	}
	if err := access.Check(path, as, want); err != nil {
		return cli.Fail(fmt.Errorf("%s %s: the user who ran sudo (uid %d) may not write %s: %w", flag, name, as.Uid, path, bare(err)),
			"choose a path that user can write to")
	}
	return nil
}

// checkDir refuses a directory that a new file cannot be made in.
func checkDir(flag, name, dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return cli.Fail(fmt.Errorf("%s %s: directory %s does not exist", flag, name, dir), "create it first, or choose another path")
	case err != nil:
		return cli.Fail(fmt.Errorf("%s %s: %w", flag, name, err), "choose another path")
	case !fi.IsDir():
		return cli.Fail(fmt.Errorf("%s %s: %s is not a directory", flag, name, dir), "choose another path")
	}
	if err := syscall.Access(dir, 2 /* W_OK */); err != nil {
		return cli.Fail(fmt.Errorf("%s %s: cannot write in %s: %w", flag, name, dir, err), "choose a path you can write to")
	}
	return nil
}

// bare is err without the operation and path of an *fs.PathError, for a
// message that names the path already.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// WriteFile writes to path as cp or tee would write a file there, leaving
// in place what the path names. A symbolic link is followed, to a file
// that does not exist yet too. A regular file, new or not, is written
// through a temporary file beside it and a rename, so that it holds the
// whole summary or what it held before, never part of it; an existing one
// keeps its mode (and, for root, its owner); a new one has 0666 less the
// umask and, under sudo (owner set), belongs to the user who ran sudo. A
// FIFO or a device is written where it is; a FIFO that no process reads
// is an error, not a wait. /dev/stdout, /dev/stderr and /dev/fd/N are the
// process's own descriptors, written after what they hold.
func WriteFile(path string, write func(io.Writer) error, owner *syscall.Credential) error {
	return writeTo(path, write, func(t target) error {
		if t.fi == nil {
			return replace(t.path, write, attrs{owner: owner})
		}
		return replace(t.path, write, keptAttrs(t.fi))
	})
}

// writeTo writes to what path names: a descriptor, a FIFO or a device in
// place, and a regular file (new or not) with regular.
func writeTo(path string, write func(io.Writer) error, regular func(target) error) error {
	t, err := resolve(path)
	switch {
	case err != nil:
		return err
	case t.fd >= 0:
		return writeDescriptor(t.fd, write)
	case t.fi == nil || t.fi.Mode().IsRegular():
		return regular(t)
	}
	return writeInPlace(t.path, t.fi, write)
}

// StreamFile is WriteFile for what is written as it is read, such as a
// recording, which a kill must not lose: a regular file, new or not, is
// written where it is (truncated first), not through a temporary file,
// so that it holds every line written so far whatever becomes of the
// writer; a new one belongs, under sudo (owner set), to the user who ran
// sudo. Links, FIFOs, devices and descriptors are as for WriteFile.
func StreamFile(path string, write func(io.Writer) error, owner *syscall.Credential) error {
	return writeTo(path, write, func(t target) error {
		f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOCTTY, 0o666)
		if err != nil {
			return err
		}
		if t.fi == nil && owner != nil {
			if err := f.Chown(int(owner.Uid), int(owner.Gid)); err != nil {
				f.Close()
				return err
			}
		}
		if err := write(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

// target is what an -o path names, its links followed.
type target struct {
	// path is where the summary goes: the path, or for a link the end
	// of its chain.
	path string
	// fi describes what is there; nil when nothing is, yet.
	fi fs.FileInfo
	// fd is the process's own descriptor the path names, or -1.
	fd int
}

// maxLinks is how many links in a row are followed, as Linux does.
const maxLinks = 40

// resolve finds what path names.
func resolve(path string) (target, error) {
	if fd, ok := descriptorOf(path); ok {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return target{}, fmt.Errorf("descriptor %d is not open", fd)
		}
		return target{path: path, fd: fd}, nil
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.Mode().IsRegular():
		// The replacement is made beside the file, not the link to
		// it, for the rename to replace the file and keep the link.
		real, err := filepath.EvalSymlinks(path)
		return target{path: real, fi: fi, fd: -1}, err
	case err == nil:
		return target{path: path, fi: fi, fd: -1}, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		end, err := danglingEnd(path)
		return target{path: end, fd: -1}, err
	}
	return target{}, err
}

// danglingEnd follows the links from path, which leads to nothing, to
// the name at the end of the chain, for a new file.
func danglingEnd(path string) (string, error) {
	for range maxLinks {
		to, err := os.Readlink(path)
		if err != nil {
			return path, nil // not a link: the end
		}
		if !filepath.IsAbs(to) {
			// Not cleaned: ".." after a linked directory is the
			// kernel's to resolve, not the string's.
			to = filepath.Dir(path) + string(filepath.Separator) + to
		}
		path = to
	}
	return "", &fs.PathError{Op: "readlink", Path: path, Err: syscall.ELOOP}
}

// descriptorOf returns N when path names the process's own descriptor N.
func descriptorOf(path string) (int, bool) {
	p := filepath.Clean(path)
	if n, ok := map[string]int{"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}[p]; ok {
		return n, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if rest, ok := strings.CutPrefix(p, dir); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return -1, false
}

// attrs are the mode and owner given to a file that replaces another.
type attrs struct {
	// keep says to give the file perm; otherwise it has 0666 less the
	// umask, as any new file.
	keep  bool
	perm  fs.FileMode
	owner *syscall.Credential // nil: whoever writes it
}

// keptAttrs are the mode and, for root, the owner of an existing file,
// for its replacement. Others cannot give a file away.
func keptAttrs(fi fs.FileInfo) attrs {
	a := attrs{keep: true, perm: fi.Mode().Perm()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		a.owner = &syscall.Credential{Uid: st.Uid, Gid: st.Gid}
	}
	return a
}

// replace writes a file through a temporary file beside it and a rename.
func replace(path string, write func(io.Writer) error, a attrs) (err error) {
	// A file kept private must not be readable while written: 0600
	// until its own mode is set.
	perm := fs.FileMode(0o666)
	if a.keep {
		perm = 0o600
	}
	f, err := createTemp(path, perm)
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
	if a.keep {
		if err := f.Chmod(a.perm); err != nil {
			return err
		}
	}
	if a.owner != nil {
		if err := f.Chown(int(a.owner.Uid), int(a.owner.Gid)); err != nil {
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

// createTemp makes a new file beside path, with perm less the umask. The
// kernel applies the umask, which a process cannot read without setting
// it, for every thread at once.
func createTemp(path string, perm fs.FileMode) (*os.File, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	for range 10000 {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(uint64(rand.Uint32()), 10)+".tmp")
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("no unused name for a temporary file in %s", dir)
}

// writeInPlace writes to a FIFO or a device where it is: its reader
// reads that one, and a device cannot be made anew.
func writeInPlace(path string, fi fs.FileInfo, write func(io.Writer) error) error {
	fifo := fi.Mode()&fs.ModeNamedPipe != 0
	flag := os.O_WRONLY | syscall.O_NOCTTY
	if fifo {
		// Opening a FIFO waits for a reader; with none, exopower
		// would wait at its end for good, deaf to Ctrl-C.
		flag |= syscall.O_NONBLOCK
	}
	f, err := os.OpenFile(path, flag, 0)
	if fifo && errors.Is(err, syscall.ENXIO) {
		return errors.New("it is a FIFO and no process reads it; start its reader before the command ends")
	}
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeDescriptor writes to a duplicate of the process's descriptor fd:
// after what was written there, at the offset it shares, as the command
// wrote to it. Opening /dev/fd/N anew would, on Linux, write over the
// start of a file.
func writeDescriptor(fd int, write func(io.Writer) error) error {
	syscall.ForkLock.RLock()
	dup, err := syscall.Dup(fd)
	if err == nil {
		syscall.CloseOnExec(dup)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return fmt.Errorf("descriptor %d: %w", fd, err)
	}
	f := os.NewFile(uintptr(dup), "/dev/fd/"+strconv.Itoa(fd))
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
