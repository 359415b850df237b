package calibrate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/exopower/exopower/internal/access"
)

// Save writes c to dir/FileName at once or not at all: into a temporary
// file beside it (mode 0600), synced, then renamed over the old one, so
// that a reader sees the old calibration or the new, never half of one.
// dir is made, mode 0700, where it is missing, and so are its parents.
// Under sudo (owner set) what is made belongs to owner, and dir must be
// one that owner may write to: root writes only where the user may.
func Save(dir string, c *Calibration, owner *syscall.Credential) error {
	if err := makeDir(dir, owner); err != nil {
		return err
	}
	if owner != nil {
		if err := access.Check(dir, owner, access.Write|access.Execute); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	if err := Encode(&b, c); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".calibration-*.json") // mode 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = writeSynced(f, b.Bytes(), owner)
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, FileName))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
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
	if parent := filepath.Dir(dir); parent != dir {
		if err := makeDir(parent, owner); err != nil {
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
	path := filepath.Join(dir, FileName)
	if _, err := os.Lstat(path); err != nil {
		return err
	}
	if owner != nil {
		if err := access.Check(dir, owner, access.Write|access.Execute); err != nil {
			return err
		}
	}
	return os.Remove(path)
}
