package jsondoc

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Root is the repository's root, as the tests of the JSON's types see it
// from their packages two levels below it.
const Root = "../.."

// Reference is the JSON reference: the marked examples and field tables
// of its documents.
type Reference struct {
	Examples []Example
	Tables   []FieldTable
}

// ReadReference reads the JSON reference under root: its index,
// docs/json.md, and each page of docs/json/. Each file's names are from
// root, in messages. Two tables may not share a name, since a shape
// names its tables by it.
func ReadReference(root string) (Reference, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "json", "*.md"))
	if err != nil {
		return Reference{}, err
	}
	sort.Strings(pages)
	var ref Reference
	seen := map[string]string{}
	for _, path := range append([]string{filepath.Join(root, "docs", "json.md")}, pages...) {
		doc, err := os.ReadFile(path)
		if err != nil {
			return Reference{}, err
		}
		name, err := filepath.Rel(root, path)
		if err != nil {
			return Reference{}, err
		}
		name = filepath.ToSlash(name)
		examples, err := Examples(doc, "")
		if err != nil {
			return Reference{}, fmt.Errorf("%s: %w", name, err)
		}
		for i := range examples {
			examples[i].File = name
		}
		tables, err := Tables(doc, name)
		if err != nil {
			return Reference{}, err
		}
		for _, t := range tables {
			if other, ok := seen[t.Name]; ok {
				return Reference{}, fmt.Errorf("%s:%d: a second table %s (the first is at %s)", name, t.Line, t.Name, other)
			}
			seen[t.Name] = fmt.Sprintf("%s:%d", name, t.Line)
		}
		ref.Examples = append(ref.Examples, examples...)
		ref.Tables = append(ref.Tables, tables...)
	}
	return ref, nil
}

// OfTheCommands says whether the example or table named name shows JSON
// that cmd/exopower's types write (bench, llm, compare, top, --samples
// and version), which its test checks; internal/wire's test checks the rest (the
// summaries, the lines of watch --json and serve's API), so that every
// marker of the reference is checked by one of the two.
func OfTheCommands(name string) bool {
	for _, p := range []string{"bench", "llm", "compare", "samples", "top", "version"} {
		if name == p || strings.HasPrefix(name, p+"-") {
			return true
		}
	}
	return false
}

// TestReference checks the examples and the tables of the JSON reference
// against shapes, each shape a subtest, and fails t when an example or a
// table that ours names is checked by no shape.
func TestReference(t *testing.T, shapes []Shape, ours func(name string) bool) {
	t.Helper()
	ref, err := ReadReference(Root)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shapes {
		t.Run(strings.Join(s.Names, ","), func(t *testing.T) {
			if err := Check(ref.Examples, s); err != nil {
				t.Error(err)
			}
			if err := CheckTables(ref.Tables, s); err != nil {
				t.Error(err)
			}
		})
	}
	if u := Unknown(ref.Examples, shapes, ours); len(u) > 0 {
		t.Errorf("examples that no test checks: %s", strings.Join(u, ", "))
	}
	if u := UnknownTables(ref.Tables, shapes, ours); len(u) > 0 {
		t.Errorf("field tables that no test checks: %s", strings.Join(u, ", "))
	}
}
