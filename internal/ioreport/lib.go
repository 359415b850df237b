//go:build darwin || ioreportfake

package ioreport

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The binding: IOReport, Core Foundation and IOKit through purego, so
// that exopower builds for macOS without cgo. It hands the code of this
// package plain values and keeps nothing of Core Foundation's past a call
// but the subscription. This file is the calls, their order and who
// releases what; where the libraries are is the platform's:
// lib_darwin.go for macOS's, lib_fake.go (build tag ioreportfake) for a
// fake C library on Linux, against which binding_test.go runs this file.
// The libraries are opened once, when the package is initialised, and
// never closed.

const (
	rtldNow      = purego.RTLD_NOW | purego.RTLD_GLOBAL
	utf8Encoding = 0x08000100 // kCFStringEncodingUTF8
)

var (
	loadErr error // why the libraries did not load, for Open

	// CoreFoundation.
	cfStringCreateWithCString     func(alloc uintptr, s string, enc uint32) uintptr
	cfStringGetCString            func(s uintptr, buf *byte, size int64, enc uint32) bool
	cfArrayGetCount               func(a uintptr) int64
	cfArrayGetValueAtIndex        func(a uintptr, i int64) uintptr
	cfDictionaryGetValue          func(d, key uintptr) uintptr
	cfDictionaryGetCount          func(d uintptr) int64
	cfDictionaryCreateMutableCopy func(alloc uintptr, capacity int64, d uintptr) uintptr
	cfRelease                     func(cf uintptr)
	cfGetTypeID                   func(cf uintptr) uint64
	cfNumberGetTypeID             func() uint64
	cfBooleanGetTypeID            func() uint64
	cfDictionaryGetTypeID         func() uint64
	cfStringGetTypeID             func() uint64
	cfNumberGetValue              func(n uintptr, typ int64, v *int64) bool
	cfNumberIsFloatType           func(n uintptr) bool
	cfBooleanGetValue             func(b uintptr) bool

	// IOReport.
	iorCopyChannelsInGroup func(group, subgroup uintptr, a, b, c uint64) uintptr
	iorCreateSubscription  func(a, desired uintptr, subscribed *uintptr, id uint64, e uintptr) uintptr
	iorCreateSamples       func(sub, channels, e uintptr) uintptr
	iorChannelGetGroup     func(ch uintptr) uintptr
	iorChannelGetSubGroup  func(ch uintptr) uintptr
	iorChannelGetName      func(ch uintptr) uintptr
	iorChannelGetUnitLabel func(ch uintptr) uintptr
	iorSimpleGetInteger    func(ch uintptr, unit *uint64) int64

	// IOKit, for the SMC.
	ioServiceMatching            func(name string) uintptr
	ioServiceGetMatchingServices func(mainPort uint32, matching uintptr, it *uint32) int32
	ioIteratorNext               func(it uint32) uint32
	ioRegistryEntryGetName       func(entry uint32, name *[128]byte) int32
	ioServiceOpen                func(svc, task, typ uint32, conn *uint32) int32
	ioConnectCallStructMethod    func(conn, sel uint32, in unsafe.Pointer, inSize uintptr, out unsafe.Pointer, outSize *uintptr) int32
	ioServiceClose               func(conn uint32) int32
	ioObjectRelease              func(obj uint32) int32
	// and for AppleSmartBattery's entry (battery_lib.go).
	ioServiceGetMatchingService       func(mainPort uint32, matching uintptr) uint32
	ioRegistryEntryCreateCFProperties func(entry uint32, props *uintptr, alloc uintptr, options uint32) int32
	// and for IOPlatformExpertDevice's serial number (platform_lib.go).
	ioRegistryEntryCreateCFProperty func(entry uint32, key, alloc uintptr, options uint32) uintptr
	machTaskSelf                    func() uint32
)

// libraries are where the four libraries are.
type libraries struct {
	coreFoundation, ioReport, ioKit, system string
}

// init loads the libraries when the package is initialised, which Go
// does on the main thread: Core Foundation initialises itself when it is
// loaded, and must do so on the main thread. (That it worked when loaded
// later was luck: crypto/x509 links Core Foundation into every macOS
// binary, so it was loaded at start anyway.) Open returns the error.
func init() { loadErr = load() }

