package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// plug starts a fake plug of kind at a square wave of 20 W and 80 W, a
// second each, with cfg's changes.
func plug(t *testing.T, kind fakeplug.Kind, change func(*fakeplug.Config)) (*fakeplug.Fake, string) {
	t.Helper()
	cfg := fakeplug.Config{Kind: kind, Profile: fakeplug.Square(time.Now(), 20, 80, time.Second, time.Second)}
	if change != nil {
		change(&cfg)
	}
	f := fakeplug.New(cfg)
	url, stop, err := f.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return f, url
}

// runWall runs exopower run --json --wall url -- sleep secs and returns
// its summary, its stderr and status.
func runWall(t *testing.T, url string, env []string, secs string, more ...string) (*wire.Summary, string, int) {
	t.Helper()
	cmd, _ := exopowerCmd(t, append(append([]string{"run", "--json", "--wall", url}, more...), "--", "sleep", secs)...)
	cmd.Env = append(cmd.Env, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := exitCode(t, err)
	if len(out) == 0 {
		return nil, stderr.String(), code
	}
	var sum wire.Summary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return &sum, stderr.String(), code
}

// The wall's energy over a command is the plug's: from its own counter
// where the run holds enough of it (within one count and the edges'
// readings of the exact integral), from its power readings where the run
// is shorter, each said as such, with the plug named.
func TestRunMeasuresTheWallWithAPlug(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind   fakeplug.Kind
		secs   string
		method string
		files  bool
	}{
		{fakeplug.ShellyGen2, "3", "counter", false},
		{fakeplug.Tasmota, "2", "power", true},
		{fakeplug.Kasa, "2", "power", false},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			t.Parallel()
			f, url := plug(t, c.kind, nil)
			var more []string
			dir := t.TempDir()
			if c.files {
				more = []string{"--samples", filepath.Join(dir, "w.csv"), "--plot", filepath.Join(dir, "w.svg")}
			}
			sum, stderr, code := runWall(t, url, nil, c.secs, more...)
			if code != 0 || sum == nil || sum.Wall == nil {
				t.Fatalf("status %d, stderr %s", code, stderr)
			}
			w := sum.Wall
			started, err := time.Parse(time.RFC3339Nano, sum.StartedAt)
			if err != nil {
				t.Fatal(err)
			}
			truth := f.Energy(started, started.Add(time.Duration(float64(sum.DurationSeconds)*1e9)))
			t.Logf("%s: %.2f J ± %.2f J by its %s, true %.2f J", c.kind, float64(w.EnergyJoules), float64(w.UncertaintyJoules), w.Method, truth)
			if w.Method != c.method || w.Source.Kind != string(c.kind) || w.Coverage < 0.99 || w.Polls < 2 {
				t.Errorf("wall %+v", w)
			}
			// The uncertainty, and the edges' placing by two processes'
			// clocks: the plug's readings are placed at their round
			// trip's midpoint, a few milliseconds either way at 80 W.
			if diff := math.Abs(float64(w.EnergyJoules) - truth); diff > float64(w.UncertaintyJoules)+0.01*truth {
				t.Errorf("%.2f J, true %.2f J: off by %.2f J, beyond its uncertainty of %.2f J", float64(w.EnergyJoules), truth, diff, float64(w.UncertaintyJoules))
			}
			if c.files {
				checkRowsAtTheWall(t, sum, dir)
			}
		})
	}
}

// checkRowsAtTheWall holds the rows that run --samples --wall wrote in
// dir to the summary: each window's wall between the plug's two levels
// (20 W and 80 W), their energies adding up to the summary's wall (both
// from the plug's power readings, over the same span); and the picture
// that --plot drew has the wall's dashed line, its energy leading the
// title.
func checkRowsAtTheWall(t *testing.T, sum *wire.Summary, dir string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "w.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := output.ReadSamples(f)
	if err != nil || len(rows) < 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	var joules float64
	for i, r := range rows {
		if r.Wall == nil || r.Wall.PowerWatts == nil || r.Wall.EnergyJoules == nil {
			t.Fatalf("row %d has no wall: %+v", i, r.Wall)
		}
		if p := float64(*r.Wall.PowerWatts); p < 20-1e-9 || p > 80+1e-9 {
			t.Errorf("row %d: %.3f W at the wall, outside the plug's 20 W to 80 W", i, p)
		}
		joules += float64(*r.Wall.EnergyJoules)
	}
	if want := float64(sum.Wall.EnergyJoules); math.Abs(joules-want) > 1e-6*want {
		t.Errorf("the rows' energies at the wall add up to %.9f J, the summary's wall is %.9f J", joules, want)
	}
	svg := readFile(t, filepath.Join(dir, "w.svg"))
	if !regexp.MustCompile(`style="[^"]*stroke:#555555[^"]*stroke-dasharray`).MatchString(svg) || !strings.Contains(svg, ">wall ") {
		t.Errorf("the picture has no dashed wall, or no title that leads with it")
	}
}

// A plug that asks for credentials gets them from a file or the
// environment, never from the command line, and they are never printed;
// a plug that cannot be read stops the command before it runs.
func TestRunRefusesAPlugItCannotRead(t *testing.T) {
	t.Parallel()
	const secret = "Zq8Xw-plug-V2mN4pL7"
	_, url := plug(t, fakeplug.ShellyGen1, func(c *fakeplug.Config) { c.User, c.Password = "mac", secret })
	creds := filepath.Join(t.TempDir(), "wall")
	os.WriteFile(creds, []byte("# the plug\nuser mac\npassword "+secret+"\n"), 0o600)
	if sum, stderr, code := runWall(t, url, nil, "1", "--wall-credentials", creds); code != 0 || sum == nil || sum.Wall == nil {
		t.Errorf("with the file: status %d, stderr %s", code, stderr)
	}
	if sum, stderr, code := runWall(t, url, []string{"EXOPOWER_WALL_USER=mac", "EXOPOWER_WALL_PASSWORD=" + secret}, "1"); code != 0 || sum == nil || sum.Wall == nil {
		t.Errorf("from the environment: status %d, stderr %s", code, stderr)
	}
	for _, c := range []struct {
		name, url string
		env       []string
		want      string
	}{
		{"no credentials", url, nil, "$EXOPOWER_WALL_PASSWORD"},
		{"wrong credentials", url, []string{"EXOPOWER_WALL_USER=mac", "EXOPOWER_WALL_PASSWORD=" + secret + "x"}, "$EXOPOWER_WALL_PASSWORD"},
		{"credentials in the URL", strings.Replace(url, "://", "://mac:"+secret+"@", 1), nil, "no credentials in the URL"},
		{"no plug there", "shelly://127.0.0.1:1", nil, "reachable"},
		{"a kind it does not know", "zigbee://plug", nil, "unknown kind"},
	} {
		sum, stderr, code := runWall(t, c.url, c.env, "1")
		if code != 125 || sum != nil || !strings.Contains(stderr, c.want) || len(leaks(stderr, pieces(secret))) > 0 {
			t.Errorf("%s: status %d, stderr %s", c.name, code, stderr)
		}
	}
	// The plug is this Mac's: each node's serve reads its own.
	if sum, stderr, code := runWall(t, url, nil, "1", "--node", "http://127.0.0.1:1"); code != 125 || sum != nil || !strings.Contains(stderr, "not with --node") || !strings.Contains(stderr, "serve --wall URL") {
		t.Errorf("with --node: status %d, stderr %s", code, stderr)
	}
}
