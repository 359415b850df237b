package cluster

import (
	"context"
	"encoding/pem"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/wire"
)

func TestParseTargetsRefusesWhatIsNoNode(t *testing.T) {
	for _, tt := range []struct {
		nodes []string
		file  string
		want  string // the error, or "" for the names
		names string
	}{
		{nodes: []string{"http://mac2:10241", "local", "https://Mac3:9/"}, names: "http://mac2:10241 local https://mac3:9"},
		{nodes: []string{"http://mac2:10241"}, file: "# the rack\n\nhttp://mac3:10241\n", names: "http://mac2:10241 http://mac3:10241"},
		{nodes: []string{"ftp://mac2"}, want: `node "ftp://mac2" is not an http:// or https:// URL`},
		{nodes: []string{"mac2:10241"}, want: `is not an http:// or https:// URL`},
		{nodes: []string{"http://"}, want: `has no host`},
		{nodes: []string{"http://u:secret@mac2:1"}, want: "has credentials in it"},
		{nodes: []string{"http://mac2:1/metrics"}, want: "give the serve's address only, such as http://mac2:1"},
		{nodes: []string{"http://mac2:1", "http://MAC2:1/"}, want: "node http://mac2:1 is named twice"},
		{nodes: []string{"local", "local"}, want: "node local is named twice"},
	} {
		var file *strings.Reader
		if tt.file != "" {
			file = strings.NewReader(tt.file)
		}
		var ts []Target
		var err error
		if file != nil {
			ts, err = ParseTargets(tt.nodes, file)
		} else {
			ts, err = ParseTargets(tt.nodes, nil)
		}
		if tt.want != "" {
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%q: %v, want %q", tt.nodes, err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("%q: the error shows the password: %v", tt.nodes, err)
			}
			continue
		}
		var names []string
		for _, x := range ts {
			names = append(names, x.Name())
		}
		if err != nil || strings.Join(names, " ") != tt.names {
			t.Errorf("%q: %q, %v; want %q", tt.nodes, names, err, tt.names)
		}
	}
}

func TestLoadAuthTakesTheFileBeforeTheEnvironment(t *testing.T) {
	env := map[string]string{"EXOPOWER_NODE_USER": "ops", "EXOPOWER_NODE_PASSWORD": "pw"}
	a, err := LoadAuth(strings.NewReader("# creds\nhttp://mac2:1 alice s3cret\n"), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := ParseTargets([]string{"http://mac2:1", "http://mac3:1"}, nil)
	if c := a.forTarget(m2[0]); c == nil || *c != (Credentials{"alice", "s3cret"}) {
		t.Errorf("mac2: %+v, want the file's", c)
	}
	if c := a.forTarget(m2[1]); c == nil || *c != (Credentials{"ops", "pw"}) {
		t.Errorf("mac3: %+v, want the environment's", c)
	}
	if _, err := LoadAuth(strings.NewReader("http://mac2:1 alice\n"), func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "line 1: want URL USER PASSWORD") {
		t.Errorf("a short line: %v", err)
	}
}

// The cluster's total: energy summed, average that sum over the elapsed
// time (not a mean of the nodes' averages), coverage the lowest, the
// edges' bound 2 x round trip x peak per node, and warnings that name
// the node.
func TestTotalSumsTheNodes(t *testing.T) {
	node := func(name string, joules, avg, peak, cov, rtt, offset float64, lost bool, warn ...string) wire.NodeSummary {
		return wire.NodeSummary{Summary: &wire.Summary{
			EnergyJoules: wire.Components{Total: wire.Num(joules), CPU: wire.Num(joules)}, AvgPowerWatts: wire.Components{Total: wire.Num(avg)},
			PeakPowerWatts: wire.Components{Total: wire.Num(peak)}, Coverage: wire.Num(cov), Samples: 10, Warnings: warn,
			IntervalSeconds: wire.Num(rtt * 50),
		}, Node: name, URL: "http://" + name, RoundTripSeconds: wire.Num(rtt), ClockOffsetSeconds: wire.Num(offset), Lost: lost}
	}
	nodes := []wire.NodeSummary{
		node("a", 20, 10, 12, 1, 0.002, 0.1, false),
		node("b", 3, 1, 5, 0.9, 0.010, -2.5, true, "lost: no answer"),
	}
	sum := Total(nodes, nil, time.Unix(0, 0), 2*time.Second)
	if sum.IntervalSeconds != 0.5 {
		t.Errorf("interval %v, want the longest of the nodes'", sum.IntervalSeconds)
	}
	if sum.EnergyJoules.Total != 23 || sum.AvgPowerWatts.Total != 11.5 || sum.Coverage != 0.9 || sum.Samples != 20 || sum.PeakPowerWatts.Total != 17 {
		t.Errorf("total %+v", sum)
	}
	if want := 2*0.002*12 + 2*0.010*5; math.Abs(float64(*sum.UncertaintyJoules)-want) > 1e-12 {
		t.Errorf("uncertainty %v, want %v", *sum.UncertaintyJoules, want)
	}
	all := strings.Join(sum.Warnings, "\n")
	for _, want := range []string{"node b: lost: no answer", "node b (http://b) stopped answering", "the total is partial", "node b's clock is -2.5 s off"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q: no %q", sum.Warnings, want)
		}
	}
	if strings.Contains(all, "node a") {
		t.Errorf("warnings %q name node a, which had none", sum.Warnings)
	}
}

