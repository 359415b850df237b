package wall

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Open identifies the plug t names and returns it ready to read: it asks
// the device what it is (for http://, which kind too), checks that the
// credentials are taken, and makes a first reading, whose errors are
// Open's. The credentials go to t's host alone.
func Open(ctx context.Context, t Target, c Credentials) (Plug, error) {
	switch t.Scheme {
	case "shelly":
		return openShelly(ctx, t, c)
	case "tasmota":
		return openTasmota(ctx, t, c)
	case "ha", "has":
		return openHomeAssistant(ctx, t, c)
	case "kasa":
		return openKasa(ctx, t)
	case "http":
		return detect(ctx, t, c)
	case KindAdapter:
		return openAdapter()
	}
	return nil, fmt.Errorf("%s: unknown kind of plug %q", t, t.Scheme)
}

// detect asks an http:// host what it is, in turn: a Shelly's /shelly
// (which needs no credentials), a Tasmota's Status 0, Home Assistant's
// /api/. Each is asked only after the one before said it is not that
// kind, so a Shelly never sees the Tasmota's password nor the token.
func detect(ctx context.Context, t Target, c Credentials) (Plug, error) {
	w := newWeb(t, Credentials{}, false)
	id, ok, err := askShelly(ctx, w)
	w.Close()
	if err != nil {
		return nil, err
	}
	if ok {
		t.Scheme = "shelly"
		return openShellyAs(ctx, t, c, id)
	}
	tas := newTasmota(t, c)
	s0, isTasmota, err := tas.probe(ctx)
	if isTasmota {
		if err != nil {
			tas.Close()
			return nil, err
		}
		tas.addr = "tasmota://" + t.Host
		return tas.open(ctx, s0)
	}
	tas.Close()
	if err != nil {
		return nil, err
	}
	if isHA, err := askHomeAssistant(ctx, t, c); err != nil || !isHA {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: the device answered neither as a Shelly (/shelly), a Tasmota (/cm?cmnd=Status 0) nor Home Assistant (/api/): name its kind, as shelly://, tasmota://, ha:// or kasa:// (a Kasa plug is not asked over HTTP)", t)
	}
	t.Scheme = "ha"
	return openHomeAssistant(ctx, t, c)
}

// askHomeAssistant says whether t's host answers /api/ as Home
// Assistant does, with the token or, without one, with a 401.
func askHomeAssistant(ctx context.Context, t Target, c Credentials) (bool, error) {
	h := newHomeAssistant(t, c)
	defer h.Close()
	a, err := h.get(ctx, "/api/", nil, "/api/")
	if err != nil {
		return false, err
	}
	var m struct {
		Message string `json:"message"`
	}
	switch {
	case a.status == http.StatusOK && json.Unmarshal(a.body, &m) == nil && m.Message == "API running.":
		return true, nil
	case a.status == http.StatusUnauthorized:
		return false, h.authError("/api/: answered 401 (if it is Home Assistant, it wants a long-lived access token)")
	}
	return false, nil
}
