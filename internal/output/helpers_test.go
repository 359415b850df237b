package output

import (
	"errors"
	"regexp"
)

// env is an environment of the given variables only.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// sgr matches an escape sequence that sets colours or attributes.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// failWriter fails every write.
type failWriter struct{}

var errWrite = errors.New("broken pipe")

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }
