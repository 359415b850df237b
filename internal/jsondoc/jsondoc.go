// Package jsondoc reads the JSON examples and the field tables of a
// Markdown document and checks them against the Go types that write them,
// so that the JSON reference (docs/json.md and docs/json/) cannot drift
// from the code: an example may hold no field that its type lacks, and
// its type no field that the examples leave out; a table names every
// field of its type, and no other, with its JSON type and whether it may
// be null or absent.
package jsondoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Example is one marked JSON block: a fenced ```json block right after a
// comment <!-- json: NAME -->.
type Example struct {
	Name string
	// File is the document's name, for messages; Line the block's first
	// line in it, from 1.
	File string
	Line int
	JSON []byte
}

// where is the example's place, for messages: "FILE:LINE", or "line
// LINE" in a document without a name.
func (e Example) where() string {
	if e.File == "" {
		return fmt.Sprintf("line %d", e.Line)
	}
	return fmt.Sprintf("%s:%d", e.File, e.Line)
}

var marker = regexp.MustCompile(`^<!-- json: ([a-z0-9-]+) -->$`)

// Examples returns the marked JSON blocks of the section that the heading
// line (such as "## JSON reference") opens, up to the next heading of
// its level or higher, or of the whole document when heading is "".
// Every ```json block there must be marked, and every marker followed by
// one, so that no example goes unchecked.
func Examples(doc []byte, heading string) ([]Example, error) {
	lines := strings.Split(string(doc), "\n")
	start, level := -1, 0
	for i, l := range lines {
		if heading != "" && strings.TrimRight(l, " ") == heading {
			start, level = i, strings.Index(heading, " ")
			break
		}
	}
	if heading != "" && start < 0 {
		return nil, fmt.Errorf("no section %q", heading)
	}
	var out []Example
	name, named := "", 0
	for i := start + 1; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " ")
		if h := strings.Index(l, " "); h > 0 && h <= level && strings.Trim(l[:h], "#") == "" {
			break
		}
		if m := marker.FindStringSubmatch(l); m != nil {
			name, named = m[1], i+1
			continue
		}
		if l == "```json" {
			if name == "" || named != i {
				return nil, fmt.Errorf("line %d: a json block without a <!-- json: NAME --> line right before it", i+1)
			}
			end := i + 1
			for end < len(lines) && strings.TrimRight(lines[end], " ") != "```" {
				end++
			}
			if end == len(lines) {
				return nil, fmt.Errorf("line %d: the json block never ends", i+1)
			}
			out = append(out, Example{Name: name, Line: i + 2, JSON: []byte(strings.Join(lines[i+1:end], "\n"))})
			name, i = "", end
			continue
		}
		if name != "" && l != "" {
			return nil, fmt.Errorf("line %d: <!-- json: %s --> is not followed by a ```json block", named, name)
		}
	}
	if name != "" {
		return nil, fmt.Errorf("line %d: <!-- json: %s --> is not followed by a ```json block", named, name)
	}
	return out, nil
}

// Decode decodes one JSON value from data into v, refusing a field that
// v's type does not have and anything after the value.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

// Paths returns the field paths of a JSON value: "a", "a.b", and "a[].b"
// for a field b of the objects in array a (of any of them).
func Paths(data []byte) (map[string]bool, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	collect(v, "", out)
	return out, nil
}

func collect(v any, prefix string, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := join(prefix, k)
			out[p] = true
			collect(x, p, out)
		}
	case []any:
		for _, x := range v {
			collect(x, prefix+"[]", out)
		}
	}
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// TypePaths returns the field paths that a value of v's type writes when
// every field is set: every pointer set, every slice of one element,
// every map of one key, written "*", every value not zero (so that
// omitempty keeps it). A slice, map or pointer whose element type is
// already being filled further out is left empty, which ends recursive
// types.
func TypePaths(v any) (map[string]bool, error) {
	t := reflect.TypeOf(v)
	x := reflect.New(t).Elem()
	fill(x, map[reflect.Type]bool{})
	b, err := json.Marshal(x.Interface())
	if err != nil {
		return nil, fmt.Errorf("marshal a filled %v: %w", t, err)
	}
	return Paths(b)
}

func fill(v reflect.Value, stack map[reflect.Type]bool) {
	switch v.Kind() {
	case reflect.Struct:
		stack[v.Type()] = true
		defer delete(stack, v.Type())
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Anonymous && f.Type.Kind() == reflect.Pointer {
				v.Field(i).Set(reflect.New(f.Type.Elem()))
				fill(v.Field(i).Elem(), stack)
				continue
			}
			fill(v.Field(i), stack)
		}
	case reflect.Pointer:
		if !stack[v.Type().Elem()] {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), stack)
		}
	case reflect.Slice:
		if !stack[v.Type().Elem()] {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			fill(v.Index(0), stack)
		}
	case reflect.Map:
		if v.Type().Key().Kind() == reflect.String && !stack[v.Type().Elem()] {
			v.Set(reflect.MakeMap(v.Type()))
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e, stack)
			v.SetMapIndex(reflect.ValueOf("*").Convert(v.Type().Key()), e)
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	}
}

