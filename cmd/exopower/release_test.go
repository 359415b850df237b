//go:build release

// The release script builds exopower for two platforms: .ci/run runs it
// as a step of its own (go test -tags release), not inside the
// race-detected suite.

package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// releaseScript runs scripts/release.sh with args, its binaries going to
// out, for linux/amd64 only: one build keeps the test short, and any
// machine with Go can make it.
func releaseScript(t *testing.T, out string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "release.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "OUT="+out, "PLATFORMS=linux/amd64")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func TestReleaseScriptStampsTheTagAndWritesChecksums(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	stdout, stderr, err := releaseScript(t, out, "v9.8.7")
	if err != nil {
		t.Fatalf("release.sh: %v\n%s", err, stderr)
	}
	bin := filepath.Join(out, "exopower-v9.8.7-linux-amd64")
	if !strings.Contains(stdout, "exopower-v9.8.7-linux-amd64") {
		t.Errorf("release.sh printed no checksum of the binary: %q", stdout)
	}
	sum := exec.Command("sha256sum", "-c", "SHA256SUMS")
	if _, err := exec.LookPath("sha256sum"); err != nil {
		sum = exec.Command("shasum", "-a", "256", "-c", "SHA256SUMS")
	}
	sum.Dir = out
	if b, err := sum.CombinedOutput(); err != nil {
		t.Errorf("the checksums do not verify: %v\n%s", err, b)
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, kv := range bi.Settings {
		settings[kv.Key] = kv.Value
	}
	for k, want := range map[string]string{"-trimpath": "true", "CGO_ENABLED": "0", "GOOS": "linux", "GOARCH": "amd64"} {
		if settings[k] != want {
			t.Errorf("build setting %s = %q, want %q", k, settings[k], want)
		}
	}
	// -trimpath leaves -ldflags out of the build information: the
	// stamp is looked for in the binary itself.
	if b, err := os.ReadFile(bin); err != nil || !bytes.Contains(b, []byte("v9.8.7")) {
		t.Errorf("the binary holds no v9.8.7 (%v)", err)
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return
	}
	b, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v versionInfo
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if v.Version != "v9.8.7" || v.OS != "linux" || v.Arch != "amd64" {
		t.Errorf("the release binary says %+v, want v9.8.7 on linux/amd64", v)
	}
}

func TestReleaseScriptRefusesWhatIsNoTag(t *testing.T) {
	t.Parallel()
	for _, tag := range []string{"1.2.3", "v1.2", "latest", "v1.2.3 extra"} {
		out := t.TempDir()
		_, stderr, err := releaseScript(t, out, strings.Fields(tag)...)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("release.sh %s: %v, want exit status 2", tag, err)
		}
		if !strings.Contains(stderr, "is not a version tag such as v1.2.3") {
			t.Errorf("release.sh %s: stderr %q does not say what is wrong", tag, stderr)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("release.sh %s wrote %d files", tag, len(entries))
		}
	}
}
