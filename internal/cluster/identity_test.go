package cluster

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cli"
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