// Compare returns the paths of want (a type's, from TypePaths) that got
// (the examples', from Paths) lacks, and those of got that want lacks.
// A map's keys are data, not fields: got's keys under a map of want are
// read as its "*", and need not be there at all. Under the paths in
// elsewhere, documented by another example, only the path itself must be
// in got, not what is under it.
func Compare(want, got map[string]bool, elsewhere []string) (missing, extra []string) {
	norm := map[string]bool{}
	for p := range got {
		norm[wildcard(p, want)] = true
	}
	for p := range want {
		if !norm[p] && !strings.Contains(p, "*") && !under(p, elsewhere) {
			missing = append(missing, p)
		}
	}
	for p := range norm {
		if !want[p] {
			extra = append(extra, p)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return missing, extra
}

// wildcard writes p with each key of a map of want as "*".
func wildcard(p string, want map[string]bool) string {
	segs := strings.Split(p, ".")
	for i := 1; i < len(segs); i++ {
		if want[strings.Join(segs[:i], ".")+".*"] {
			if strings.HasSuffix(segs[i], "[]") {
				segs[i] = "*[]"
			} else {
				segs[i] = "*"
			}
		}
	}
	return strings.Join(segs, ".")
}

func under(p string, elsewhere []string) bool {
	for _, e := range elsewhere {
		if strings.HasPrefix(p, e+".") || strings.HasPrefix(p, e+"[]") {
			return true
		}
	}
	return false
}

// Shape is one JSON shape of the program: the examples that show it, the
// type that writes it, and the paths that other examples document.
type Shape struct {
	// Names are the markers of the examples, each of which must be in
	// the document; together they must hold every field of Type.
	Names []string
	// Type is a value of the type that writes the shape.
	Type any
	// Elsewhere are paths whose fields another shape's examples show:
	// the path itself must be in the examples, not what is under it.
	Elsewhere []string
	// Never are paths of Type that this shape never writes (a field of an
	// embedded type, left out by omitempty): neither they nor what is
	// under them need be in the examples, nor in the tables.
	Never []string
	// Tables are the field tables that name Type's fields, each at the
	// paths of the objects it describes; together they must name every
	// field of Type (but those of Never). A shape whose type another
	// shape's tables describe has none.
	Tables []TableAt
}

// Check decodes each of s's examples into s.Type's type, refusing an
// unknown field, and compares the fields of all of them together with
// that type's. The error names the examples' lines and the fields.
func Check(examples []Example, s Shape) error {
	t := reflect.TypeOf(s.Type)
	got := map[string]bool{}
	var errs []string
	for _, name := range s.Names {
		found := false
		for _, e := range examples {
			if e.Name != name {
				continue
			}
			found = true
			if err := Decode(e.JSON, reflect.New(t).Interface()); err != nil {
				errs = append(errs, fmt.Sprintf("the example %s (%s) is not a %v: %v", name, e.where(), t, err))
			}
			p, err := Paths(e.JSON)
			if err != nil {
				return fmt.Errorf("the example %s (%s): %w", name, e.where(), err)
			}
			for k := range p {
				got[k] = true
			}
		}
		if !found {
			errs = append(errs, fmt.Sprintf("no example <!-- json: %s -->", name))
		}
	}
	want, err := TypePaths(s.Type)
	if err != nil {
		return err
	}
	for p := range want {
		if slices.Contains(s.Never, p) || under(p, s.Never) {
			delete(want, p)
		}
	}
	missing, extra := Compare(want, got, s.Elsewhere)
	if len(missing) > 0 {
		errs = append(errs, fmt.Sprintf("%v writes fields that no example of %s shows: %s", t, strings.Join(s.Names, ", "), strings.Join(missing, ", ")))
	}
	if len(extra) > 0 {
		errs = append(errs, fmt.Sprintf("the examples %s show fields that %v does not write: %s", strings.Join(s.Names, ", "), t, strings.Join(extra, ", ")))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// Unknown returns the names of the examples, among those whose name
// matches, that no shape lists: an example nothing checks.
func Unknown(examples []Example, shapes []Shape, match func(name string) bool) []string {
	known := map[string]bool{}
	for _, s := range shapes {
		for _, n := range s.Names {
			known[n] = true
		}
	}
	var out []string
	for _, e := range examples {
		if match(e.Name) && !known[e.Name] {
			out = append(out, fmt.Sprintf("%s (%s)", e.Name, e.where()))
		}
	}
	return out
}
