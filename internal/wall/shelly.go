package wall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// Shelly's counters: Gen2+ counts watt-hours with three decimals; Gen1's
// plugs count whole watt-minutes (and forget them at a reboot).
const (
	gen2Resolution = 0.001 * 3600 // J
	gen1Resolution = 60           // J
)

// shellyID is Shelly's /shelly, which every generation answers without
// credentials: Gen2+ with gen, Gen1 with type.
type shellyID struct {
	Gen    *int    `json:"gen"`
	ID     string  `json:"id"`
	Name   *string `json:"name"`
	Model  string  `json:"model"`
	Ver    string  `json:"ver"`
	App    string  `json:"app"`
	AuthEn bool    `json:"auth_en"`
	Type   string  `json:"type"`
	Fw     string  `json:"fw"`
	Auth   bool    `json:"auth"`
}

// askShelly asks w's host for /shelly; ok is false when the host does
// not answer as a Shelly.
func askShelly(ctx context.Context, w *web) (id shellyID, ok bool, err error) {
	a, err := w.get(ctx, "/shelly", nil, "/shelly")
	if err != nil {
		return id, false, err
	}
	if a.status != http.StatusOK || json.Unmarshal(a.body, &id) != nil {
		return id, false, nil
	}
	return id, id.Gen != nil && *id.Gen >= 2 || id.Gen == nil && id.Type != "", nil
}

// openShelly identifies a Shelly and opens it by its generation.
func openShelly(ctx context.Context, t Target, c Credentials) (Plug, error) {
	w := newWeb(t, c, false)
	id, ok, err := askShelly(ctx, w)
	w.Close()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: /shelly: not a Shelly's answer: check the address, or name the device's kind", t)
	}
	return openShellyAs(ctx, t, c, id)
}

func openShellyAs(ctx context.Context, t Target, c Credentials, id shellyID) (Plug, error) {
	if id.Gen != nil {
		return openGen2(ctx, t, c, id)
	}
	return openGen1(ctx, t, c, id)
}

// gen2 is a Shelly of the second generation on: JSON-RPC over HTTP.
type gen2 struct {
	*web
	info   Info
	method string
}

func openGen2(ctx context.Context, t Target, c Credentials, id shellyID) (Plug, error) {
	p := &gen2{web: newWeb(t, c, true)}
	if id.AuthEn && c.Password == "" {
		p.Close()
		return nil, &AuthError{Address: p.addr, Reason: "the Shelly asks for a password (its user is admin); give it in the credentials file or the environment"}
	}
	name := p.secrets.text(id.ID)
	if id.Name != nil && *id.Name != "" {
		name = p.secrets.text(*id.Name)
	}
	p.info = Info{
		Kind: KindShellyGen2, Model: p.secrets.text(id.Model), Firmware: p.secrets.text(id.Ver), Name: name,
		Address: p.addr, CounterResolution: gen2Resolution, HasCounter: true, HasPower: true,
	}
	// A plug or a switch answers Switch's status; a meter alone (the PM
	// Mini) answers PM1's.
	var first error
	for _, m := range []string{"Switch.GetStatus", "PM1.GetStatus"} {
		p.method = m
		_, err := p.Read(ctx)
		if err == nil {
			return p, nil
		}
		var auth *AuthError
		if errors.As(err, &auth) || errors.Is(err, ErrClosed) || ctx.Err() != nil {
			p.Close()
			return nil, err
		}
		if first == nil {
			first = err
		}
	}
	p.Close()
	return nil, fmt.Errorf("%s: neither Switch.GetStatus nor PM1.GetStatus gives power and energy: %w", p.addr, first)
}

// gen2Status is the part of Switch's or PM1's status that is read.
type gen2Status struct {
	APower  *float64 `json:"apower"`
	AEnergy *struct {
		Total *float64 `json:"total"`
	} `json:"aenergy"`
}

func (p *gen2) Info() Info { return p.info }

func (p *gen2) Read(ctx context.Context) (Reading, error) {
	shown := "/rpc/" + p.method
	var s gen2Status
	if err := p.getJSON(ctx, shown, url.Values{"id": {"0"}}, shown, &s); err != nil {
		return Reading{}, err
	}
	if s.APower == nil || s.AEnergy == nil || s.AEnergy.Total == nil {
		return Reading{}, fmt.Errorf("%s: %s: its answer has no apower or aenergy.total: is it a Shelly that meters?", p.addr, shown)
	}
	return p.reading(Reading{Power: *s.APower, HasPower: true, Counter: *s.AEnergy.Total * 3600, HasCounter: true}, shown)
}

// gen1 is a Shelly of the first generation: /status, HTTP Basic.
type gen1 struct {
	*web
	info Info
}

func openGen1(ctx context.Context, t Target, c Credentials, id shellyID) (Plug, error) {
	p := &gen1{web: newWeb(t, c, false)}
	if c.User != "" || c.Password != "" {
		user := basicUser(c)
		p.auth = func(r *http.Request) { r.SetBasicAuth(user, c.Password) }
	}
	p.info = Info{
		Kind: KindShellyGen1, Model: p.secrets.text(id.Type), Firmware: p.secrets.text(id.Fw),
		Address: p.addr, CounterResolution: gen1Resolution, HasCounter: true, HasPower: true,
	}
	if id.Auth && c.Password == "" {
		p.Close()
		return nil, &AuthError{Address: p.addr, Reason: "the Shelly asks for a user and password; give them in the credentials file or the environment"}
	}
	if _, err := p.Read(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// gen1Status is the part of Gen1's /status that is read: the first
// meter's power in watts and its total in watt-minutes.
type gen1Status struct {
	Meters []struct {
		Power   *float64 `json:"power"`
		Total   *float64 `json:"total"`
		IsValid *bool    `json:"is_valid"`
	} `json:"meters"`
}

func (p *gen1) Info() Info { return p.info }

func (p *gen1) Read(ctx context.Context) (Reading, error) {
	const shown = "/status"
	var s gen1Status
	if err := p.getJSON(ctx, shown, nil, shown, &s); err != nil {
		return Reading{}, err
	}
	if len(s.Meters) == 0 || s.Meters[0].Power == nil || s.Meters[0].Total == nil {
		return Reading{}, fmt.Errorf("%s: %s: its answer has no meter with power and total: is it a Shelly that meters?", p.addr, shown)
	}
	m := s.Meters[0]
	if m.IsValid != nil && !*m.IsValid {
		return Reading{}, fmt.Errorf("%s: %s: the Shelly says its meter's reading is not valid", p.addr, shown)
	}
	return p.reading(Reading{Power: *m.Power, HasPower: true, Counter: *m.Total * 60, HasCounter: true}, shown)
}
