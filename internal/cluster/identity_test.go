package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// statusOf answers the status of a serve named node, at 100 ms, of the
// instance and boot session given ("" and nil: a serve older than them).
func statusOf(node, instance string, boot *string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		answer(w, wire.Status{Node: node, InstanceID: instance, BootID: boot, IntervalSeconds: 0.1, Source: wire.Source{Tool: "powermetrics"}})
	}
}

// One serve reached under two URLs answers one instance_id: it is
// refused before anything starts, naming both URLs, with a hint, and
// --skip-unreachable does not go on without one of them, since the list
// is wrong, not the node. Serves of instances of their own, or too old
// to give one, are measured.
func TestOneServeUnderTwoURLsIsRefused(t *testing.T) {
	const id = "5f0c1e9a7b3d42e6a1c8f9d0b2e4a637"
	a := newFakeNode(t, map[string]http.HandlerFunc{"status": statusOf("mac2", id, nil)})
	b := newFakeNode(t, map[string]http.HandlerFunc{"status": statusOf("mac2", id, nil)})
	for _, skip := range []bool{false, true} {
		setup := Setup{Nodes: Nodes{URLs: []string{a.srv.URL, b.srv.URL}, SkipUnreachable: skip}, Getenv: func(string) string { return "" }}
		members, _, err := setup.Connect(context.Background())
		failure(t, err, "node "+a.srv.URL+" and node "+b.srv.URL+" are one exopower serve (instance_id "+id+")", "measured, and summed, twice")
		if !slices.Contains(cli.HintsOf(err), Twice) || members != nil {
			t.Errorf("skip %v: hints %q, members %v; want %q and none", skip, cli.HintsOf(err), members, Twice)
		}
	}
	b.set("status", statusOf("mac2", "0123456789abcdef0123456789abcdef", nil))
	c := newFakeNode(t, map[string]http.HandlerFunc{"status": statusOf("mac2", "", nil)})
	d := newFakeNode(t, map[string]http.HandlerFunc{"status": statusOf("mac2", "", nil)})
	setup := Setup{Nodes: Nodes{URLs: []string{a.srv.URL, b.srv.URL, c.srv.URL, d.srv.URL}}, Getenv: func(string) string { return "" }}
	members, _, err := setup.Connect(context.Background())
	if err != nil || len(members) != 4 {
		t.Fatalf("Connect = %d members, %v; want serves of two instances and two old ones", len(members), err)
	}
	CloseAll(members)
}

// idle is a source that gives no sample until it is stopped.
type idle struct {
	once sync.Once
	stop chan struct{}
}

func (s *idle) Next() (power.Sample, error) { <-s.stop; return power.Sample{}, io.EOF }
func (s *idle) CanRequestSample() bool      { return false }
func (s *idle) RequestSample() error        { return nil }
func (s *idle) Stop() error                 { s.once.Do(func() { close(s.stop) }); return nil }

// This Mac named as local and reached through its own serve, whose
// boot_id is this Mac's, is one Mac twice: refused, with or without
// --skip-unreachable. A serve of another boot, or of none it says, is
// another Mac; so is every serve when this Mac's boot is unknown.
func TestThisMacAsLocalAndThroughItsServeIsRefused(t *testing.T) {
	const boot = "c41d9e07a2b85f3e6d1a0b9c8e7f6a52"
	here, other := boot, "00000000000000000000000000000001"
	node := newFakeNode(t, map[string]http.HandlerFunc{"status": statusOf("mac1", "5f0c1e9a7b3d42e6a1c8f9d0b2e4a637", &here)})
	var stopped int
	var mu sync.Mutex
	setup := func(boot string, skip bool) Setup {
		return Setup{Nodes: Nodes{URLs: []string{node.srv.URL, Local}, SkipUnreachable: skip}, Getenv: func(string) string { return "" },
			Interval: 100 * time.Millisecond, Boot: boot,
			Start: func(context.Context) (*sampler.Sampler, error) {
				src := &stopCounted{idle: idle{stop: make(chan struct{})}, count: func() { mu.Lock(); stopped++; mu.Unlock() }}
				return sampler.Start(src, sampler.Config{Interval: 100 * time.Millisecond}), nil
			}}
	}
	for _, skip := range []bool{false, true} {
		members, _, err := setup(boot, skip).Connect(context.Background())
		failure(t, err, "node "+node.srv.URL+" is a serve on this Mac (its boot_id is this Mac's), which node local measures too")
		if !slices.Contains(cli.HintsOf(err), Twice) || members != nil {
			t.Errorf("skip %v: hints %q, members %v", skip, cli.HintsOf(err), members)
		}
	}
	mu.Lock()
	if stopped != 2 {
		t.Errorf("this Mac's stream was stopped %d times of the 2 it was started", stopped)
	}
	mu.Unlock()
	for _, tt := range []struct {
		name  string
		mine  string
		serve *string
	}{{"a serve of another boot", boot, &other}, {"a serve that gives none", boot, nil}, {"this Mac's boot unknown", "", &here}} {
		node.set("status", statusOf("mac1", "5f0c1e9a7b3d42e6a1c8f9d0b2e4a637", tt.serve))
		members, _, err := setup(tt.mine, false).Connect(context.Background())
		if err != nil || len(members) != 2 {
			t.Errorf("%s: Connect = %d members, %v; want both", tt.name, len(members), err)
		}
		CloseAll(members)
	}
}

// stopCounted is an idle source that counts its stops.
type stopCounted struct {
	idle
	count func()
}

func (s *stopCounted) Stop() error { s.once.Do(func() { s.count(); close(s.stop) }); return nil }

