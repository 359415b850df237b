package output

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/keys"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/wire"
)

// testSnapshot is a refresh of a Mac of four apps, one of another user's
// processes, one gone, over one second after 75 s: its figures add up,
// the apps' 6.5 W and the rest's 18.5 W to the Mac's 25 W.
func testSnapshot() *apps.Snapshot {
	t0 := testOrigin
	return &apps.Snapshot{
		Seq: 75, Start: t0.Add(74 * time.Second), End: t0.Add(75 * time.Second), Since: t0, Scope: "system",
		Mac: apps.Rails{Has: power.Reported{System: true, DRAM: true},
			Power:  power.Values{CPU: 5, GPU: 2, ANE: 0.5, Total: 7.5, DRAM: 1, System: 25},
			Energy: power.Values{CPU: 300, GPU: 100, ANE: 30, Total: 430, DRAM: 70, System: 1800}},
		Apps: []apps.App{
			{Name: "Safari", Pid: 400, Power: apps.Figures{CPU: 2, GPU: 1.5}, Energy: apps.Figures{CPU: 120, GPU: 60},
				Processes: []apps.Process{
					{Pid: 401, Name: "com.apple.WebKit.WebContent", Readable: true, Power: apps.Figures{CPU: 1.5, GPU: 1.5}, Energy: apps.Figures{CPU: 80, GPU: 60}},
					{Pid: 400, Name: "Safari", Readable: true, Power: apps.Figures{CPU: 0.5}, Energy: apps.Figures{CPU: 40}}}},
			{Name: "cc1 \\x1b]0;owned\\x07", Pid: 900, Power: apps.Figures{CPU: 2.5}, Energy: apps.Figures{CPU: 20},
				Processes: []apps.Process{{Pid: 900, Name: "cc1", Readable: true, Power: apps.Figures{CPU: 2.5}, Energy: apps.Figures{CPU: 20}}}},
			{Name: "Xcode", Power: apps.Figures{}, Energy: apps.Figures{CPU: 50}, Gone: true},
			{Name: "mds_stores", Pid: 300, Power: apps.Figures{GPU: 0.5}, Energy: apps.Figures{CPU: 0, GPU: 5}, NotReadable: 1,
				Processes: []apps.Process{{Pid: 300, Name: "mds_stores", UID: 0, Power: apps.Figures{GPU: 0.5}, Energy: apps.Figures{GPU: 5}}}},
		},
		Forgotten: apps.Figures{CPU: 10},
		Rest: apps.Rest{Power: apps.RestFigures{CPU: 0.5, GPU: 0, ANE: 0.5, DRAM: 1, System: 16.5, Total: 18.5},
			Energy: apps.RestFigures{CPU: 100, GPU: 35, ANE: 30, DRAM: 70, System: 1300, Total: 1535}},
		Processes: apps.Counts{Listed: 812, Read: 640, NotReadable: 172},
		CPUScale:  1,
	}
}

// render draws v over s at width x height, plainly.
func render(v *AppsView, s *apps.Snapshot, width, height int) string {
	return v.Render(s, testSource, width, height, &Styles{Plain: true})
}

// appOrder is the apps' names in the order the screen lists them.
func appOrder(screen string) []string {
	var names []string
	for _, l := range strings.Split(screen, "\n") {
		if len(l) > 3 && (l[1] == ' ' || strings.HasPrefix(l[1:], "▸") || strings.HasPrefix(l[1:], "▾")) && !strings.HasPrefix(l, "   APP") {
			if f := strings.Fields(strings.TrimLeft(l[1:], " ▸▾")); len(f) > 0 && !strings.HasPrefix(l, "     ") {
				names = append(names, f[0])
			}
		}
	}
	return names
}

func press(v *AppsView, ks ...keys.Key) {
	for _, k := range ks {
		v.Key(k)
	}
}

func runes(s string) []keys.Key {
	var ks []keys.Key
	for _, r := range s {
		ks = append(ks, keys.Key{Rune: r})
	}
	return ks
}

