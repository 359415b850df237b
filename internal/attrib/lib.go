//go:build darwin || attribfake

package attrib

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The binding: libSystem's process calls, and IOKit and Core Foundation
// for the GPU's clients (lib_gpu.go), through purego, so that exopower
// builds for macOS without cgo. This file is the calls, their arguments
// and what their errors mean; where the libraries are is the platform's:
// lib_darwin.go for macOS's, lib_fake.go (build tag attribfake) for a
// fake C library on Linux, against which binding_test.go runs this file.
// The libraries are opened once, when the package is initialised, and
// never closed.
//
// The poll calls Pids, Identify and Usage for about a hundred processes
// ten times a second, so those calls allocate nothing: libSystem's
// functions are called with purego.SyscallN (a function registered with
// RegisterLibFunc allocates at every call), with arguments and into
// buffers that the binding keeps (SyscallN's variadic arguments, made at
// the call, would be allocated every time), and the errors a poll meets
// every time (another user's process, one just gone) are made once.

// libproc's, the coalitions' and waitid's constants, and the sizes of
// their structures, as XNU defines them (bsd/sys/proc_info.h,
// bsd/sys/resource.h, osfmk/mach/coalition.h, bsd/sys/wait.h,
// bsd/sys/signal.h).
const (
	procAllPids               = 1  // PROC_ALL_PIDS
	procPidUniqIdentifierInfo = 17 // PROC_PIDUNIQIDENTIFIERINFO
	procPidCoalitionInfo      = 20 // PROC_PIDCOALITIONINFO
	procPidTShortBSDInfo      = 13 // PROC_PIDT_SHORTBSDINFO
	rusageInfoV6              = 6  // RUSAGE_INFO_V6
	pPid                      = 1  // P_PID
	wExitedNoWait             = 0x4 | 0x20

	uniqIdentifierInfoSize = 56   // struct proc_uniqidentifierinfo
	coalitionInfoSize      = 40   // struct proc_pidcoalitioninfo
	shortBSDInfoSize       = 64   // struct proc_bsdshortinfo
	pathMaxSize            = 4096 // PROC_PIDPATHINFO_MAXSIZE: proc_pidpath takes no more
	rusageInfoV6Size       = 464  // struct rusage_info_v6
	// struct coalition_resource_usage is 352 bytes on macOS 15, and
	// grows; the kernel copies its own size, no more, into a buffer
	// zeroed first, so fields a kernel lacks read 0.
	coalitionUsageSize = 512
	siginfoSize        = 104 // siginfo_t
)

// Offsets of what exopower reads.
const (
	// struct proc_uniqidentifierinfo
	piUniqueID  = 16 // p_uniqueid
	piPUniqueID = 24 // p_puniqueid
	// struct proc_bsdshortinfo
	pbsiComm = 16 // char pbsi_comm[MAXCOMLEN]
	pbsiUID  = 36 // uid_t pbsi_uid
	// struct rusage_info_v6
	riUserTime        = 0x10  // Mach absolute time
	riSystemTime      = 0x18  // Mach
	riProcStart       = 0x50  // mach_absolute_time at the start
	riProcExit        = 0x58  // at the exit; 0 while alive
	riChildUserTime   = 0x60  // Mach
	riChildSystemTime = 0x68  // Mach
	riEnergyNJ        = 0x150 // nJ
	riPEnergyNJ       = 0x158 // nJ
	// struct coalition_resource_usage
	cruTasksStarted = 0x00
	cruTasksExited  = 0x08
	cruEnergy       = 0x58  // nJ, the CPU's
	cruANEEnergyNJ  = 0x138 // macOS 15
	cruGPUEnergyNJ  = 0x148 // macOS 15
)

// macOS's errno values (sys/errno.h), the same on Linux, where the tests'
// fake library gives them too.
const (
	ePERM  = 1
	eSRCH  = 3
	eINTR  = 4
	eCHILD = 10
	eINVAL = 22
)

var (
	bindingErr error // why the libraries did not load, for Open

	// libSystem's, called with purego.SyscallN.
	sysCalls struct {
		listPids, pidInfo, pidRusage, coalitionUsage, waitid, timebaseInfo, pidPath uintptr
		// responsible is libquarantine's, which libSystem re-exports: 0
		// where this macOS lacks it, and processes then stand alone.
		responsible uintptr
	}
)

// bindingLibraries are where the three libraries are.
type bindingLibraries struct {
	system, coreFoundation, ioKit string
}

// init loads the libraries when the package is initialised, which Go
// does on the main thread: Core Foundation initialises itself when it is
// loaded, and must do so on the main thread. Open returns the error.
func init() { bindingErr = loadBinding() }

