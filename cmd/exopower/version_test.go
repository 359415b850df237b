package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFrom(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		name    string
		bi      *debug.BuildInfo
		stamped string
		want    versionInfo
	}{
		{
			name: "a build on a tag reports the tag and its commit",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: vcs("0123456789abcdef0123456789abcdef01234567", "false")},
			want: versionInfo{Version: "v1.2.3", Revision: "0123456789abcdef0123456789abcdef01234567", GoVersion: "go1.26.8"},
		},
		{
			name: "a build from a tree with changes says it was modified",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261203102718-01540be0e74e+dirty"}, Settings: vcs("01540be0e74ee0d64ee9820c984cda1d47dbc20f", "true")},
			want: versionInfo{Version: "v0.0.0-20261203102718-01540be0e74e+dirty", Revision: "01540be0e74ee0d64ee9820c984cda1d47dbc20f", Modified: true, GoVersion: "go1.26.8"},
		},
		{
			name: "go install @latest gives a pseudo-version and no VCS settings: the revision comes from the pseudo-version",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261203102718-01540be0e74e"}},
			want: versionInfo{Version: "v0.0.0-20261203102718-01540be0e74e", Revision: "01540be0e74e", GoVersion: "go1.26.8"},
		},
		{
			name: "a pseudo-version after a pre-release tag names its commit too",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.4-rc.1.0.20261203102718-01540be0e74e"}},
			want: versionInfo{Version: "v1.2.4-rc.1.0.20261203102718-01540be0e74e", Revision: "01540be0e74e", GoVersion: "go1.26.8"},
		},
		{
			name: "a pre-release tag is no pseudo-version: the revision stays unknown",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.0.0-beta-2"}},
			want: versionInfo{Version: "v1.0.0-beta-2", Revision: "unknown", GoVersion: "go1.26.8"},
		},
		{
			name: "a plain build without VCS information is (devel), revision unknown",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			want: versionInfo{Version: "(devel)", Revision: "unknown", GoVersion: "go1.26.8"},
		},
		{
			name: "an empty module version reads as (devel)",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8"},
			want: versionInfo{Version: "(devel)", Revision: "unknown", GoVersion: "go1.26.8"},
		},
		{
			name:    "a stamped version stands in for the module version, the VCS settings kept",
			bi:      &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123456789abcdef01234567", "false")},
			stamped: "v1.3.0",
			want:    versionInfo{Version: "v1.3.0", Revision: "0123456789abcdef0123456789abcdef01234567", GoVersion: "go1.26.8"},
		},
		{
			name:    "without build information the stamp and the running Go's version are all there is",
			stamped: "v1.3.0",
			want:    versionInfo{Version: "v1.3.0", Revision: "unknown", GoVersion: runtime.Version()},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := versionFrom(c.bi, c.stamped, "darwin", "arm64")
			c.want.SchemaVersion, c.want.OS, c.want.Arch = versionSchema, "darwin", "arm64"
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestVersionText(t *testing.T) {
	v := versionInfo{Version: "v1.2.3", Revision: "0123abc", Modified: true, GoVersion: "go1.26.8", OS: "darwin", Arch: "arm64"}
	want := "exopower v1.2.3\nrevision 0123abc (modified)\ngo1.26.8 darwin/arm64\n"
	if got := v.text(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	v.Modified = false
	if got := v.text(); strings.Contains(got, "modified") {
		t.Errorf("an unmodified tree's version says modified: %q", got)
	}
}

// TestVersionJSONFields holds the names of version --json's fields, which
// may be added to but never renamed.
func TestVersionJSONFields(t *testing.T) {
	var b bytes.Buffer
	if err := writeVersion(&b, versionInfo{SchemaVersion: versionSchema, Version: "v1.2.3"}, true); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != 1 {
		t.Errorf("version --json wrote %d lines, want one: %q", n, b.String())
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema_version", "version", "revision", "modified", "go_version", "os", "arch"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no field %s in %s", k, b.String())
		}
	}
	if m["version"] != "v1.2.3" {
		t.Errorf("version %v, want v1.2.3", m["version"])
	}
}
