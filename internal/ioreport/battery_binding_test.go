//go:build ioreportfake && linux

package ioreport_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/ioreport"
)

// The reads of AppleSmartBattery's entry and the SMC's PDTR and PPBR,
// against the same fake (fakelib/battery.c), each case in a process of
// its own as the IOReport binding's are.
func init() {
	for name, s := range map[string]scenario{
		"a MacBook on AC, not charging":                {"battery-ac", readsBattery(onAC)},
		"a MacBook charging, without PDTR":             {"battery-charging", readsBattery(charging)},
		"a MacBook on battery, its flow below 0":       {"battery-discharging", readsBattery(discharging)},
		"a MacBook without PowerTelemetryData":         {"battery-no-telemetry", readsBattery(noTelemetry)},
		"a desktop's stub of an entry":                 {"battery-desktop", readsBattery(desktop)},
		"no AppleSmartBattery entry":                   {"battery-none", readsBattery(ioreport.BatteryEntry{})},
		"values of other types than the keys' own":     {"battery-odd", readsBattery(odd)},
		"the entry's properties refused":               {"battery-no-properties", batteryFails("IORegistryEntryCreateCFProperties")},
		"the battery's reads without an SMC":           {"no-smc", batteryWithoutSMC},
		"no matching dictionary for AppleSmartBattery": {"no-matching", batteryFails("no matching dictionary")},
	} {
		scenarios[name] = s
	}
}

func telemetry(in, loss, load, battery, volts, amps int64) map[string]int64 {
	return map[string]int64{"SystemPowerIn": in, "AdapterEfficiencyLoss": loss, "SystemLoad": load, "BatteryPower": battery,
		"SystemVoltageIn": volts, "SystemCurrentIn": amps, "PowerTelemetryErrorCount": 0,
		"SystemPowerInAccumulatorCount": 153016, "SystemLoadAccumulatorCount": 160021}
}

// The fake's entries, as the binding must read them: signed, exact, and
// only the keys it asks for.
var (
	onAC = ioreport.BatteryEntry{Found: true,
		Flags:     map[string]bool{"BatteryInstalled": true, "ExternalConnected": true, "IsCharging": false},
		Numbers:   map[string]int64{"UpdateTime": 1785304833, "Voltage": 12336, "InstantAmperage": 0},
		Telemetry: telemetry(13177, 193, 13177, 0, 20010, 658), Refused: map[string]string{},
		SMC: map[string]float64{"PDTR": 13.5, "PPBR": 0}}
	charging = ioreport.BatteryEntry{Found: true,
		Flags:     map[string]bool{"BatteryInstalled": true, "ExternalConnected": true, "IsCharging": true},
		Numbers:   map[string]int64{"UpdateTime": 1785304833, "Voltage": 11928, "InstantAmperage": 1926},
		Telemetry: telemetry(42825, 1181, 19852, 22973, 19930, 2149), Refused: map[string]string{}}
	discharging = ioreport.BatteryEntry{Found: true,
		Flags:     map[string]bool{"BatteryInstalled": true, "ExternalConnected": false, "IsCharging": false},
		Numbers:   map[string]int64{"UpdateTime": 1785304833, "Voltage": 12336, "InstantAmperage": -386},
		Telemetry: telemetry(0, 0, 4636, -4636, 0, 0), Refused: map[string]string{},
		SMC: map[string]float64{"PDTR": 0, "PPBR": 4.625}}
	noTelemetry = ioreport.BatteryEntry{Found: true,
		Flags:   map[string]bool{"BatteryInstalled": true, "ExternalConnected": true, "IsCharging": false},
		Numbers: map[string]int64{"UpdateTime": 1785304833, "Voltage": 12336, "InstantAmperage": 0}, Refused: map[string]string{},
		SMC: map[string]float64{"PDTR": 35.25, "PPBR": -1.5}}
	desktop = ioreport.BatteryEntry{Found: true,
		Flags:   map[string]bool{"BatteryInstalled": false, "ExternalConnected": true, "IsCharging": false},
		Numbers: map[string]int64{"UpdateTime": 1785304833}, Refused: map[string]string{}}
	odd = ioreport.BatteryEntry{Found: true,
		Flags:     map[string]bool{"BatteryInstalled": true, "IsCharging": false},
		Numbers:   map[string]int64{"UpdateTime": 1785304833, "Voltage": 12336, "InstantAmperage": 0},
		Telemetry: map[string]int64{"SystemLoad": 13177},
		Refused: map[string]string{"ExternalConnected": "not a boolean",
			"PowerTelemetryData.SystemPowerIn":         "a floating-point number, where an integer belongs",
			"PowerTelemetryData.AdapterEfficiencyLoss": "not a number"}}
)

// readsBattery: two reads give want exactly (the entry is read afresh
// each time, the SMC's keys' info asked once), and Close leaves nothing
// alive or open; a read after Close fails.
func readsBattery(want ioreport.BatteryEntry) func(*testing.T, *fakeLib) {
	return func(t *testing.T, f *fakeLib) {
		b, err := ioreport.OpenBattery()
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			got, err := b.Read()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read\n%+v\nwant\n%+v", got, want)
			}
		}
		// PDTR and PPBR: info and bytes, then bytes; or info alone,
		// once, where the SMC has not the key.
		calls := int64(2)
		if want.SMC != nil {
			calls = 6
		}
		if n := f.smcCalls(); n != calls {
			t.Errorf("%d calls of the SMC, want %d", n, calls)
		}
		b.Close()
		f.nothingLeft(t, "after Close")
		if _, err := b.Read(); err == nil {
			t.Error("a read after Close did not fail")
		}
		f.nothingLeft(t, "after a read after Close")
	}
}

// batteryFails: a read fails saying want, and leaves nothing.
func batteryFails(want string) func(*testing.T, *fakeLib) {
	return func(t *testing.T, f *fakeLib) {
		b, err := ioreport.OpenBattery()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Read(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read: %v, want an error saying %q", err, want)
		}
		b.Close()
		f.nothingLeft(t, "after Close")
	}
}

// Without an SMC the entry is read, and no SMC key.
func batteryWithoutSMC(t *testing.T, f *fakeLib) {
	b, err := ioreport.OpenBattery()
	if err != nil {
		t.Fatal(err)
	}
	e, err := b.Read()
	if err != nil || !e.Found || e.SMC != nil || f.smcCalls() != 0 {
		t.Errorf("%+v, %v, %d SMC calls; want the entry alone", e, err, f.smcCalls())
	}
	b.Close()
	f.nothingLeft(t, "after Close")
}
