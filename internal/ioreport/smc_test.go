package ioreport

import (
	"encoding/hex"
	"errors"
	"testing"
	"unsafe"
)

// The parameter structure is 80 bytes, laid out as AppleSMC's C
// definition is on arm64; a wrong layout makes every call fail with
// kIOReturnBadArgument. The offsets are those of its C definition
// (smcFanControl's smc.h) as gcc lays it out.
func TestTheSMCParameterStructureIsLaidOutAsInC(t *testing.T) {
	var p smcParam
	for _, c := range []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"size", unsafe.Sizeof(p), 80},
		{"align", unsafe.Alignof(p), 4},
		{"key", unsafe.Offsetof(p.Key), 0},
		{"vers", unsafe.Offsetof(p.Vers), 4},
		{"vers.release", unsafe.Offsetof(p.Vers) + unsafe.Offsetof(p.Vers.Release), 8},
		{"pLimitData", unsafe.Offsetof(p.PLimitData), 12},
		{"pLimitData.cpuPLimit", unsafe.Offsetof(p.PLimitData) + unsafe.Offsetof(p.PLimitData.CPUPLimit), 16},
		{"keyInfo.dataSize", unsafe.Offsetof(p.KeyInfo) + unsafe.Offsetof(p.KeyInfo.DataSize), 28},
		{"keyInfo.dataType", unsafe.Offsetof(p.KeyInfo) + unsafe.Offsetof(p.KeyInfo.DataType), 32},
		{"keyInfo.dataAttributes", unsafe.Offsetof(p.KeyInfo) + unsafe.Offsetof(p.KeyInfo.DataAttributes), 36},
		{"result", unsafe.Offsetof(p.Result), 40},
		{"status", unsafe.Offsetof(p.Status), 41},
		{"data8", unsafe.Offsetof(p.Data8), 42},
		{"data32", unsafe.Offsetof(p.Data32), 44},
		{"bytes", unsafe.Offsetof(p.Bytes), 48},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestFourCCPutsTheFirstCharacterHigh(t *testing.T) {
	for s, want := range map[string]uint32{"PSTR": 0x50535452, "flt ": 0x666c7420, "ui16": 0x75693136, "fpe2": 0x66706532, "sp78": 0x73703738} {
		if got := FourCC(s); got != want {
			t.Errorf("FourCC(%q) = %#x, want %#x", s, got, want)
		}
		if got := fourCCString(want); got != s {
			t.Errorf("fourCCString(%#x) = %q, want %q", want, got, s)
		}
	}
}

// Values as real Macs give them: flt little-endian (a PPBR of 4.078 W
// read as c8 7f 82 40), integers and fixed point big-endian.
func TestDecodeSMCValues(t *testing.T) {
	for _, c := range []struct {
		typ, hex string
		want     float64
	}{
		{"flt ", "c87f8240", 4.078098297119141},
		{"flt ", "00002a42", 42.5},
		{"ui8 ", "02", 2},
		{"ui16", "04d2", 1234},
		{"ui32", "0000035f", 863},
		{"fpe2", "1388", 1250},
		{"sp78", "3480", 52.5},
		{"sp78", "fb80", -4.5},
	} {
		b, _ := hex.DecodeString(c.hex)
		got, err := DecodeSMC(FourCC(c.typ), b)
		if err != nil || got != c.want {
			t.Errorf("%q %s: %v, %v; want %v", c.typ, c.hex, got, err, c.want)
		}
	}
	for _, c := range []struct{ typ, hex string }{{"ch8*", "41"}, {"flt ", "0000"}} {
		b, _ := hex.DecodeString(c.hex)
		if _, err := DecodeSMC(FourCC(c.typ), b); err == nil {
			t.Errorf("%q %s: no error", c.typ, c.hex)
		}
	}
}

// fakeSMC answers as the SMC does: the key's info, then its bytes.
type fakeSMC struct {
	keys  map[uint32][]byte
	types map[uint32]uint32
	calls int
}

func (f *fakeSMC) call(in, out *smcParam) error {
	f.calls++
	b, ok := f.keys[in.Key]
	switch {
	case !ok:
		out.Result = smcKeyMissing
	case in.Data8 == smcGetKeyInfo:
		out.KeyInfo = smcKeyInfo{DataSize: uint32(len(b)), DataType: f.types[in.Key]}
	case in.Data8 == smcReadKey && in.KeyInfo.DataSize == uint32(len(b)):
		copy(out.Bytes[:], b)
	default:
		return errors.New("bad argument")
	}
	return nil
}

// PSTR is read as its type says, the type asked once; a Mac without it,
// or an answer that is no power, reads as no system power.
func TestSystemPowerReadsPSTR(t *testing.T) {
	f := &fakeSMC{keys: map[uint32][]byte{FourCC("PSTR"): {0x00, 0x00, 0x2a, 0x42}}, types: map[uint32]uint32{FourCC("PSTR"): FourCC("flt ")}}
	p := systemPower{call: f.call}
	for range 3 {
		if w, ok := p.read(); !ok || w != 42.5 {
			t.Fatalf("PSTR = %v, %v; want 42.5 W", w, ok)
		}
	}
	if f.calls != 4 {
		t.Errorf("%d calls for three readings, want 4: the key's info once", f.calls)
	}
	none := systemPower{call: (&fakeSMC{}).call}
	if w, ok := none.read(); ok {
		t.Errorf("a Mac without PSTR reads %v W", w)
	}
	nan := &fakeSMC{keys: map[uint32][]byte{FourCC("PSTR"): {0x00, 0x00, 0xc0, 0x7f}}, types: map[uint32]uint32{FourCC("PSTR"): FourCC("flt ")}}
	if w, ok := (&systemPower{call: nan.call}).read(); ok {
		t.Errorf("a NaN PSTR reads %v W", w)
	}
}
