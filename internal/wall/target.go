package wall

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/safe"
)

// Target is a plug as a --wall URL names it.
type Target struct {
	// Scheme is the URL's: shelly, tasmota, ha, has (Home Assistant over
	// HTTPS), kasa, or http (ask the host what it is).
	Scheme string
	// Host is the device's address, host:port, the default port filled
	// in.
	Host string
	// Entity is Home Assistant's energy sensor (sensor.x), and
	// PowerEntity its power sensor, if one was given.
	Entity, PowerEntity string
	// Timeout bounds each request; 0 is DefaultTimeout.
	Timeout time.Duration
}

// schemes are the URLs' schemes and their devices' default ports.
var schemes = map[string]string{
	"shelly":  "80",
	"tasmota": "80",
	"ha":      "8123",
	"has":     "8123",
	"kasa":    "9999",
	"http":    "80",
}

// entityID is Home Assistant's form of an entity's id: domain.object_id.
// Compiled when a URL is first read, not when exopower starts, which
// every command would pay for.
var entityID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9_]+\.[a-z0-9_]+$`) })

// Parse reads a --wall URL: shelly://host[:port], tasmota://host[:port],
// ha://host[:port]/sensor.energy[?power=sensor.power] (has:// for
// HTTPS), kasa://host[:port], or http://host[:port][/sensor.energy] to
// ask the host what it is; or the bare word adapter, a MacBook's own
// adapter and battery (no plug). Credentials are not taken in the URL:
// they would show in the process list and the shell's history.
func Parse(raw string) (Target, error) {
	if raw == KindAdapter {
		return Target{Scheme: KindAdapter}, nil
	}
	if userInfo(raw) {
		// The URL is not repeated: it holds the credentials.
		return Target{}, fmt.Errorf("--wall: the address holds a user or password before an @: exopower takes no credentials in the URL, where the process list and the shell's history show them; give them in the credentials file or the environment instead")
	}
	shown := safe.Text(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, fmt.Errorf("--wall %q: not a URL; want one such as shelly://192.168.1.20", shown)
	}
	port, ok := schemes[u.Scheme]
	if !ok {
		return Target{}, fmt.Errorf("--wall %q: unknown kind %q; want shelly://, tasmota://, ha:// (has:// for HTTPS), kasa://, http:// to ask the device, or adapter for a MacBook's own", shown, safe.Text(u.Scheme))
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return Target{}, fmt.Errorf("--wall %q: no host; want %s://HOST[:PORT]", shown, u.Scheme)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return Target{}, fmt.Errorf("--wall %q: port %q is not a number from 1 to 65535", shown, safe.Text(p))
		}
		port = p
	}
	if u.Fragment != "" {
		return Target{}, fmt.Errorf("--wall %q: a URL of a plug has no #fragment", shown)
	}
	t := Target{Scheme: u.Scheme, Host: net.JoinHostPort(u.Hostname(), port)}
	if err := t.entities(u); err != nil {
		return Target{}, fmt.Errorf("--wall %q: %w", shown, err)
	}
	return t, nil
}

// userInfo says whether raw has a user or password before its host. It
// looks at the text itself, since a URL that url.Parse refuses may hold
// them too.
func userInfo(raw string) bool {
	_, rest, ok := strings.Cut(raw, "//")
	if !ok {
		rest = raw
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return strings.Contains(rest, "@")
}

// entities reads the path and query: Home Assistant's sensors, which
// only ha://, has:// and http:// take.
func (t *Target) entities(u *url.URL) error {
	path := strings.TrimPrefix(u.Path, "/")
	takes := t.Scheme == "ha" || t.Scheme == "has" || t.Scheme == "http"
	if !takes && (path != "" || u.RawQuery != "") {
		return fmt.Errorf("a %s:// URL is the device's address alone, with no path or query", t.Scheme)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fmt.Errorf("its query is not name=value pairs")
	}
	for k := range q {
		if k != "power" {
			return fmt.Errorf("unknown query parameter %q; the one taken is ?power=sensor.x, Home Assistant's power sensor", safe.Text(k))
		}
	}
	if path != "" && !entityID().MatchString(path) {
		return fmt.Errorf("%q is not a Home Assistant entity such as sensor.plug_energy", safe.Text(path))
	}
	t.Entity = path
	if len(q["power"]) > 1 {
		return fmt.Errorf("?power= given twice")
	}
	if p := q.Get("power"); p != "" || q.Has("power") {
		if !entityID().MatchString(p) {
			return fmt.Errorf("?power=%q is not a Home Assistant entity such as sensor.plug_power", safe.Text(p))
		}
		if path == "" {
			return fmt.Errorf("?power= needs the energy sensor too: /sensor.plug_energy?power=%s", p)
		}
		t.PowerEntity = p
	}
	if (t.Scheme == "ha" || t.Scheme == "has") && t.Entity == "" {
		return fmt.Errorf("name Home Assistant's energy sensor: %s://%s/sensor.plug_energy", t.Scheme, t.Host)
	}
	return nil
}

// String is the target as exopower prints it: no credentials, which a
// Target never holds.
func (t Target) String() string {
	if t.Scheme == KindAdapter {
		return KindAdapter
	}
	s := t.Scheme + "://" + t.Host
	if t.Entity != "" {
		s += "/" + t.Entity
	}
	if t.PowerEntity != "" {
		s += "?power=" + t.PowerEntity
	}
	return s
}

func (t Target) timeout() time.Duration {
	if t.Timeout > 0 {
		return t.Timeout
	}
	return DefaultTimeout
}
