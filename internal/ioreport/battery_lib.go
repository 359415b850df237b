//go:build darwin || ioreportfake

package ioreport

import (
	"errors"
	"fmt"
)

// The binding of AppleSmartBattery's entry: IOKit gives the entry's
// properties as one dictionary that the caller owns, read here into Go
// values and released before Read returns, and the SMC's PDTR and PPBR
// through smc.go's protocol. Every value of the dictionary is a Get,
// owned by it: none is released on its own.

// kCFNumberSInt64Type: a CFNumber read as a signed 64-bit integer, so
// that a negative power (BatteryPower while discharging) reads as one,
// not as the huge unsigned number ioreg prints.
const cfNumberSInt64Type = 4

// errBatteryClosed is a Read after Close.
var errBatteryClosed = errors.New("the battery's reader is closed")

// batteryReader reads the entry afresh at each Read (the IORegistry
// gives a new dictionary each time), and the SMC over one connection.
type batteryReader struct {
	smc    uint32 // 0 where the SMC did not open
	keys   []smcValue
	closed bool
}

// OpenBattery opens the SMC, for the reads of the entry and its keys. An
// SMC that does not open is no error: its keys are then not read.
func OpenBattery() (BatteryReader, error) {
	if loadErr != nil {
		return nil, fmt.Errorf("IOKit: %w", loadErr)
	}
	b := &batteryReader{smc: openSMC()}
	for _, k := range BatterySMCKeys {
		b.keys = append(b.keys, smcValue{call: smcOn(b.smc), key: FourCC(k)})
	}
	return b, nil
}

// Read reads the entry, then the SMC's keys.
func (b *batteryReader) Read() (BatteryEntry, error) {
	if b.closed {
		return BatteryEntry{}, errBatteryClosed
	}
	e, err := readBatteryEntry()
	if err != nil {
		return BatteryEntry{}, err
	}
	if b.smc != 0 {
		for i := range b.keys {
			if w, err := b.keys[i].read(); err == nil {
				if e.SMC == nil {
					e.SMC = map[string]float64{}
				}
				e.SMC[fourCCString(b.keys[i].key)] = w
			}
		}
	}
	return e, nil
}

// Close closes the SMC's connection.
func (b *batteryReader) Close() error {
	if b.smc != 0 {
		ioServiceClose(b.smc)
		b.smc = 0
	}
	b.closed = true
	return nil
}

// readBatteryEntry reads AppleSmartBattery's properties; Found is false
// where the IORegistry has no such entry.
func readBatteryEntry() (BatteryEntry, error) {
	matching := ioServiceMatching("AppleSmartBattery")
	if matching == 0 {
		return BatteryEntry{}, errors.New("IOKit made no matching dictionary for AppleSmartBattery")
	}
	entry := ioServiceGetMatchingService(0, matching) // it takes matching
	if entry == 0 {
		return BatteryEntry{}, nil
	}
	defer ioObjectRelease(entry)
	var props uintptr
	if kr := ioRegistryEntryCreateCFProperties(entry, &props, 0, 0); kr != 0 || props == 0 {
		return BatteryEntry{}, fmt.Errorf("IORegistryEntryCreateCFProperties of AppleSmartBattery: %#x", uint32(kr))
	}
	defer cfRelease(props)
	e := BatteryEntry{Found: true, Flags: map[string]bool{}, Numbers: map[string]int64{}, Refused: map[string]string{}}
	for _, k := range BatteryFlags {
		if v := dictValue(props, k); v != 0 {
			if cfGetTypeID(v) != cfBooleanGetTypeID() {
				e.Refused[k] = "not a boolean"
				continue
			}
			e.Flags[k] = cfBooleanGetValue(v)
		}
	}
	readNumbers(props, "", BatteryNumbers, e.Numbers, e.Refused)
	switch t := dictValue(props, "PowerTelemetryData"); {
	case t == 0:
	case cfGetTypeID(t) != cfDictionaryGetTypeID():
		e.Refused["PowerTelemetryData"] = "not a dictionary"
	default:
		e.Telemetry = map[string]int64{}
		readNumbers(t, "PowerTelemetryData.", TelemetryNumbers, e.Telemetry, e.Refused)
	}
	return e, nil
}

// readNumbers reads d's integers named keys into into; a key there with
// a value of another type is named in refused, after prefix.
func readNumbers(d uintptr, prefix string, keys []string, into map[string]int64, refused map[string]string) {
	for _, k := range keys {
		v := dictValue(d, k)
		if v == 0 {
			continue
		}
		n, why := integer(v)
		if why != "" {
			refused[prefix+k] = why
			continue
		}
		into[k] = n
	}
}

// dictValue is d's value of key, owned by d; 0 for none.
func dictValue(d uintptr, key string) uintptr {
	k := cfString(key)
	if k == 0 {
		return 0
	}
	defer cfRelease(k)
	return cfDictionaryGetValue(d, k)
}

// integer reads a CFNumber that holds an integer, signed; why says what
// else it was.
func integer(v uintptr) (n int64, why string) {
	switch {
	case cfGetTypeID(v) != cfNumberGetTypeID():
		return 0, "not a number"
	case cfNumberIsFloatType(v):
		return 0, "a floating-point number, where an integer belongs"
	case !cfNumberGetValue(v, cfNumberSInt64Type, &n):
		return 0, "beyond a signed 64-bit integer"
	}
	return n, ""
}