// The screen says how the Mac's figure is made, now and since the start:
// the apps' sum and the rest's, each as the rows and the parts show them.
func TestTopAddsTheAppsAndTheRestUpToTheMac(t *testing.T) {
	got := render(&AppsView{}, testSnapshot(), 100, 24)
	for _, want := range []string{
		"\nnow      Mac 25.00 W  =  apps 6.500 W  +  rest 18.50 W\n",
		"\nenergy   Mac 1800.0 J  =  apps 255.00 J  +  forgotten 10.00 J  +  rest 1535.0 J\n",
		"\nrails    CPU 5.000 W  GPU 2.000 W  ANE 0.500 W  DRAM 1.000 W  system 25.00 W\n",
		"\nrest     CPU 0.500 W   GPU 0.000 W   ANE 0.500 W   DRAM 1.000 W   rest of the Mac 16.50 W\n",
		"\nprocs    812 listed, 640 read, 172 not read\n",
		"\nnote     172 processes of other users not read: their CPU energy is in the rest",
		"\n>▸ Safari ", "    3.500 W    2.000 W    1.500 W   180.00 J      2\n",
		"    0.000 W    0.000 W    0.000 W    50.00 J   gone\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	checkFits(t, got, 100, 24)
}

// Each key orders the apps by its figure, highest first, or by name.
func TestTopSortsByEachKey(t *testing.T) {
	s := testSnapshot()
	for _, tc := range []struct {
		key  rune
		want string
	}{
		{'p', "Safari cc1 mds_stores Xcode"},
		{'e', "Safari Xcode cc1 mds_stores"},
		{'c', "cc1 Safari Xcode mds_stores"},
		{'g', "Safari mds_stores cc1 Xcode"},
		{'n', "cc1 mds_stores Safari Xcode"},
	} {
		v := &AppsView{}
		press(v, keys.Key{Rune: tc.key})
		got := render(v, s, 100, 24)
		if order := strings.Join(appOrder(got), " "); order != tc.want {
			t.Errorf("after %q: %s, want %s", tc.key, order, tc.want)
		}
		if !strings.Contains(got, "sort "+sortNames[sortKeys[tc.key]]) {
			t.Errorf("after %q the footer does not say the order:\n%s", tc.key, got)
		}
	}
}

// A filter keeps the apps whose name or a process's holds it, in any
// case; Escape drops it.
func TestTopFiltersByAnAppsOrItsProcessesNames(t *testing.T) {
	s := testSnapshot()
	v := &AppsView{}
	press(v, runes("/wEB")...)
	if got := render(v, s, 100, 24); !strings.HasSuffix(got, "filter: wEB_   (Enter keeps it, Esc drops it)") {
		t.Errorf("while typing, the footer:\n%s", got)
	}
	press(v, keys.Key{Name: keys.Enter})
	got := render(v, s, 100, 24)
	if order := appOrder(got); len(order) != 1 || order[0] != "Safari" || !strings.Contains(got, `filter "wEB": 1 of 4 apps`) {
		t.Errorf("filtered on a process's name: %v\n%s", order, got)
	}
	// The sum is still the whole Mac's.
	if !strings.Contains(got, "apps 6.500 W") {
		t.Errorf("the filter changed the sum:\n%s", got)
	}
	press(v, keys.Key{Name: keys.Escape})
	if order := appOrder(render(v, s, 100, 24)); len(order) != 4 {
		t.Errorf("after Escape %v, want the 4 apps", order)
	}
}

// Enter opens the app under the cursor into its processes, and the
// cursor stays on it as the apps change places.
func TestTopOpensAnAppAndTheCursorFollowsIt(t *testing.T) {
	s := testSnapshot()
	v := &AppsView{}
	render(v, s, 100, 24)
	press(v, keys.Key{Name: keys.Down}, keys.Key{Name: keys.Up}, keys.Key{Name: keys.Enter})
	got := render(v, s, 100, 24)
	for _, want := range []string{"\n>▾ Safari ", "\n     401 com.apple.WebKit.WebContent ", "    3.000 W    1.500 W    1.500 W   140.00 J\n", "\n     400 Safari "} {
		if !strings.Contains(got, want) {
			t.Errorf("opened, the screen lacks %q:\n%s", want, got)
		}
	}
	// Safari falls to the bottom: the cursor goes with it.
	s.Apps[0].Power = apps.Figures{}
	s.Apps[0].Energy = apps.Figures{}
	press(v, keys.Key{Rune: 'e'})
	got = render(v, s, 100, 24)
	if !strings.Contains(got, "\n>▾ Safari ") {
		t.Errorf("the cursor left Safari as it moved:\n%s", got)
	}
	press(v, keys.Key{Name: keys.Down}, keys.Key{Name: keys.Left})
	if got := render(v, s, 100, 24); !strings.Contains(got, "\n>▸ Safari ") || strings.Contains(got, "WebContent") {
		t.Errorf("← on a process closes its app with the cursor on it:\n%s", got)
	}
}

// Names of every width fit the column; the screen fits the terminal at
// every size, a small one keeping the sum and the list.
func TestTopFitsTheTerminal(t *testing.T) {
	s := testSnapshot()
	s.Apps[1].Name = "中文アプリケーションの名前がとても長い場合" + strings.Repeat("x", 300)
	cutNumber := regexp.MustCompile(`[0-9.]…`)
	for _, size := range [][2]int{{100, 24}, {80, 24}, {60, 10}, {55, 20}, {50, 12}, {40, 6}, {200, 50}, {300, 10}} {
		got := render(&AppsView{}, s, size[0], size[1])
		checkFits(t, got, size[0], size[1])
		lines := strings.Split(got, "\n")
		if !strings.Contains(got, "Mac 25.00 W") || !strings.HasPrefix(lines[len(lines)-1], "sort power") {
			t.Errorf("%dx%d: no sum, or not the keys on the last row:\n%s", size[0], size[1], got)
		}
		// A figure is shown whole or not at all, in the list and in the
		// sum (a row's name may be cut).
		for _, l := range lines {
			if cutNumber.MatchString(l) && !strings.Contains(l, "中文") {
				t.Errorf("%dx%d: a number cut: %q", size[0], size[1], l)
			}
		}
		// Where the terminal has the rows, the list shows all four
		// apps, the parts' lines given up first.
		if size[1] >= 10 && len(appOrder(got)) != 4 {
			t.Errorf("%dx%d: %d apps shown, want 4:\n%s", size[0], size[1], len(appOrder(got)), got)
		}
	}
	// The names' column stops at 48 cells, near its figures.
	if got := render(&AppsView{}, testSnapshot(), 300, 24); !strings.Contains(got, ">▸ Safari"+strings.Repeat(" ", 42)+"    3.500 W") {
		t.Errorf("at 300 columns:\n%s", got)
	}
}

// The live screen: tab goes from the rails to the apps and back, both fed
// all along; space pauses the apps on what they show; q ends it.
func TestScreenSwitchesBetweenRailsAndApps(t *testing.T) {
	term := &fakeTerminal{width: 100, height: 24, tty: true}
	sink, err := NewSink(SinkConfig{Format: Panel, Terminal: term.terminal(), Getenv: env("NO_COLOR", "1"), Origin: testOrigin,
		Source: func() wire.Source { return testSource }, Keys: true})
	if err != nil {
		t.Fatal(err)
	}
	sc := sink.(Screen)
	wins, tots := squareWave(3)
	feed(t, sc, wins, tots)
	if err := sc.Apps(*testSnapshot()); err != nil {
		t.Fatal(err)
	}
	step := func(k keys.Key, want string) {
		t.Helper()
		term.Reset()
		if quit, err := sc.Key(k); quit || err != nil {
			t.Fatalf("key %v: quit %v, %v", k, quit, err)
		}
		if got := frame(t, term.String()); !strings.Contains(got, want) {
			t.Errorf("after %v the screen lacks %q:\n%s", k, want, got)
		}
	}
	step(keys.Key{Name: keys.Tab}, "apps 6.500 W")
	step(keys.Key{Rune: ' '}, "PAUSED")
	later := testSnapshot()
	later.Mac.Power.System = 99
	if err := sc.Apps(*later); err != nil {
		t.Fatal(err)
	}
	// Going on shows the newest refresh at once.
	step(keys.Key{Rune: ' '}, "Mac 99.00 W")
	step(keys.Key{Name: keys.Tab}, "q quit  tab apps")
	if quit, err := sc.Key(keys.Key{Rune: 'q'}); !quit || err != nil {
		t.Errorf("q: quit %v, %v", quit, err)
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
}
