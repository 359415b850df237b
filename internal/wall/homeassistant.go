package wall

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// haEnergyUnits and haPowerUnits are the units Home Assistant's energy
// and power sensors may state, in joules and watts.
var (
	haEnergyUnits = map[string]float64{"Wh": 3600, "kWh": 3.6e6, "MWh": 3.6e9, "MJ": 1e6, "GJ": 1e9}
	haPowerUnits  = map[string]float64{"mW": 1e-3, "W": 1, "kW": 1e3}
)

// homeAssistant is a plug that Home Assistant reads, through its REST
// API: an energy sensor that only increases (a new cycle when it goes
// back), and a power sensor if one is named.
type homeAssistant struct {
	*web
	info          Info
	energy, power string
	mu            sync.Mutex
	// digits is the most decimals the energy sensor's state was written
	// with: Home Assistant writes 12.30 as 12.3, so one state may show
	// fewer than the sensor has.
	digits int
	unit   float64
}

// haState is the part of a state object that is read.
type haState struct {
	State      *string `json:"state"`
	Attributes struct {
		Unit         *string `json:"unit_of_measurement"`
		StateClass   string  `json:"state_class"`
		FriendlyName string  `json:"friendly_name"`
	} `json:"attributes"`
}

func newHomeAssistant(t Target, c Credentials) *homeAssistant {
	p := &homeAssistant{web: newWeb(t, c, false), energy: t.Entity, power: t.PowerEntity}
	if c.Token != "" {
		p.auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+c.Token) }
	}
	return p
}

func openHomeAssistant(ctx context.Context, t Target, c Credentials) (Plug, error) {
	p := newHomeAssistant(t, c)
	plug, err := p.open(ctx)
	if err != nil {
		p.Close()
		return nil, err
	}
	return plug, nil
}

func (p *homeAssistant) open(ctx context.Context) (Plug, error) {
	if p.creds.Token == "" {
		return nil, &AuthError{Address: p.addr, Reason: "Home Assistant asks for a long-lived access token (made on your profile's page); give it in the credentials file or the environment"}
	}
	if p.energy == "" {
		return nil, fmt.Errorf("%s: name Home Assistant's energy sensor: ha://%s/sensor.plug_energy", p.addr, strings.TrimPrefix(p.base, "http://"))
	}
	var cfg struct {
		Version string `json:"version"`
	}
	if err := p.getJSON(ctx, "/api/config", nil, "/api/config", &cfg); err != nil {
		return nil, err
	}
	s, err := p.state(ctx, p.energy)
	if err != nil {
		return nil, err
	}
	if c := s.Attributes.StateClass; c != "total_increasing" && c != "total" {
		return nil, fmt.Errorf("%s: %s: its state_class is %q, not total_increasing: name the sensor that counts the plug's energy", p.addr, p.energy, p.secrets.text(c))
	}
	p.info = Info{
		Kind: KindHomeAssistant, Model: "Home Assistant sensor", Firmware: p.secrets.text(cfg.Version),
		Name: p.secrets.text(s.Attributes.FriendlyName), Address: p.addr, HasCounter: true, HasPower: p.power != "",
	}
	if _, err := p.Read(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// state asks for an entity's state.
func (p *homeAssistant) state(ctx context.Context, entity string) (haState, error) {
	var s haState
	shown := "/api/states/" + entity
	if err := p.getJSON(ctx, shown, nil, shown, &s); err != nil {
		return s, err
	}
	if s.State == nil {
		return s, fmt.Errorf("%s: %s: its answer has no state", p.addr, entity)
	}
	return s, nil
}

// value reads an entity's state as a number in its unit, given as units
// says, and the decimals it is written with.
func (p *homeAssistant) value(ctx context.Context, entity string, units map[string]float64) (v float64, unit float64, digits int, err error) {
	s, err := p.state(ctx, entity)
	if err != nil {
		return 0, 0, 0, err
	}
	switch *s.State {
	case "unavailable", "unknown", "":
		return 0, 0, 0, fmt.Errorf("%s: %s is %q in Home Assistant: the device behind it is not reporting", p.addr, entity, p.secrets.text(*s.State))
	}
	u := ""
	if s.Attributes.Unit != nil {
		u = *s.Attributes.Unit
	}
	unit, ok := units[u]
	if !ok {
		return 0, 0, 0, fmt.Errorf("%s: %s: unit %q is not one taken here (%s)", p.addr, entity, p.secrets.text(u), unitList(units))
	}
	x, err := strconv.ParseFloat(*s.State, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, 0, 0, fmt.Errorf("%s: %s: its state %q is not a number", p.addr, entity, p.secrets.text(*s.State))
	}
	if _, frac, ok := strings.Cut(*s.State, "."); ok && !strings.ContainsAny(frac, "eE") {
		// No meter counts finer than a millionth of its unit (a
		// milliwatt-hour of kWh): more decimals are a float's noise,
		// which would make one count of the counter nothing.
		digits = min(len(frac), maxHADigits)
	}
	return x, unit, digits, nil
}

// maxHADigits is the most decimals of a Home Assistant state taken as
// the sensor's resolution.
const maxHADigits = 6

func unitList(units map[string]float64) string {
	if _, ok := units["Wh"]; ok {
		return "Wh, kWh, MWh, MJ, GJ"
	}
	return "mW, W, kW"
}

func (p *homeAssistant) Info() Info {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.info
	i.CounterResolution = p.unit * math.Pow(10, -float64(p.digits))
	return i
}

func (p *homeAssistant) Read(ctx context.Context) (Reading, error) {
	// Two requests, one bound: a read ends within the timeout.
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	e, unit, digits, err := p.value(ctx, p.energy, haEnergyUnits)
	if err != nil {
		return Reading{}, err
	}
	r := Reading{Counter: e * unit, HasCounter: true}
	if p.power != "" {
		w, wu, _, err := p.value(ctx, p.power, haPowerUnits)
		if err != nil {
			return Reading{}, err
		}
		r.Power, r.HasPower = w*wu, true
	}
	p.mu.Lock()
	if unit != p.unit {
		p.unit, p.digits = unit, digits
	}
	p.digits = max(p.digits, digits)
	p.mu.Unlock()
	return p.reading(r, "/api/states/"+p.energy)
}