// load opens the libraries and finds every function. A missing symbol is
// an error, not a panic: RegisterLibFunc panics on one, so each is looked
// up first.
func load() error {
	cf, ior, iokit, sys, err := openLibraries()
	if err != nil {
		return err
	}
	for _, f := range []struct {
		lib  uintptr
		fptr any
		name string
	}{
		{cf, &cfStringCreateWithCString, "CFStringCreateWithCString"},
		{cf, &cfStringGetCString, "CFStringGetCString"},
		{cf, &cfArrayGetCount, "CFArrayGetCount"},
		{cf, &cfArrayGetValueAtIndex, "CFArrayGetValueAtIndex"},
		{cf, &cfDictionaryGetValue, "CFDictionaryGetValue"},
		{cf, &cfDictionaryGetCount, "CFDictionaryGetCount"},
		{cf, &cfDictionaryCreateMutableCopy, "CFDictionaryCreateMutableCopy"},
		{cf, &cfRelease, "CFRelease"},
		{cf, &cfGetTypeID, "CFGetTypeID"},
		{cf, &cfNumberGetTypeID, "CFNumberGetTypeID"},
		{cf, &cfBooleanGetTypeID, "CFBooleanGetTypeID"},
		{cf, &cfDictionaryGetTypeID, "CFDictionaryGetTypeID"},
		{cf, &cfStringGetTypeID, "CFStringGetTypeID"},
		{cf, &cfNumberGetValue, "CFNumberGetValue"},
		{cf, &cfNumberIsFloatType, "CFNumberIsFloatType"},
		{cf, &cfBooleanGetValue, "CFBooleanGetValue"},
		{ior, &iorCopyChannelsInGroup, "IOReportCopyChannelsInGroup"},
		{ior, &iorCreateSubscription, "IOReportCreateSubscription"},
		{ior, &iorCreateSamples, "IOReportCreateSamples"},
		{ior, &iorChannelGetGroup, "IOReportChannelGetGroup"},
		{ior, &iorChannelGetSubGroup, "IOReportChannelGetSubGroup"},
		{ior, &iorChannelGetName, "IOReportChannelGetChannelName"},
		{ior, &iorChannelGetUnitLabel, "IOReportChannelGetUnitLabel"},
		{ior, &iorSimpleGetInteger, "IOReportSimpleGetIntegerValue"},
		{iokit, &ioServiceMatching, "IOServiceMatching"},
		{iokit, &ioServiceGetMatchingServices, "IOServiceGetMatchingServices"},
		{iokit, &ioIteratorNext, "IOIteratorNext"},
		{iokit, &ioRegistryEntryGetName, "IORegistryEntryGetName"},
		{iokit, &ioServiceOpen, "IOServiceOpen"},
		{iokit, &ioConnectCallStructMethod, "IOConnectCallStructMethod"},
		{iokit, &ioServiceClose, "IOServiceClose"},
		{iokit, &ioObjectRelease, "IOObjectRelease"},
		{iokit, &ioServiceGetMatchingService, "IOServiceGetMatchingService"},
		{iokit, &ioRegistryEntryCreateCFProperties, "IORegistryEntryCreateCFProperties"},
		{iokit, &ioRegistryEntryCreateCFProperty, "IORegistryEntryCreateCFProperty"},
		{sys, &machTaskSelf, "mach_task_self"},
	} {
		if _, err := purego.Dlsym(f.lib, f.name); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		purego.RegisterLibFunc(f.fptr, f.lib, f.name)
	}
	return nil
}

// openLibraries opens Core Foundation, libIOReport, IOKit and libSystem,
// where the platform says they are.
func openLibraries() (cf, ior, iokit, sys uintptr, err error) {
	paths, err := libraryPaths()
	if err != nil {
		return 0, 0, 0, 0, err
	}
	for _, l := range []struct {
		handle *uintptr
		path   string
	}{{&cf, paths.coreFoundation}, {&ior, paths.ioReport}, {&iokit, paths.ioKit}, {&sys, paths.system}} {
		if *l.handle, err = purego.Dlopen(l.path, rtldNow); err != nil {
			return 0, 0, 0, 0, fmt.Errorf("open %s: %w", l.path, err)
		}
	}
	return cf, ior, iokit, sys, nil
}

// cfString makes a CFString of s; the caller releases it.
func cfString(s string) uintptr { return cfStringCreateWithCString(0, s, utf8Encoding) }

