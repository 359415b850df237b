package wire

import (
	"encoding/json"
	"math"
	"testing"
)

// A document with figures that came to NaN or infinity is made one JSON
// can write: a pointer's figure null, a plain one 0, each counted; a
// finite figure is left as it is.
func TestFiniteMakesEveryFigureWritable(t *testing.T) {
	nan, inf, one := Num(math.NaN()), Num(math.Inf(1)), Num(1)
	type inner struct {
		A Num  `json:"a"`
		B *Num `json:"b"`
	}
	doc := struct {
		X     Num            `json:"x"`
		Y     *Num           `json:"y"`
		Z     *Num           `json:"z"`
		In    inner          `json:"in"`
		Ins   []inner        `json:"ins"`
		Ptr   *inner         `json:"ptr"`
		Map   map[string]Num `json:"map"`
		Any   any            `json:"any"`
		plain float64
	}{X: nan, Y: &inf, Z: &one, In: inner{A: inf}, Ins: []inner{{A: one, B: &nan}}, Ptr: &inner{A: nan}, Map: map[string]Num{"k": nan, "ok": 2},
		Any: &inner{B: &inf}, plain: math.NaN()}
	if _, err := json.Marshal(doc); err == nil {
		t.Fatal("the document was writable before")
	}
	if n := Finite(&doc); n != 7 {
		t.Errorf("%d figures changed, want 7", n)
	}
	b, err := json.Marshal(doc)
	want := `{"x":0,"y":null,"z":1,"in":{"a":0,"b":null},"ins":[{"a":1,"b":null}],"ptr":{"a":0,"b":null},"map":{"k":0,"ok":2},"any":{"a":0,"b":null}}`
	if err != nil || string(b) != want {
		t.Errorf("%s, %v\nwant %s", b, err, want)
	}
	if Finite(&doc) != 0 {
		t.Error("a writable document was changed")
	}
}