// The total names each node's source once: both, where the nodes read
// different ones; and the system's power is summed over the nodes that
// read it, with a warning that the others do not.
func TestTotalNamesEachSourceAndSumsTheSystemWhereKnown(t *testing.T) {
	sys := wire.Num(50)
	node := func(tool string, system *wire.Num) wire.NodeSummary {
		return wire.NodeSummary{Summary: &wire.Summary{Source: wire.Source{Tool: tool},
			EnergyJoules: wire.Components{Total: 10, CPU: 10, System: system}, Coverage: 1}, Node: tool}
	}
	sum := Total([]wire.NodeSummary{node("ioreport", &sys), node("powermetrics", nil), node("ioreport", &sys)}, nil, time.Unix(0, 0), time.Second)
	if sum.Source.Tool != "ioreport+powermetrics" || sum.EnergyJoules.System == nil || *sum.EnergyJoules.System != 100 {
		t.Errorf("source %q, system %v; want both sources named and 100 J", sum.Source.Tool, sum.EnergyJoules.System)
	}
	if !strings.Contains(strings.Join(sum.Warnings, "\n"), "the system's power is known on 2 of the 3 nodes") {
		t.Errorf("warnings %q", sum.Warnings)
	}
	if one := Total([]wire.NodeSummary{node("ioreport", &sys)}, nil, time.Unix(0, 0), time.Second); one.Source.Tool != "ioreport" {
		t.Errorf("one node's source: %q", one.Source.Tool)
	}
}

