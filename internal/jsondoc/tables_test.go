package jsondoc

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type reading struct {
	Name  string   `json:"name"`
	Count int      `json:"count"`
	Watts *float64 `json:"watts"`
	Tags  []string `json:"tags"`
	Sub   *part    `json:"sub,omitempty"`
	Parts []part   `json:"parts"`
	Notes string   `json:"-"`
}

type part struct {
	X  float64 `json:"x"`
	On bool    `json:"on"`
}

const tablesDoc = "# Reading\n\n<!-- fields: reading -->\n" + TableHeader + "\n|---|---|---|---|---|\n" +
	"| `name` | string | | its name | |\n" +
	"| `count` | integer | windows | how many | |\n" +
	"| `watts` | number or null | W | the power | null when unknown |\n" +
	"| `tags` | array of strings | | a \\| b | |\n" +
	"| `sub` | object ([part](#part)) | | one part | absent without parts |\n" +
	"| `parts` | array of objects | | every part | |\n" +
	"\n## part\n\n<!-- fields: part -->\n" + TableHeader + "\n|:--|:--|--|--|--|\n" +
	"| `x` | number | J | the energy | |\n" +
	"| `on` | boolean | | whether on | |\n" +
	"\n```\n" + TableHeader + "\n```\n"

var readingShape = Shape{Type: reading{}, Tables: []TableAt{{Name: "reading", At: []string{""}}, {Name: "part", At: []string{"sub", "parts[]"}}}}

func TestTablesReadsTheMarkedTables(t *testing.T) {
	got, err := Tables([]byte(tablesDoc), "r.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "reading" || got[0].Line != 4 || len(got[0].Rows) != 6 || got[1].Name != "part" || len(got[1].Rows) != 2 {
		t.Fatalf("got %+v", got)
	}
	want := Row{Line: 9, Field: "tags", Type: "array of strings", NullOrAbsent: ""}
	if got[0].Rows[3] != want {
		t.Errorf("the row of tags: got %+v, want %+v", got[0].Rows[3], want)
	}
	if r := got[0].Rows[4]; r.Type != "object ([part](#part))" || r.NullOrAbsent != "absent without parts" {
		t.Errorf("the row of sub: got %+v", r)
	}
}

func TestTablesRefusesWhatWouldGoUnchecked(t *testing.T) {
	head := TableHeader + "\n|---|---|---|---|---|\n"
	for _, tc := range []struct{ name, doc, err string }{
		{"a field table without a marker", "# T\n\n" + head + "| `a` | string | | | |\n", "r.md:3: a field table without"},
		{"a marker without a table", "# T\n\n<!-- fields: t -->\n\ntext\n", "r.md:3: <!-- fields: t --> is not followed"},
		{"a marker before another table", "<!-- fields: t -->\n| a | b |\n|---|---|\n", "is not followed"},
		{"a row of four cells", "<!-- fields: t -->\n" + head + "| `a` | string | | |\n", "r.md:4: a row of 4 cells"},
		{"a row whose field is no code span", "<!-- fields: t -->\n" + head + "| a | string | | | |\n", "is not one field name"},
		{"a row of two fields", "<!-- fields: t -->\n" + head + "| `a`, `b` | string | | | |\n", "is not one field name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Tables([]byte(tc.doc), "r.md")
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got error %v, want one with %q", err, tc.err)
			}
		})
	}
}

func TestSplitRow(t *testing.T) {
	got := splitRow("| `a` | x \\| y |  | last |")
	want := []string{"`a`", "x | y", "", "last"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCheckTables(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to string
		shape    func(Shape) Shape
		err      string
	}{
		{name: "tables that name every field as it is written pass"},
		{name: "a field no row names fails", from: "| `on` | boolean | | whether on | |\n",
			err: "writes fields that no table of reading, part names: parts[].on, sub.on"},
		{name: "a row of a field the type lacks fails", from: "| `on` |", to: "| `off` |",
			err: "r.md:19: jsondoc.reading has no field off where the table part describes (sub, parts[])"},
		{name: "a type that is not the field's fails", from: "| `count` | integer", to: "| `count` | number",
			err: "r.md:7: count (count): the type cell says number, but it is written as integer"},
		{name: "a pointer not said to be null fails", from: "| `watts` | number or null", to: "| `watts` | number",
			err: `watts (watts): it is null when not set: the type cell must say "or null"`},
		{name: "a pointer whose null is not explained fails", from: "| null when unknown |", to: "| |",
			err: "watts (watts): it is null when not set: the last cell must say when"},
		{name: "a field said to be null that cannot be fails", from: "| `x` | number |", to: "| `x` | number or null |",
			err: "x (parts[].x and 1 more): it is never null"},
		{name: "a slice may be said to be null", from: "| `tags` | array of strings | | a \\| b | |", to: "| `tags` | array of strings, or null | | a \\| b | null without tags |"},
		{name: "an omitempty field not said to be absent fails", from: "| absent without parts |", to: "| |",
			err: "sub (sub): it is left out when empty: the last cell must say when it is absent"},
		{name: "a field said to be absent that never is fails", from: "| `name` | string | | its name | |", to: "| `name` | string | | its name | absent never |",
			err: "name (name): it is never left out"},
		{name: "a field never written need not be named", from: "| `on` | boolean | | whether on | |\n",
			shape: func(s Shape) Shape { s.Never = []string{"sub", "parts[].on"}; return s }},
		{name: "a table that is not there fails",
			shape: func(s Shape) Shape { s.Tables = append(s.Tables, TableAt{Name: "gone"}); return s }, err: "no table <!-- fields: gone -->"},
		{name: "a table named twice needs its rows at one of its paths only",
			shape: func(s Shape) Shape {
				s.Tables = append(s.Tables, TableAt{Name: "part", At: []string{"nowhere"}})
				return s
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := tablesDoc
			if tc.from != "" {
				if !strings.Contains(doc, tc.from) {
					t.Fatalf("no %q in the document", tc.from)
				}
				doc = strings.Replace(doc, tc.from, tc.to, 1)
			}
			tables, err := Tables([]byte(doc), "r.md")
			if err != nil {
				t.Fatal(err)
			}
			s := readingShape
			if tc.shape != nil {
				s = tc.shape(s)
			}
			err = CheckTables(tables, s)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("got error %v, want one with %q", err, tc.err)
			}
		})
	}
}

