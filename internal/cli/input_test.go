package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fifo makes a FIFO in a new folder and returns its path.
func fifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// within runs f and fails the test when it has not returned within a
// minute: what it waits for would never come.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s still waits after a minute", what)
	}
}

// A FIFO that no program writes opens at once, and Close ends the read
// that waits for its writer: a plain open would wait for the writer,
// where no signal reaches it.
func TestOpenDoesNotWaitForAFIFOsWriter(t *testing.T) {
	path := fifo(t)
	s := &Streams{}
	for _, open := range []struct {
		name string
		f    func() (io.ReadCloser, error)
	}{
		{"Open", func() (io.ReadCloser, error) { return s.Open(path) }},
		{"OpenLive", func() (io.ReadCloser, error) {
			in, regular, err := s.OpenLive(path)
			if regular {
				t.Errorf("OpenLive: a FIFO is a regular file")
			}
			return in, err
		}},
	} {
		var in io.ReadCloser
		var err error
		within(t, open.name+" of a FIFO with no writer", func() { in, err = open.f() })
		if err != nil {
			t.Fatalf("%s: %v", open.name, err)
		}
		read := make(chan error, 1)
		go func() {
			_, err := in.Read(make([]byte, 64))
			read <- err
		}()
		in.Close()
		within(t, open.name+": a read after Close", func() {
			if err := <-read; !errors.Is(err, os.ErrClosed) {
				t.Errorf("%s: Read = %v, want os.ErrClosed", open.name, err)
			}
		})
	}
}

// A FIFO opened before its writer came is read as cat reads it: what the
// writer writes, then the end when it closes, not an end at once for
// want of a writer.
func TestAFIFOIsReadFromItsWriterToItsEnd(t *testing.T) {
	path := fifo(t)
	var in io.ReadCloser
	var err error
	within(t, "Open of a FIFO with no writer", func() { in, err = (&Streams{}).Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	// The writer opens after the reader.
	wrote := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err == nil {
			_, err = w.Write([]byte("one document"))
			w.Close()
		}
		wrote <- err
	}()
	within(t, "a read of a FIFO whose writer closed", func() {
		if b, err := io.ReadAll(in); string(b) != "one document" || err != nil {
			t.Errorf("read %q, %v", b, err)
		}
	})
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
}

// A regular file is read as os.Open reads it, and said to be one.
func TestOpenLiveSaysAFileIsRegular(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.plist")
	os.WriteFile(path, []byte("<plist/>"), 0o600)
	in, regular, err := (&Streams{}).OpenLive(path)
	if err != nil || !regular {
		t.Fatalf("OpenLive = %v, regular %v", err, regular)
	}
	defer in.Close()
	if b, err := io.ReadAll(in); string(b) != "<plist/>" || err != nil {
		t.Errorf("read %q, %v", b, err)
	}
}

// A signal ends a read that waits on a silent pipe, and every read after
// it, with ErrInterrupted; Stop says that it came.
func TestASignalEndsAnInterruptibleRead(t *testing.T) {
	r, _ := blockingPipe(t) // the write end stays open, and silent
	sr, err := newStdinReader(int(r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 1)
	in := Interruptible(sr, sigs)
	read := make(chan error, 1)
	go func() {
		_, err := in.Read(make([]byte, 64))
		read <- err
	}()
	sigs <- syscall.SIGTERM
	within(t, "a read after the signal", func() {
		if err := <-read; !errors.Is(err, ErrInterrupted) {
			t.Errorf("Read = %v, want ErrInterrupted", err)
		}
	})
	if _, err := in.Read(make([]byte, 64)); !errors.Is(err, ErrInterrupted) {
		t.Errorf("a read after that = %v, want ErrInterrupted", err)
	}
	if !in.Stop() || !in.Interrupted() {
		t.Error("Stop says no signal came")
	}
}

// Without a signal the input is read to its end, and Stop says none
// came.
func TestAnInterruptibleReadWithoutASignalReadsToTheEnd(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	in := Interruptible(io.NopCloser(strings.NewReader("all of it")), sigs)
	if b, err := io.ReadAll(in); string(b) != "all of it" || err != nil {
		t.Errorf("read %q, %v", b, err)
	}
	if in.Stop() {
		t.Error("Stop says a signal came")
	}
}
