//go:build darwin || attribfake

package attrib

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// The calls of Describer: once for each process the whole Mac's view
// meets, into the binding's own buffers, as the poll's calls are
// (lib.go), so that a Mac of many short-lived processes costs no
// garbage for them.

// Describe calls proc_pidinfo(PROC_PIDT_SHORTBSDINFO) with arg 1, which
// finds a zombie too, and reads the owner and the short name.
func (b *binding) Describe(pid int32) (Description, error) {
	if b.closed.Load() {
		return Description{}, errBindingClosed
	}
	r, e := b.sys(sysCalls.pidInfo, uintptr(pid), procPidTShortBSDInfo, 1, uintptr(unsafe.Pointer(&b.short[0])), shortBSDInfoSize)
	if err := pidInfoErr("PROC_PIDT_SHORTBSDINFO", pid, r, e, shortBSDInfoSize, errDescribeGone); err != nil {
		return Description{}, err
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&b.short[0])), shortBSDInfoSize)
	var d Description
	copy(d.Comm[:], raw[pbsiComm:pbsiComm+len(d.Comm)])
	d.UID = binary.LittleEndian.Uint32(raw[pbsiUID:])
	return d, nil
}

// Path calls proc_pidpath into the binding's buffer of the most it
// takes, PROC_PIDPATHINFO_MAXSIZE, and appends what it wrote to buf.
func (b *binding) Path(pid int32, buf []byte) ([]byte, error) {
	buf = buf[:0]
	if b.closed.Load() {
		return buf, errBindingClosed
	}
	r, e := b.sys(sysCalls.pidPath, uintptr(pid), uintptr(unsafe.Pointer(&b.path[0])), pathMaxSize)
	switch n := int(int32(r)); {
	case n > 0 && n < pathMaxSize:
		return append(buf, b.path[:n]...), nil
	case n >= pathMaxSize:
		return buf, fmt.Errorf("proc_pidpath of process %d: %d bytes, more than its buffer's %d", pid, n, pathMaxSize)
	case errnoOf(e) == eSRCH:
		return buf, errPathNone
	}
	return buf, fmt.Errorf("proc_pidpath of process %d: %w", pid, errnoOf(e))
}

// Responsible calls libquarantine's function, where this macOS has it.
// It answers a pid, or -1 where it names none.
func (b *binding) Responsible(pid int32) (int32, error) {
	if b.closed.Load() {
		return 0, errBindingClosed
	}
	if sysCalls.responsible == 0 {
		return 0, errNoResponsibility
	}
	r, _ := b.sys(sysCalls.responsible, uintptr(pid))
	if n := int32(r); n > 0 || n == 0 && pid == 0 {
		return n, nil
	}
	return 0, fmt.Errorf("responsibility_get_pid_responsible_for_pid(%d): %d, no process named", pid, int32(r))
}
