package output

import (
	"sync"
)

// rowPipe formats and writes rows on a goroutine of its own, a batch at
// a time, while the recording goes on being read: report --samples of a
// million readings spends about as long on the rows' text as on reading,
// and the two need not wait for each other on a Mac's several cores.
// The rows keep their order; the first error writing sticks, and stops
// the rows after it.
type rowPipe struct {
	enc   *rowEncoder
	batch []SampleRow
	todo  chan []SampleRow // full batches, oldest first
	free  chan []SampleRow // batches written, to be filled again
	done  chan struct{}

	mu  sync.Mutex
	err error // enc's first error, as the goroutine saw it
}

// pipeBatch rows go to the goroutine at once: the hand-over costs less
// than a row's text.
const pipeBatch = 256

// pipeBatches are in flight at most: the memory stays some 250 KB.
const pipeBatches = 3

func (p *rowPipe) write(r *SampleRow) {
	if p.todo == nil {
		p.todo, p.free, p.done = make(chan []SampleRow, pipeBatches), make(chan []SampleRow, pipeBatches), make(chan struct{})
		for range pipeBatches - 1 {
			p.free <- make([]SampleRow, 0, pipeBatch)
		}
		p.batch = make([]SampleRow, 0, pipeBatch)
		go p.run()
	}
	p.batch = append(p.batch, *r)
	if len(p.batch) == pipeBatch {
		p.todo <- p.batch
		p.batch = <-p.free
	}
}

func (p *rowPipe) run() {
	defer close(p.done)
	for rows := range p.todo {
		if p.enc.err == nil {
			for i := range rows {
				p.enc.write(&rows[i])
			}
			if p.enc.err != nil {
				p.mu.Lock()
				p.err = p.enc.err
				p.mu.Unlock()
			}
		}
		clear(rows) // no command or number kept alive by a batch
		p.free <- rows[:0]
	}
}

// failed is the first error writing, as far as the goroutine got.
func (p *rowPipe) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// close writes the rows left, waits for them, and says the first error
// writing, buffers flushed.
func (p *rowPipe) close() error {
	if p.todo != nil {
		if len(p.batch) > 0 {
			p.todo <- p.batch
		}
		close(p.todo)
		<-p.done
		p.todo, p.batch = nil, nil
	}
	return p.enc.flush()
}
