package testfiles

import "errors"

// Endless reads one byte (B) for ever, as /dev/zero does, but fails once
// it has given more than Most bytes: a reader of it that reads that far
// would read for ever.
type Endless struct {
	B           byte
	Given, Most int
}

func (e *Endless) Read(p []byte) (int, error) {
	if e.Given > e.Most {
		return 0, errors.New("read on and on")
	}
	for i := range p {
		p[i] = e.B
	}
	e.Given += len(p)
	return len(p), nil
}
