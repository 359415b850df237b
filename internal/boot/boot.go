// Package boot names this machine's boot session without giving it away:
// a digest of the random id the kernel draws at every boot. Two programs
// that read the same digest run on one machine, between the same two
// restarts of it; exopower serve publishes it in its status, so that a
// client can tell a serve on its own Mac from one on another.
package boot

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// ID is this machine's boot session as a digest of 32 hex digits, or ""
// where the system does not say.
func ID() string { return digest(sessionID()) }

// digest is the id a boot session's raw id publishes: a hash, so that the
// kernel's own id, which logs and crash reports carry, is not published,
// and 128 bits of it, as many as the raw id holds.
func digest(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("exopower boot session\x00" + raw))
	return hex.EncodeToString(sum[:16])
}
