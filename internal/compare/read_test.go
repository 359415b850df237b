package compare

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/jsondoc"
)

// Bad input is refused with what it is and what to do: a file cut short,
// an empty one, JSON of another kind (a run's summary, hyperfine's own
// export, compare's own output), a newer schema_version, and JSON that is
// not an object.
func TestBadInputIsRefused(t *testing.T) {
	good := benchOf{commands: []command{{name: "a", net: spread(1, 0.01)}}}.json(t)
	for _, c := range []struct {
		name, data, want string
	}{
		{"cut short", string(good[:len(good)/2]), "ends in the middle of its JSON: the file is cut short"},
		{"cut short inside a null", `{"schema_version":1,"type":"bench","unit":nu`, "ends in the middle of its JSON: the file is cut short"},
		{"cut short inside a true", `{"schema_version":1,"type":"bench","complete":tr`, "ends in the middle of its JSON: the file is cut short"},
		{"empty", "\n", "is empty"},
		{"a run's summary", `{"schema_version":1,"type":"summary","energy_joules":{}}`, `JSON of type "summary", not a bench's or an llm's`},
		{"hyperfine's export", `{"results":[{"command":"sleep 1","mean":1.0}]}`, "hyperfine's own export, which has no energy"},
		{"compare's own", `{"schema_version":1,"type":"compare","rows":[]}`, "is what compare wrote"},
		{"a newer schema", `{"schema_version":2,"type":"bench","results":[]}`, "schema_version 2, newer than the 1 this exopower reads"},
		{"no schema", `{"type":"bench","results":[]}`, "without a schema_version"},
		{"an array", `[1, 2]`, "not one JSON object but array"},
		{"not JSON", `hello`, "not JSON"},
		{"a run without energy", `{"schema_version":1,"type":"bench","results":[{"command":"a","runs":[{"energy_joules":{}}]}]}`, "runs[0] has no energy_joules.total"},
		{"a field of the wrong type", `{"schema_version":1,"type":"bench","results":{"a":1}}`, "not a bench's JSON as exopower writes it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load("x.json", []byte(c.data))
			var e *cli.Error
			if !errors.As(err, &e) || e.Status != cli.StatusFailure || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want status 125 and %q", err, c.want)
			}
		})
	}
}

// Fields that compare does not read may be added, or change their
// shape, as the wall's are changing: an export with such fields reads as
// the export without them.
func TestFieldsCompareDoesNotReadAreIgnored(t *testing.T) {
	plain := benchOf{idle: idleWatts, se: 0.001, commands: []command{{name: "a", net: spread(1, 0.01)}}}.json(t)
	more := bytes.Replace(plain, []byte(`"results":[`), []byte(`"wall":{"new":[1,2,{"x":null}]},"something_new":42,"results":[`), 1)
	more = bytes.Replace(more, []byte(`"runs":[`), []byte(`"wall":"now a string","runs":[`), 1)
	if bytes.Equal(more, plain) {
		t.Fatal("the export was not changed")
	}
	a, err := Load("a.json", plain)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load("b.json", more)
	if err != nil {
		t.Fatal(err)
	}
	if a.Benchmarks[0].Figures[0].Net.Mean != b.Benchmarks[0].Figures[0].Net.Mean || b.Idle == nil {
		t.Errorf("read %+v with the new fields, %+v without", b.Benchmarks, a.Benchmarks)
	}
}

// The JSON reference's examples are exopower's own output: compare reads
// each bench's and each llm run's, with the figures their fields hold.
func TestTheReferencesExamplesAreRead(t *testing.T) {
	ref, err := jsondoc.ReadReference(jsondoc.Root)
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	for _, ex := range ref.Examples {
		if ex.Name != "bench" && ex.Name != "llm" {
			continue
		}
		e, err := Load(ex.Name, ex.JSON)
		if err != nil {
			t.Fatalf("%s: %v", ex.File, err)
		}
		read[ex.Name] = true
		if len(e.Benchmarks) == 0 || e.Source.HWModel == "" || e.IntervalSeconds <= 0 {
			t.Errorf("%s: read %+v", ex.File, e)
		}
		for _, b := range e.Benchmarks {
			f := b.Figures[0]
			if f.Gross == nil || f.Gross.N < 1 || math.IsNaN(f.Gross.Mean) || (e.Idle != nil) != (f.Net != nil) {
				t.Errorf("%s: %s's %s: gross %+v, net %+v", ex.File, b.Name, f.Slug, f.Gross, f.Net)
			}
		}
	}
	if !read["bench"] || !read["llm"] {
		t.Errorf("read examples %v: want the bench's and the llm's", read)
	}
}

// An llm run's figures are its requests' J per output token and per
// prompt token, net of the idle power, with the idle error over each
// request's time per token as the shared error; its settings are
// matched by model and concurrency.
func TestAnLLMRunsFiguresAreItsRequests(t *testing.T) {
	data := []byte(`{"schema_version":1,"type":"llm","complete":true,"api":"chat","interval_seconds":0.1,"prompt_seed":7,
		"nodes":[{"node":"m","label":"m","url":"local"}],"baseline":{"power_watts":4.5,"standard_error_watts":0.01},
		"results":[{"model":"m1","concurrency":4,"run":{"summary":{"scope":"soc","source":{"tool":"ioreport","hw_model":"Mac15,3","os_build":"24A"}}},
		"figures":{"soc":{"joules_per_output_token":{"n":3,"mean":0.4,"stddev":0.01},"joules_per_prompt_token":{"n":3,"mean":0.02,"stddev":0.001},
		"net_joules_per_output_token":{"n":3,"mean":0.3,"stddev":0.01},"net_joules_per_output_token_uncertainty":0.0002,
		"net_joules_per_prompt_token":{"n":3,"mean":0.018,"stddev":0.001},"net_joules_per_prompt_token_uncertainty":0.00001}}}]}`)
	e, err := Load("llm.json", data)
	if err != nil {
		t.Fatal(err)
	}
	b := e.Benchmarks[0]
	out, prompt := b.Figures[0], b.Figures[1]
	if b.Key != "m1, concurrency 4" || out.Slug != "energy-per-output-token" || out.Unit != "J/token" || prompt.Slug != "energy-per-prompt-token" {
		t.Errorf("benchmark %q, figures %+v", b.Key, b.Figures)
	}
	if out.Net.Mean != 0.3 || out.Net.Shared != 0.0002 || out.Gross.Mean != 0.4 || prompt.Net.N != 3 || e.Source.HWModel != "Mac15,3" || *e.PromptSeed != 7 {
		t.Errorf("read net %+v, gross %+v, prompt %+v, source %+v", out.Net, out.Gross, prompt.Net, e.Source)
	}
}
