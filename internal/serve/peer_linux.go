package serve

import "golang.org/x/sys/unix"

// closedByPeer reports whether the TCP connection of the socket fd was
// closed by its other end: a FIN taken (CLOSE_WAIT) or a reset (CLOSE),
// by Linux's TCP states (include/net/tcp_states.h).
func closedByPeer(fd uintptr) bool {
	const closed, closeWait = 7, 8
	info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	return err == nil && (info.State == closeWait || info.State == closed)
}
