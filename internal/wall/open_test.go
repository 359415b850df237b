package wall_test

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/wall"
)

// kindCase is a fake plug and what exopower should make of it.
type kindCase struct {
	name  string
	cfg   fakeplug.Config
	creds wall.Credentials
	// http asks the device what it is, through http://.
	http     bool
	kind     string
	res      float64 // J
	hasPower bool
}

func kindCases() []kindCase {
	withPower := fakeplug.Config{Kind: fakeplug.HomeAssistant, Token: token, HAPower: true}
	return []kindCase{
		{"a Shelly Plus plug named shelly:// counts thousandths of a watt-hour", fakeplug.Config{Kind: fakeplug.ShellyGen2}, wall.Credentials{}, false, wall.KindShellyGen2, 3.6, true},
		{"a Shelly Plus plug is found through http://", fakeplug.Config{Kind: fakeplug.ShellyGen2}, wall.Credentials{}, true, wall.KindShellyGen2, 3.6, true},
		{"a Shelly PM Mini is read through PM1's status", fakeplug.Config{Kind: fakeplug.ShellyGen2, PM1: true}, wall.Credentials{}, false, wall.KindShellyGen2, 3.6, true},
		{"a Shelly Plus plug with a password is read through the digest", fakeplug.Config{Kind: fakeplug.ShellyGen2, Password: password}, wall.Credentials{Password: password}, true, wall.KindShellyGen2, 3.6, true},
		{"a Shelly Gen1 plug counts whole watt-minutes", fakeplug.Config{Kind: fakeplug.ShellyGen1}, wall.Credentials{}, false, wall.KindShellyGen1, 60, true},
		{"a Shelly Gen1 plug is found through http://", fakeplug.Config{Kind: fakeplug.ShellyGen1, Password: password}, wall.Credentials{Password: password}, true, wall.KindShellyGen1, 60, true},
		{"a Tasmota counts kilowatt-hours to EnergyRes decimals", fakeplug.Config{Kind: fakeplug.Tasmota, EnergyRes: 5}, wall.Credentials{}, false, wall.KindTasmota, 36, true},
		{"a Tasmota with a password is found through http://", fakeplug.Config{Kind: fakeplug.Tasmota, Password: password}, wall.Credentials{Password: password}, true, wall.KindTasmota, 3600, true},
		{"a Tasmota too old for Status 10 is read through Status 8", fakeplug.Config{Kind: fakeplug.Tasmota, OldStatus: true, EnergyRes: 2, EnergyResSet: true}, wall.Credentials{}, false, wall.KindTasmota, 36000, true},
		{"Home Assistant's energy sensor counts in its own unit", fakeplug.Config{Kind: fakeplug.HomeAssistant, Token: token, HAUnit: "Wh", HADecimals: 1}, wall.Credentials{Token: token}, false, wall.KindHomeAssistant, 360, false},
		{"Home Assistant with a power sensor gives both", withPower, wall.Credentials{Token: token}, false, wall.KindHomeAssistant, 3600, true},
		{"Home Assistant is found through http://", withPower, wall.Credentials{Token: token}, true, wall.KindHomeAssistant, 3600, true},
		{"a Kasa plug counts whole watt-hours", fakeplug.Config{Kind: fakeplug.Kasa}, wall.Credentials{}, false, wall.KindKasa, 3600, true},
		{"an older Kasa plug gives watts and kilowatt-hours", fakeplug.Config{Kind: fakeplug.Kasa, KasaOld: true}, wall.Credentials{}, false, wall.KindKasa, 3600, true},
	}
}