// goString reads a CFString; "" for none.
func goString(s uintptr) string {
	if s == 0 {
		return ""
	}
	var buf [256]byte
	if !cfStringGetCString(s, &buf[0], int64(len(buf)), utf8Encoding) {
		return ""
	}
	for i, b := range buf {
		if b == 0 {
			return string(buf[:i])
		}
	}
	return string(buf[:])
}

// library is IOReport's Energy Model group, subscribed, and the SMC.
type library struct {
	sub, channels uintptr // the subscription, and the channels it reads
	keyChannels   uintptr // the CFString "IOReportChannels"; 0 once closed
	selected      []int   // the channels Read reads; nil: every one
	smc           uint32  // the SMC's connection; 0 where it did not open
	pstr          systemPower
}

// errClosed is a call on a library closed already.
var errClosed = errors.New("IOReport is closed")

// Open opens the SMC, for Subscribe to subscribe to IOReport's Energy
// Model group after. An SMC that does not open is no error: the system's
// power is then not read (a virtual machine has none).
func Open() (Library, error) {
	if loadErr != nil {
		return nil, fmt.Errorf("IOReport: %w", loadErr)
	}
	key := cfString("IOReportChannels")
	if key == 0 {
		return nil, errors.New("IOReport: Core Foundation made no string")
	}
	l := &library{keyChannels: key}
	l.smc = openSMC()
	l.pstr = systemPower{call: smcOn(l.smc)}
	return l, nil
}

// Subscribe subscribes to the Energy Model group and names its channels.
// Core Foundation's calls can give NULL, where passing it on would crash
// inside C: each is checked. A subscription that fails closes the
// library (the SMC's connection, opened by Open, with it), leaving
// nothing open whether or not the caller closes it.
func (l *library) Subscribe() ([]Channel, error) {
	channels, err := l.subscribe()
	if err != nil {
		l.Close()
		return nil, err
	}
	return channels, nil
}

func (l *library) subscribe() ([]Channel, error) {
	switch {
	case l.keyChannels == 0:
		return nil, errClosed
	case l.sub != 0:
		return nil, errors.New("IOReport is subscribed already")
	}
	desired, err := energyModel()
	if err != nil {
		return nil, err
	}
	var subscribed uintptr
	l.sub = iorCreateSubscription(0, desired, &subscribed, 0, 0)
	if subscribed != 0 {
		cfRelease(subscribed)
	}
	if l.sub == 0 {
		cfRelease(desired)
		return nil, errors.New("IOReport refused the subscription to its Energy Model group")
	}
	l.channels = desired // Close releases it, with the subscription
	sample := iorCreateSamples(l.sub, l.channels, 0)
	if sample == 0 {
		return nil, errors.New("IOReport gave no sample of its Energy Model group")
	}
	defer cfRelease(sample)
	items, err := l.items(sample)
	if err != nil {
		return nil, err
	}
	channels := make([]Channel, cfArrayGetCount(items))
	for i := range channels {
		ch := cfArrayGetValueAtIndex(items, int64(i))
		if ch == 0 {
			return nil, fmt.Errorf("IOReport's sample has no channel %d", i)
		}
		channels[i] = Channel{Group: goString(iorChannelGetGroup(ch)), Subgroup: goString(iorChannelGetSubGroup(ch)),
			Name: goString(iorChannelGetName(ch)), Unit: goString(iorChannelGetUnitLabel(ch))}
	}
	return channels, nil
}

// energyModel is a mutable copy of the Energy Model group's channels, as
// a subscription takes them; the caller releases it.
func energyModel() (uintptr, error) {
	group := cfString(Group)
	if group == 0 {
		return 0, errors.New("IOReport: Core Foundation made no string")
	}
	all := iorCopyChannelsInGroup(group, 0, 0, 0, 0)
	cfRelease(group)
	if all == 0 {
		return 0, errors.New("IOReport has no Energy Model group here")
	}
	desired := cfDictionaryCreateMutableCopy(0, cfDictionaryGetCount(all), all)
	cfRelease(all)
	if desired == 0 {
		return 0, errors.New("IOReport's Energy Model channels could not be copied (CFDictionaryCreateMutableCopy)")
	}
	return desired, nil
}

// items is a sample's array of channels, which the sample holds.
func (l *library) items(sample uintptr) (uintptr, error) {
	items := cfDictionaryGetValue(sample, l.keyChannels)
	if items == 0 {
		return 0, errors.New(`IOReport's sample has no "IOReportChannels" array`)
	}
	return items, nil
}

