package jsondoc

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestSlugFollowsGitHubsRules(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"exopower run", "exopower-run"},
		{"Install and measure (on a Mac)", "install-and-measure-on-a-mac"},
		{"exopower bench: many runs", "exopower-bench-many-runs"},
		{"Every window and plots: --samples, exopower plot", "every-window-and-plots---samples-exopower-plot"},
		{"serve's API", "serves-api"},
		{"watch --json: the sample lines", "watch---json-the-sample-lines"},
		{"Version, completions and man pages", "version-completions-and-man-pages"},
		{"The `--node` flag", "the---node-flag"},
		{"**Bold** and *emphasis*", "bold-and-emphasis"},
		{"A [link](x.md) inside", "a-link-inside"},
		{"snake_case stays", "snake_case-stays"},
		{"Über 10 W: 5 → 25 W", "über-10-w-5--25-w"},
		{"  trimmed  ", "trimmed"},
	} {
		if got := slug(tc.heading); got != tc.want {
			t.Errorf("slug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

func TestAnchors(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"every level", "# One\n## Two\n###### Six\n####### Seven\n", []string{"one", "six", "two"}},
		{"repeated headings are numbered", "## Notes\n## Notes\n## Notes\n", []string{"notes", "notes-1", "notes-2"}},
		{"a closing sequence is not text", "## Title ##\n# C# #\n", []string{"c", "title"}},
		{"no space, no heading; an empty one", "#hashtag\n#\n", []string{""}},
		{"indented up to three spaces", "   # Three\n    # Four (code)\n", []string{"three"}},
		{"not inside fenced code", "```\n# not a heading\n```\n~~~sh\n# nor this\n~~~\n## Yes\n", []string{"yes"}},
		{"a longer fence holds a shorter one", "````\n```\n# inside\n```\n````\n# After\n", []string{"after"}},
		{"CRLF line ends", "## Windows\r\ntext\r\n", []string{"windows"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for a := range anchors([]byte(tc.doc)) {
				got = append(got, a)
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLinks(t *testing.T) {
	doc := "See [a](a.md) and [b](docs/b.md#x \"title\").\n" +
		"`[not](code.md)` but ![img](pic.png) and [c](<c.md>)\n" +
		"```\n[fenced](f.md)\n```\n" +
		"``[x`y](z.md)`` [after](#after)\n" +
		"[ref]: docs/ref.md#top\n" +
		"[https](https://example.com) and an unclosed ` [tick](t.md)\n"
	var got []string
	for _, l := range links([]byte(doc)) {
		got = append(got, strconv.Itoa(l.line)+" "+l.target)
	}
	want := []string{"1 a.md", "1 docs/b.md#x", "2 pic.png", "2 c.md", "6 #after", "7 docs/ref.md#top",
		"8 https://example.com", "8 t.md"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# exopower\n\n## Install\n\n"+
		"[ok](docs/a.md) [ok](docs/a.md#the-port) [ok](#install) [ok](scripts/x.sh) [ok](/docs/a.md#the-port)\n"+
		"[web](https://example.com/#nothing) [mail](mailto:a@b.c)\n"+
		"[bad](docs/missing.md) [bad](docs/a.md#no-such) [bad](#nowhere)\n"+
		"```\n[in code](nowhere.md)\n```\n")
	write("docs/a.md", "# A\n\n## The port\n\n[ok](../README.md#install) [ok](b.md#b) [ok](#a)\n"+
		"[bad](README.md) [bad](../../outside.md) [bad](b.md#the-port)\n")
	write("docs/b.md", "# B\n\n[ok](a.md#the-port) [ok](../scripts/x.sh#L3)\n")
	write("docs/json/c.md", "# C\n\n[ok](../a.md#the-port) [ok](/README.md#install) [ok](#c)\n[bad](a.md) [bad](../b.md#c)\n")
	write("scripts/x.sh", "#!/bin/sh\n")
	got, err := BrokenLinks(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:7: docs/missing.md: no such file",
		"README.md:7: docs/a.md#no-such: no heading with the anchor #no-such",
		"README.md:7: #nowhere: no heading with the anchor #nowhere",
		"docs/a.md:6: README.md: no such file",
		"docs/a.md:6: ../../outside.md: outside the repository",
		"docs/a.md:6: b.md#the-port: no heading with the anchor #the-port",
		"docs/json/c.md:4: a.md: no such file",
		"docs/json/c.md:4: ../b.md#c: no heading with the anchor #c",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestBrokenLinksWithoutAReadme(t *testing.T) {
	if _, err := BrokenLinks(t.TempDir()); err == nil {
		t.Error("no error for a root without README.md")
	}
}

// TestDocsLinksResolve checks the project's own README.md and the
// Markdown under docs/, the JSON reference's pages too.
func TestDocsLinksResolve(t *testing.T) {
	docs, err := markdownUnder("../../docs")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	if !slices.Contains(docs, filepath.Join("../../docs", "json", "summary.md")) {
		t.Errorf("docs/json/summary.md is not among the documents checked: %q", docs)
	}
	broken, err := BrokenLinks("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Errorf("broken link: %s", b)
	}
}
