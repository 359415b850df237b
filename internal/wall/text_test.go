package wall

import (
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/safe"
)

func TestSecretsAreTakenOutOfAPlugsText(t *testing.T) {
	s := newSecrets(Credentials{User: "mac-owner", Password: "p@ss word/long", Token: "abcdefghijklmnop"})
	tests := []struct {
		name, in, want string
	}{
		{"a password as given", "bad password p@ss word/long", "bad password [redacted]"},
		{"a password as a query escapes it", "GET /cm?password=p%40ss+word%2Flong", "GET /cm?password=[redacted]"},
		{"a part of a token long enough to matter", "token ends ijklmnop", "token ends [redacted]"},
		{"HTTP Basic's base64 of user and password", "got Basic bWFjLW93bmVyOnBAc3Mgd29yZC9sb25n", "got Basic [redacted]"},
		{"a user other than admin", "user mac-owner unknown", "user [redacted] unknown"},
		{"control characters after the secrets are out", "x\x1b[2Jp@ss word/long", `x\x1b[2J[redacted]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.text(tt.in); got != tt.want {
				t.Errorf("text(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestATextHoldingATinySecretIsWithheld(t *testing.T) {
	s := newSecrets(Credentials{Password: "abc"})
	if got := s.text("echo: abc"); got != safe.Withheld {
		t.Errorf("text = %q, want it withheld", got)
	}
	if got := s.text("admin is the user"); !strings.Contains(got, "admin") {
		t.Errorf("text = %q: admin, every plug's user, is no secret", got)
	}
}
