package fakellm

import (
	"context"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
)

// Each piece goes out at its time in the slot: the first not before the
// prefill's end, the last not before the decode's, all in order. The
// figures are logged; only bounds that a loaded machine cannot break are
// held.
func TestPiecesFollowTheSlotsSchedule(t *testing.T) {
	c := quick(t)
	c.Tokens = 5
	url, s := serve(t, c)
	sent := time.Now()
	resp := post(context.Background(), t, client(t), url+"/v1/chat/completions", "",
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	evs, err := readEvents(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	seen := s.Requests()[0]
	slot := seen.Slot
	if slot.UnixNano()%int64(c.Period) != 0 {
		t.Errorf("slot %v is not on a multiple of %v since the epoch", slot, c.Period)
	}
	if slot.Sub(seen.Arrived) < DefaultLead {
		t.Errorf("slot %v starts %v after the arrival, less than the lead", slot, slot.Sub(seen.Arrived))
	}
	times := c.tokenTimes(slot, c.Tokens)
	var prev time.Time
	for k := range c.Tokens {
		got := evs[k].at
		t.Logf("piece %d: read %v after its time (%v into the slot)", k+1, got.Sub(times[k]), got.Sub(slot))
		if got.Before(times[k]) {
			t.Errorf("piece %d read at %v, before its time %v", k+1, got, times[k])
		}
		if text, _ := content(t, decode(t, evs[k].data)); text != []string{" tok1", " tok2", " tok3", " tok4", " tok5"}[k] {
			t.Errorf("piece %d is %q", k+1, text)
		}
		if got.Before(prev) {
			t.Errorf("piece %d read before piece %d", k+1, k)
		}
		prev = got
	}
	t.Logf("sent %v before the slot; the server's first piece %v and last %v after their times",
		slot.Sub(sent), seen.FirstToken.Sub(times[0]), seen.LastToken.Sub(times[len(times)-1]))
	if seen.FirstToken.Before(times[0]) || seen.LastToken.Before(times[len(times)-1]) || seen.LastToken.Before(seen.FirstToken) {
		t.Errorf("first piece at %v, last at %v; their times %v and %v", seen.FirstToken, seen.LastToken, times[0], times[len(times)-1])
	}
}

func TestTokenTimesSpreadThePiecesOverTheDecode(t *testing.T) {
	c := Config{Prefill: 10 * time.Millisecond, Decode: 90 * time.Millisecond}
	s := time.Unix(100, 0)
	ms := func(n int) time.Time { return s.Add(time.Duration(n) * time.Millisecond) }
	for _, tt := range []struct {
		n    int
		want []time.Time
	}{
		{1, []time.Time{ms(10)}},
		{2, []time.Time{ms(10), ms(100)}},
		{4, []time.Time{ms(10), ms(40), ms(70), ms(100)}},
	} {
		got := c.tokenTimes(s, tt.n)
		for i := range tt.want {
			if !got[i].Equal(tt.want[i]) {
				t.Errorf("%d pieces: piece %d at %v, want %v", tt.n, i+1, got[i].Sub(s), tt.want[i].Sub(s))
			}
		}
	}
}

// Requests that come together are served one per slot, and each slot's
// phases are in the overrides file before it starts, so that the net
// energy of each phase is known exactly.
func TestConcurrentRequestsTakeSlotsOfTheirOwn(t *testing.T) {
	c := quick(t)
	url, s := serve(t, c)
	cl := client(t)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			resp, err := cl.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[],"stream":true}`))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if b, err := io.ReadAll(resp.Body); err != nil || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
				t.Errorf("%v: %.200q", err, b)
			}
		})
	}
	wg.Wait()
	seen := s.Requests()
	slots := map[int64]bool{}
	for i, x := range seen {
		t.Logf("request %d: arrived %v before its slot; first piece %v, last %v into it",
			i, x.Slot.Sub(x.Arrived), x.FirstToken.Sub(x.Slot), x.LastToken.Sub(x.Slot))
		k := x.Slot.UnixNano() / int64(c.Period)
		if slots[k] {
			t.Errorf("request %d in slot %d, taken already", i, k)
		}
		slots[k] = true
		if x.Slot.Sub(x.Arrived) < DefaultLead {
			t.Errorf("request %d: slot %v after its arrival, less than the lead", i, x.Slot.Sub(x.Arrived))
		}
	}
	checkOverrides(t, c, seen)
}

// checkOverrides holds the overrides file to the slots of seen: two lines
// each, in order, whose net energies over idle are the Config's.
func checkOverrides(t *testing.T, c Config, seen []Seen) {
	t.Helper()
	o, err := fakepm.ReadOverrides(c.Overrides)
	if err != nil {
		t.Fatal(err)
	}
	if len(o) != 2*len(seen) {
		t.Fatalf("%d overrides for %d requests: %v", len(o), len(seen), o)
	}
	base := fakepm.Profile{Steps: []fakepm.Step{{W: idle}}}
	// The file is in the order the slots were taken.
	seen = slices.SortedFunc(slices.Values(seen), func(a, b Seen) int { return a.Slot.Compare(b.Slot) })
	for i, x := range seen {
		s := x.Slot
		mid, end := s.Add(c.Prefill), s.Add(c.Prefill+c.Decode)
		want := []fakepm.Override{{From: s.UnixNano(), To: mid.UnixNano(), W: c.PrefillWatts}, {From: mid.UnixNano(), To: end.UnixNano(), W: c.DecodeWatts}}
		if o[2*i] != want[0] || o[2*i+1] != want[1] {
			t.Errorf("request %d: overrides %v, want %v", i, o[2*i:2*i+2], want)
		}
		// The phases' net energy, with a little idle time on either side.
		pre := o.Energy(base, s.Add(-time.Millisecond), mid).Total() - idle.Total()*(c.Prefill+time.Millisecond).Seconds()
		dec := o.Energy(base, mid, end.Add(time.Millisecond)).Total() - idle.Total()*(c.Decode+time.Millisecond).Seconds()
		if math.Abs(pre-c.NetPrefillJoules(idle)) > 1e-9 || math.Abs(dec-c.NetDecodeJoules(idle)) > 1e-9 {
			t.Errorf("request %d: net prefill %.9f J, decode %.9f J; want %.9f and %.9f", i, pre, dec, c.NetPrefillJoules(idle), c.NetDecodeJoules(idle))
		}
	}
}

func TestNetJoulesArePowerOverIdleTimesTheTime(t *testing.T) {
	c := Config{Prefill: 200 * time.Millisecond, Decode: 2 * time.Second,
		PrefillWatts: fakepm.Watts{10, 2, 0}, DecodeWatts: fakepm.Watts{4, 6, 1}}
	if got := c.NetPrefillJoules(fakepm.Watts{1, 0.5, 0.5}); math.Abs(got-2) > 1e-12 {
		t.Errorf("NetPrefillJoules = %v, want 2", got)
	}
	if got := c.NetDecodeJoules(fakepm.Watts{1, 0.5, 0.5}); math.Abs(got-18) > 1e-12 {
		t.Errorf("NetDecodeJoules = %v, want 18", got)
	}
}
