package main

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/wire"
)

// startNode is a serve named name, at 100 ms, over the fake at profile.
func startNode(t *testing.T, name, profile string, env ...string) *served {
	t.Helper()
	return startServe(t, profile, env, "-i", "100ms", "--node-name", name)
}

// runNodes runs exopower run --json over the nodes and returns its summary
// and exit status.
func runNodes(t *testing.T, nodes []*served, argv ...string) (wire.Summary, int) {
	t.Helper()
	args := []string{"run", "--json"}
	for _, n := range nodes {
		args = append(args, "--node", n.url)
	}
	cmd, _ := exopowerCmd(t, append(append(args, "--"), argv...)...)
	out, err := cmd.Output()
	code := exitCode(t, err)
	var sum wire.Summary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	return sum, code
}

// truth is the fake's exact energy over a node's span, by the node's own
// clock (the same machine's here).
func truth(t *testing.T, n *served, ns wire.NodeSummary) float64 {
	t.Helper()
	start, err1 := time.Parse(time.RFC3339Nano, ns.StartedAt)
	end, err2 := time.Parse(time.RFC3339Nano, ns.EndedAt)
	if err1 != nil || err2 != nil {
		t.Fatalf("node %s: started_at %q, ended_at %q", ns.Node, ns.StartedAt, ns.EndedAt)
	}
	return n.profile.Energy(start, end).Total()
}

// Three Macs, three known powers, one with uneven windows and one with
// steps: each node's energy and the cluster's total are within 0.5 % of
// the exact integrals over the nodes' spans, and the average is the total
// over the command's elapsed time.
func TestRunOverThreeNodesSumsTheirEnergy(t *testing.T) {
	t.Parallel() // each waits on its nodes in real time, not on the CPU
	nodes := []*served{
		startNode(t, "steady", "0=10,2,0.5"),
		startNode(t, "square", fakepm.DefaultProfile),
		startNode(t, "uneven", "0=3,1,0", "FAKEPM_SEED=7"),
	}
	sum, code := runNodes(t, nodes, "sleep", "2")
	if code != 0 || len(sum.Nodes) != 3 {
		t.Fatalf("status %d, %d nodes", code, len(sum.Nodes))
	}
	var want float64
	for i, n := range nodes {
		ns := sum.Nodes[i]
		exact := truth(t, n, ns)
		want += exact
		if e := math.Abs(float64(ns.EnergyJoules.Total)-exact) / exact; e > 0.005 || ns.Lost || ns.Coverage != 1 {
			t.Errorf("node %s: %.4f J, exact %.4f J (off by %.3f%%), lost %v, coverage %v", ns.Node, float64(ns.EnergyJoules.Total), exact, e*100, ns.Lost, ns.Coverage)
		}
	}
	got := float64(sum.EnergyJoules.Total)
	if e := math.Abs(got-want) / want; e > 0.005 {
		t.Errorf("total %.4f J, exact %.4f J: off by %.3f%%", got, want, e*100)
	}
	if avg := got / float64(sum.DurationSeconds); math.Abs(float64(sum.AvgPowerWatts.Total)-avg) > 1e-9*avg {
		t.Errorf("average %v W, want the total over the elapsed time: %v W", sum.AvgPowerWatts.Total, avg)
	}
	if sum.UncertaintyJoules == nil || *sum.UncertaintyJoules <= 0 || len(sum.Warnings) != 0 {
		t.Errorf("uncertainty %v, warnings %q", sum.UncertaintyJoules, sum.Warnings)
	}
	t.Logf("total %.4f J, exact %.4f J, uncertainty ±%.4f J", got, want, float64(*sum.UncertaintyJoules))
}

// A node that dies mid-run: the command runs on and its status is kept;
// the node is marked lost, its coverage what it covered of the run, the
// total is partial and says so; the rest is measured.
func TestRunOverNodesWhenOneDies(t *testing.T) {
	t.Parallel() // each waits on its nodes in real time, not on the CPU
	nodes := []*served{startNode(t, "stays", "0=10,0,0"), startNode(t, "dies", "0=5,0,0")}
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	go func() {
		waitForFile(started)
		time.Sleep(1500 * time.Millisecond) // past the first reading of the spans
		nodes[1].kill()
	}()
	sum, code := runNodes(t, nodes, "sh", "-c", "touch "+started+"; sleep 3; exit 3")
	if code != 3 {
		t.Errorf("status %d, want the command's 3", code)
	}
	if len(sum.Nodes) != 2 || sum.Nodes[0].Lost || !sum.Nodes[1].Lost {
		t.Fatalf("nodes %+v: want the second lost", sum.Nodes)
	}
	if all := strings.Join(sum.Warnings, "\n"); !strings.Contains(all, "node dies ("+nodes[1].url+") stopped answering") || !strings.Contains(all, "the total is partial") {
		t.Errorf("warnings %q", sum.Warnings)
	}
	// It covered the 1.5 s before it died, of the 3 s command: the
	// total's coverage, the lowest node's, says so.
	if c := sum.Nodes[1].Coverage; c >= 0.75 || sum.Coverage != c {
		t.Errorf("coverage %v, the lost node's %v; want what it covered of the command, about half", sum.Coverage, c)
	}
	stays := truth(t, nodes[0], sum.Nodes[0])
	if got := float64(sum.Nodes[0].EnergyJoules.Total); math.Abs(got-stays)/stays > 0.005 || float64(sum.EnergyJoules.Total) < got {
		t.Errorf("the node that stayed: %.4f J, exact %.4f J; total %.4f J", got, stays, float64(sum.EnergyJoules.Total))
	}
}