func TestLabelsTellNodesNamedAlikeApart(t *testing.T) {
	for _, tt := range []struct {
		name         string
		names, addrs []string
		want         []string
	}{
		{"names apart stay as they are", []string{"mac1", "mac2", "studio"}, []string{"a:1", "b:1", "local"}, []string{"mac1", "mac2", "studio"}},
		{"one name twice", []string{"mac1", "mac1"}, []string{"10.0.0.5:10241", "10.0.0.6:10241"}, []string{"mac1 (10.0.0.5:10241)", "mac1 (10.0.0.6:10241)"}},
		{"a name and its .local, in any case", []string{"mac1", "Mac1.local", "MAC1", "mac2"}, []string{"a:1", "b:1", "local", "c:1"},
			[]string{"mac1 (a:1)", "Mac1.local (b:1)", "MAC1 (local)", "mac2"}},
		{"a name that is another's label", []string{"mac1", "mac1", "mac1 (a:1)"}, []string{"a:1", "b:1", "c:1"},
			[]string{"mac1 (a:1)", "mac1 (b:1)", "mac1 (a:1) (c:1) #2"}},
		{"one address under two schemes", []string{"mac1", "mac1"}, []string{"a:1", "a:1"}, []string{"mac1 (a:1)", "mac1 (a:1) #2"}},
	} {
		if got := labels(tt.names, tt.addrs); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Two Macs that give one name (both mac2 here) are two rows of the
// summary, each labelled by its name and address, in the JSON and in the
// text; the JSON keeps each node's own name.
func TestTwoNodesOfOneNameAreLabelledApartInTheSummary(t *testing.T) {
	a, b := newFakeNode(t, nil), newFakeNode(t, nil)
	members, _, err := Setup{Nodes: Nodes{URLs: []string{a.srv.URL, b.srv.URL}}, Getenv: func(string) string { return "" }}.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer CloseAll(members)
	if err := BeginAll(context.Background(), members); err != nil {
		t.Fatal(err)
	}
	sum := Total(EndAll(context.Background(), members, time.Now()), nil, time.Now(), time.Second)
	want := []string{"mac2 (" + strings.TrimPrefix(a.srv.URL, "http://") + ")", "mac2 (" + strings.TrimPrefix(b.srv.URL, "http://") + ")"}
	b1, _ := json.Marshal(sum)
	var doc struct {
		Nodes []struct{ Node, Label string }
	}
	if err := json.Unmarshal(b1, &doc); err != nil || len(doc.Nodes) != 2 {
		t.Fatalf("JSON %s: %v", b1, err)
	}
	for i, n := range doc.Nodes {
		if n.Node != "mac2" || n.Label != want[i] {
			t.Errorf("JSON node %d: node %q, label %q; want mac2 and %q", i, n.Node, n.Label, want[i])
		}
	}
	var text bytes.Buffer
	if err := output.WriteText(&text, sum, output.NewStyles(&text, false, os.Getenv)); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for l := range strings.Lines(text.String()) {
		if strings.HasPrefix(strings.TrimSpace(l), "mac2") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2 || !strings.Contains(rows[0], want[0]) || !strings.Contains(rows[1], want[1]) {
		t.Errorf("rows %q of the text\n%s\nwant one for each of %q", rows, text.String(), want)
	}
}

// The total's warnings name a node by its label, which tells it from
// another of its name.
func TestTheTotalsWarningsNameANodeByItsLabel(t *testing.T) {
	node := func(label string, offset float64) wire.NodeSummary {
		return wire.NodeSummary{Summary: &wire.Summary{Coverage: 1, Warnings: []string{"a warning"}}, Node: "mac1", Label: label, URL: "http://x", ClockOffsetSeconds: wire.Num(offset)}
	}
	all := strings.Join(Total([]wire.NodeSummary{node("mac1 (a:1)", 0), node("mac1 (b:1)", 3)}, nil, time.Now(), time.Second).Warnings, "\n")
	for _, want := range []string{"node mac1 (a:1): a warning", "node mac1 (b:1): a warning", "node mac1 (b:1)'s clock is 3.0 s off"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q: no %q", all, want)
		}
	}
}

// An instance_id or a boot_id that serve cannot have drawn (not hex, too
// long, escapes) is an answer as no serve gives: refused, naming it.
func TestAnIDNoServeDrawsIsRefused(t *testing.T) {
	bad := "\x1b]0;owned\x07"
	long := strings.Repeat("a", 65)
	for _, tt := range []struct {
		instance string
		boot     *string
		want     string
	}{
		{bad, nil, `instance_id "\\x1b]0;owned\\x07" is not an id as serve draws it`},
		{long, nil, "instance_id \"" + long + "\" is not an id"},
		{"", &bad, `boot_id "\\x1b]0;owned\\x07" is not an id as serve draws it`},
		{"ABCDEF", nil, `instance_id "ABCDEF" is not an id`},
	} {
		node := newFakeNode(t, map[string]http.HandlerFunc{"status": statusOf("mac2", tt.instance, tt.boot)})
		_, err := node.connect(t)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), ErrNotServe.Error()) {
			t.Errorf("Connect = %v, want %q", err, tt.want)
		}
	}
}

// A label is this client's to give: one a node's stream brings is
// dropped, so that a node cannot pass for another in watch's lines.
func TestALabelANodesStreamBringsIsDropped(t *testing.T) {
	l := goodLine(time.Now(), 1)
	l.Label = "mac1 (10.0.0.6:10241)"
	if err := checkLine(&l, time.Minute); err != nil || l.Label != "" {
		t.Errorf("checkLine = %v, label %q; want the label dropped", err, l.Label)
	}
}
