package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/exopower/exopower/internal/testfiles"

	"github.com/exopower/exopower/internal/cli"
)

// filesSetup is a Setup of nodes, with env as the environment and as
// the user who ran sudo (nil: none); warnings collects what it warns of.
func filesSetup(nodes Nodes, env map[string]string, as *syscall.Credential) (Setup, *[]string) {
	var warnings []string
	return Setup{Nodes: nodes, Getenv: func(k string) string { return env[k] },
		Warn:   func(w string) { warnings = append(warnings, w) },
		ReadAs: func() (*syscall.Credential, error) { return as, nil },
	}, &warnings
}

// failure checks that err stops the run before anything starts (125)
// and says each of want.
func failure(t *testing.T, err error, want ...string) {
	t.Helper()
	var ce *cli.Error
	if !errors.As(err, &ce) || ce.Status != cli.StatusFailure {
		t.Fatalf("err = %v, want status %d", err, cli.StatusFailure)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err = %q, want %q in it", err, w)
		}
	}
}

// A FIFO named by --nodes, --node-credentials or --node-ca is refused,
// naming the flag, the path and what it is: opening it to read would
// wait for a writer, and Ctrl-C could not end the wait. So is a
// directory or a device. A hang here is the failure (go test -timeout).
func TestAFileFlagThatNamesAFIFOIsRefusedWithoutWaiting(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	node := []string{"http://127.0.0.1:1"}
	for _, tt := range []struct {
		flag  string
		nodes Nodes
		what  string
	}{
		{"--nodes", Nodes{File: fifo}, "a FIFO"},
		{"--node-credentials", Nodes{URLs: node, Credentials: fifo}, "a FIFO"},
		{"--node-ca", Nodes{URLs: node, CAFile: fifo}, "a FIFO"},
		{"--nodes", Nodes{File: dir}, "a directory"},
		{"--node-credentials", Nodes{URLs: node, Credentials: "/dev/null"}, "a device"},
	} {
		t.Run(tt.flag+" "+tt.what, func(t *testing.T) {
			s, _ := filesSetup(tt.nodes, nil, nil)
			_, _, err := s.Connect(context.Background())
			path := tt.nodes.File + tt.nodes.Credentials + tt.nodes.CAFile
			failure(t, err, tt.flag+" "+path+" is "+tt.what+", not a file")
		})
	}
}

