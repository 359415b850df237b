package jsondoc

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// written finds what a line of an example writes: the file after -o,
// --output, --samples, --plot, an --export-... flag or a redirection.
var written = regexp.MustCompile(`(?:^|\s)(?:-o|--output|--output-file|--samples|--plot|--export-[a-z]+|>)\s+['"]?([^\s'"|;&)]+)`)

// aFile is a plain file name in the folder the example runs in, as
// trace.plist: no folder, no variable, no placeholder such as FILE.json.
var aFile = regexp.MustCompile(`^[a-z0-9_][A-Za-z0-9_.-]*\.[a-z]+$`)

// exampleWrites returns the files that the lines of doc's fenced code
// blocks write into the folder they run in, each with where it is written.
func exampleWrites(doc []byte, name string) map[string]string {
	out := map[string]string{}
	text := prose(doc)
	for i, l := range strings.Split(string(doc), "\n") {
		if text[i] != "" || fence.MatchString(l) {
			continue
		}
		for _, m := range written.FindAllStringSubmatch(l, -1) {
			if aFile.MatchString(m[1]) {
				out[m[1]] = name + ":" + strconv.Itoa(i+1)
			}
		}
	}
	return out
}

func TestExampleWrites(t *testing.T) {
	doc := "text -o prose.json\n```\n" +
		"sudo exopower run -o result.json -- ./bench.sh\n" +
		"exopower report --samples csv trace.plist > windows.csv\n" +
		"exopower llm --export-markdown llm.md --plot 'llm.png' URL\n" +
		"go build -o /tmp/fake ./x; exopower plot IN -o FILE.svg; x > \"${fpath[1]}/_exopower\"; y -o - > /dev/null\n" +
		"```\n"
	got := exampleWrites([]byte(doc), "d.md")
	want := map[string]string{"result.json": "d.md:3", "windows.csv": "d.md:4", "llm.md": "d.md:5", "llm.png": "d.md:5"}
	if len(got) != len(want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
}

// The files that the README's and the docs' examples write where they
// run (-o trace.plist, --samples windows.csv, > llm.json) are ignored by
// git, so that trying them in the clone leaves it as it was.
func TestTheFilesTheExamplesWriteAreIgnored(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, err := markdownUnder(filepath.Join(root, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]string{}
	for _, doc := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, doc)
		for f, at := range exampleWrites(b, filepath.ToSlash(rel)) {
			writes[f] = at
		}
	}
	for _, f := range []string{"trace.plist", "result.json", "llm.json"} {
		if _, ok := writes[f]; !ok {
			t.Errorf("no example found to write %s: %q", f, writes)
		}
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(ignore), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, strings.TrimPrefix(l, "/"))
		}
	}
	names := make([]string, 0, len(writes))
	for f := range writes {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		if !slices.ContainsFunc(patterns, func(p string) bool { ok, _ := filepath.Match(p, f); return ok }) {
			t.Errorf("%s: an example writes %s, which .gitignore does not ignore: add /%s", writes[f], f, f)
		}
	}
}
