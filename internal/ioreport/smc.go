package ioreport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The SMC is read through IOKit with one structure, in and out: the key,
// a command, and the key's bytes. This file is its layout and its
// protocol, over the call that the binding (lib.go, smcOn)
// makes: it runs and is tested everywhere.

// FourCC is a key or a type code: four ASCII bytes in a uint32, the first
// in the high byte ("PSTR" is 0x50535452).
func FourCC(s string) uint32 {
	var b [4]byte
	copy(b[:], s)
	return binary.BigEndian.Uint32(b[:])
}

// String is the code as its four characters.
func fourCCString(c uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], c)
	return string(b[:])
}

// smcParam is AppleSMC's parameter structure (SMCParamStruct), 80 bytes,
// laid out as its C definition is on arm64; smc_test.go holds every
// offset to that.
type smcParam struct {
	Key        uint32
	Vers       smcVers
	_          [2]uint8
	PLimitData smcPLimitData
	KeyInfo    smcKeyInfo
	Result     uint8
	Status     uint8
	Data8      uint8 // the command
	_          uint8
	Data32     uint32
	Bytes      [32]uint8
}

type smcVers struct {
	Major, Minor, Build, Reserved uint8
	Release                       uint16
}

type smcPLimitData struct {
	Version, Length                 uint16
	CPUPLimit, GPUPLimit, MemPLimit uint32
}

type smcKeyInfo struct {
	DataSize, DataType uint32
	DataAttributes     uint8
	_                  [3]uint8
}

// The SMC's commands (in Data8), and the IOKit selector they go through.
const (
	smcReadKey    = 5
	smcGetKeyInfo = 9
	smcSelector   = 2 // kSMCHandleYPCEvent
	smcKeyMissing = 132
)

// errNoKey says the SMC has no such key.
var errNoKey = errors.New("no such key")

// smcCall sends in to the SMC and fills out, as IOConnectCallStructMethod
// does.
type smcCall func(in, out *smcParam) error

// smcKey is a key's type and size, as the SMC describes it.
type smcKey struct {
	dataType, size uint32
}

// keyInfo asks the SMC for key's type and size.
func keyInfo(call smcCall, key uint32) (smcKey, error) {
	in, out := smcParam{Key: key, Data8: smcGetKeyInfo}, smcParam{}
	if err := call(&in, &out); err != nil {
		return smcKey{}, err
	}
	switch {
	case out.Result == smcKeyMissing, out.KeyInfo.DataSize == 0:
		return smcKey{}, errNoKey
	case out.Result != 0:
		return smcKey{}, fmt.Errorf("SMC result %d", out.Result)
	case out.KeyInfo.DataSize > 32:
		return smcKey{}, fmt.Errorf("SMC key of %d bytes", out.KeyInfo.DataSize)
	}
	return smcKey{dataType: out.KeyInfo.DataType, size: out.KeyInfo.DataSize}, nil
}

// readKey reads key's bytes, whose type and size k says.
func readKey(call smcCall, key uint32, k smcKey) ([]byte, error) {
	in := smcParam{Key: key, Data8: smcReadKey, KeyInfo: smcKeyInfo{DataSize: k.size, DataType: k.dataType}}
	var out smcParam
	if err := call(&in, &out); err != nil {
		return nil, err
	}
	if out.Result != 0 {
		return nil, fmt.Errorf("SMC result %d", out.Result)
	}
	return out.Bytes[:k.size], nil
}

// DecodeSMC reads a value of the SMC's type (a FourCC) from its bytes:
// flt  (IEEE float32, little-endian on Apple Silicon), ui8 , ui16, ui32
// (big-endian), fpe2 (unsigned 14.2 fixed point) and sp78 (signed 7.8),
// both big-endian.
func DecodeSMC(dataType uint32, b []byte) (float64, error) {
	need := map[string]int{"flt ": 4, "ui8 ": 1, "ui16": 2, "ui32": 4, "fpe2": 2, "sp78": 2}
	t := fourCCString(dataType)
	n, ok := need[t]
	switch {
	case !ok:
		return 0, fmt.Errorf("SMC type %q is not one exopower reads", t)
	case len(b) < n:
		return 0, fmt.Errorf("SMC type %q in %d bytes", t, len(b))
	}
	switch t {
	case "flt ":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), nil
	case "ui8 ":
		return float64(b[0]), nil
	case "ui16":
		return float64(binary.BigEndian.Uint16(b)), nil
	case "ui32":
		return float64(binary.BigEndian.Uint32(b)), nil
	case "fpe2":
		return float64(binary.BigEndian.Uint16(b)) / 4, nil
	}
	return float64(int16(binary.BigEndian.Uint16(b))) / 256, nil // sp78
}

// smcValue reads one key as a number through call: the key's type
// once (kept in info), then its bytes at each reading. A key the SMC
// does not have is asked for once.
type smcValue struct {
	call           smcCall
	key            uint32
	info           smcKey
	known, missing bool
}

// read is the key's value now; errNoKey where the SMC has no such key.
func (v *smcValue) read() (float64, error) {
	if v.missing {
		return 0, errNoKey
	}
	if !v.known {
		k, err := keyInfo(v.call, v.key)
		if err != nil {
			v.missing = errors.Is(err, errNoKey)
			return 0, err
		}
		v.info, v.known = k, true
	}
	b, err := readKey(v.call, v.key, v.info)
	if err != nil {
		return 0, err
	}
	return DecodeSMC(v.info.dataType, b)
}

// systemPower reads PSTR, the system's power in watts, through call.
// ok is false where the SMC has no PSTR, or gives no believable power.
type systemPower struct {
	call smcCall
	v    smcValue
}

func (p *systemPower) read() (float64, bool) {
	if p.v.call == nil {
		p.v = smcValue{call: p.call, key: FourCC("PSTR")}
	}
	w, err := p.v.read()
	if err != nil || math.IsNaN(w) || math.IsInf(w, 0) || w < 0 || w > 2000 {
		return 0, false
	}
	return w, true
}