// Under sudo, root may read any file; the nodes' files are read only when
// the user who ran sudo may read them, and a refusal names the path, not
// what the file holds (a parse error would quote its first line).
func TestUnderSudoTheNodesFilesAreReadOnlyWhereTheUserMay(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to other users")
	}
	user := &syscall.Credential{Uid: 1000, Gid: 1000}
	dir := testfiles.SearchableDir(t)
	const secret = "root:$6$s3cret-hash:19000:0:99999:7:::"
	roots := filepath.Join(dir, "shadow")
	if err := os.WriteFile(roots, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(dir, "planted")
	if err := os.Symlink(roots, planted); err != nil {
		t.Fatal(err)
	}
	node := []string{"http://127.0.0.1:1"}
	for _, path := range []string{roots, planted} {
		for _, tt := range []struct {
			flag  string
			nodes Nodes
		}{
			{"--nodes", Nodes{File: path}},
			{"--node-credentials", Nodes{URLs: node, Credentials: path}},
			{"--node-ca", Nodes{URLs: node, CAFile: path}},
		} {
			t.Run(tt.flag+" "+filepath.Base(path), func(t *testing.T) {
				s, _ := filesSetup(tt.nodes, nil, user)
				_, _, err := s.Connect(context.Background())
				failure(t, err, tt.flag+" "+path+": the user who ran sudo (uid 1000) may not read it")
				if err != nil && strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error shows the file: %v", err)
				}
			})
		}
	}
	// The user's own files are read.
	mine := filepath.Join(dir, "mine")
	if err := os.WriteFile(mine, []byte("http://mac2:1 alice pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(mine, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	s, _ := filesSetup(Nodes{File: mine, Credentials: mine}, nil, user)
	if _, _, err := s.targets(s.Getenv); err == nil || !strings.Contains(err.Error(), "--nodes "+mine+" line 1") {
		t.Errorf("the user's own file as --nodes: %v, want it read (and refused for its line)", err)
	}
	s, _ = filesSetup(Nodes{URLs: []string{"http://mac2:1"}, Credentials: mine}, nil, user)
	if _, auth, err := s.targets(s.Getenv); err != nil || auth.byURL["http://mac2:1"].User != "alice" {
		t.Errorf("the user's own credentials: %+v, %v", auth, err)
	}
}

// A credentials file that others than its owner may read or change is
// warned of, as ssh warns of a key, with the command that mends it; the
// file's own mode counts, not a link's. A link is warned of, naming
// where it points: that file holds the passwords.
func TestACredentialsFileOthersMayReadIsWarnedOf(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		mode os.FileMode
		warn bool
	}{{0o600, false}, {0o400, false}, {0o644, true}, {0o640, true}, {0o604, true}, {0o620, true}, {0o601, true}} {
		path := filepath.Join(dir, "creds-"+tt.mode.String())
		if err := os.WriteFile(path, []byte("http://mac2:1 alice pw\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tt.mode); err != nil {
			t.Fatal(err)
		}
		s, warnings := filesSetup(Nodes{URLs: []string{"https://mac2:1"}, Credentials: path}, nil, nil)
		if _, _, err := s.targets(s.Getenv); err != nil {
			t.Fatal(err)
		}
		all := strings.Join(*warnings, "\n")
		if !tt.warn {
			if all != "" {
				t.Errorf("mode %04o: warned %q", tt.mode, all)
			}
			continue
		}
		if len(*warnings) != 1 || !strings.Contains(all, "--node-credentials "+path) ||
			!strings.Contains(all, fmt.Sprintf("mode %04o", tt.mode)) || !strings.HasSuffix(all, "chmod 600 "+path) {
			t.Errorf("mode %04o: warned %q", tt.mode, *warnings)
		}
	}
	target := filepath.Join(dir, "real")
	if err := os.WriteFile(target, []byte("http://mac2:1 alice pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	s, warnings := filesSetup(Nodes{URLs: []string{"https://mac2:1"}, Credentials: link}, nil, nil)
	if _, _, err := s.targets(s.Getenv); err != nil {
		t.Fatal(err)
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "--node-credentials "+link+" is a link to "+target) {
		t.Errorf("a link: warned %q", *warnings)
	}
}

// A password that would go to an http:// node (basic auth, in clear text)
// is warned of once for each such node, before anything starts; https,
// this Mac and a node without credentials are not; nor is a serve on this
// machine's loopback, which the password does not leave.
func TestAPasswordForAnHTTPNodeIsWarnedOfOnceANode(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "creds")
	if err := os.WriteFile(creds, []byte("http://mac2:1 alice pw\nhttp://mac3:1 bob pw\nhttps://mac4:1 carol pw\nhttp://localhost:1 dan pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nodes := Nodes{URLs: []string{"http://mac2:1", "https://mac4:1", "http://mac5:1", "local", "http://localhost:1", "http://127.0.0.1:2"}, Credentials: creds}
	s, warnings := filesSetup(nodes, nil, nil)
	if _, _, err := s.targets(s.Getenv); err != nil {
		t.Fatal(err)
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "node http://mac2:1 gets its password in clear text") ||
		!strings.Contains((*warnings)[0], "--node-ca") {
		t.Errorf("warnings %q, want one, of mac2", *warnings)
	}
	// The environment's credentials go to every node without a line.
	nodes.Credentials = ""
	s, warnings = filesSetup(nodes, map[string]string{"EXOPOWER_NODE_USER": "ops", "EXOPOWER_NODE_PASSWORD": "pw"}, nil)
	if _, _, err := s.targets(s.Getenv); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(*warnings, "\n")
	if len(*warnings) != 2 || !strings.Contains(all, "node http://mac2:1 ") || !strings.Contains(all, "node http://mac5:1 ") {
		t.Errorf("warnings %q, want one of mac2 and one of mac5", *warnings)
	}
}

// No error shows a password of the credentials file, whatever is wrong
// with its line: a URL with the password in it, fields in the wrong
// order, too many or too few, a line too long. Nor does a node's URL,
// from --node or --nodes (a credentials file given as --nodes, say).
func TestNoErrorShowsAPassword(t *testing.T) {
	const secret = "s3cret"
	dir := t.TempDir()
	for _, line := range []string{
		"http://alice:s3cret@mac2:1 alice s3cret",
		"http://alice:s3cret@mac2:1",
		"s3cret alice http://mac2:1",
		"alice s3cret http://mac2:1",
		"http://mac2:1 alice s3cret extra",
		"http://mac2:1 s3cret",
		"ftp://mac2:1 alice s3cret",
		"http://mac2:1/s3cret alice pw",
		"http://mac2:1?s3cret alice pw",
		"http://mac2:1#s3cret alice pw",
		"http://mac2:s3cret alice pw",
		"http://[s3cret alice pw",
		"http://alice:s3cret@[mac2 alice pw",
		"local alice s3cret",
		"http://alice:s3cret@ alice s3cret",
		"alice:s3cret@mac2:1 alice s3cret",
		"https://alice:s3cret@mac2:1/ alice s3cret",
		"http://alice:s3cret/#x@mac2:1 alice s3cret",
		"http://mac2:1 alice " + strings.Repeat(secret, 20000),
	} {
		// Not t.TempDir in the subtest, whose name holds the line.
		file := filepath.Join(dir, "file")
		t.Run(line[:min(len(line), 40)], func(t *testing.T) {
			_, err := LoadAuth(strings.NewReader("# creds\n"+line+"\n"), func(string) string { return "" })
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("LoadAuth: %v", err)
			}
			if !strings.Contains(err.Error(), "line 2") && !strings.Contains(err.Error(), "too long") {
				t.Errorf("LoadAuth: %v, want the line's number", err)
			}
			if err := os.WriteFile(file, []byte(line+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, nodes := range []Nodes{
				{URLs: []string{"https://mac9:1"}, Credentials: file},
				{File: file},
			} {
				s, warnings := filesSetup(nodes, nil, nil)
				_, _, err := s.targets(s.Getenv)
				if err == nil {
					t.Errorf("%+v: no error", nodes)
				}
				if err != nil && strings.Contains(err.Error(), secret) || strings.Contains(strings.Join(*warnings, ""), secret) {
					t.Errorf("%+v: %v, warnings %q", nodes, err, *warnings)
				}
			}
			// A --node value with a password in its user:password@.
			if f := strings.Fields(line); strings.Contains(f[0], "alice:s3cret") {
				if _, err := ParseTargets(f[:1], nil); err == nil || strings.Contains(err.Error(), secret) {
					t.Errorf("--node %s: %v", f[0], err)
				}
			}
		})
	}
}
