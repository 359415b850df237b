package fakeplug

import (
	"encoding/base64"
	"math"
	"testing"
	"time"
)

func TestProfileEnergy(t *testing.T) {
	origin := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	sq := Square(origin, 10, 50, 3*time.Second, 2*time.Second)
	at := func(s float64) time.Time { return origin.Add(time.Duration(s * 1e9)) }
	tests := []struct {
		name     string
		p        Profile
		from, to float64
		want     float64
	}{
		{"a constant load's energy is its power times the time", Constant(20), 0, 7, 140},
		{"a whole period of the square wave holds both levels", sq, 0, 5, 3*10 + 2*50},
		{"a span inside the high level is the high power times its length", sq, 3.5, 4.5, 50},
		{"a span across periods counts each level's share", sq, 2, 13, 10 + 100 + 30 + 100 + 30},
		{"a span before the origin repeats the wave backwards", sq, -5, 0, 130},
		{"a day of the wave loses no nanoseconds", sq, 0, 86400, 86400 / 5 * 130},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Energy(at(tt.from), at(tt.to)); math.Abs(got-tt.want) > 1e-9*math.Max(1, tt.want) {
				t.Errorf("Energy = %.12g J, want %.12g J", got, tt.want)
			}
		})
	}
}

func TestCountsRoundDown(t *testing.T) {
	tests := []struct {
		name      string
		e, res    float64
		wantCount int64
	}{
		{"energy just under a count is no count", 3.599, 3.6, 0},
		{"energy of exactly one count, computed a rounding below, is one", 3*1.2 - 1e-15, 3.6, 1},
		{"a watt-minute counter counts whole minutes", 119.9, 60, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := counts(tt.e, tt.res); got != tt.wantCount {
				t.Errorf("counts(%g, %g) = %d, want %d", tt.e, tt.res, got, tt.wantCount)
			}
		})
	}
}

func TestFixedWritesDecimalsWithoutRounding(t *testing.T) {
	tests := []struct {
		n      int64
		digits int
		want   string
	}{{7258589, 3, "7258.589"}, {5, 3, "0.005"}, {42, 0, "42"}, {100, 2, "1.00"}}
	for _, tt := range tests {
		if got := fixed(tt.n, tt.digits); got != tt.want {
			t.Errorf("fixed(%d, %d) = %q, want %q", tt.n, tt.digits, got, tt.want)
		}
	}
}

// RFC 7616, section 3.9.1: the SHA-256 example.
func TestDigestResponseMatchesRFC7616(t *testing.T) {
	got := DigestResponse("Mufasa", "Circle of Life", "http-auth@example.org", "GET", "/dir/index.html",
		"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "00000001", "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
	const want = "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"
	if got != want {
		t.Errorf("response = %s, want %s", got, want)
	}
}

// A request enciphered as other Kasa clients' tests have it (without
// the length, as discovery sends it over UDP).
func TestKasaCipherMatchesAKnownRequest(t *testing.T) {
	got := base64.StdEncoding.EncodeToString(KasaEncrypt([]byte(`{"system":{"get_sysinfo":null}}`))[4:])
	const want = "0PKB+Iv/mvfV75S20bTAn+yV5o/hh+jK8J7rh+uW6w=="
	if got != want {
		t.Errorf("enciphered = %s, want %s", got, want)
	}
	if back := string(KasaDecrypt(KasaEncrypt([]byte("{}"))[4:])); back != "{}" {
		t.Errorf("deciphered = %q, want {}", back)
	}
}
