package bench

import (
	"io"
	"sync"
)

// tailKeep is how much of a run's output --units-from reads: the end of
// it, where a count of the work done is printed, and a bound on memory.
const tailKeep = 8 << 20

// tailBuffer keeps the last tailKeep to 2·tailKeep bytes written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 2*tailKeep {
		t.b = append([]byte(nil), t.b[len(t.b)-tailKeep:]...)
	}
	return len(p), nil
}

// Bytes is what was kept.
func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b
}

// writer is t as a writer, nil (no capture) for a nil t.
func (t *tailBuffer) writer() io.Writer {
	if t == nil {
		return nil
	}
	return t
}
