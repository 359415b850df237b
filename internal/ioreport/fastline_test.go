package ioreport

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// fastLineSeeds are lines as Recorder writes them, with and without the
// SMC's power, and the shapes near them that the fast reader must leave
// to encoding/json.
func fastLineSeeds(t testing.TB) []string {
	var b bytes.Buffer
	channels := []Channel{{Group: Group, Name: "CPU Energy", Unit: "mJ"}, {Group: Group, Subgroup: "x", Name: "GPU Energy", Unit: "nJ"}}
	rec, err := NewRecorder(&b, Header{HWModel: "Mac14,14", IntervalSeconds: 0.1}, channels)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1796300000, 0)
	rec.Write(Reading{At: start, Unix: start, Values: []int64{0, 0}}, start)
	rec.Write(Reading{At: start.Add(time.Second), Unix: start.Add(time.Second), Values: []int64{1234, -5}, System: 40.25, HasSystem: true}, start)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	return append(lines[1:],
		`{"mono_ns":1,"unix_ns":2,"channels":[]}`,
		`{"mono_ns":1,"unix_ns":2,"channels":[],"smc":{"PSTR":1e2}}`,
		`{"mono_ns":1,"unix_ns":2,"channels":[],"smc":{"PSTR":-0.5E-3}}`,
		`{"mono_ns":01,"unix_ns":2,"channels":[]}`,
		`{"mono_ns":1.0,"unix_ns":2,"channels":[]}`,
		`{"mono_ns":1,"unix_ns":99999999999999999999,"channels":[]}`,
		`{"mono_ns":1,"unix_ns":2,"channels":[["a","b","c","d",1.5]]}`,
		`{"mono_ns":1,"unix_ns":2,"channels":[["a\"","b","c","d",1]]}`,
		`{"mono_ns":1,"unix_ns":2,"channels":[["é","b","c","d",1]]}`,
		`{"mono_ns":1,"unix_ns":2,"channels":[["a","b","c","d",1]],"smc":{"PSTR":1e999}}`,
		`{"mono_ns":1,"unix_ns":2,"channels":[["a","b","c","d",1]]} `,
		`{"mono_ns":1, "unix_ns":2,"channels":[]}`,
		`{"MONO_NS":1,"unix_ns":2,"channels":[]}`,
	)
}

// The fast reader of a line and encoding/json agree on every line the
// fast one reads: its times, channels, counters and the SMC's power.
func FuzzFastLine(f *testing.F) {
	for _, s := range fastLineSeeds(f) {
		f.Add([]byte(s))
	}
	last := []Channel{{Group: Group, Name: "CPU Energy", Unit: "mJ"}}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := fastLine(b, last, make([]int64, 0, 4))
		if !ok {
			return
		}
		slow, err := (&Recording{}).parseSlow(b)
		switch {
		case err != nil:
			t.Fatalf("%q: the fast reader read it, encoding/json did not: %v", b, err)
		case fast.monoNS != slow.monoNS || fast.unixNS != slow.unixNS || !slices.Equal(fast.values, slow.values) || !slices.Equal(fast.channels, slow.channels):
			t.Fatalf("%q:\nfast %+v\nslow %+v", b, fast, slow)
		case fast.hasPSTR != slow.hasPSTR || math.Float64bits(fast.pstr) != math.Float64bits(slow.pstr):
			t.Fatalf("%q: PSTR %v %v, encoding/json %v %v", b, fast.pstr, fast.hasPSTR, slow.pstr, slow.hasPSTR)
		}
	})
}

// Recorder's lines take the fast reader; lines that are not in its one
// shape are left to encoding/json, whatever they say.
func TestRecordersLinesTakeTheFastReader(t *testing.T) {
	seeds := fastLineSeeds(t)
	for i, s := range seeds {
		_, ok := fastLine([]byte(s), nil, nil)
		if want := i < 5; ok != want {
			t.Errorf("%s: read fast %v, want %v", s, ok, want)
		}
	}
}
