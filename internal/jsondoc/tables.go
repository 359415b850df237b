package jsondoc

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// TableHeader is the header of every field table: a table that names
// fields has these columns, in this order, so that a reader finds the
// same thing in the same place in every table, and the checks find the
// field, its type and when it is null or absent.
const TableHeader = "| field | type | unit | meaning | null or absent |"

// FieldTable is a marked table of fields: a Markdown table with
// TableHeader right after a comment <!-- fields: NAME -->.
type FieldTable struct {
	Name string
	// File is the document's name, for messages; Line the header's line
	// in it, from 1.
	File string
	Line int
	Rows []Row
}

// Row is one field of a FieldTable.
type Row struct {
	Line int
	// Field is the field's name, or its path (a.b) from the objects the
	// table describes.
	Field string
	// Type is the type cell: the JSON type first ("number", "string or
	// null", "array of strings", "object").
	Type string
	// NullOrAbsent is the last cell: when the field is null or absent.
	NullOrAbsent string
}

// TableAt names a field table and the paths of the objects it describes,
// in a shape's type: "" for the top, "nodes[]" for the objects of array
// nodes, "rails.*" for every field of rails. A "*" matches any one
// segment of a path.
type TableAt struct {
	Name string
	At   []string
}

var (
	tableMarker = regexp.MustCompile(`^<!-- fields: ([a-z0-9-]+) -->$`)
	delimiter   = regexp.MustCompile(`^\|(\s*:?-+:?\s*\|)+$`)
	fieldCell   = regexp.MustCompile("^`([a-z0-9_]+(?:\\.[a-z0-9_]+)*)`$")
)

// Tables returns the field tables of doc. Every table with TableHeader
// must be marked, and every marker followed by one, so that no table
// goes unchecked; each row names one field, in a code span.
func Tables(doc []byte, file string) ([]FieldTable, error) {
	lines := prose(doc)
	var out []FieldTable
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " ")
		if l == TableHeader {
			return nil, fmt.Errorf("%s:%d: a field table without a <!-- fields: NAME --> line right before it", file, i+1)
		}
		m := tableMarker.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if i+2 >= len(lines) || strings.TrimRight(lines[i+1], " ") != TableHeader || !delimiter.MatchString(strings.TrimSpace(lines[i+2])) {
			return nil, fmt.Errorf("%s:%d: <!-- fields: %s --> is not followed by a table with the header %s", file, i+1, m[1], TableHeader)
		}
		t := FieldTable{Name: m[1], File: file, Line: i + 2}
		for i += 3; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
			r, err := readRow(lines[i], i+1)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, i+1, err)
			}
			t.Rows = append(t.Rows, r)
		}
		i--
		out = append(out, t)
	}
	return out, nil
}

// readRow reads a row of a field table.
func readRow(line string, n int) (Row, error) {
	cells := splitRow(line)
	if len(cells) != 5 {
		return Row{}, fmt.Errorf("a row of %d cells, not 5", len(cells))
	}
	m := fieldCell.FindStringSubmatch(cells[0])
	if m == nil {
		return Row{}, fmt.Errorf("the first cell, %q, is not one field name in a code span", cells[0])
	}
	return Row{Line: n, Field: m[1], Type: cells[1], NullOrAbsent: cells[4]}, nil
}

