package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/output"
)

// version is the release's version, stamped in by scripts/release.sh and
// the Homebrew formula (-ldflags "-X main.version=v1.2.3"), which build
// from a tarball where Go finds no tag to take the version from. Empty,
// the module version from the build information stands.
var version string

// versionSchema is versionInfo's schema_version.
const versionSchema = 1

// versionInfo is what `exopower version --json` writes: where the binary
// came from, for a bug report or a check that an upgrade took.
type versionInfo struct {
	SchemaVersion int `json:"schema_version"`
	// Version is a tag (v1.2.3), the pseudo-version that go install
	// ...@latest gives (v0.0.0-20250102150405-0123456789ab), or (devel)
	// from a build that knew neither.
	Version string `json:"version"`
	// Revision is the VCS commit, "unknown" where the build recorded none.
	Revision string `json:"revision"`
	// Modified says the working tree had uncommitted changes at build time.
	Modified  bool   `json:"modified"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
}

// readVersion is the running binary's versionInfo.
func readVersion() versionInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return versionFrom(bi, version, runtime.GOOS, runtime.GOARCH)
}

// versionFrom reads a versionInfo from build information (nil: none was
// embedded), with stamped, when given, in place of the module version.
func versionFrom(bi *debug.BuildInfo, stamped, goos, goarch string) versionInfo {
	v := versionInfo{SchemaVersion: versionSchema, Version: "(devel)", Revision: "unknown", GoVersion: "unknown", OS: goos, Arch: goarch}
	if bi == nil {
		if stamped != "" {
			v.Version = stamped
		}
		v.GoVersion = runtime.Version()
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if stamped != "" {
		v.Version = stamped
	}
	if bi.GoVersion != "" {
		v.GoVersion = bi.GoVersion
	}
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			v.Revision = kv.Value
		case "vcs.modified":
			v.Modified = kv.Value == "true"
		}
	}
	if v.Revision == "unknown" {
		// go install ...@latest builds from a module zip, with no VCS
		// information, but the pseudo-version names the commit.
		if rev, ok := pseudoRevision(bi.Main.Version); ok {
			v.Revision = rev
		}
	}
	return v
}

// pseudoRevision is the commit prefix that ends a pseudo-version
// (vX.Y.Z-[pre.]yyyymmddhhmmss-abcdefabcdef[+build]).
func pseudoRevision(v string) (string, bool) {
	if i := strings.IndexByte(v, '+'); i >= 0 {
		v = v[:i]
	}
	i := strings.LastIndexByte(v, '-')
	if i < 14 {
		return "", false
	}
	rev, stamp := v[i+1:], v[i-14:i]
	if len(rev) != 12 || !isDigits(stamp) || strings.Trim(rev, "0123456789abcdef") != "" {
		return "", false
	}
	return rev, true
}

func isDigits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}

// text is the version as --version and `exopower version` print it.
func (v versionInfo) text() string {
	rev := v.Revision
	if v.Modified {
		rev += " (modified)"
	}
	return fmt.Sprintf("exopower %s\nrevision %s\n%s %s/%s\n", v.Version, rev, v.GoVersion, v.OS, v.Arch)
}

// buildInfo is the version, revision and Go version that serve reports.
func buildInfo() (version, revision, goVersion string) {
	v := readVersion()
	return v.Version, v.Revision, v.GoVersion
}

// setVersion gives root a --version flag that prints what `exopower
// version` prints.
func setVersion(root *cobra.Command, v versionInfo) {
	root.Version = v.Version
	root.Annotations = map[string]string{"version_text": v.text()}
	root.SetVersionTemplate(`{{index .Annotations "version_text"}}`)
}

func newVersionCmd(s *cli.Streams) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print exopower's version, VCS revision, Go version and platform",
		Long: `Print the version of this exopower binary: its module version (a tag, or the
pseudo-version that go install ...@latest gives; (devel) from a plain build),
the VCS revision and whether the tree held uncommitted changes, the Go version
it was built with, and its OS and architecture.`,
		Args: usage.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return writeVersion(s.Out, readVersion(), asJSON)
		},
	}
	addJSONFlag(c, &asJSON)
	return c
}

func writeVersion(w io.Writer, v versionInfo, asJSON bool) error {
	var err error
	if asJSON {
		err = output.WriteJSON(w, v)
	} else {
		_, err = io.WriteString(w, v.text())
	}
	return cli.Wrote("stdout", err)
}
