package wall_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/wall"
)

// secured is a fake of kind that asks for credentials, and those to give
// it.
func secured(kind fakeplug.Kind) (fakeplug.Config, wall.Credentials) {
	cfg := fakeplug.Config{Kind: kind, Profile: fakeplug.Constant(30), HAPower: true}
	switch kind {
	case fakeplug.HomeAssistant:
		cfg.Token = token
		return cfg, wall.Credentials{Token: token}
	case fakeplug.Kasa:
		// The legacy protocol has no credentials; the fake still
		// knows the user's password, to echo it.
		cfg.Password = password
		return cfg, wall.Credentials{Password: password}
	}
	cfg.Password = password
	return cfg, wall.Credentials{Password: password}
}

var allKinds = []fakeplug.Kind{fakeplug.ShellyGen2, fakeplug.ShellyGen1, fakeplug.Tasmota, fakeplug.HomeAssistant, fakeplug.Kasa}

func TestHostileAnswersAreRefused(t *testing.T) {
	tests := []struct {
		name    string
		hostile fakeplug.Hostile
		kinds   []fakeplug.Kind
		want    string
	}{
		{"a huge body is cut at 64 KiB and refused", fakeplug.HugeBody, allKinds, "larger than 64 KiB"},
		{"huge headers are refused", fakeplug.HugeHeader, allKinds[:4], "headers exceeded"},
		{"an error that echoes the credentials is shown without them", fakeplug.EchoInError, allKinds[:4], "answered 500"},
		// JSON holds no NaN: a plug that writes one writes no JSON. Home
		// Assistant's state is a string, which may say NaN.
		{"a power reading of NaN is not JSON", fakeplug.NaNPower, []fakeplug.Kind{fakeplug.ShellyGen2, fakeplug.ShellyGen1, fakeplug.Tasmota, fakeplug.Kasa}, "not the JSON expected"},
		{"a power reading that is not a number is refused", fakeplug.NaNPower, []fakeplug.Kind{fakeplug.HomeAssistant}, "is not a number"},
		{"a negative power reading is refused with its reason", fakeplug.NegativePower, allKinds, "negative"},
		{"a power beyond any Mac's is refused with its reason", fakeplug.HugePower, allKinds, "more than any Mac draws"},
		{"a redirect is not followed, and its address shown without credentials", fakeplug.Redirect, allKinds[:4], "does not follow"},
	}
	for _, tt := range tests {
		for _, kind := range tt.kinds {
			t.Run(tt.name+" ("+string(kind)+")", func(t *testing.T) {
				cfg, creds := secured(kind)
				cfg.Faults.Hostile = tt.hostile
				f := fakeplug.New(cfg)
				u := start(t, f)
				_, err := open(t, u, creds)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Open: %v, want an error saying %q", err, tt.want)
				}
				noSecrets(t, "the error", err.Error())
				if strings.ContainsFunc(err.Error(), unicode.IsControl) {
					t.Errorf("the error holds a control character: %q", err)
				}
			})
		}
	}
}

func TestHostileTextIsMadeSafe(t *testing.T) {
	for _, hostile := range []fakeplug.Hostile{fakeplug.ControlText, fakeplug.EchoInInfo} {
		for _, kind := range allKinds {
			t.Run("the device's own names are safe to print ("+string(kind)+")", func(t *testing.T) {
				cfg, creds := secured(kind)
				cfg.Faults.Hostile = hostile
				p, err := open(t, start(t, fakeplug.New(cfg)), creds)
				if err != nil {
					t.Fatal(err)
				}
				s := info(p.Info())
				noSecrets(t, "Info", s)
				if strings.ContainsFunc(s, unicode.IsControl) {
					t.Errorf("Info holds a control character: %q", s)
				}
			})
		}
	}
}

func TestWrongUnitsAndUnavailableSensorsAreErrors(t *testing.T) {
	tests := []struct {
		name   string
		faults fakeplug.Faults
		want   string
	}{
		{"an energy sensor in watts is refused", fakeplug.Faults{WrongUnits: true}, `unit "W" is not one taken here`},
		{"an unavailable sensor is an error, not a zero", fakeplug.Faults{Unavailable: true}, `is "unavailable"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeplug.New(fakeplug.Config{Kind: fakeplug.HomeAssistant, Token: token, Profile: fakeplug.Constant(5), Faults: tt.faults})
			_, err := open(t, start(t, f), wall.Credentials{Token: token})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open: %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// A plug that stops answering: each read ends at its own bound, and a
// Close ends the one under way.
func TestAHangingPlug(t *testing.T) {
	for _, kind := range allKinds {
		t.Run("a read of a hanging plug fails at its bound ("+string(kind)+")", func(t *testing.T) {
			t.Parallel()
			cfg, creds := secured(kind)
			f := fakeplug.New(cfg)
			p, err := open(t, start(t, f), creds)
			if err != nil {
				t.Fatal(err)
			}
			f.SetFaults(fakeplug.Faults{Hang: true})
			// The test's own deadline is far beyond the read's: the
			// read must end by its own.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err = p.Read(ctx)
			if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || !strings.Contains(err.Error(), "no answer within 800ms") {
				t.Errorf("Read: %v, want no answer within the read's own bound", err)
			}
		})
		t.Run("Close ends a read under way ("+string(kind)+")", func(t *testing.T) {
			cfg, creds := secured(kind)
			f := fakeplug.New(cfg)
			target, _ := wall.Parse(start(t, f))
			target.Timeout = time.Hour
			p, err := wall.Open(context.Background(), target, creds)
			if err != nil {
				t.Fatal(err)
			}
			f.SetFaults(fakeplug.Faults{Hang: true})
			done := make(chan error)
			go func() {
				_, err := p.Read(context.Background())
				done <- err
			}()
			<-f.Hung()
			p.Close()
			if err := <-done; !errors.Is(err, wall.ErrClosed) {
				t.Errorf("Read: %v, want it ended by Close", err)
			}
		})
	}
}