// A node behind TLS with basic auth: its CA from --node-ca, its password
// from the environment, the request carries both; without them it fails.
func TestClientReachesANodeWithTLSAndBasicAuth(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ops" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"node":"mac2","interval_seconds":0.5}`))
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pem.Encode(mustCreate(t, ca), &pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	ts, err := ParseTargets([]string{srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tlsConf, err := TLSConfig(ca)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"EXOPOWER_NODE_USER": "ops", "EXOPOWER_NODE_PASSWORD": "pw"}
	auth, _ := LoadAuth(nil, func(k string) string { return env[k] })
	r, err := Connect(context.Background(), NewClient(ts[0], auth, tlsConf))
	if err != nil || r.Name() != "mac2" || r.interval != 500*time.Millisecond {
		t.Fatalf("Connect = %+v, %v", r, err)
	}
	if _, err := Connect(context.Background(), NewClient(ts[0], Auth{}, tlsConf)); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("without the password: %v, want 401", err)
	}
	plain, _ := TLSConfig("")
	if _, err := Connect(context.Background(), NewClient(ts[0], auth, plain)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate error", err)
	}
}

func mustCreate(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The failures to reach the nodes keep every hint: their own (this Mac's
// powermetrics), and the check of the serves when one did not answer.
func TestAFailureToReachTheNodesKeepsEveryHint(t *testing.T) {
	local := cli.Fail(errors.New("powermetrics not found at /usr/bin/powermetrics"), "point --powermetrics at it")
	for _, c := range []struct {
		name  string
		errs  []error
		hints []string
	}{
		{"a node that did not answer", []error{errors.New("node http://mac2:10241: connection refused")}, []string{Unreachable}},
		{"this Mac's powermetrics", []error{local}, []string{"point --powermetrics at it"}},
		{"both", []error{errors.New("node http://mac2:10241: connection refused"), local}, []string{"point --powermetrics at it", Unreachable}},
	} {
		err := withHint(c.errs)
		var e *cli.Error
		if !errors.As(err, &e) || e.Status != cli.StatusFailure || !slices.Equal(e.Hints, c.hints) {
			t.Errorf("%s: %v, hints %q; want status 125 and %q", c.name, err, cli.HintsOf(err), c.hints)
		}
	}
}

// The cluster's average over the time measured is the sum of each node's
// own (energy over its covered time), made from each node's figures
// whatever the node says of it; the average itself when every node
// measured all of its span, and none when a node measured nothing.
func TestTheAverageOverTheTimeMeasuredIsEachNodesSummed(t *testing.T) {
	node := func(secs, joules, cov float64, claims *wire.Components) wire.NodeSummary {
		r := goodReading(time.Now().Add(-time.Duration(secs*float64(time.Second))), time.Duration(secs*float64(time.Second)), true)
		r.Coverage, r.EnergyJoules = wire.Num(cov), wire.Components{Total: wire.Num(joules), CPU: wire.Num(joules)}
		r.AvgPowerWatts = wire.Components{Total: wire.Num(joules / secs), CPU: wire.Num(joules / secs)}
		r.MeasuredAvgPowerWatts = claims
		if err := checkReading(&r, true); err != nil {
			t.Fatal(err)
		}
		return wire.NodeSummary{Summary: r.Summary, Node: "n"}
	}
	lie := &wire.Components{Total: 999, CPU: 999}
	// 2 s at 25 % covered, 5 J: 10 W while measured; 2 s all covered, 8 J: 4 W.
	a, b := node(2, 5, 0.25, lie), node(2, 8, 1, nil)
	if m := a.MeasuredAvgPowerWatts; m == nil || math.Abs(float64(m.Total)-10) > 1e-9 {
		t.Errorf("node a's average over the time measured: %+v, want 10 W, made from its figures, not its claim", m)
	}
	sum := Total([]wire.NodeSummary{a, b}, nil, time.Unix(0, 0), 2*time.Second)
	if m := sum.MeasuredAvgPowerWatts; m == nil || math.Abs(float64(m.Total)-14) > 1e-9 || math.Abs(float64(sum.AvgPowerWatts.Total)-6.5) > 1e-9 {
		t.Errorf("total: over the time measured %+v, over the elapsed time %v; want 14 W and 6.5 W", m, sum.AvgPowerWatts.Total)
	}
	whole := Total([]wire.NodeSummary{b, b}, nil, time.Unix(0, 0), 2*time.Second)
	if m := whole.MeasuredAvgPowerWatts; m == nil || *m != whole.AvgPowerWatts {
		t.Errorf("every moment measured: %+v, want the average %+v", m, whole.AvgPowerWatts)
	}
	if none := Total([]wire.NodeSummary{b, node(2, 0, 0, nil)}, nil, time.Unix(0, 0), 2*time.Second); none.MeasuredAvgPowerWatts != nil {
		t.Errorf("a node that measured nothing: %+v, want none", none.MeasuredAvgPowerWatts)
	}
	// Energy in a sliver of covered time is power no Mac draws.
	r := goodReading(time.Now().Add(-2*time.Second), 2*time.Second, true)
	r.Coverage = 1e-6
	if err := checkReading(&r, true); err == nil || !strings.Contains(err.Error(), "energy_joules/(duration_seconds×coverage).total") {
		t.Errorf("20 J in 2 µs covered: %v, want it refused", err)
	}
}
