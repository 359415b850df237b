package ioreport

import "errors"

// A MacBook's adapter and battery, as the IORegistry's AppleSmartBattery
// entry and the SMC give them: the keys read, and the raw values the
// binding (battery_lib.go) hands back. What they mean, their units and
// what is believed of them is internal/wall's (adapter.go), and
// docs/wall.md gives the evidence for each.

// BatteryFlags are the entry's top-level booleans that are read.
var BatteryFlags = []string{"BatteryInstalled", "ExternalConnected", "IsCharging"}

// BatteryNumbers are the entry's top-level integers that are read:
// UpdateTime (Unix seconds), Voltage (the pack's, mV) and
// InstantAmperage (mA, signed: below 0 while discharging).
var BatteryNumbers = []string{"UpdateTime", "Voltage", "InstantAmperage"}

// TelemetryNumbers are the integers read from the entry's
// PowerTelemetryData dictionary: powers in mW (SystemPowerIn,
// AdapterEfficiencyLoss, SystemLoad, BatteryPower; the last two signed),
// the DC input's mV and mA, a count of telemetry errors, and two
// accumulators' sample counts, which tell a new publication from a
// repeated one. The accumulated sums themselves are not read: their
// high bits are garbage on some Macs (docs/wall.md).
var TelemetryNumbers = []string{
	"SystemPowerIn", "AdapterEfficiencyLoss", "SystemLoad", "BatteryPower",
	"SystemVoltageIn", "SystemCurrentIn", "PowerTelemetryErrorCount",
	"SystemPowerInAccumulatorCount", "SystemLoadAccumulatorCount",
}

// BatterySMCKeys are the SMC's keys read beside the entry, in watts:
// PDTR, the DC input's power, and PPBR, the battery's.
var BatterySMCKeys = []string{"PDTR", "PPBR"}

// BatteryEntry is what one reading gave, as the libraries gave it: no
// unit applied, nothing judged.
type BatteryEntry struct {
	// Found says the IORegistry has an AppleSmartBattery entry.
	Found bool
	// Flags and Numbers are the top-level keys that were there with a
	// value of their type.
	Flags   map[string]bool
	Numbers map[string]int64
	// Telemetry is PowerTelemetryData's integers that were there; nil
	// where the entry has no PowerTelemetryData.
	Telemetry map[string]int64
	// Refused names each key that was there with a value of another
	// type, and what it was.
	Refused map[string]string
	// SMC is the SMC's keys that it has, decoded (watts).
	SMC map[string]float64
}

// BatteryReader reads the entry, and the SMC's keys, on each Read.
type BatteryReader interface {
	Read() (BatteryEntry, error)
	// Close lets the SMC's connection go; a Read after it fails.
	Close() error
}

// ErrNotMacOS is OpenBattery's error on a system that is not macOS.
var ErrNotMacOS = errors.New("reads a MacBook's adapter through macOS's IORegistry: only on macOS")