// Read takes a sample and reads the selected channels' cumulative
// counters: the samples hold the counters themselves, and their
// differences are made in Go. A channel with no simple value reads 0.
func (l *library) Read(values []int64) error {
	if l.sub == 0 {
		return errors.New("IOReport is not subscribed, or closed")
	}
	sample := iorCreateSamples(l.sub, l.channels, 0)
	if sample == 0 {
		return errors.New("IOReport gave no sample")
	}
	defer cfRelease(sample)
	items, err := l.items(sample)
	if err != nil {
		return err
	}
	if n := int(cfArrayGetCount(items)); n != len(values) {
		return fmt.Errorf("IOReport gave %d channels, where it had %d", n, len(values))
	}
	if l.selected == nil {
		for i := range values {
			if err := readValue(items, i, values); err != nil {
				return err
			}
		}
		return nil
	}
	for _, i := range l.selected {
		if i < 0 || i >= len(values) {
			return fmt.Errorf("channel %d selected, of %d", i, len(values))
		}
		if err := readValue(items, i, values); err != nil {
			return err
		}
	}
	return nil
}

// readValue reads channel i's counter into values[i]: 0 where it has no
// simple value.
func readValue(items uintptr, i int, values []int64) error {
	ch := cfArrayGetValueAtIndex(items, int64(i))
	if ch == 0 {
		return fmt.Errorf("IOReport's sample has no channel %d", i)
	}
	v := iorSimpleGetInteger(ch, nil)
	if v == math.MinInt64 { // not a simple channel
		v = 0
	}
	values[i] = v
	return nil
}

// Select makes Read read only the channels at indices (two calls into
// IOReport each), every one where nil.
func (l *library) Select(indices []int) { l.selected = slices.Clone(indices) }

// SystemPower reads PSTR.
func (l *library) SystemPower() (float64, bool) {
	if l.smc == 0 {
		return 0, false
	}
	return l.pstr.read()
}

// Machine names the machine: its model and macOS build.
func (l *library) Machine() (string, string) { return machine() }

// Close releases the subscription and closes the SMC.
func (l *library) Close() error {
	for _, cf := range []uintptr{l.sub, l.channels, l.keyChannels} {
		if cf != 0 {
			cfRelease(cf)
		}
	}
	l.sub, l.channels, l.keyChannels = 0, 0, 0
	if l.smc != 0 {
		ioServiceClose(l.smc)
		l.smc = 0
	}
	return nil
}

// openSMC opens AppleSMC, preferring its AppleSMCKeysEndpoint on Apple
// Silicon; 0 where it does not open.
func openSMC() uint32 {
	matching := ioServiceMatching("AppleSMC")
	if matching == 0 {
		return 0
	}
	var it uint32 // IOKit takes matching, whatever it answers
	if ioServiceGetMatchingServices(0, matching, &it) != 0 || it == 0 {
		return 0
	}
	defer ioObjectRelease(it)
	var services []uint32
	for s := ioIteratorNext(it); s != 0; s = ioIteratorNext(it) {
		var name [128]byte
		if ioRegistryEntryGetName(s, &name) == 0 && string(name[:len("AppleSMCKeysEndpoint")]) == "AppleSMCKeysEndpoint" {
			services = append([]uint32{s}, services...)
		} else {
			services = append(services, s)
		}
	}
	var conn uint32
	task := machTaskSelf()
	for _, s := range services {
		if conn == 0 && ioServiceOpen(s, task, 0, &conn) != 0 {
			conn = 0
		}
		ioObjectRelease(s)
	}
	return conn
}

// smcOn is one call of the SMC's selector, over the connection conn.
func smcOn(conn uint32) smcCall {
	return func(in, out *smcParam) error {
		size := unsafe.Sizeof(*out)
		if kr := ioConnectCallStructMethod(conn, smcSelector, unsafe.Pointer(in), unsafe.Sizeof(*in), unsafe.Pointer(out), &size); kr != 0 {
			return fmt.Errorf("IOConnectCallStructMethod: %#x", uint32(kr))
		}
		if size != unsafe.Sizeof(*out) {
			return fmt.Errorf("the SMC answered %d bytes", size)
		}
		return nil
	}
}
