package jsondoc

import (
	"reflect"
	"strings"
	"testing"
)

const doc = "# t\n\n## JSON reference\n\nText.\n\n<!-- json: one -->\n```json\n{\"a\": 1}\n```\n\n" +
	"### sub\n\n<!-- json: two -->\n```json\n{\"b\": [\n  2\n]}\n```\n\n## Next\n\n```json\n{\"c\": 3}\n```\n"

func TestExamplesReadsTheMarkedBlocksOfTheSectionOnly(t *testing.T) {
	got, err := Examples([]byte(doc), "## JSON reference")
	if err != nil {
		t.Fatal(err)
	}
	want := []Example{{Name: "one", Line: 9, JSON: []byte(`{"a": 1}`)}, {Name: "two", Line: 16, JSON: []byte("{\"b\": [\n  2\n]}")}}
	if !reflect.DeepEqual(got, want) {
		for _, e := range got {
			t.Logf("got %s at line %d: %s", e.Name, e.Line, e.JSON)
		}
		t.Errorf("got %d examples, want %s at line 9 and %s at line 16", len(got), want[0].JSON, want[1].JSON)
	}
}

func TestExamplesOfTheWholeDocument(t *testing.T) {
	got, err := Examples([]byte(strings.Replace(doc, "```json\n{\"c\": 3}", "<!-- json: three -->\n```json\n{\"c\": 3}", 1)), "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	if strings.Join(names, " ") != "one two three" {
		t.Errorf("got the examples %q, want one, two and three", names)
	}
	if _, err := Examples([]byte(doc), ""); err == nil || !strings.Contains(err.Error(), "a json block without") {
		t.Errorf("an unmarked block anywhere: got %v", err)
	}
}