func TestOpenIdentifiesAndReadsEachKind(t *testing.T) {
	for _, tc := range kindCases() {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			started := clk.Now()
			tc.cfg.Now, tc.cfg.Profile = clk.Now, fakeplug.Constant(64)
			f := fakeplug.New(tc.cfg)
			u := start(t, f)
			if tc.http {
				u = asHTTP(u)
			}
			clk.Add(1000 * time.Second)
			p, err := open(t, u, tc.creds)
			if err != nil {
				t.Fatal(err)
			}
			i := p.Info()
			if i.Kind != tc.kind || math.Abs(i.CounterResolution-tc.res) > 1e-9*tc.res || i.HasPower != tc.hasPower || !i.HasCounter {
				t.Errorf("Info = %+v, want kind %s, resolution %g J, power %t", i, tc.kind, tc.res, tc.hasPower)
			}
			noSecrets(t, "Info", info(i))
			if strings.HasPrefix(i.Address, "http://") {
				t.Errorf("Address = %s: want the kind's own scheme", i.Address)
			}
			r, err := p.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// The device counts the exact energy rounded down to its
			// resolution.
			truth := f.Energy(started, clk.Now())
			want := math.Floor(truth/tc.res+1e-9) * tc.res
			if !r.HasCounter || math.Abs(r.Counter-want) > 1e-6 {
				t.Errorf("Counter = %.6f J, want %.6f J (of %.3f J drawn)", r.Counter, want, truth)
			}
			if r.HasPower != tc.hasPower || tc.hasPower && r.Power != 64 {
				t.Errorf("Power = %g W (%t), want 64 W (%t)", r.Power, r.HasPower, tc.hasPower)
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	tests := []struct {
		name  string
		cfg   fakeplug.Config
		creds wall.Credentials
		want  string
	}{
		{"a Shelly Plus plug without its password is asked for it", fakeplug.Config{Kind: fakeplug.ShellyGen2, Password: password}, wall.Credentials{}, "asks for a password"},
		{"a Shelly Plus plug refuses a wrong password", fakeplug.Config{Kind: fakeplug.ShellyGen2, Password: password}, wall.Credentials{Password: "wrong-" + password}, "refused the credentials"},
		{"a Shelly Gen1 plug without its password is asked for it", fakeplug.Config{Kind: fakeplug.ShellyGen1, Password: password}, wall.Credentials{}, "asks for a user and password"},
		{"a Shelly Gen1 plug refuses a wrong user", fakeplug.Config{Kind: fakeplug.ShellyGen1, Password: password}, wall.Credentials{User: "mallory", Password: password}, "refused the credentials"},
		{"a Tasmota without its password is asked for it", fakeplug.Config{Kind: fakeplug.Tasmota, Password: password}, wall.Credentials{}, "asks for credentials"},
		{"a Tasmota refuses a wrong password", fakeplug.Config{Kind: fakeplug.Tasmota, Password: password}, wall.Credentials{Password: password + "x"}, "refused the credentials"},
		{"Home Assistant without a token is asked for one", fakeplug.Config{Kind: fakeplug.HomeAssistant, Token: token}, wall.Credentials{}, "long-lived access token"},
		{"Home Assistant refuses a wrong token", fakeplug.Config{Kind: fakeplug.HomeAssistant, Token: token}, wall.Credentials{Token: token + "x"}, "refused the credentials"},
	}
	for _, tt := range tests {
		for _, viaHTTP := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: " (through http://)"}[viaHTTP], func(t *testing.T) {
				f := fakeplug.New(tt.cfg)
				u := start(t, f)
				if viaHTTP {
					u = asHTTP(u)
				}
				_, err := open(t, u, tt.creds)
				var auth *wall.AuthError
				if !errors.As(err, &auth) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Open: %v, want an AuthError saying %q", err, tt.want)
				}
				noSecrets(t, "the error", err.Error())
			})
		}
	}
}

func TestAKasaPlugWithoutTheLegacyProtocolIsNamedAsNotSupported(t *testing.T) {
	// A port nothing listens on, as a plug that speaks KLAP leaves 9999.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = open(t, "kasa://"+addr, wall.Credentials{})
	var unsupported *wall.UnsupportedError
	if !errors.As(err, &unsupported) || !strings.Contains(err.Error(), "KLAP or TPAP") || !strings.Contains(err.Error(), "Home Assistant") {
		t.Fatalf("Open: %v, want it named as not supported, with what to use instead", err)
	}
}

func TestADeviceOfNoKnownKindIsNamedAsSuch(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := open(t, srv.URL, wall.Credentials{Token: token, Password: password})
	if err == nil || !strings.Contains(err.Error(), "name its kind") {
		t.Fatalf("Open: %v, want it to ask for the device's kind", err)
	}
	noSecrets(t, "the error", err.Error())
}

// A Home Assistant state of many decimals (a float's noise) does not
// make one count of its counter nothing: a millionth of its unit at the
// finest.
func TestAHomeAssistantStatesNoiseIsNoResolution(t *testing.T) {
	f := fakeplug.New(fakeplug.Config{Kind: fakeplug.HomeAssistant, Token: token, HAUnit: "kWh", HADecimals: 15, Profile: fakeplug.Constant(40)})
	p, err := open(t, start(t, f), wall.Credentials{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := p.Info().CounterResolution; math.Abs(got-3.6) > 1e-9 {
		t.Errorf("one count is %g J, want 3.6 J (a millionth of a kWh)", got)
	}
}
