package apps_test

import (
	"maps"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/fakepm"
)

// seriesRun polls table every second to end, as serve does, feeding a
// Series of the top apps; check is called after each round.
func seriesRun(t *testing.T, table []fakepm.Process, top int, forget, end time.Duration, check func(at time.Duration, s *apps.Series)) {
	t.Helper()
	c := &clock{t: t0}
	mac := fakepm.NewMac(table, c.now)
	p := apps.New(mac, mac, apps.Config{Forget: forget})
	// serve started 10 s after its stream: 10 s of the rails are the
	// remainder's.
	base := rails.Scale(10)
	if err := p.Start(apps.Reading{At: t0, Energy: base, Has: ioreportHas}); err != nil {
		t.Fatal(err)
	}
	s := apps.NewSeries(top, base)
	for at := time.Second; at <= end; at += time.Second {
		c.t = t0.Add(at)
		if err := p.Round(apps.Reading{At: c.t, Energy: base.Add(rails.Scale(at.Seconds())), Has: ioreportHas}); err != nil {
			t.Fatal(err)
		}
		s.Add(p, time.Second)
		check(at, s)
	}
}

// seriesOf is every series of s, other's too, by app.
func seriesOf(s *apps.Series) map[string]apps.Figures {
	m := map[string]apps.Figures{}
	s.Each(func(app string, e apps.Figures) {
		if _, twice := m[app]; twice {
			panic("two series of " + app)
		}
		m[app] = e
	})
	return m
}

// The apps' series, other's and the remainder add up to the Mac's CPU and
// GPU energy after every round, what came before serve's first reading
// included: the node's own counters, to the nanojoule. The two apps
// with the most energy have series from the first round on, and count
// from then; every other app is in other's.
func TestTheSeriesAddUpToTheMacsCounters(t *testing.T) {
	seriesRun(t, fakepm.BusyMac(), 2, 0, 5*s, func(at time.Duration, sr *apps.Series) {
		m := seriesOf(sr)
		var sum apps.Figures
		for _, e := range m {
			sum = apps.Figures{CPU: sum.CPU + e.CPU, GPU: sum.GPU + e.GPU}
		}
		un, dropped := sr.Remainder()
		node := rails.Scale(10 + at.Seconds())
		if !nearly(sum.CPU+un.CPU+dropped.CPU, node.CPU) || !nearly(sum.GPU+un.GPU+dropped.GPU, node.GPU) {
			t.Errorf("%v: the series %+v and the remainder %+v, %+v do not make the node's %g J CPU, %g J GPU", at, sum, un, dropped, node.CPU, node.GPU)
		}
		if len(m) != 3 {
			t.Errorf("%v: series of %v, want Safari's, mdworker_shared's and other's", at, maps.Keys(m))
		}
		// Safari: 7 W CPU and 6.4 W GPU, from the second round on, and
		// its Networking helper's 0.5 J at 3 s.
		cpu := 7 * (at.Seconds() - 1)
		if at >= 3*s {
			cpu += 0.5
		}
		if safari := m["Safari"]; !nearly(safari.CPU, cpu) || !nearly(safari.GPU, 6.4*(at.Seconds()-1)) {
			t.Errorf("%v: Safari's series %+v", at, safari)
		}
	})
}

// An app keeps its series once exposed, however far it falls, while
// another rises into the top; an app gone for the time to forget it is
// dropped, its series' energy then the remainder's, and the next app
// takes its place.
func TestASeriesIsKeptUntilItsAppIsForgotten(t *testing.T) {
	table := []fakepm.Process{
		{Name: "a", Pid: 100, ID: 100, Path: "/usr/bin/a", Born: -s, Exits: 2500 * ms, Reaped: 2600 * ms, Watts: 10},
		{Name: "b", Pid: 101, ID: 101, Path: "/usr/bin/b", Born: -s, Watts: 6},
		{Name: "c", Pid: 102, ID: 102, Path: "/usr/bin/c", Born: -s, Watts: 1},
	}
	want := map[time.Duration]map[string]apps.Figures{
		// a leads from the first round; its series counts from then.
		1 * s: {"a": {}, "other": {CPU: 17}},
		2 * s: {"a": {CPU: 10}, "other": {CPU: 24}},
		// a is gone at 3 s, read to 20 J; b passes it at 4 s (24 J)
		// and has a series too, a keeps its own.
		3 * s: {"a": {CPU: 10}, "other": {CPU: 31}},
		4 * s: {"a": {CPU: 10}, "b": {}, "other": {CPU: 38}},
		7 * s: {"a": {CPU: 10}, "b": {CPU: 18}, "other": {CPU: 41}},
		// Gone since 3 s, a is forgotten at 8 s: its series' 10 J join
		// the remainder.
		8 * s: {"b": {CPU: 24}, "other": {CPU: 42}},
	}
	seriesRun(t, table, 1, 5*s, 8*s, func(at time.Duration, sr *apps.Series) {
		w, ok := want[at]
		if !ok {
			return
		}
		got := seriesOf(sr)
		for app, e := range got {
			got[app] = apps.Figures{CPU: round9(e.CPU), GPU: round9(e.GPU)}
		}
		if !maps.Equal(got, w) {
			t.Errorf("%v: %v, want %v", at, got, w)
		}
		if _, dropped := sr.Remainder(); at == 8*s && !nearly(dropped.CPU, 10) {
			t.Errorf("8s: dropped %+v, want a's 10 J", dropped)
		}
	})
}

