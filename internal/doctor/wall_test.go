package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/ioreport"
	"github.com/exopower/exopower/internal/wall"
)

// doctor --wall says what the plug is, its counter's resolution and what
// its readings give, or, where it cannot read it, why and what to do.
func TestTheWallCheckReadsThePlug(t *testing.T) {
	f := fakeplug.New(fakeplug.Config{Kind: fakeplug.ShellyGen2, Profile: fakeplug.Constant(42), Password: "s3cret-plug-pass"})
	url, stop, err := f.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	target, err := wall.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	dead, _ := wall.Parse("shelly://127.0.0.1:1")
	for _, c := range []struct {
		name       string
		w          Wall
		ok         bool
		want, hint string
	}{
		{"a plug read", Wall{target, wall.Credentials{Password: "s3cret-plug-pass"}}, true, "shelly-gen2 SNPL-00112EU", ""},
		{"no credentials", Wall{Target: target}, false, "asks for", "--wall-credentials"},
		{"no plug there", Wall{Target: dead}, false, "127.0.0.1:1", "reachable"},
	} {
		got := checkWall(context.Background(), c.w, wall.MinInterval, nil)
		text := got.detail + strings.Join(got.fixes, " ")
		if got.ok != c.ok || !strings.Contains(text, c.want) || !strings.Contains(text, c.hint) || strings.Contains(text, "s3cret-p") {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
	got := checkWall(context.Background(), Wall{target, wall.Credentials{Password: "s3cret-plug-pass"}}, wall.MinInterval, nil)
	for _, want := range []string{"counts of 3.600 J", "now 42.00 W", "4 readings", "ten counts (36.00 J)"} {
		if !strings.Contains(got.detail, want) {
			t.Errorf("no %q in %s", want, got.detail)
		}
	}
}

// The plug is held against the Mac's own power over the same seconds
// (the fake IOReport's SMC: 60 W and a swing of 8 W): a plug that reads
// less is not this Mac's, and one that reads far more has something else
// on it.
func TestTheWallCheckHoldsThePlugAgainstTheMac(t *testing.T) {
	prof, err := fakepm.ParseProfile(fakepm.DefaultProfile)
	if err != nil {
		t.Fatal(err)
	}
	open := func() (ioreport.Library, error) {
		return fakepm.NewLiveIOReport(fakepm.LivePower{Profile: prof}, "", nil), nil
	}
	for _, c := range []struct {
		watts float64
		ok    bool
		want  string
	}{
		{75, true, "the whole Mac as its SMC reports it over the same seconds"},
		{30, false, "less than the whole Mac as its SMC reports it"},
		{400, true, "something else draws on this plug"},
	} {
		f := fakeplug.New(fakeplug.Config{Kind: fakeplug.ShellyGen2, Profile: fakeplug.Constant(c.watts)})
		url, stop, err := f.Start("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		target, _ := wall.Parse(url)
		got := checkWall(context.Background(), Wall{Target: target}, wall.MinInterval, open)
		stop()
		t.Logf("a plug at %g W: %s", c.watts, got.detail)
		if got.ok != c.ok || !strings.Contains(got.detail, c.want) || (!c.ok && !strings.Contains(strings.Join(got.fixes, " "), "plugged into this plug")) {
			t.Errorf("a plug at %g W: %+v", c.watts, got)
		}
	}
}
