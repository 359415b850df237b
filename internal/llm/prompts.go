package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
)

// Prompts are the prompts of a benchmark's requests, taken in turn: read
// from a file as the requests take them, or made to a length.
type Prompts struct {
	file *promptFile
	// words, when not 0, makes each request's prompt of that many words.
	words int
	seed  uint64
}

// maxPromptLine bounds a line of a prompts file.
const maxPromptLine = 16 << 20

// promptFile is a JSON-lines file of prompts, read a line at a time as
// requests take them, and from its start again after its last: a run
// holds the prompt of each request in flight, whatever the file's
// length.
type promptFile struct {
	mu   sync.Mutex
	f    io.ReadSeeker
	name string
	sc   *bufio.Scanner
	line int // lines read since the start
}

// OpenPrompts reads the prompts of f, a file of JSON lines (each a JSON
// string, {"prompt": "..."} or {"messages": [{"role": ..., "content":
// ...}, ...]}; blank lines skipped) named name. It checks the first need
// prompts before anything is sent, or all of them when need is 0 (a run
// whose requests are not counted), holding none of them.
func OpenPrompts(f io.ReadSeeker, name string, need int) (*Prompts, error) {
	pf := &promptFile{f: f, name: name}
	n := 0
	for ; need == 0 || n < need; n++ {
		_, ok, err := pf.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no prompts: give one a line, such as {\"prompt\": \"Why is the sky blue?\"}", name)
	}
	if err := pf.rewind(); err != nil {
		return nil, err
	}
	return &Prompts{file: pf}, nil
}

// next reads the file's next prompt; ok is false at its end.
func (pf *promptFile) next() (p Prompt, ok bool, err error) {
	if pf.sc == nil {
		pf.sc = bufio.NewScanner(pf.f)
		pf.sc.Buffer(make([]byte, 64<<10), maxPromptLine)
	}
	for pf.sc.Scan() {
		pf.line++
		line := bytes.TrimSpace(pf.sc.Bytes())
		if pf.line == 1 {
			// A byte-order mark, as some editors write it, is no part of
			// the first prompt.
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		if len(line) == 0 {
			continue
		}
		if p, err = parsePrompt(line); err != nil {
			return p, false, fmt.Errorf("%s:%d: %w", pf.name, pf.line, err)
		}
		return p, true, nil
	}
	switch err := pf.sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return p, false, fmt.Errorf("%s:%d: a line over %d MiB: one prompt a line, as JSON", pf.name, pf.line+1, maxPromptLine>>20)
	case err != nil:
		return p, false, fmt.Errorf("%s: %w", pf.name, err)
	}
	return p, false, nil
}

func (pf *promptFile) rewind() error {
	if _, err := pf.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: %w", pf.name, err)
	}
	pf.sc, pf.line = nil, 0
	return nil
}

// take is the file's next prompt, from its start again after its last.
func (pf *promptFile) take() (Prompt, error) {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	p, ok, err := pf.next()
	if err == nil && !ok {
		if err = pf.rewind(); err == nil {
			p, ok, err = pf.next()
		}
		if err == nil && !ok {
			err = fmt.Errorf("%s: no prompts in it any more: the file changed while exopower read it", pf.name)
		}
	}
	return p, err
}

func parsePrompt(b []byte) (Prompt, error) {
	var s string
	if json.Unmarshal(b, &s) == nil {
		if s == "" {
			return Prompt{}, errors.New("an empty prompt")
		}
		return Prompt{Text: s}, nil
	}
	var p Prompt
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("not a prompt: want a JSON string, {\"prompt\": \"...\"} or {\"messages\": [...]}: %w", err)
	}
	if p.Text == "" && len(p.Messages) == 0 {
		return p, errors.New(`neither "prompt" nor "messages": want {"prompt": "..."} or {"messages": [{"role": "user", "content": "..."}]}`)
	}
	for i, m := range p.Messages {
		if m.Role == "" {
			return p, fmt.Errorf("message %d has no role", i+1)
		}
		if m.Content == "" {
			return p, fmt.Errorf("message %d has no content (a string)", i+1)
		}
	}
	return p, nil
}

// Generated makes each request's prompt words long, from common English
// words chosen by seed. Each prompt begins differently, so that a
// server's prompt cache cannot skip the work that is to be measured.
func Generated(words int, seed uint64) *Prompts { return &Prompts{words: words, seed: seed} }

// Close lets go of the file the prompts are read from.
func (p *Prompts) Close() error {
	if p.file == nil {
		return nil
	}
	if c, ok := p.file.f.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Seed is the seed the made prompts come from; ok is false for prompts
// from a file.
func (p *Prompts) Seed() (seed uint64, ok bool) { return p.seed, p.words > 0 }

// Next is the prompt of the i-th request sent: a file's next one, or
// one made for i. An error is a file that changed since it was checked.
func (p *Prompts) Next(i int) (Prompt, error) {
	if p.words == 0 {
		return p.file.take()
	}
	rng := rand.New(rand.NewPCG(p.seed, uint64(i)))
	var b strings.Builder
	fmt.Fprintf(&b, "Request %d.", i+1)
	words := commonWords()
	for range p.words - 3 {
		b.WriteByte(' ')
		b.WriteString(words[rng.IntN(len(words))])
	}
	b.WriteString(" Continue:")
	return Prompt{Text: b.String()}, nil
}

// commonWords are words that most tokenizers take as one token each, so
// that a prompt of n words is near n tokens (the server's count is what
// the figures use). Split when a prompt first needs them, not when
// exopower starts, which every command would pay for.
var commonWords = sync.OnceValue(func() []string { return strings.Fields(commonText) })

const commonText = `the of and to in is that it was for on are as with his they at be this
from have or by one had not but what all were when we there can an your which their said if do
will each about how up out them then she many some so these would other into has more her two
like him see time could no make than first been its who now people my made over did down only way
find use may water long little very after words called just where most know get through back
much before go good new write our used me man too any day same right look think also around
another came come work three word must because does part even place well such here take why
things help put years different away again off went old number great tell men say small every
found still between name should home big give air line set own under read last never us left end
along while might next sound below saw something thought both few those always looked show large
often together asked house world going want school important until form food keep children feet
land side without boy once animals life enough took sometimes four head above kind began almost
live page got earth need far hand high year mother light parts country father let night following
picture being study second eyes soon times story boys since white days ever paper hard near
sentence better best across during today others however sure means knew its try told young miles
sun ways thing whole hear example heard several change answer room sea against top turned learn
point city play toward five using himself usually`
