package fakellm

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/fakepm"
)

// fake-openai prints its URL and the fake powermetrics's environment, serves, and
// ends with status 0 when its context does.
func TestItPrintsWhereItServesAndTheProfile(t *testing.T) {
	overrides := filepath.Join(t.TempDir(), "overrides")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, w := io.Pipe()
	code := make(chan int)
	go func() {
		code <- Main(ctx, []string{"-period", "100ms", "-prefill", "10ms", "-decode", "20ms", "-tokens", "2",
			"-idle", "1,0.5,0.25", "-overrides", overrides}, w, os.Stderr)
		w.Close()
	}()
	lines := bufio.NewScanner(r)
	var out []string
	for range 3 {
		if !lines.Scan() {
			t.Fatalf("the output ended after %q", out)
		}
		out = append(out, lines.Text())
	}
	if !strings.HasPrefix(out[0], "http://127.0.0.1:") || out[1] != "FAKEPM_PROFILE='0=1,0.5,0.25'" || out[2] != "FAKEPM_OVERRIDES='"+overrides+"'" {
		t.Errorf("printed %q", out)
	}
	if _, err := fakepm.ParseProfile(strings.Trim(strings.TrimPrefix(out[1], "FAKEPM_PROFILE="), "'")); err != nil {
		t.Error(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Post(out[0]+"/v1/completions", "application/json", strings.NewReader(`{"model":"m","prompt":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), " tok1 tok2") {
		t.Errorf("%s %s", resp.Status, b)
	}
	if o, err := fakepm.ReadOverrides(overrides); err != nil || len(o) != 2 {
		t.Errorf("overrides %v, %v; want the two phases of the request", o, err)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit status %d", c)
	}
}

func TestItRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-idle", "1,2"}, {"-nonsense"}, {"extra"}, {"-addr", "0.0.0.0:0"}, {"-decode", "2s"}} {
		var stderr strings.Builder
		if c := Main(context.Background(), append(args, "-overrides", filepath.Join(t.TempDir(), "o")), io.Discard, &stderr); c == 0 {
			t.Errorf("%q: exit status 0", args)
		} else {
			t.Logf("%q: %d, %s", args, c, strings.TrimSpace(stderr.String()))
		}
	}
}

// Help asked for is no error: -h prints the flags to stdout and exits 0,
// serving nothing.
func TestHelpAskedForIsNoError(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		var stdout, stderr strings.Builder
		if c := Main(context.Background(), []string{arg}, &stdout, &stderr); c != 0 || !strings.Contains(stdout.String(), "-prefill-watts") || stderr.Len() != 0 {
			t.Errorf("%s: exit status %d, stdout %q, stderr %q; want 0, the flags and nothing", arg, c, stdout.String(), stderr.String())
		}
	}
}
