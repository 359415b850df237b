package llm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
)

// Prompts are the prompts of a benchmark's requests, taken in turn: read
// from a file, or made to a length.
type Prompts struct {
	list []Prompt
	// words, when not 0, makes each request's prompt of that many words.
	words int
	seed  uint64
}

// maxPromptLine bounds a line of a prompts file.
const maxPromptLine = 16 << 20

// ReadPrompts reads a JSON-lines file of prompts: each line a JSON
// string, {"prompt": "..."} or {"messages": [{"role": ..., "content":
// ...}, ...]}. Blank lines are skipped.
func ReadPrompts(r io.Reader, name string) (*Prompts, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxPromptLine)
	p := &Prompts{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if n == 1 {
			// A byte-order mark, as some editors write it, is no part of
			// the first prompt.
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if line == "" {
			continue
		}
		pr, err := parsePrompt([]byte(line))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		p.list = append(p.list, pr)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: a line over %d MiB: one prompt a line, as JSON", name, maxPromptLine>>20)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(p.list) == 0 {
		return nil, fmt.Errorf("%s: no prompts: give one a line, such as {\"prompt\": \"Why is the sky blue?\"}", name)
	}
	return p, nil
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

// Seed is the seed the made prompts come from; ok is false for prompts
// from a file.
func (p *Prompts) Seed() (seed uint64, ok bool) { return p.seed, p.words > 0 }

// Len is how many prompts the file gave (0 for made ones).
func (p *Prompts) Len() int { return len(p.list) }

// Next is the prompt of the i-th request sent.
func (p *Prompts) Next(i int) Prompt {
	if p.words == 0 {
		return p.list[i%len(p.list)]
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
	return Prompt{Text: b.String()}
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