func TestExamplesRefusesWhatWouldGoUnchecked(t *testing.T) {
	for _, tc := range []struct{ name, doc, err string }{
		{"a json block without a marker", "## J\n\n```json\n{}\n```\n", "line 3: a json block without"},
		{"a marker with text before its block", "## J\n\n<!-- json: x -->\nsee:\n```json\n{}\n```\n", "json: x --> is not followed"},
		{"a marker at the end of the section", "## J\n\n<!-- json: x -->\n\n## K\n", "json: x --> is not followed"},
		{"a block that never ends", "## J\n\n<!-- json: x -->\n```json\n{}\n", "never ends"},
		{"no such section", "## K\n", `no section "## J"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Examples([]byte(tc.doc), "## J")
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got error %v, want one with %q", err, tc.err)
			}
		})
	}
}

type inner struct {
	X float64 `json:"x"`
}

type Base struct {
	A    string            `json:"a"`
	Opt  *inner            `json:"opt,omitempty"`
	Tags map[string]int    `json:"tags"`
	Kids []outer           `json:"kids,omitempty"`
	List []inner           `json:"list"`
	Skip string            `json:"-"`
	Meta map[string]*inner `json:"meta"`
}

type outer struct {
	*Base
	N int `json:"n"`
}

func TestTypePathsSetsEveryFieldOnce(t *testing.T) {
	got, err := TypePaths(Base{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "opt", "opt.x", "tags", "tags.*", "kids", "kids[].a", "kids[].opt", "kids[].opt.x",
		"kids[].tags", "kids[].tags.*", "kids[].list", "kids[].list[].x", "kids[].meta", "kids[].meta.*", "kids[].meta.*.x", "kids[].n",
		"list", "list[].x", "meta", "meta.*", "meta.*.x"}
	if len(got) != len(want) {
		t.Errorf("got %d paths, want %d: %v", len(got), len(want), got)
	}
	for _, p := range want {
		if !got[p] {
			t.Errorf("no path %q in %v", p, got)
		}
	}
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name           string
		example        string
		elsewhere      []string
		missing, extra string
	}{
		{"an example with every field passes",
			`{"a":"","opt":{"x":1},"tags":{},"kids":[{"a":"","opt":null,"tags":{},"list":[],"meta":{},"n":1},{"opt":{"x":2},"list":[{"x":3}]}],"list":[{"x":1}],"meta":{"m":{"x":1}}}`,
			nil, "", ""},
		{"a field left out of the example is missing",
			`{"a":"","opt":{"x":1},"tags":{},"list":[{"x":1}],"meta":{}}`,
			nil, "kids kids[].a kids[].list kids[].list[].x kids[].meta kids[].n kids[].opt kids[].opt.x kids[].tags", ""},
		{"a field the type does not have is extra",
			`{"a":"","b":1,"opt":{"x":1,"y":2},"tags":{},"kids":[{"a":"","opt":{"x":1},"tags":{},"list":[{"x":1}],"meta":{},"n":1}],"list":[{"x":1}],"meta":{}}`,
			nil, "", "b opt.y"},
		{"a map's keys are data, whatever they are",
			`{"a":"","opt":{"x":1},"tags":{"p":1,"q":2},"kids":null,"list":[{"x":1}],"meta":{"m":{"x":1,"z":0}}}`,
			[]string{"kids"}, "", "meta.*.z"},
		{"under a path documented elsewhere only the path itself is needed",
			`{"a":"","opt":{"x":1},"tags":{},"kids":null,"list":[{"x":1}],"meta":{"m":{"x":1}}}`,
			[]string{"kids"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := TypePaths(Base{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Paths([]byte(tc.example))
			if err != nil {
				t.Fatal(err)
			}
			missing, extra := Compare(want, got, tc.elsewhere)
			if m := strings.Join(missing, " "); m != tc.missing {
				t.Errorf("missing %q, want %q", m, tc.missing)
			}
			if e := strings.Join(extra, " "); e != tc.extra {
				t.Errorf("extra %q, want %q", e, tc.extra)
			}
		})
	}
}

func TestDecodeRefusesUnknownFieldsAndTrailingValues(t *testing.T) {
	var v inner
	if err := Decode([]byte(`{"x": 1}`), &v); err != nil || v.X != 1 {
		t.Errorf("a known field: %v, %v", v, err)
	}
	if err := Decode([]byte(`{"x": 1, "y": 2}`), &v); err == nil || !strings.Contains(err.Error(), `unknown field "y"`) {
		t.Errorf("an unknown field: got %v", err)
	}
	if err := Decode([]byte(`{"x": 1} {"x": 2}`), &v); err == nil {
		t.Error("two values: no error")
	}
}

func TestCheck(t *testing.T) {
	full := Example{Name: "full", Line: 3, JSON: []byte(`{"a":"","opt":{"x":1},"tags":{},"kids":null,"list":[{"x":1}],"meta":{}}`)}
	noOpt := Example{Name: "no-opt", Line: 9, JSON: []byte(`{"a":"","tags":{},"kids":null,"list":[{"x":2}],"meta":{}}`)}
	unknown := Example{Name: "unknown", Line: 12, JSON: []byte(`{"a":"","zz":1}`)}
	examples := []Example{full, noOpt, unknown}
	for _, tc := range []struct {
		name  string
		shape Shape
		err   string
	}{
		{"one full example passes", Shape{Names: []string{"full"}, Type: Base{}, Elsewhere: []string{"kids"}}, ""},
		{"the examples of a shape count together", Shape{Names: []string{"no-opt", "full"}, Type: Base{}, Elsewhere: []string{"kids"}}, ""},
		{"a field no example shows fails", Shape{Names: []string{"no-opt"}, Type: Base{}, Elsewhere: []string{"kids"}}, "no example of no-opt shows: opt, opt.x"},
		{"a field never written need not be shown", Shape{Names: []string{"no-opt"}, Type: Base{}, Elsewhere: []string{"kids"}, Never: []string{"opt"}}, ""},
		{"a field never written must not be shown", Shape{Names: []string{"full"}, Type: Base{}, Elsewhere: []string{"kids"}, Never: []string{"opt"}}, "does not write: opt, opt.x"},
		{"an unknown field fails the decoding", Shape{Names: []string{"unknown"}, Type: Base{}}, `the example unknown (line 12) is not a jsondoc.Base: json: unknown field "zz"`},
		{"a missing example fails", Shape{Names: []string{"full", "gone"}, Type: Base{}, Elsewhere: []string{"kids"}}, "no example <!-- json: gone -->"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(examples, tc.shape)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("got error %v, want one with %q", err, tc.err)
			}
		})
	}
	u := Unknown(examples, []Shape{{Names: []string{"full"}}}, func(n string) bool { return n != "unknown" })
	if strings.Join(u, " ") != "no-opt (line 9)" {
		t.Errorf("Unknown: got %q, want only no-opt", u)
	}
}