// A node that answers the end of its span slowly (a proxy holds the
// answer back) is waited for no longer than its interval and EndSlack:
// the run ends, the node is lost, and the other node's result is whole.
func TestRunOverNodesDoesNotWaitForASlowOne(t *testing.T) {
	t.Parallel() // each waits on its nodes in real time, not on the CPU
	fast, slow := startNode(t, "fast", "0=10,0,0"), startNode(t, "slow", "0=5,0,0")
	target, _ := url.Parse(slow.url)
	proxy := httputil.NewSingleHostReverseProxy(target)
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/end") {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	held := &served{url: srv.URL, profile: slow.profile}
	sum, code := runNodes(t, []*served{fast, held}, "true")
	if code != 0 || len(sum.Nodes) != 2 || sum.Nodes[0].Lost || !sum.Nodes[1].Lost {
		t.Fatalf("status %d, nodes %+v: want the slow one lost", code, sum.Nodes)
	}
	if !strings.Contains(strings.Join(sum.Nodes[1].Warnings, "\n"), "no answer within 2.1s (its interval, at most 10s, and 2s)") {
		t.Errorf("slow node's warnings %q", sum.Nodes[1].Warnings)
	}
}

// watch --node --json: a line per node's window, named, each followed by
// a total line whose power and energy are the sums of every node's newest;
// the summary at the end is the cluster's, with a row per node.
func TestWatchOverNodes(t *testing.T) {
	t.Parallel() // each waits on its nodes in real time, not on the CPU
	nodes, out := watchTwoNodes(t)
	ls := strings.Split(strings.TrimSpace(string(out)), "\n")
	latest := map[string]wire.SampleLine{}
	samples := 0
	for _, l := range ls[:len(ls)-1] {
		var sl wire.SampleLine
		if err := json.Unmarshal([]byte(l), &sl); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		switch sl.Type {
		case "sample":
			samples++
			latest[sl.Node] = sl
			want := map[string]float64{"ten": 10, "twenty": 20}[sl.Node]
			if math.Abs(float64(sl.PowerWatts.Total)-want) > 0.01 {
				t.Errorf("node %q: %v W, want %v W", sl.Node, sl.PowerWatts.Total, want)
			}
		case "total":
			var p, e float64
			for _, x := range latest {
				p += float64(x.PowerWatts.Total)
				e += float64(x.EnergyJoules.Total)
			}
			if math.Abs(float64(sl.PowerWatts.Total)-p) > 1e-9 || math.Abs(float64(sl.EnergyJoules.Total)-e) > 1e-9 {
				t.Errorf("total %v W, %v J; the nodes' newest sum to %v W, %v J", sl.PowerWatts.Total, sl.EnergyJoules.Total, p, e)
			}
		default:
			t.Errorf("line of type %q", sl.Type)
		}
	}
	if samples < 6 {
		t.Errorf("%d node lines, want 3 of each node at least", samples)
	}
	var sum wire.Summary
	if err := json.Unmarshal([]byte(ls[len(ls)-1]), &sum); err != nil || sum.Type != "summary" || len(sum.Nodes) != 2 {
		t.Fatalf("summary %q: %v", ls[len(ls)-1], err)
	}
	for i, n := range nodes {
		exact := truth(t, n, sum.Nodes[i])
		if got := float64(sum.Nodes[i].EnergyJoules.Total); math.Abs(got-exact)/exact > 0.005 {
			t.Errorf("node %s: %.4f J, exact %.4f J", sum.Nodes[i].Node, got, exact)
		}
	}
	// The cluster draws 30 W: its energy over the watch is 30 W times the
	// watch's length, to within the bound the summary gives for the
	// nodes' span edges (each known to a round trip, which a loaded
	// machine lengthens) and 1 %.
	want := 30 * float64(sum.DurationSeconds)
	if sum.UncertaintyJoules == nil || sum.IntervalSeconds != 0.1 {
		t.Fatalf("uncertainty %v, interval %v: want a bound, and the nodes' 0.1 s", sum.UncertaintyJoules, sum.IntervalSeconds)
	}
	if got, bound := float64(sum.EnergyJoules.Total), float64(*sum.UncertaintyJoules)+0.01*want; math.Abs(got-want) > bound {
		t.Errorf("%.4f J over %.3f s, want %.4f J (30 W) within %.4f J; average %v W", got, float64(sum.DurationSeconds), want, bound, sum.AvgPowerWatts.Total)
	}
}

