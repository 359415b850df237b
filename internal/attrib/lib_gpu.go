//go:build darwin || attribfake

package attrib

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The GPU's time per process, from the IORegistry: each process that
// opened the GPU has one or more AGXDeviceUserClient children of the
// GPU's service (AGXAccelerator...), whose IOUserClientCreator names the
// process ("pid 682, WindowServer") and whose AppUsage holds
// accumulatedGPUTime, in nanoseconds, per entry. No Apple API documents
// it; mactop reads it the same way. Every object made or copied here is
// released before GPUTimes returns, but for the keys, which Close
// releases.

const (
	utf8Encoding = 0x08000100 // kCFStringEncodingUTF8
	sInt64Type   = 4          // kCFNumberSInt64Type
)

var (
	// Core Foundation.
	cfStringCreateWithCString func(alloc uintptr, s string, enc uint32) uintptr
	cfStringGetCString        func(s uintptr, buf *byte, size int64, enc uint32) bool
	cfGetTypeID               func(cf uintptr) uint64
	cfStringGetTypeID         func() uint64
	cfArrayGetTypeID          func() uint64
	cfDictionaryGetTypeID     func() uint64
	cfNumberGetTypeID         func() uint64
	cfArrayGetCount           func(a uintptr) int64
	cfArrayGetValueAtIndex    func(a uintptr, i int64) uintptr
	cfDictionaryGetValue      func(d, key uintptr) uintptr
	cfNumberGetValue          func(n uintptr, typ int64, v *int64) bool
	cfRelease                 func(cf uintptr)

	// IOKit.
	ioServiceMatching               func(name string) uintptr
	ioServiceGetMatchingServices    func(mainPort uint32, matching uintptr, it *uint32) int32
	ioIteratorNext                  func(it uint32) uint32
	ioRegistryEntryGetChildIterator func(entry uint32, plane string, it *uint32) int32
	ioObjectGetClass                func(obj uint32, class *[128]byte) int32
	ioRegistryEntryCreateCFProperty func(entry uint32, key, alloc uintptr, options uint32) uintptr
	ioObjectRelease                 func(obj uint32) int32
)

// loadGPUFuncs registers Core Foundation's and IOKit's functions.
func loadGPUFuncs(cf, iokit uintptr) error {
	if err := registerFuncs(cf, []libFunc{
		{&cfStringCreateWithCString, "CFStringCreateWithCString"},
		{&cfStringGetCString, "CFStringGetCString"},
		{&cfGetTypeID, "CFGetTypeID"},
		{&cfStringGetTypeID, "CFStringGetTypeID"},
		{&cfArrayGetTypeID, "CFArrayGetTypeID"},
		{&cfDictionaryGetTypeID, "CFDictionaryGetTypeID"},
		{&cfNumberGetTypeID, "CFNumberGetTypeID"},
		{&cfArrayGetCount, "CFArrayGetCount"},
		{&cfArrayGetValueAtIndex, "CFArrayGetValueAtIndex"},
		{&cfDictionaryGetValue, "CFDictionaryGetValue"},
		{&cfNumberGetValue, "CFNumberGetValue"},
		{&cfRelease, "CFRelease"},
	}); err != nil {
		return err
	}
	return registerFuncs(iokit, []libFunc{
		{&ioServiceMatching, "IOServiceMatching"},
		{&ioServiceGetMatchingServices, "IOServiceGetMatchingServices"},
		{&ioIteratorNext, "IOIteratorNext"},
		{&ioRegistryEntryGetChildIterator, "IORegistryEntryGetChildIterator"},
		{&ioObjectGetClass, "IOObjectGetClass"},
		{&ioRegistryEntryCreateCFProperty, "IORegistryEntryCreateCFProperty"},
		{&ioObjectRelease, "IOObjectRelease"},
	})
}

// gpuReader is what GPUTimes keeps between calls: the property keys, made
// at its first call, and Core Foundation's type ids.
type gpuReader struct {
	creator, appUsage, gpuTime          uintptr // CFStrings; 0 until made
	stringID, arrayID, dictID, numberID uint64
}

// keys makes the keys and reads the type ids, once.
func (g *gpuReader) keys() error {
	if g.creator != 0 {
		return nil
	}
	for _, k := range []struct {
		key  *uintptr
		name string
	}{{&g.creator, "IOUserClientCreator"}, {&g.appUsage, "AppUsage"}, {&g.gpuTime, "accumulatedGPUTime"}} {
		if *k.key = cfStringCreateWithCString(0, k.name, utf8Encoding); *k.key == 0 {
			g.release()
			return errors.New("the GPU's clients: Core Foundation made no string")
		}
	}
	g.stringID, g.arrayID, g.dictID, g.numberID = cfStringGetTypeID(), cfArrayGetTypeID(), cfDictionaryGetTypeID(), cfNumberGetTypeID()
	return nil
}

