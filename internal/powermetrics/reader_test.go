package powermetrics_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/powermetrics"
)

// recordedM1 is a recording of the fake's, with its documents, and their
// windows and the first one's timestamp as the text of the documents has
// them.
type recordedM1 struct {
	docs     [][]byte
	windows  []time.Duration
	firstDoc time.Time
}

func readRecordedM1(t *testing.T) recordedM1 {
	t.Helper()
	b, err := os.ReadFile("../../testdata/fake-m1-compact.plist")
	if err != nil {
		t.Fatal(err)
	}
	var r recordedM1
	r.docs = bytes.Split(b, []byte{0})
	for _, m := range regexp.MustCompile(`<key>elapsed_ns</key>\s*<integer>(\d+)</integer>`).FindAllSubmatch(b, -1) {
		ns, err := strconv.ParseInt(string(m[1]), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		r.windows = append(r.windows, time.Duration(ns))
	}
	m := regexp.MustCompile(`<key>timestamp</key>\s*<date>([^<]+)</date>`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the recording has no timestamp")
	}
	if r.firstDoc, err = time.Parse(time.RFC3339, string(m[1])); err != nil {
		t.Fatal(err)
	}
	if len(r.docs) < 3 || len(r.windows) != len(r.docs) {
		t.Fatalf("%d documents with %d elapsed_ns: want one each, and at least 3", len(r.docs), len(r.windows))
	}
	return r
}

// perRead hands out one part per Read.
type perRead struct{ parts [][]byte }

func (r *perRead) Read(p []byte) (int, error) {
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.parts[0])
	if r.parts[0] = r.parts[0][n:]; len(r.parts[0]) == 0 {
		r.parts = r.parts[1:]
	}
	return n, nil
}

func TestNewReaderStampsArrivalsWithItsClock(t *testing.T) {
	rec := readRecordedM1(t)
	parts := [][]byte{rec.docs[0]}
	for _, d := range rec.docs[1:] {
		parts = append(parts, append([]byte{0}, d...))
	}
	// The clock moves a second each time it is read, which the decoder
	// does once for each read that brings bytes: here, once a document.
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	ticks := 0
	now := func() time.Time { ticks++; return base.Add(time.Duration(ticks) * time.Second) }
	r := powermetrics.NewReader(&perRead{parts: parts}, now)
	for i, w := range rec.windows {
		s, err := r.Next()
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		want := base.Add(time.Duration(i+1) * time.Second)
		if s.Index != i || !s.Arrival.Equal(want) || s.Window != w {
			t.Errorf("document %d: index %d, arrival %v, window %v; want arrival %v, window %v", i, s.Index, s.Arrival, s.Window, want, w)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next after the last document = %v, want io.EOF", err)
	}
}

func TestNewRecordingPlacesArrivalsAtTheEndsOfTheWindows(t *testing.T) {
	rec := readRecordedM1(t)
	r := powermetrics.NewRecording(bytes.NewReader(bytes.Join(rec.docs, []byte{0})))
	end := rec.firstDoc
	for i, w := range rec.windows {
		s, err := r.Next()
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		end = end.Add(w)
		if s.Index != i || !s.Arrival.Equal(end) {
			t.Errorf("document %d: index %d, arrival %v; want %v, the first timestamp and %v of windows", i, s.Index, s.Arrival, end, end.Sub(rec.firstDoc))
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next after the last document = %v, want io.EOF", err)
	}
}

// A refused document's window is unknown, or not one of power: the samples
// after it arrive as if it were not there.
func TestNewRecordingLeavesARefusedDocumentOffTheTimeline(t *testing.T) {
	vm := fakepm.Document{Elapsed: time.Second, Layout: fakepm.Layouts["m1"], Samplers: map[string]bool{"thermal": true}}
	tests := []struct {
		name    string
		refused []byte
		want    error
	}{
		{"a document without power data", vm.Append(nil), powermetrics.ErrNoPowerData},
		{"a document that is no plist", []byte("<not a plist></plist>\n"), powermetrics.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := readRecordedM1(t)
			docs := append([][]byte{rec.docs[0], tt.refused}, rec.docs[1:]...)
			r := powermetrics.NewRecording(bytes.NewReader(bytes.Join(docs, []byte{0})))
			end := rec.firstDoc
			for i, w := range rec.windows {
				s, err := r.Next()
				if i == 1 {
					var de *powermetrics.DocumentError
					if !errors.As(err, &de) || de.Index != 1 || !errors.Is(err, tt.want) {
						t.Fatalf("document 1 = %v, want it refused with %v", err, tt.want)
					}
					s, err = r.Next()
				}
				if err != nil {
					t.Fatalf("document after %d: %v", i, err)
				}
				end = end.Add(w)
				if !s.Arrival.Equal(end) {
					t.Errorf("document %d: arrival %v, want %v", s.Index, s.Arrival, end)
				}
			}
		})
	}
}

func TestReaderCannotBeAskedForASample(t *testing.T) {
	tests := []struct {
		name string
		r    *powermetrics.Reader
	}{
		{"a live stream", powermetrics.NewReader(bytes.NewReader(nil), time.Now)},
		{"a recording", powermetrics.NewRecording(bytes.NewReader(nil))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.r.CanRequestSample() {
				t.Error("CanRequestSample is true")
			}
			if err := tt.r.RequestSample(); !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("RequestSample = %v, want errors.ErrUnsupported", err)
			}
			if err := tt.r.Stop(); err != nil {
				t.Errorf("Stop of a reader that cannot be closed = %v, want nil", err)
			}
		})
	}
}

func TestReaderStopEndsAReadInProgress(t *testing.T) {
	rec := readRecordedM1(t)
	pr, pw := io.Pipe()
	wrote := make(chan error, 1)
	go func() {
		_, err := pw.Write(rec.docs[0])
		wrote <- err
	}()
	r := powermetrics.NewReader(pr, time.Now)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	// Nothing more is written: this Next waits until Stop.
	next := make(chan error, 1)
	go func() {
		_, err := r.Next()
		next <- err
	}()
	if err := r.Stop(); err != nil {
		t.Errorf("Stop = %v, want nil", err)
	}
	select {
	case err := <-next:
		if !errors.Is(err, io.ErrClosedPipe) || !powermetrics.EndsStream(err) {
			t.Errorf("Next = %v, want io.ErrClosedPipe, which ends the stream", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Next still waits 30 s after Stop")
	}
}
