package jsondoc

import (
	"reflect"
	"strings"
)

// goField is what a Go field says of the JSON it writes.
type goField struct {
	// kind is the JSON type: string, number, integer, boolean, object or
	// array.
	kind string
	// pointer is a pointer, written as null when not set.
	pointer bool
	// nilable may be written as null: a pointer, a slice or a map.
	nilable bool
	// omitempty is left out when empty.
	omitempty bool
}

// walk records in out the field of every JSON path of a value of type t
// under prefix, as encoding/json names them: the tag's name, the fields
// of an embedded struct among the struct's own, "a[].b" for a field b of
// the elements of a slice a, "m.*.b" for a map's values. A struct already
// being walked further out is not walked again, which ends recursive
// types.
func walk(t reflect.Type, prefix string, out map[string]goField, stack map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if stack[t] {
			return
		}
		stack[t] = true
		defer delete(stack, t)
		walkFields(t, prefix, out, stack)
	case reflect.Slice, reflect.Array:
		walk(t.Elem(), prefix+"[]", out, stack)
	case reflect.Map:
		walk(t.Elem(), join(prefix, "*"), out, stack)
	}
}

func walkFields(t reflect.Type, prefix string, out map[string]goField, stack map[reflect.Type]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			walkFields(ft, prefix, out, stack)
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := join(prefix, name)
		out[p] = goField{
			kind:      jsonKind(ft),
			pointer:   f.Type.Kind() == reflect.Pointer,
			nilable:   nilable(f.Type.Kind()),
			omitempty: strings.Contains(","+opts+",", ",omitempty,"),
		}
		walk(f.Type, p, out, stack)
	}
}

func nilable(k reflect.Kind) bool {
	return k == reflect.Pointer || k == reflect.Slice || k == reflect.Map
}

// jsonKind is the JSON type that encoding/json writes a value of t as.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return t.Kind().String()
}

// disagree says how row r disagrees with the Go field f that it names,
// or "" when it does not.
func disagree(r Row, f goField) string {
	typ := strings.ToLower(strings.ReplaceAll(r.Type, "`", ""))
	absent := strings.ToLower(r.NullOrAbsent)
	first, _, _ := strings.Cut(typ, " ")
	first = strings.Trim(first, ",;:")
	switch {
	case f.kind == "":
		return "no Go field writes it"
	case first != f.kind:
		return "the type cell says " + first + ", but it is written as " + f.kind
	case f.pointer && !f.omitempty && !strings.Contains(typ, "null"):
		return `it is null when not set: the type cell must say "or null"`
	case f.pointer && !f.omitempty && !strings.Contains(absent, "null"):
		return "it is null when not set: the last cell must say when"
	case !f.nilable && (strings.Contains(typ, "null") || strings.Contains(absent, "null")):
		return "it is never null"
	case f.omitempty && !strings.Contains(absent, "absent"):
		return "it is left out when empty: the last cell must say when it is absent"
	case !f.omitempty && strings.Contains(absent, "absent"):
		return "it is never left out"
	}
	return ""
}