func TestUnknownTablesAreThoseNoShapeNames(t *testing.T) {
	tables, err := Tables([]byte(tablesDoc), "r.md")
	if err != nil {
		t.Fatal(err)
	}
	if u := UnknownTables(tables, []Shape{{Tables: []TableAt{{Name: "reading"}}}}, func(string) bool { return true }); strings.Join(u, " ") != "part (r.md:16)" {
		t.Errorf("got %q, want only part", u)
	}
	if u := UnknownTables(tables, nil, func(n string) bool { return n != "part" }); strings.Join(u, " ") != "reading (r.md:4)" {
		t.Errorf("only those that match: got %q, want only reading", u)
	}
}

// TestWalkKnowsEveryPathThatTypePathsFinds holds the two readings of a
// type together: every path that a filled value writes has its Go field.
func TestWalkKnowsEveryPathThatTypePathsFinds(t *testing.T) {
	for _, v := range []any{Base{}, outer{}, reading{}} {
		want, err := TypePaths(v)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]goField{}
		walk(reflect.TypeOf(v), "", got, map[reflect.Type]bool{})
		for p := range want {
			if _, ok := got[p]; !ok && !strings.HasSuffix(p, ".*") {
				t.Errorf("%T: no Go field for %s", v, p)
			}
		}
	}
	got := map[string]goField{}
	walk(reflect.TypeOf(outer{}), "", got, map[reflect.Type]bool{})
	for p, want := range map[string]goField{
		"a":        {kind: "string"},
		"n":        {kind: "integer"},
		"opt":      {kind: "object", pointer: true, nilable: true, omitempty: true},
		"opt.x":    {kind: "number"},
		"tags":     {kind: "object", nilable: true},
		"meta.*.x": {kind: "number"},
		"kids":     {kind: "array", nilable: true, omitempty: true},
	} {
		if got[p] != want {
			t.Errorf("%s: got %+v, want %+v", p, got[p], want)
		}
	}
}

func TestUnder(t *testing.T) {
	got := Under("nodes[]", TableAt{Name: "a", At: []string{"", "rails.*"}})
	want := []TableAt{{Name: "a", At: []string{"nodes[]", "nodes[].rails.*"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestOfTheCommands(t *testing.T) {
	for name, want := range map[string]bool{"bench": true, "bench-ioreport": true, "llm-spread": true, "samples-window": true,
		"version": true, "run": false, "summary-source": false, "serve-status": false, "benchmark": false, "watch-line": false} {
		if OfTheCommands(name) != want {
			t.Errorf("OfTheCommands(%q) = %v, want %v", name, !want, want)
		}
	}
}

func TestReadReferenceReadsTheIndexAndEveryPage(t *testing.T) {
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
	write("docs/json.md", "# JSON reference\n\n[reading](json/reading.md)\n")
	write("docs/json/reading.md", tablesDoc+"\n<!-- json: reading -->\n```json\n{\"name\": \"x\"}\n```\n")
	write("docs/json/other.md", "# Other\n\n<!-- json: other -->\n```json\n{}\n```\n")
	ref, err := ReadReference(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ref.Examples {
		got = append(got, e.Name+" "+e.where())
	}
	for _, tb := range ref.Tables {
		got = append(got, tb.Name+" "+tb.File)
	}
	want := []string{"other docs/json/other.md:5", "reading docs/json/reading.md:27", "reading docs/json/reading.md", "part docs/json/reading.md"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	write("docs/json/twice.md", "<!-- fields: part -->\n"+TableHeader+"\n|---|---|---|---|---|\n")
	if _, err := ReadReference(root); err == nil || !strings.Contains(err.Error(), "docs/json/twice.md:2: a second table part (the first is at docs/json/reading.md:16)") {
		t.Errorf("two tables of one name: got %v", err)
	}
	write("docs/json/twice.md", "```json\n{}\n```\n")
	if _, err := ReadReference(root); err == nil || !strings.Contains(err.Error(), "docs/json/twice.md: line 1: a json block without") {
		t.Errorf("an unmarked example: got %v", err)
	}
}
