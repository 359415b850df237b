package fakeplug

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"
)

// gen2 answers as a Shelly Plus Plug S (or a PM Mini, with PM1): /shelly
// without credentials, /rpc/<method> behind the digest.
func (f *Fake) gen2(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/shelly" {
		writeJSON(w, fmt.Sprintf(`{"name":null,"id":%q,"mac":"A8032ABE54DC","slot":0,"model":%s,"gen":2,"fw_id":"20231219-134003/1.1.0-g34b5d4f","ver":"1.1.0","app":"PlusPlugS","auth_en":%t,"auth_domain":null}`,
			realm, quote(f.model("SNPL-00112EU", r)), f.cfg.Password != ""))
		return
	}
	if f.cfg.Password != "" && !f.digestOK(w, r) {
		return
	}
	method := "Switch.GetStatus"
	if f.cfg.PM1 {
		method = "PM1.GetStatus"
	}
	if r.URL.Path != "/rpc/"+method {
		w.WriteHeader(http.StatusNotFound)
		writeJSON(w, fmt.Sprintf(`{"code":404,"message":"No handler for %s"}`, strings.TrimPrefix(r.URL.Path, "/rpc/")))
		return
	}
	if f.hostile(w, r) {
		return
	}
	watts, joules := f.state()
	total := fixed(counts(joules, 3.6), 3) // 0.001 Wh
	writeJSON(w, fmt.Sprintf(`{"id":0,"source":"init","output":true,"apower":%s,"voltage":230.1,"current":0.1,"aenergy":{"total":%s,"by_minute":[0.000,0.000,0.000],"minute_ts":1707326925},"temperature":{"tC":41.2,"tF":106.2}}`,
		f.power(watts, 1, "%.1f"), total))
}

// gen1 answers as a Shelly Plug S: /shelly, /status behind HTTP Basic.
func (f *Fake) gen1(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/shelly" {
		writeJSON(w, fmt.Sprintf(`{"type":%s,"mac":"C45BBE5A1B2C","auth":%t,"fw":"20230913-113421/v1.14.0-gcb84623","discoverable":true,"num_outputs":1,"num_meters":1}`,
			quote(f.model("SHPLG-S", r)), f.cfg.Password != ""))
		return
	}
	if f.cfg.Password != "" {
		u, p, ok := r.BasicAuth()
		if !ok || !same(u, f.user()) || !same(p, f.cfg.Password) {
			w.Header().Set("WWW-Authenticate", `Basic realm="SHPLG-S"`)
			http.Error(w, "401 Unauthorized", http.StatusUnauthorized)
			return
		}
	}
	if r.URL.Path != "/status" {
		http.NotFound(w, r)
		return
	}
	if f.hostile(w, r) {
		return
	}
	watts, joules := f.state()
	writeJSON(w, fmt.Sprintf(`{"wifi_sta":{"connected":true},"relays":[{"ison":true}],"meters":[{"power":%s,"overpower":0.00,"is_valid":true,"timestamp":1707335841,"counters":[0.000,0.000,0.000],"total":%d}],"uptime":1234}`,
		f.power(watts, 1, "%.2f"), counts(joules, 60)))
}

func (f *Fake) user() string {
	if f.cfg.User == "" {
		return "admin"
	}
	return f.cfg.User
}

func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// tasmota answers Tasmota's /cm commands: Status 0, Status 10 (or 8),
// EnergyRes; with a password, only with the query's user and password.
func (f *Fake) tasmota(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/cm" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	if f.cfg.Password != "" && (!same(q.Get("user"), f.user()) || !same(q.Get("password"), f.cfg.Password)) {
		writeJSON(w, `{"WARNING":"Need user=<username>&password=<password>"}`)
		return
	}
	switch cmnd := strings.ToLower(q.Get("cmnd")); {
	case cmnd == "status 0":
		writeJSON(w, fmt.Sprintf(`{"Status":{"Module":0,"DeviceName":%s,"FriendlyName":["Tasmota"],"Topic":"tasmota_F97904","Power":"1"},"StatusFWR":{"Version":"13.1.0(tasmota)","BuildDateTime":"2023-08-15T12:27:55","Hardware":"ESP8266EX"}}`,
			quote(f.model("Plug", r))))
	case cmnd == "energyres":
		writeJSON(w, fmt.Sprintf(`{"EnergyRes":%d}`, f.cfg.EnergyRes))
	case cmnd == "status 10" && !f.cfg.OldStatus, cmnd == "status 8":
		if f.hostile(w, r) {
			return
		}
		watts, joules := f.state()
		unit := 3.6e6
		for range f.cfg.EnergyRes {
			unit /= 10
		}
		writeJSON(w, fmt.Sprintf(`{"StatusSNS":{"Time":"2024-01-01T00:00:00","ENERGY":{"TotalStartTime":"2023-01-01T00:00:00","Total":%s,"Yesterday":0.000,"Today":0.000,"Power":%s,"ApparentPower":0,"ReactivePower":0,"Factor":1.00,"Voltage":230,"Current":0.100}}}`,
			fixed(counts(joules, unit), f.cfg.EnergyRes), f.power(watts, 1, "%.0f")))
	default:
		writeJSON(w, `{"Command":"Unknown"}`)
	}
}

// homeAssistant answers Home Assistant's REST API for the plug's
// sensors, with the bearer token.
func (f *Fake) homeAssistant(w http.ResponseWriter, r *http.Request) {
	if !same(r.Header.Get("Authorization"), "Bearer "+f.cfg.Token) {
		http.Error(w, "401: Unauthorized", http.StatusUnauthorized)
		return
	}
	switch r.URL.Path {
	case "/api/":
		writeJSON(w, `{"message":"API running."}`)
	case "/api/config":
		writeJSON(w, `{"version":"2024.6.1","location_name":"Home","unit_system":{"energy":"kWh"}}`)
	case "/api/states/sensor.plug_energy":
		f.haEnergy(w, r)
	case "/api/states/sensor.plug_power":
		if !f.cfg.HAPower {
			f.haNotFound(w)
			return
		}
		watts, _ := f.state()
		f.haState(w, "sensor.plug_power", f.power(watts, 1, "%.1f"), "W", "measurement", "Plug power")
	default:
		f.haNotFound(w)
	}
}

func (f *Fake) haEnergy(w http.ResponseWriter, r *http.Request) {
	if f.hostile(w, r) {
		return
	}
	_, joules := f.state()
	unit := map[string]float64{"Wh": 3600, "kWh": 3.6e6, "MWh": 3.6e9}[f.cfg.HAUnit]
	for range f.cfg.HADecimals {
		unit /= 10
	}
	u := f.cfg.HAUnit
	if f.currentFaults().WrongUnits {
		u = "W"
	}
	f.haState(w, "sensor.plug_energy", fixed(counts(joules, unit), f.cfg.HADecimals), u, "total_increasing", f.model("Plug energy", r))
}

func (f *Fake) haState(w http.ResponseWriter, entity, state, unit, class, name string) {
	if f.currentFaults().Unavailable {
		state = "unavailable"
	}
	writeJSON(w, fmt.Sprintf(`{"entity_id":%q,"state":%q,"attributes":{"state_class":%q,"unit_of_measurement":%q,"device_class":"energy","friendly_name":%s},"last_changed":"2024-01-01T00:00:00+00:00","last_updated":"2024-01-01T00:00:00+00:00"}`,
		entity, state, class, unit, quote(name)))
}

func (f *Fake) haNotFound(w http.ResponseWriter) {
	w.WriteHeader(http.StatusNotFound)
	writeJSON(w, `{"message":"Entity not found."}`)
}
