package jsondoc

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// BrokenLinks returns the relative links of root's README.md and the
// Markdown files under docs/ (docs/json/ too) that do not resolve, one
// "FILE:LINE: TARGET: why" each, in the order of the files' paths and
// their lines. A link resolves when
// the file it names exists (a path relative to the linking document, or
// to root when it starts with "/") and, for "#anchor" into a Markdown
// file (or the document itself), when that file has a heading whose
// anchor, by GitHub's rules, is the anchor. Links with a scheme
// (https:, mailto:) are not checked, nor is anything inside code.
func BrokenLinks(root string) ([]string, error) {
	docs, err := markdownUnder(filepath.Join(root, "docs"))
	if err != nil {
		return nil, err
	}
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)
	anchorsOf := map[string]map[string]bool{}
	readAnchors := func(path string) (map[string]bool, error) {
		if a, ok := anchorsOf[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		anchorsOf[path] = anchors(b)
		return anchorsOf[path], nil
	}
	var out []string
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			return nil, err
		}
		name, err := filepath.Rel(root, doc)
		if err != nil {
			return nil, err
		}
		name = filepath.ToSlash(name)
		for _, l := range links(b) {
			if why := check(root, doc, l.target, readAnchors); why != "" {
				out = append(out, fmt.Sprintf("%s:%d: %s: %s", name, l.line, l.target, why))
			}
		}
	}
	return out, nil
}

// markdownUnder returns the Markdown files under dir, at any depth, in
// the order of their paths; none when there is no dir.
func markdownUnder(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == dir {
			return fs.SkipDir
		}
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.EqualFold(filepath.Ext(path), ".md") {
			out = append(out, path)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// check says why target, a link in the document at path doc, does not
// resolve, or "" when it does.
func check(root, doc, target string, readAnchors func(string) (map[string]bool, error)) string {
	if scheme.MatchString(target) {
		return ""
	}
	path, fragment, _ := strings.Cut(target, "#")
	path, err := url.PathUnescape(path)
	if err != nil {
		return "not a valid path: " + err.Error()
	}
	fragment, err = url.PathUnescape(fragment)
	if err != nil {
		return "not a valid anchor: " + err.Error()
	}
	file := doc
	if path != "" {
		base := filepath.Dir(doc)
		if strings.HasPrefix(path, "/") {
			base = root
		}
		file = filepath.Join(base, filepath.FromSlash(path))
		if rel, err := filepath.Rel(root, file); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "outside the repository"
		}
		if _, err := os.Stat(file); err != nil {
			return "no such file"
		}
	}
	if fragment == "" || !strings.EqualFold(filepath.Ext(file), ".md") {
		return ""
	}
	a, err := readAnchors(file)
	if err != nil {
		return err.Error()
	}
	if !a[fragment] {
		return "no heading with the anchor #" + fragment
	}
	return ""
}

var (
	scheme   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	heading  = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$`)
	closing  = regexp.MustCompile(`(?:^|[ \t]+)#+$`)
	fence    = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	inline   = regexp.MustCompile(`!?\[([^\]]*)\]\(\s*<?([^\s)>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDef   = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	htmlTag  = regexp.MustCompile(`<[^>]*>`)
	markLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

type link struct {
	line   int
	target string
}

// links returns the targets of the Markdown links of doc, inline
// ([text](target), images too) and reference definitions ([ref]: target),
// leaving out fenced code blocks and code spans.
func links(doc []byte) []link {
	var out []link
	for i, l := range prose(doc) {
		if m := refDef.FindStringSubmatch(l); m != nil {
			out = append(out, link{i + 1, m[1]})
			continue
		}
		for _, m := range inline.FindAllStringSubmatch(withoutCode(l), -1) {
			out = append(out, link{i + 1, m[2]})
		}
	}
	return out
}

// anchors returns the anchors that GitHub gives doc's headings.
func anchors(doc []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(doc) {
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := slug(closing.ReplaceAllString(m[2], ""))
		a := s
		if n := seen[s]; n > 0 {
			a = s + "-" + strconv.Itoa(n)
		}
		seen[s]++
		out[a] = true
	}
	return out
}

// slug is the anchor GitHub makes of a heading's text: the text as shown
// (no code marks, links as their text, no emphasis marks or HTML),
// lower-cased, with everything but letters, digits, "-", "_" and spaces
// taken out, and each space made a "-".
func slug(text string) string {
	text = markLink.ReplaceAllString(text, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	text = strings.NewReplacer("`", "", "*", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// prose returns doc's lines with those of fenced code blocks, fences
// included, made empty, so that line numbers stay as they are.
func prose(doc []byte) []string {
	lines := strings.Split(string(doc), "\n")
	open := ""
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		lines[i] = l
		m := fence.FindStringSubmatch(l)
		switch {
		case open == "" && m != nil:
			open = m[1]
		case open != "" && m != nil && m[1][0] == open[0] && len(m[1]) >= len(open) && strings.TrimSpace(l) == m[1]:
			open = ""
		case open == "":
			continue
		}
		lines[i] = ""
	}
	return lines
}

// withoutCode returns line with its code spans taken out: a run of
// backticks up to the next run of as many.
func withoutCode(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := run(line, i)
		end := -1
		for j := i + n; j < len(line); {
			if line[j] != '`' {
				j++
				continue
			}
			m := run(line, j)
			if m == n {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 {
			// No closing run: the backticks are text.
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		i = end
	}
	return b.String()
}

// run returns the number of backticks from line[i] on.
func run(line string, i int) int {
	n := 0
	for i+n < len(line) && line[i+n] == '`' {
		n++
	}
	return n
}