// Ctrl-C during a run over several Macs goes to the command, as without
// --node; every node's span is closed and the summary holds what was
// measured.
func TestRunOverNodesInterrupted(t *testing.T) {
	t.Parallel() // each waits on its nodes in real time, not on the CPU
	nodes := []*served{startNode(t, "a", "0=10,0,0"), startNode(t, "b", "0=5,0,0")}
	cmd, dir := exopowerCmd(t, "run", "--json", "--node", nodes[0].url, "--node", nodes[1].url, "--", "sh", "-c", "touch started; sleep 30")
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(dir, "started"))
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCode(t, cmd.Wait()); code != 130 {
		t.Errorf("status %d, want 130", code)
	}
	var sum wire.Summary
	if err := json.Unmarshal([]byte(out.String()), &sum); err != nil || len(sum.Nodes) != 2 {
		t.Fatalf("summary %q: %v", out.String(), err)
	}
	for i, n := range nodes {
		if ns := sum.Nodes[i]; ns.Lost || ns.EndedAt == "" || ns.Samples == 0 {
			t.Errorf("node %s: lost %v, ended %q, %d samples", ns.Node, ns.Lost, ns.EndedAt, ns.Samples)
		}
		if st := nodeStatus(t, n); st.OpenSpans != 0 {
			t.Errorf("node %s: %d spans still open", sum.Nodes[i].Node, st.OpenSpans)
		}
	}
}

// nodeStatus reads a node's GET /v1/status.
func nodeStatus(t *testing.T, n *served) wire.Status {
	t.Helper()
	var st wire.Status
	resp, err := http.Get(n.url + "/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// A node that does not answer before the start: exopower names it and
// exits 125 before anything runs; --skip-unreachable goes on without it
// and the summary says so.
func TestRunOverNodesWithOneUnreachable(t *testing.T) {
	t.Parallel() // each waits on its nodes in real time, not on the CPU
	up := startNode(t, "up", "0=10,0,0")
	down := "http://127.0.0.1:1"
	cmd, dir := exopowerCmd(t, "run", "--node", up.url, "--node", down, "--", "touch", "ran")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if code := exitCode(t, cmd.Run()); code != 125 || !strings.Contains(stderr.String(), "node "+down+": ") {
		t.Errorf("status %d, stderr %q: want 125 naming the node", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran")
	}
	if st := nodeStatus(t, up); st.OpenSpans != 0 {
		t.Errorf("%d spans left open on the node that answered", st.OpenSpans)
	}
	var sum wire.Summary
	cmd, _ = exopowerCmd(t, "run", "--json", "--skip-unreachable", "--node", up.url, "--node", down, "--", "true")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &sum); err != nil || len(sum.Nodes) != 1 || !strings.Contains(strings.Join(sum.Warnings, "\n"), "node "+down+" did not answer before the start") {
		t.Errorf("summary %s: %v", out, err)
	}
}

// A second Ctrl-C wants out at once, but every node's span is still
// closed: none is left open on a node for a day.
func TestRunOverNodesInterruptedTwiceClosesTheSpans(t *testing.T) {
	t.Parallel()
	n := startNode(t, "a", "0=10,0,0")
	cmd, dir := exopowerCmd(t, "run", "--node", n.url, "--", "sh", "-c", "trap '' INT; touch started; while :; do sleep 1; done")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := lines(stderr)
	waitFile(t, filepath.Join(dir, "started"))
	cmd.Process.Signal(syscall.SIGINT)
	await(t, out, "again to stop at once")
	cmd.Process.Signal(syscall.SIGINT)
	awaitSummary(t, out)
	if code := exitCode(t, cmd.Wait()); code != 137 {
		t.Errorf("status %d, want the killed command's 137", code)
	}
	// The node closes the span once the request has come: exopower has
	// sent it before it exits, so it comes at once here.
	deadline := time.Now().Add(time.Minute)
	for nodeStatus(t, n).OpenSpans != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the node's span is still open a minute after exopower exited")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// watchTwoNodes runs watch --node --json -n 3 over two serves of 10 W and
// 20 W, and returns them and what it wrote.
func watchTwoNodes(t *testing.T) ([]*served, []byte) {
	t.Helper()
	nodes := []*served{startNode(t, "ten", "0=10,0,0"), startNode(t, "twenty", "0=20,0,0")}
	cmd, _ := exopowerCmd(t, "watch", "--json", "-n", "3", "--node", nodes[0].url, "--node", nodes[1].url)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return nodes, out
}
