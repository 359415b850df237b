package serve

import "golang.org/x/sys/unix"

// closedByPeer reports whether the TCP connection of the socket fd was
// closed by its other end: a FIN taken (CLOSE_WAIT) or a reset (CLOSED),
// by the BSD TCP states of netinet/tcp_fsm.h.
func closedByPeer(fd uintptr) bool {
	const closed, closeWait = 0, 5
	info, err := unix.GetsockoptTCPConnectionInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_CONNECTION_INFO)
	return err == nil && (info.State == closeWait || info.State == closed)
}