// release releases the keys.
func (g *gpuReader) release() {
	for _, k := range []*uintptr{&g.creator, &g.appUsage, &g.gpuTime} {
		if *k != 0 {
			cfRelease(*k)
			*k = 0
		}
	}
}

// GPUTimes walks the children of every AGXAccelerator. A client whose
// creator or AppUsage cannot be read is passed over: its process's time
// is then that of its other clients.
func (b *binding) GPUTimes(buf []GPUTime) ([]GPUTime, error) {
	buf = buf[:0]
	if b.closed.Load() {
		return buf, errBindingClosed
	}
	if err := b.gpu.keys(); err != nil {
		return buf, err
	}
	matching := ioServiceMatching("AGXAccelerator")
	if matching == 0 {
		return buf, errors.New("IOServiceMatching(AGXAccelerator) gave nothing: the GPU's clients cannot be looked for")
	}
	var it uint32 // IOKit takes matching, whatever it answers
	if kr := ioServiceGetMatchingServices(0, matching, &it); kr != 0 {
		return buf, fmt.Errorf("IOServiceGetMatchingServices(AGXAccelerator): %#x: the GPU cannot be found", uint32(kr))
	}
	defer ioObjectRelease(it)
	for gpu := ioIteratorNext(it); gpu != 0; gpu = ioIteratorNext(it) {
		var err error
		buf, err = b.gpu.clientsOf(gpu, buf)
		ioObjectRelease(gpu)
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// clientsOf adds the GPU time of gpu's AGXDeviceUserClient children.
func (g *gpuReader) clientsOf(gpu uint32, buf []GPUTime) ([]GPUTime, error) {
	var children uint32
	if kr := ioRegistryEntryGetChildIterator(gpu, "IOService", &children); kr != 0 {
		return buf, fmt.Errorf("IORegistryEntryGetChildIterator: %#x: the GPU's clients cannot be listed", uint32(kr))
	}
	defer ioObjectRelease(children)
	for c := ioIteratorNext(children); c != 0; c = ioIteratorNext(children) {
		var class [128]byte
		if ioObjectGetClass(c, &class) == 0 && cString(class[:]) == "AGXDeviceUserClient" {
			if pid, ok := g.creatorPid(c); ok {
				if t, ok := g.clientTime(c); ok {
					buf = addGPUTime(buf, pid, t)
				}
			}
		}
		ioObjectRelease(c)
	}
	return buf, nil
}

// addGPUTime adds a client's time to its process's.
func addGPUTime(buf []GPUTime, pid int32, t time.Duration) []GPUTime {
	for i := range buf {
		if buf[i].Pid == pid {
			buf[i].Time += t
			return buf
		}
	}
	return append(buf, GPUTime{Pid: pid, Time: t})
}

// creatorPid reads a client's IOUserClientCreator, "pid 682,
// WindowServer".
func (g *gpuReader) creatorPid(client uint32) (int32, bool) {
	s := ioRegistryEntryCreateCFProperty(client, g.creator, 0, 0)
	if s == 0 {
		return 0, false
	}
	defer cfRelease(s)
	if cfGetTypeID(s) != g.stringID {
		return 0, false
	}
	var buf [256]byte
	if !cfStringGetCString(s, &buf[0], int64(len(buf)), utf8Encoding) {
		return 0, false
	}
	return parseCreator(cString(buf[:]))
}

// parseCreator reads the pid of "pid 682, WindowServer".
func parseCreator(s string) (int32, bool) {
	rest, ok := strings.CutPrefix(s, "pid ")
	if !ok {
		return 0, false
	}
	var pid int64
	i := 0
	for ; i < len(rest) && rest[i] >= '0' && rest[i] <= '9' && i < 10; i++ {
		pid = pid*10 + int64(rest[i]-'0')
	}
	if i == 0 || pid > 1<<31-1 || (i < len(rest) && rest[i] != ',') {
		return 0, false
	}
	return int32(pid), true
}

// clientTime sums a client's AppUsage[].accumulatedGPUTime; false where
// AppUsage is not an array. Entries that are not dictionaries, or
// without a number, count nothing.
func (g *gpuReader) clientTime(client uint32) (time.Duration, bool) {
	usage := ioRegistryEntryCreateCFProperty(client, g.appUsage, 0, 0)
	if usage == 0 {
		return 0, false
	}
	defer cfRelease(usage)
	if cfGetTypeID(usage) != g.arrayID {
		return 0, false
	}
	var sum time.Duration
	for i := range cfArrayGetCount(usage) {
		entry := cfArrayGetValueAtIndex(usage, i)
		if entry == 0 || cfGetTypeID(entry) != g.dictID {
			continue
		}
		n := cfDictionaryGetValue(entry, g.gpuTime)
		var ns int64
		if n != 0 && cfGetTypeID(n) == g.numberID && cfNumberGetValue(n, sInt64Type, &ns) && ns > 0 {
			sum += time.Duration(ns)
		}
	}
	return sum, true
}

// cString is the string before the first NUL.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
