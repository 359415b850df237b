package serve

import (
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/exopower/exopower/internal/wire"
)

// status is the server's answer to GET /v1/status.
func status(t *testing.T, s *Server) wire.Status {
	t.Helper()
	rec := serveLocal(s.Handler(), httptest.NewRequest("GET", "/v1/status", nil))
	var st wire.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || rec.Code != 200 {
		t.Fatalf("status %d %q: %v", rec.Code, rec.Body, err)
	}
	return st
}

// Every serve names itself with an instance of its own, the same at every
// request, and the machine's boot session where it is known: the clients
// tell one serve reached under two URLs, and a serve on their own Mac, by
// them.
func TestTheStatusNamesTheServesInstanceAndTheMachinesBoot(t *testing.T) {
	const boot = "0123456789abcdef0123456789abcdef"
	a, _ := offline(t, newClock(), Config{Boot: boot})
	b, _ := offline(t, newClock(), Config{})
	first, again, other := status(t, a), status(t, a), status(t, b)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(first.InstanceID) {
		t.Errorf("instance_id %q, want 128 random bits in hex", first.InstanceID)
	}
	if again.InstanceID != first.InstanceID || other.InstanceID == first.InstanceID {
		t.Errorf("instances %q, %q (the same serve) and %q (another)", first.InstanceID, again.InstanceID, other.InstanceID)
	}
	if first.BootID == nil || *first.BootID != boot || other.BootID != nil {
		t.Errorf("boot_id %v and %v; want %q, and null where unknown", first.BootID, other.BootID, boot)
	}
}