// An app named as other's series is counted in it: no two series share a
// label.
func TestAnAppNamedOtherIsInOthers(t *testing.T) {
	table := []fakepm.Process{{Name: "other", Pid: 100, ID: 100, Path: "/usr/local/bin/other", Born: -s, Watts: 10}}
	seriesRun(t, table, 5, 0, 2*s, func(at time.Duration, sr *apps.Series) {
		if m := seriesOf(sr); len(m) != 1 || !nearly(m["other"].CPU, 10*at.Seconds()) {
			t.Errorf("%v: %v, want other's alone, with the app's 10 W", at, m)
		}
	})
}

func round9(x float64) float64 { return float64(int64(x*1e9+0.5)) / 1e9 }

// An app whose recent energy has fallen far below the top's (a quarter
// of the last of the top) gives its series' place to an app in the top
// when all the places are taken: apps that drew for a moment once would
// otherwise hold them for good, and the busiest app would have none.
// The series given up has its energy in the remainder's dropped part,
// and the sums still make the node's counters.
func TestASeriesFallenFarBelowTheTopGivesItsPlace(t *testing.T) {
	table := []fakepm.Process{
		// a leads the first rounds and has a series; b passes it in
		// the third and has the other place; both end soon after, read
		// to 10 J and 12 J. d starts at 4 s.
		{Name: "a", Pid: 100, ID: 100, Path: "/usr/bin/a", Born: -s, Exits: 2500 * ms, Reaped: 2600 * ms, Watts: 5},
		{Name: "b", Pid: 101, ID: 101, Path: "/usr/bin/b", Born: -s, Exits: 3500 * ms, Reaped: 3600 * ms, Watts: 4},
		{Name: "d", Pid: 103, ID: 103, Path: "/usr/bin/d", Born: 4 * s, Watts: 12},
	}
	seriesRun(t, table, 1, 0, 9*s, func(at time.Duration, sr *apps.Series) {
		got := seriesOf(sr)
		_, hasA := got["a"]
		_, hasD := got["d"]
		switch {
		case at == 7*s && (!hasA || hasD):
			t.Errorf("7s: %v: d's 36 J are not four times a's 10 J: a keeps its place", got)
		case at == 8*s && (hasA || !hasD):
			t.Errorf("8s: %v: d's 48 J are: a, the least, gives its place to d", got)
		case at == 9*s && !nearly(got["d"].CPU, 12):
			t.Errorf("9s: d's series %+v, want the 12 J since it had one", got["d"])
		}
		var sum apps.Figures
		for _, e := range got {
			sum = apps.Figures{CPU: sum.CPU + e.CPU, GPU: sum.GPU + e.GPU}
		}
		un, dropped := sr.Remainder()
		if node := rails.Scale(10 + at.Seconds()); !nearly(sum.CPU+un.CPU+dropped.CPU, node.CPU) {
			t.Errorf("%v: the series %+v and the remainder %+v, %+v do not make the node's %g J CPU", at, sum, un, dropped, node.CPU)
		}
		// a's series counted its second read, 5 J.
		if at >= 8*s && !nearly(dropped.CPU, 5) {
			t.Errorf("%v: dropped %+v, want a's series' 5 J", at, dropped)
		}
	})
}

// Beyond the most apps all gone that it keeps, a Poller forgets the
// longest gone at once, its energy then Forgotten's: processes under ever
// new names cannot grow what it keeps, nor what each round walks.
func TestAPollerKeepsAtMostMaxGoneAppsAllGone(t *testing.T) {
	var table []fakepm.Process
	for i := range 20 {
		born := time.Duration(i) * 100 * ms
		table = append(table, fakepm.Process{Name: "x" + string(rune('a'+i)), Pid: int32(200 + i), ID: uint64(200 + i), Path: "/tmp/x" + string(rune('a'+i)),
			Born: born, Exits: born + 250*ms, Reaped: born + 260*ms, Watts: 1})
	}
	c := &clock{t: t0}
	mac := fakepm.NewMac(table, c.now)
	p := apps.New(mac, mac, apps.Config{MaxGone: 5})
	if err := p.Start(apps.Reading{At: t0, Has: ioreportHas}); err != nil {
		t.Fatal(err)
	}
	for at := 100 * ms; at <= 3*s; at += 100 * ms {
		c.t = t0.Add(at)
		if err := p.Round(apps.Reading{At: c.t, Energy: rails.Scale(at.Seconds()), Has: ioreportHas}); err != nil {
			t.Fatal(err)
		}
		gone := 0
		for _, a := range p.Snapshot().Apps {
			if a.Gone {
				gone++
			}
		}
		if gone > 5 {
			t.Fatalf("%v: %d apps kept all gone; want at most 5", at, gone)
		}
	}
	sn := p.Snapshot()
	var kept float64
	for _, a := range sn.Apps {
		kept += a.Energy.CPU
	}
	// 20 processes of 1 W, each read 200 ms after its start and gone
	// before the next read: 4 J in all, 5 of them kept.
	if !nearly(kept+sn.Forgotten.CPU, 20*0.2) || len(sn.Apps) != 5 {
		t.Errorf("%d apps kept with %g J, forgotten %g J: want 5, and 4 J in all", len(sn.Apps), kept, sn.Forgotten.CPU)
	}
}
