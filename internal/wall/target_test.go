package wall_test

import (
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/wall"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want wall.Target
	}{
		{"a Shelly's address takes HTTP's port", "shelly://192.168.1.20", wall.Target{Scheme: "shelly", Host: "192.168.1.20:80"}},
		{"a port given is kept", "tasmota://plug.local:8080", wall.Target{Scheme: "tasmota", Host: "plug.local:8080"}},
		{"Home Assistant names its energy sensor", "ha://hass:8123/sensor.mac_energy", wall.Target{Scheme: "ha", Host: "hass:8123", Entity: "sensor.mac_energy"}},
		{"Home Assistant takes a power sensor beside it", "has://hass/sensor.e?power=sensor.p", wall.Target{Scheme: "has", Host: "hass:8123", Entity: "sensor.e", PowerEntity: "sensor.p"}},
		{"a Kasa plug takes the legacy protocol's port", "kasa://10.0.0.7", wall.Target{Scheme: "kasa", Host: "10.0.0.7:9999"}},
		{"an IPv6 address keeps its brackets", "http://[fe80::1]:81", wall.Target{Scheme: "http", Host: "[fe80::1]:81"}},
		{"http:// may name Home Assistant's sensor for when it is one", "http://hass:8123/sensor.e", wall.Target{Scheme: "http", Host: "hass:8123", Entity: "sensor.e"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := wall.Parse(tt.raw)
			if err != nil || got != tt.want {
				t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"a password in the URL is refused without being repeated", "shelly://admin:" + password + "@192.168.1.20", "no credentials in the URL"},
		{"a user alone in the URL is refused too", "tasmota://" + password + "@plug", "no credentials in the URL"},
		{"a password in a URL that is not one is not repeated either", "shelly://admin:" + password + "@bad host", "no credentials in the URL"},
		{"an unknown kind lists the kinds", "zigbee://plug", "want shelly://, tasmota://"},
		{"a URL with no host says so", "shelly://", "no host"},
		{"a port out of range is refused", "shelly://plug:70000", "port"},
		{"a path on a plug's address is refused", "shelly://plug/rpc", "no path or query"},
		{"Home Assistant without its sensor is refused", "ha://hass:8123", "name Home Assistant's energy sensor"},
		{"a sensor that is not an entity is refused", "ha://hass/sensor", "not a Home Assistant entity"},
		{"an unknown query parameter is refused", "ha://hass/sensor.e?token=x", "unknown query parameter"},
		{"a power sensor without the energy one is refused", "http://hass/?power=sensor.p", "needs the energy sensor too"},
		{"a fragment is refused", "kasa://plug#x", "no #fragment"},
		{"control characters are not echoed", "shelly://plug\x1b[2J/x", `\x1b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wall.Parse(tt.raw)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%q) = %v, want an error saying %q", tt.raw, err, tt.want)
			}
			noSecrets(t, "the error", err.Error())
			if strings.ContainsRune(err.Error(), 0x1b) {
				t.Errorf("the error holds an escape: %q", err)
			}
		})
	}
}