// loadBinding opens the libraries and finds every function. A missing
// symbol is an error, not a panic: RegisterLibFunc panics on one, so each
// is looked up first.
func loadBinding() error {
	paths, err := bindingPaths()
	if err != nil {
		return err
	}
	var sys, cf, iokit uintptr
	for _, l := range []struct {
		handle *uintptr
		path   string
	}{{&sys, paths.system}, {&cf, paths.coreFoundation}, {&iokit, paths.ioKit}} {
		if *l.handle, err = purego.Dlopen(l.path, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
			return fmt.Errorf("open %s: %w", l.path, err)
		}
	}
	for _, f := range []struct {
		addr *uintptr
		name string
	}{
		{&sysCalls.listPids, "proc_listpids"},
		{&sysCalls.pidInfo, "proc_pidinfo"},
		{&sysCalls.pidRusage, "proc_pid_rusage"},
		{&sysCalls.coalitionUsage, "coalition_info_resource_usage"},
		{&sysCalls.waitid, "waitid"},
		{&sysCalls.timebaseInfo, "mach_timebase_info"},
		{&sysCalls.pidPath, "proc_pidpath"},
	} {
		if *f.addr, err = purego.Dlsym(sys, f.name); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	// A private function (Activity Monitor's, Chromium's): its absence
	// costs the grouping of helpers under their apps, not the binding.
	sysCalls.responsible, _ = purego.Dlsym(sys, "responsibility_get_pid_responsible_for_pid")
	if err := loadGPUFuncs(cf, iokit); err != nil {
		return err
	}
	return loadPlatform(sys)
}

// registerFuncs registers functions of a library, each looked up first.
func registerFuncs(lib uintptr, funcs []libFunc) error {
	for _, f := range funcs {
		if _, err := purego.Dlsym(lib, f.name); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		purego.RegisterLibFunc(f.fptr, lib, f.name)
	}
	return nil
}

type libFunc struct {
	fptr any
	name string
}

// errnoOf is errno after a failed call. purego gives it from an 8-byte
// load of the 4-byte errno on macOS: the 4 bytes above it are another
// variable's.
func errnoOf(e uintptr) syscall.Errno { return syscall.Errno(uint32(e)) }

// The errors a poll meets at every reading, made once: another user's
// process, and one gone since it was listed.
var (
	errRusageNotPermitted = fmt.Errorf("proc_pid_rusage: %w", ErrNotPermitted)
	errRusageGone         = fmt.Errorf("proc_pid_rusage: %w", ErrNoProcess)
	errRusageUnsupported  = fmt.Errorf("proc_pid_rusage: %w: exopower cannot tell a process's energy on this Mac", ErrUnsupported)
	errIdentifyGone       = fmt.Errorf("proc_pidinfo PROC_PIDUNIQIDENTIFIERINFO: %w", ErrNoProcess)
	errCoalitionOfGone    = fmt.Errorf("proc_pidinfo PROC_PIDCOALITIONINFO: %w (or a zombie, which has no coalition)", ErrNoProcess)
	errBindingClosed      = errors.New("the process binding is closed")
	errDescribeGone       = fmt.Errorf("proc_pidinfo PROC_PIDT_SHORTBSDINFO: %w", ErrNoProcess)
	errPathNone           = errors.New("proc_pidpath: no path (the process is gone, a zombie, or the kernel's own)")
	errNoResponsibility   = errors.New("responsibility_get_pid_responsible_for_pid: not in this macOS's libSystem")
)

// binding is Kernel on macOS's libraries. Its buffers are its own and
// reused; WaitExited uses none of them, and may run beside the other
// methods.
type binding struct {
	numer, denom uint64 // mach_timebase_info: ns = Mach × numer / denom
	info         Info
	closed       atomic.Bool

	args   [5]uintptr // a call's arguments
	pids   []int32    // proc_listpids's buffer
	uniq   [uniqIdentifierInfoSize / 8]uint64
	coal   [coalitionInfoSize / 8]uint64
	rusage [rusageInfoV6Size / 8]uint64
	cru    [coalitionUsageSize / 8]uint64
	short  [shortBSDInfoSize / 8]uint64
	path   [pathMaxSize]byte
	gpu    gpuReader
}

// sys calls a libSystem function with the binding's own arguments
// array. Where an argument is an address, it is of the binding's own
// buffers: the binding is on the heap (Open returns it as an interface),
// where Go does not move memory, and its methods use it after the call,
// which keeps it alive.
func (b *binding) sys(fn uintptr, args ...uintptr) (r, errno uintptr) {
	n := copy(b.args[:], args)
	return call(fn, b.args[:n])
}

// Open reads the Mach timebase and what this Mac's kernel can give.
func Open() (Kernel, error) {
	if bindingErr != nil {
		return nil, fmt.Errorf("process energy: %w", bindingErr)
	}
	b := &binding{}
	var tb [2]uint32 // struct mach_timebase_info { numer, denom }
	if kr, _ := callEscaping(sysCalls.timebaseInfo, uintptr(unsafe.Pointer(&tb[0]))); int32(kr) != 0 || tb[0] == 0 || tb[1] == 0 {
		return nil, fmt.Errorf("mach_timebase_info: kern_return %d, timebase %d/%d: processes' CPU times cannot be told in nanoseconds", int32(kr), tb[0], tb[1])
	}
	b.numer, b.denom = uint64(tb[0]), uint64(tb[1])
	b.info = readInfo()
	return b, nil
}

// readInfo reads sysctl. A kernel without kern.pervasive_energy keeps
// no process's energy.
func readInfo() Info {
	version, _ := sysctlString("kern.osproductversion")
	chip, _ := sysctlString("machdep.cpu.brand_string")
	pervasive, err := sysctlUint32("kern.pervasive_energy")
	major, _, _ := strings.Cut(version, ".")
	n, _ := strconv.Atoi(major)
	return Info{MacOS: version, Chip: chip, ProcessEnergy: err == nil && pervasive != 0, AcceleratorEnergy: n >= 15}
}

// Pids calls proc_listpids into the binding's buffer, which it grows
// while the kernel fills it: a full buffer may have left processes out.
// It starts at the kernel's estimate.
func (b *binding) Pids(buf []int32) ([]int32, error) {
	buf = buf[:0]
	if b.closed.Load() {
		return buf, errBindingClosed
	}
	if b.pids == nil {
		r, e := b.sys(sysCalls.listPids, procAllPids, 0, 0, 0)
		if int32(r) <= 0 {
			return buf, fmt.Errorf("proc_listpids: the kernel gave no estimate of its processes: %w", errnoOf(e))
		}
		b.pids = make([]int32, int32(r)/4+64)
	}
	for {
		r, e := b.sys(sysCalls.listPids, procAllPids, 0, uintptr(unsafe.Pointer(&b.pids[0])), uintptr(4*len(b.pids)))
		n := int(int32(r))
		switch {
		case n <= 0:
			return buf, fmt.Errorf("proc_listpids: the kernel listed no process: %w", errnoOf(e))
		case n < 4*len(b.pids):
			return append(buf, b.pids[:n/4]...), nil
		case len(b.pids) >= 1<<22:
			return buf, fmt.Errorf("proc_listpids: more than %d processes", len(b.pids))
		}
		b.pids = make([]int32, 2*len(b.pids))
	}
}

// Identify calls proc_pidinfo(PROC_PIDUNIQIDENTIFIERINFO) with arg 1,
// without which a zombie is not found.
func (b *binding) Identify(pid int32) (Ident, error) {
	if b.closed.Load() {
		return Ident{}, errBindingClosed
	}
	r, e := b.sys(sysCalls.pidInfo, uintptr(pid), procPidUniqIdentifierInfo, 1, uintptr(unsafe.Pointer(&b.uniq[0])), uniqIdentifierInfoSize)
	if err := pidInfoErr("PROC_PIDUNIQIDENTIFIERINFO", pid, r, e, uniqIdentifierInfoSize, errIdentifyGone); err != nil {
		return Ident{}, err
	}
	return Ident{UniqueID: b.uniq[piUniqueID/8], ParentUniqueID: b.uniq[piPUniqueID/8]}, nil
}

// CoalitionOf calls proc_pidinfo(PROC_PIDCOALITIONINFO): the first of
// its ids is the resource coalition's.
func (b *binding) CoalitionOf(pid int32) (uint64, error) {
	if b.closed.Load() {
		return 0, errBindingClosed
	}
	r, e := b.sys(sysCalls.pidInfo, uintptr(pid), procPidCoalitionInfo, 0, uintptr(unsafe.Pointer(&b.coal[0])), coalitionInfoSize)
	if err := pidInfoErr("PROC_PIDCOALITIONINFO", pid, r, e, coalitionInfoSize, errCoalitionOfGone); err != nil {
		return 0, err
	}
	return b.coal[0], nil
}

// pidInfoErr is what proc_pidinfo's return r means: the bytes it wrote,
// size where it wrote the structure, 0 on an error.
func pidInfoErr(flavor string, pid int32, r, e uintptr, size int, gone error) error {
	switch n := int32(r); {
	case int(n) == size:
		return nil
	case n > 0:
		return fmt.Errorf("proc_pidinfo %s: %d bytes of the %d of its structure", flavor, n, size)
	case errnoOf(e) == eSRCH:
		return gone
	}
	return fmt.Errorf("proc_pidinfo %s of process %d: %w", flavor, pid, errnoOf(e))
}

// Usage calls proc_pid_rusage(RUSAGE_INFO_V6), which writes its 464
// bytes whole.
func (b *binding) Usage(pid int32) (Usage, error) {
	if b.closed.Load() {
		return Usage{}, errBindingClosed
	}
	r, e := b.sys(sysCalls.pidRusage, uintptr(pid), rusageInfoV6, uintptr(unsafe.Pointer(&b.rusage[0])))
	if int32(r) != 0 {
		switch errnoOf(e) {
		case ePERM:
			return Usage{}, errRusageNotPermitted
		case eSRCH:
			return Usage{}, errRusageGone
		case eINVAL: // a kernel older than RUSAGE_INFO_V6: macOS 12 or before
			return Usage{}, errRusageUnsupported
		}
		return Usage{}, fmt.Errorf("proc_pid_rusage of process %d: %w", pid, errnoOf(e))
	}
	ri := &b.rusage
	return Usage{
		EnergyNJ:  ri[riEnergyNJ/8],
		PEnergyNJ: ri[riPEnergyNJ/8],
		CPU:       b.nanoseconds(ri[riUserTime/8] + ri[riSystemTime/8]),
		ChildCPU:  b.nanoseconds(ri[riChildUserTime/8] + ri[riChildSystemTime/8]),
		Start:     ri[riProcStart/8],
		Exited:    ri[riProcExit/8] != 0,
	}, nil
}

// nanoseconds converts Mach absolute time, in 128 bits: Apple Silicon's
// timebase is 125/3, and a sum of children's times in Mach units times
// 125 can pass 64 bits.
func (b *binding) nanoseconds(mach uint64) time.Duration {
	hi, lo := bits.Mul64(mach, b.numer)
	if hi >= b.denom {
		return math.MaxInt64
	}
	ns, _ := bits.Div64(hi, lo, b.denom)
	return time.Duration(min(ns, math.MaxInt64))
}

// CoalitionUsage calls coalition_info_resource_usage into its buffer,
// zeroed: the kernel writes only the fields it has.
func (b *binding) CoalitionUsage(id uint64) (CoalitionUsage, error) {
	if b.closed.Load() {
		return CoalitionUsage{}, errBindingClosed
	}
	clear(b.cru[:])
	r, e := b.sys(sysCalls.coalitionUsage, uintptr(id), uintptr(unsafe.Pointer(&b.cru[0])), coalitionUsageSize)
	if int32(r) != 0 {
		switch errnoOf(e) {
		case eSRCH:
			return CoalitionUsage{}, fmt.Errorf("coalition_info_resource_usage: no coalition %d: it has ended", id)
		case eINVAL:
			return CoalitionUsage{}, fmt.Errorf("coalition_info_resource_usage: coalition %d is not a resource coalition, or has ended", id)
		}
		return CoalitionUsage{}, fmt.Errorf("coalition_info_resource_usage of coalition %d: %w", id, errnoOf(e))
	}
	cru := &b.cru
	return CoalitionUsage{
		CPUNJ:        cru[cruEnergy/8],
		GPUNJ:        cru[cruGPUEnergyNJ/8],
		ANENJ:        cru[cruANEEnergyNJ/8],
		TasksStarted: cru[cruTasksStarted/8],
		TasksExited:  cru[cruTasksExited/8],
	}, nil
}

// WaitExited calls waitid(P_PID, pid, WEXITED|WNOWAIT), again when a
// signal interrupts it. Go has no waitid on macOS, and macOS's wait4
// ignores WNOWAIT and reaps. Its arguments and siginfo_t are its own,
// not the binding's: it blocks while the poll goes on.
func (b *binding) WaitExited(pid int32) error {
	if b.closed.Load() {
		return errBindingClosed
	}
	var si [siginfoSize / 8]uint64
	for {
		r, e := callEscaping(sysCalls.waitid, pPid, uintptr(uint32(pid)), uintptr(unsafe.Pointer(&si[0])), wExitedNoWait)
		if int32(r) == 0 {
			return nil
		}
		switch errnoOf(e) {
		case eINTR:
			continue
		case eCHILD:
			return fmt.Errorf("waitid: process %d is not exopower's child, or was reaped already", pid)
		}
		return fmt.Errorf("waitid for process %d: %w", pid, errnoOf(e))
	}
}

// Info is what Open read.
func (b *binding) Info() Info { return b.info }

// Close releases the Core Foundation strings that GPUTimes keeps. The
// methods fail after it.
func (b *binding) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	b.gpu.release()
	return nil
}
