package fakeplug

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Start serves the fake on addr ("127.0.0.1:0" for any free port) and
// returns its --wall URL (shelly://, tasmota://, ha://HOST/sensor.
// plug_energy with ?power=sensor.plug_power when it has one, kasa://)
// and stop, which ends every connection and answer and waits for them.
func (f *Fake) Start(addr string) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("fake plug: %w", err)
	}
	host := ln.Addr().String()
	if f.cfg.Kind == Kasa {
		return "kasa://" + host, f.serveKasa(ln), nil
	}
	quit := make(chan struct{})
	// A handler counts itself under mu, and none starts once stop has
	// begun: a WaitGroup's Add from zero must not race its Wait.
	var (
		handlers sync.WaitGroup
		mu       sync.Mutex
		stopped  bool
	)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if stopped {
				mu.Unlock()
				return
			}
			handlers.Add(1)
			mu.Unlock()
			defer handlers.Done()
			f.serveHTTP(w, r, quit)
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	var served sync.WaitGroup
	served.Add(1)
	go func() {
		defer served.Done()
		srv.Serve(ln)
	}()
	stop = func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		close(quit)
		srv.Close()
		served.Wait()
		handlers.Wait()
	}
	return f.url(host), stop, nil
}

func (f *Fake) url(host string) string {
	switch f.cfg.Kind {
	case ShellyGen2, ShellyGen1:
		return "shelly://" + host
	case Tasmota:
		return "tasmota://" + host
	}
	u := "ha://" + host + "/sensor.plug_energy"
	if f.cfg.HAPower {
		u += "?power=sensor.plug_power"
	}
	return u
}

// serveHTTP answers one request as the fake's kind, after its faults.
func (f *Fake) serveHTTP(w http.ResponseWriter, r *http.Request, quit chan struct{}) {
	f.mu.Lock()
	f.reqs++
	f.mu.Unlock()
	x := f.currentFaults()
	if x.Hang {
		f.once.Do(func() { close(f.hung) })
		select {
		case <-r.Context().Done():
		case <-quit:
		}
		return
	}
	switch f.cfg.Kind {
	case ShellyGen2:
		f.gen2(w, r)
	case ShellyGen1:
		f.gen1(w, r)
	case Tasmota:
		f.tasmota(w, r)
	case HomeAssistant:
		f.homeAssistant(w, r)
	}
}

// hostile answers a reading's request as Faults.Hostile says, if it is
// one that replaces the answer; it says whether it did.
func (f *Fake) hostile(w http.ResponseWriter, r *http.Request) bool {
	switch f.currentFaults().Hostile {
	case HugeBody:
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"pad":"`))
		w.Write([]byte(strings.Repeat("x", 1<<20)))
		w.Write([]byte(`"}`))
	case HugeHeader:
		for i := range 64 {
			w.Header().Set(fmt.Sprintf("X-Pad-%d", i), strings.Repeat("y", 1<<10))
		}
		w.Write([]byte(`{}`))
	case EchoInError:
		http.Error(w, "bad request from "+f.echo(r), http.StatusInternalServerError)
	case Redirect:
		http.Redirect(w, r, "http://elsewhere.invalid/steal?password="+f.cfg.Password+"&token="+f.cfg.Token, http.StatusFound)
	default:
		return false
	}
	return true
}

// echo is what a hostile device could send back: the credentials it
// knows and everything the client sent with them.
func (f *Fake) echo(r *http.Request) string {
	return fmt.Sprintf("user=%s password=%s token=%s authorization=%q query=%q basic=%s",
		f.cfg.User, f.cfg.Password, f.cfg.Token, r.Header.Get("Authorization"), r.URL.RawQuery,
		base64.StdEncoding.EncodeToString([]byte("admin:"+f.cfg.Password)))
}

// model is the device's model as the fake gives it: plain, or hostile.
func (f *Fake) model(plain string, r *http.Request) string {
	switch f.currentFaults().Hostile {
	case ControlText:
		return plain + "\x1b]0;owned\x07\n\rexopower: error: \x1b[2J"
	case EchoInInfo:
		return plain + " " + f.echo(r)
	}
	return plain
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(body))
}

// quote is s as a JSON string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
