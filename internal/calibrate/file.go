package calibrate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/access"
)

// Save writes c to dir/FileName at once or not at all: into a temporary
// file beside it (mode 0600), synced, then renamed over the old one, so
// that a reader sees the old calibration or the new, never half of one.
// dir is made, mode 0700, where it is missing, and so are its parents.
// Under sudo (owner set) root writes only where the user may: a folder
// is made only in one the user may write to, and given to them, and the
// file is written only into a folder that is the user's own, held open
// from the check to the rename (os.Root), so that a folder swapped for a
// link between them leads nowhere else.
func Save(dir string, c *Calibration, owner *syscall.Credential) error {
	if err := makeDir(dir, owner); err != nil {
		return err
	}
	root, err := ownRoot(dir, owner)
	if err != nil {
		return err
	}
	defer root.Close()
	var b bytes.Buffer
	if err := Encode(&b, c); err != nil {
		return err
	}
	tmp := fmt.Sprintf(".calibration-%d-%d.json", os.Getpid(), time.Now().UnixNano())
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = writeSynced(f, b.Bytes(), owner)
	if err == nil {
		err = root.Rename(tmp, FileName)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}

// ownRoot opens dir, and under sudo (owner set) refuses it unless it is
// owner's own.
func ownRoot(dir string, owner *syscall.Credential) (*os.Root, error) {
	root, err := os.OpenRoot(dir)
	if err != nil || owner == nil {
		return root, err
	}
	fi, err := root.Stat(".")
	if err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != owner.Uid {
			err = fmt.Errorf("%s is not the folder of the user who ran sudo, who alone may have it written to: %w", dir, os.ErrPermission)
		}
	}
	if err != nil {
		root.Close()
		return nil, err
	}
	return root, nil
}

// writeSynced writes b to f, gives f to owner (when set), syncs it and
// closes it.
func writeSynced(f *os.File, b []byte, owner *syscall.Credential) error {
	_, err := f.Write(b)
	if err == nil && owner != nil {
		err = f.Chown(int(owner.Uid), int(owner.Gid))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// makeDir makes dir and its missing parents, mode 0700, each given to
// owner where set.
func makeDir(dir string, owner *syscall.Credential) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := makeDir(parent, owner); err != nil {
			return err
		}
	}
	if owner != nil {
		// Root makes a folder only where the user could have.
		if err := access.Check(parent, owner, access.Write|access.Execute); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if owner != nil {
		return os.Chown(dir, int(owner.Uid), int(owner.Gid))
	}
	return nil
}

// Load reads dir/FileName as the user cred (nil: exopower itself). A
// missing file is fs.ErrNotExist: no calibration.
func Load(dir string, cred *syscall.Credential) (*Calibration, error) {
	f, err := access.Open(filepath.Join(dir, FileName), cred)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return c, nil
}

// Remove removes dir/FileName, where owner (nil: exopower itself) may.
// A missing file is fs.ErrNotExist.
func Remove(dir string, owner *syscall.Credential) error {
	if _, err := os.Lstat(filepath.Join(dir, FileName)); err != nil {
		return err
	}
	root, err := ownRoot(dir, owner)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.Remove(FileName)
}
