package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A Progress without a writer draws nothing, whatever it is told.
func TestAProgressWithoutAWriterDrawsNothing(t *testing.T) {
	p := NewProgress(nil, 2, time.Second)
	p.Idle(time.Second)
	p.Run("sleep 1", 1, 2)
	p.Ran(3.5)
	p.Clear()
}

// A long command is cut to one line's width.
func TestAProgressLineCutsALongCommand(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, 1, 0)
	p.Run(strings.Repeat("x", 100), 1, 1)
	if want := strings.Repeat("x", maxCommand-1) + "…: run 1 of 1"; !strings.Contains(b.String(), want) {
		t.Errorf("%q lacks %q", b.String(), want)
	}
}