// splitRow returns the cells of a table row, trimmed: its text between
// the pipes that are not escaped (\|).
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// CheckTables checks the tables of s against s.Type: each row must name a
// field of the type at one of its table's paths at least, with the
// field's JSON type first in its type cell; "null" in the type cell of
// every field that the type writes as null when not set (a pointer), and
// only where it can be (a pointer, slice or map); "absent" in the last
// cell of every field left out when empty (omitempty), and only there;
// and every field of the type, but those of s.Never and the values of
// maps, must be in a row. The error names the rows' lines and the
// fields.
func CheckTables(tables []FieldTable, s Shape) error {
	if len(s.Tables) == 0 {
		return nil
	}
	want, err := TypePaths(s.Type)
	if err != nil {
		return err
	}
	fields := map[string]goField{}
	walk(reflect.TypeOf(s.Type), "", fields, map[reflect.Type]bool{})
	documented := map[string]bool{}
	errs := map[string]bool{}
	names, at := tablePaths(s.Tables)
	for _, name := range names {
		t, ok := findTable(tables, name)
		if !ok {
			errs[fmt.Sprintf("no table <!-- fields: %s -->", name)] = true
			continue
		}
		for _, r := range t.Rows {
			matched := rowPaths(r, at[name], want)
			if len(matched) == 0 {
				errs[fmt.Sprintf("%s:%d: %v has no field %s where the table %s describes (%s)",
					t.File, r.Line, reflect.TypeOf(s.Type), r.Field, t.Name, strings.Join(at[name], ", "))] = true
			}
			byWhy := map[string][]string{}
			for _, p := range matched {
				documented[p] = true
				if why := disagree(r, fields[p]); why != "" {
					byWhy[why] = append(byWhy[why], p)
				}
			}
			for why, ps := range byWhy {
				errs[fmt.Sprintf("%s:%d: %s (%s): %s", t.File, r.Line, r.Field, some(ps), why)] = true
			}
		}
	}
	if m := undocumented(want, documented, s.Never); len(m) > 0 {
		errs[fmt.Sprintf("%v writes fields that no table of %s names: %s", reflect.TypeOf(s.Type), strings.Join(names, ", "), strings.Join(m, ", "))] = true
	}
	return joinErrors(errs)
}

// some names the first of paths, and how many more there are.
func some(paths []string) string {
	if len(paths) == 1 {
		return paths[0]
	}
	return fmt.Sprintf("%s and %d more", paths[0], len(paths)-1)
}

// tablePaths gathers the paths of each table that ts names, which may
// name a table more than once: a row need only name a field at one of
// them.
func tablePaths(ts []TableAt) (names []string, at map[string][]string) {
	at = map[string][]string{}
	for _, t := range ts {
		if _, ok := at[t.Name]; !ok {
			names = append(names, t.Name)
		}
		at[t.Name] = append(at[t.Name], t.At...)
	}
	return names, at
}

func findTable(tables []FieldTable, name string) (FieldTable, bool) {
	for _, t := range tables {
		if t.Name == name {
			return t, true
		}
	}
	return FieldTable{}, false
}

// rowPaths returns the paths of want that row r names at any of the
// paths at.
func rowPaths(r Row, at []string, want map[string]bool) []string {
	var out []string
	for _, a := range at {
		pattern := strings.Split(join(a, r.Field), ".")
		for p := range want {
			if matches(pattern, strings.Split(p, ".")) {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// matches says whether path's segments are pattern's, where a pattern's
// "*" is any segment.
func matches(pattern, path []string) bool {
	if len(pattern) != len(path) {
		return false
	}
	for i := range pattern {
		if pattern[i] != "*" && pattern[i] != path[i] {
			return false
		}
	}
	return true
}

// undocumented returns the paths of want that documented lacks, but
// those of never (and what is under them) and the values of maps, whose
// keys are data: a map's row tells what they hold.
func undocumented(want, documented map[string]bool, never []string) []string {
	var out []string
	for p := range want {
		if documented[p] || strings.HasSuffix(p, ".*") || slices.Contains(never, p) || under(p, never) {
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func joinErrors(errs map[string]bool) error {
	if len(errs) == 0 {
		return nil
	}
	var out []string
	for e := range errs {
		out = append(out, e)
	}
	sort.Strings(out)
	return fmt.Errorf("%s", strings.Join(out, "\n"))
}

// UnknownTables returns the names of the tables, among those whose name
// matches, that no shape lists: a table nothing checks.
func UnknownTables(tables []FieldTable, shapes []Shape, match func(name string) bool) []string {
	known := map[string]bool{}
	for _, s := range shapes {
		for _, t := range s.Tables {
			known[t.Name] = true
		}
	}
	var out []string
	for _, t := range tables {
		if match(t.Name) && !known[t.Name] {
			out = append(out, fmt.Sprintf("%s (%s:%d)", t.Name, t.File, t.Line))
		}
	}
	return out
}

// Under returns tables with their paths put under prefix: the tables of
// a type, where another type holds it ("nodes[]", "results[].run.summary").
func Under(prefix string, tables ...TableAt) []TableAt {
	out := make([]TableAt, len(tables))
	for i, t := range tables {
		out[i] = TableAt{Name: t.Name}
		for _, a := range t.At {
			if a == "" {
				a = prefix
			} else {
				a = join(prefix, a)
			}
			out[i].At = append(out[i].At, a)
		}
	}
	return out
}
