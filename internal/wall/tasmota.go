package wall

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
)

// tasmota is a plug running Tasmota: its commands over /cm, its
// credentials as the query's user and password (which its firmware
// wants in plain text there, so they are added to each request alone and
// never to what is printed).
type tasmota struct {
	*web
	info Info
	// status is the command that gives ENERGY: Status 10, or Status 8
	// on firmware older than Status 10.
	status string
}

// tasmotaStatus0 is the part of Status 0 that names the device.
type tasmotaStatus0 struct {
	Status *struct {
		DeviceName string `json:"DeviceName"`
	} `json:"Status"`
	StatusFWR struct {
		Version  string `json:"Version"`
		Hardware string `json:"Hardware"`
	} `json:"StatusFWR"`
	Warning string `json:"WARNING"`
}

func newTasmota(t Target, c Credentials) *tasmota {
	p := &tasmota{web: newWeb(t, c, false)}
	if c.User != "" || c.Password != "" {
		q := url.Values{"user": {basicUser(c)}, "password": {c.Password}}.Encode()
		p.auth = func(r *http.Request) { r.URL.RawQuery += "&" + q }
	}
	return p
}

// command runs a Tasmota command and decodes its answer into v.
func (p *tasmota) command(ctx context.Context, cmnd string, v any) error {
	shown := "/cm?cmnd=" + cmnd
	a, err := p.get(ctx, "/cm", url.Values{"cmnd": {cmnd}}, shown)
	if err != nil {
		return err
	}
	if err := p.refused(a, shown); err != nil {
		return err
	}
	var w struct {
		Warning string `json:"WARNING"`
	}
	// A Tasmota with a web password answers 200 and a warning.
	if json.Unmarshal(a.body, &w) == nil && strings.Contains(w.Warning, "Need user") {
		return p.authError(shown + ": asked for user and password")
	}
	return p.decode(a, shown, v)
}

// probe asks for Status 0 and says whether the answer is a Tasmota's:
// its status, or its warning that it wants a user and password (with an
// AuthError). Any other answer is another device's, and no error.
func (p *tasmota) probe(ctx context.Context) (tasmotaStatus0, bool, error) {
	const shown = "/cm?cmnd=Status 0"
	var s0 tasmotaStatus0
	a, err := p.get(ctx, "/cm", url.Values{"cmnd": {"Status 0"}}, shown)
	if err != nil || a.status != http.StatusOK || json.Unmarshal(a.body, &s0) != nil {
		return s0, false, err
	}
	if strings.Contains(s0.Warning, "Need user") {
		return s0, true, p.authError(shown + ": asked for user and password")
	}
	return s0, s0.Status != nil, nil
}

func openTasmota(ctx context.Context, t Target, c Credentials) (Plug, error) {
	p := newTasmota(t, c)
	s0, ok, err := p.probe(ctx)
	if err == nil && !ok {
		err = fmt.Errorf("%s: /cm?cmnd=Status 0: not a Tasmota's answer: check the address, or name the device's kind", p.addr)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return p.open(ctx, s0)
}

// open finds the command that gives energy and the counter's resolution.
func (p *tasmota) open(ctx context.Context, s0 tasmotaStatus0) (Plug, error) {
	p.info = Info{
		Kind: KindTasmota, Model: p.secrets.text(s0.StatusFWR.Hardware), Firmware: p.secrets.text(s0.StatusFWR.Version),
		Name: p.secrets.text(s0.Status.DeviceName), Address: p.addr, HasCounter: true, HasPower: true,
	}
	var e tasmotaEnergy
	var err error
	for _, p.status = range []string{"Status 10", "Status 8"} {
		if e, err = p.energy(ctx); err == nil {
			break
		}
	}
	if err == nil {
		_, err = p.reading(Reading{Power: e.power, HasPower: true, Counter: e.total * 3.6e6, HasCounter: true}, "/cm?cmnd="+p.status)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	var res struct {
		EnergyRes *int `json:"EnergyRes"`
	}
	digits := e.digits
	if p.command(ctx, "EnergyRes", &res) == nil && res.EnergyRes != nil && *res.EnergyRes >= 0 && *res.EnergyRes <= 5 {
		digits = *res.EnergyRes
	}
	// A sum of channels is exact to one count of each.
	p.info.CounterResolution = 3.6e6 * math.Pow(10, -float64(digits)) * float64(e.channels)
	return p, nil
}

// tasmotaEnergy is ENERGY's Total (kWh) and Power (W), each a number or,
// on a plug of several channels, an array summed.
type tasmotaEnergy struct {
	total, power     float64
	digits, channels int
}

func (p *tasmota) energy(ctx context.Context) (tasmotaEnergy, error) {
	shown := "/cm?cmnd=" + p.status
	var s struct {
		StatusSNS *struct {
			Energy *struct {
				Total json.RawMessage `json:"Total"`
				Power json.RawMessage `json:"Power"`
			} `json:"ENERGY"`
		} `json:"StatusSNS"`
	}
	if err := p.command(ctx, p.status, &s); err != nil {
		return tasmotaEnergy{}, err
	}
	if s.StatusSNS == nil || s.StatusSNS.Energy == nil {
		return tasmotaEnergy{}, fmt.Errorf("%s: %s: its answer has no ENERGY: is it a Tasmota that meters?", p.addr, shown)
	}
	var e tasmotaEnergy
	var err error
	if e.total, e.digits, e.channels, err = sum(s.StatusSNS.Energy.Total); err != nil {
		return e, fmt.Errorf("%s: %s: ENERGY.Total: %w", p.addr, shown, err)
	}
	if e.power, _, _, err = sum(s.StatusSNS.Energy.Power); err != nil {
		return e, fmt.Errorf("%s: %s: ENERGY.Power: %w", p.addr, shown, err)
	}
	return e, nil
}

// sum reads a number or an array of numbers: their sum, the most
// decimals any is written with, and how many there are.
func sum(raw json.RawMessage) (total float64, digits, n int, err error) {
	var one json.Number
	var many []json.Number
	if json.Unmarshal(raw, &one) == nil {
		many = []json.Number{one}
	} else if json.Unmarshal(raw, &many) != nil || len(many) == 0 {
		return 0, 0, 0, fmt.Errorf("not a number nor an array of numbers")
	}
	for _, x := range many {
		v, err := x.Float64()
		if err != nil {
			return 0, 0, 0, fmt.Errorf("not a number")
		}
		total += v
		if _, frac, ok := strings.Cut(x.String(), "."); ok && !strings.ContainsAny(frac, "eE") {
			digits = max(digits, len(frac))
		}
	}
	return total, digits, len(many), nil
}

func (p *tasmota) Info() Info { return p.info }

func (p *tasmota) Read(ctx context.Context) (Reading, error) {
	e, err := p.energy(ctx)
	if err != nil {
		return Reading{}, err
	}
	return p.reading(Reading{Power: e.power, HasPower: true, Counter: e.total * 3.6e6, HasCounter: true}, "/cm?cmnd="+p.status)
}
