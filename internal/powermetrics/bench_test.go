package powermetrics_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
)

// benchDocs are documents of the sizes powermetrics writes: cpu_power,
// gpu_power and thermal on an M1 and an M2 Ultra (12 to 65 KB), and the
// default samplers with a tasks array (about 200 KB), plain and with
// entities in its task names. scripts/bench.sh writes the same documents
// to files (EXOPOWER_BENCH_DOCS) so that Python's plistlib reads exactly
// these bytes.
func benchDocs(b *testing.B) map[string][]byte {
	if dir := os.Getenv("EXOPOWER_BENCH_DOCS"); dir != "" {
		names, _ := filepath.Glob(filepath.Join(dir, "*.plist"))
		docs := map[string][]byte{}
		for _, n := range names {
			d, err := os.ReadFile(n)
			if err != nil {
				b.Fatal(err)
			}
			docs[filepath.Base(n[:len(n)-len(".plist")])] = d
		}
		return withEntities(docs)
	}
	return withEntities(fakepm.BenchDocuments())
}

// withEntities adds to docs its tasks document with entities and
// character references in every task's name, as on a Mac that runs
// processes with an & in their names, under the tasks document's name
// with "-entities" after it.
func withEntities(docs map[string][]byte) map[string][]byte {
	const tasks = "ultra-default-tasks"
	if doc, ok := docs[tasks]; ok {
		docs[tasks+"-entities"] = bytes.ReplaceAll(doc, []byte("<key>name</key><string>process-"),
			[]byte("<key>name</key><string>python3 &amp; friends &lt;&#38;&#x26;&gt; process-"))
	}
	return docs
}

func BenchmarkParse(b *testing.B) {
	docs := benchDocs(b)
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		doc := docs[name]
		for _, how := range []struct {
			name  string
			parse func([]byte) (power.Sample, error)
		}{{"fast", powermetrics.Parse}, {"full", powermetrics.ParseFull}} {
			b.Run(fmt.Sprintf("%s/%s", name, how.name), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := how.parse(doc); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDecoder reads a stream of documents through the Decoder, the
// way exopower reads powermetrics's pipe.
func BenchmarkDecoder(b *testing.B) {
	doc := fakepm.BenchDocuments()["m1-cpu_gpu_thermal"]
	var stream bytes.Buffer
	for i := 0; i < 100; i++ {
		if i > 0 {
			stream.WriteByte(0)
		}
		stream.Write(doc)
	}
	b.SetBytes(int64(stream.Len()))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d := powermetrics.NewDecoder(bytes.NewReader(stream.Bytes()), time.Now)
		for {
			if _, err := d.Next(); err != nil {
				break
			}
		}
	}
}

// The benchmark documents, the 200 KB tasks ones included, take the fast
// path and agree with the full decoder.
func TestBenchDocumentsTakeTheFastPath(t *testing.T) {
	docs := withEntities(fakepm.BenchDocuments())
	if n := bytes.Count(docs["ultra-default-tasks-entities"], []byte("python3 &amp; friends")); n < 100 {
		t.Fatalf("the entity document has %d entity-bearing task names", n)
	}
	for name, doc := range docs {
		if !powermetrics.TakesFastPath(doc) {
			t.Errorf("%s: not in the fast path's shape", name)
		}
		fast, ferr := powermetrics.Parse(doc)
		full, uerr := powermetrics.ParseFull(doc)
		if ferr != nil || uerr != nil || !reflect.DeepEqual(fast, full) {
			t.Errorf("%s: fast %+v (%v), full %+v (%v)", name, fast, ferr, full, uerr)
		}
	}
}
