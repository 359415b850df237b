// Package fakellm is a stand-in for an OpenAI-compatible model server
// (llama.cpp's server, Ollama, vLLM, MLX-LM), for testing exopower llm
// and for trying it with no model.
//
// It streams tokens at a set pace over a schedule that any process can
// compute: time is cut into slots of Config.Period aligned to the Unix
// epoch, as fakepm's profiles are, and each request is served in a slot
// of its own. From the slot's start it "reads the prompt" for
// Config.Prefill, sends its first token, and sends the rest evenly over
// Config.Decode. When it gives a request its slot, it appends the slot's
// two phases to a fakepm overrides file at the phases' powers, so that a
// fake powermetrics reading the same file reports the power stepping with
// the phase, and a test knows the exact joules of each phase.
package fakellm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
)

// DefaultLead is the least time from a request's arrival to the start of
// its slot when Config.Lead is 0: time to append the slot's overrides
// before the power they set begins.
const DefaultLead = 5 * time.Millisecond

// Config sets the fake server's pace, power and faults.
type Config struct {
	// Period is the length of a slot; slot k is [k·Period, (k+1)·Period)
	// of Unix time. Prefill + Decode must fit in it.
	Period time.Duration
	// Continuous serves each request as soon as it arrives (after Lead)
	// or, when another is being served, as soon as that one is done: a
	// server of one slot, without the slots' alignment to Period, so that
	// a request to an idle server waits for nothing.
	Continuous bool
	// Lead is the least time from a request's arrival to the start of its
	// slot; 0 means DefaultLead.
	Lead time.Duration
	// Prefill is the time from the slot's start to the first token.
	Prefill time.Duration
	// Decode is the time from the first token to the last.
	Decode time.Duration
	// Tokens is the number of content pieces of an answer, at least 1; a
	// request's max_tokens (or max_completion_tokens) caps it.
	Tokens int

	// PrefillWatts and DecodeWatts are the power during each phase of a
	// served request, in watts per component (CPU, GPU, ANE).
	PrefillWatts, DecodeWatts fakepm.Watts
	// Overrides is the path of the fakepm overrides file to which each
	// slot's phases are appended; "" for none.
	Overrides string

	// Models are the models it serves; empty: any model.
	Models []string
	// APIKey, when set, is the bearer token every request must carry.
	APIKey string
	// Fault makes it misbehave: "" none; "no-usage", never sending usage;
	// "no-done", ending the stream without data: [DONE] and closing the
	// connection; "stall-after=N", sending nothing after N content pieces
	// until the client goes away; "malformed", an event that is no JSON
	// after the first piece; "status=CODE", answering CODE with an OpenAI
	// error; "redirect", answering 307 to /elsewhere (on RedirectTo's host
	// when it is set); "huge", a first piece of 8 MiB; "drop-after=N",
	// closing the connection after N pieces. Faults touch the two
	// completion endpoints only, so that /v1/models still answers.
	Fault string
	// FaultAfter is how many completion requests are served as they
	// should before the fault begins: exopower llm's check of one token,
	// before anything is measured, is one.
	FaultAfter int
	// RedirectTo is the URL (scheme and host, and a path if wanted) to
	// which the redirect fault sends clients; "" for /elsewhere on the
	// same host.
	RedirectTo string
}

// Validate says what is wrong with c, if anything.
func (c Config) Validate() error {
	switch {
	case c.Period <= 0:
		return fmt.Errorf("fakellm: period %v: want more than 0", c.Period)
	case c.Lead < 0 || c.Prefill < 0 || c.Decode < 0:
		return errors.New("fakellm: lead, prefill and decode must not be negative")
	case c.Prefill+c.Decode > c.Period:
		return fmt.Errorf("fakellm: prefill %v and decode %v do not fit in a period of %v", c.Prefill, c.Decode, c.Period)
	case c.Tokens < 1:
		return fmt.Errorf("fakellm: tokens %d: want at least 1", c.Tokens)
	}
	for _, w := range []fakepm.Watts{c.PrefillWatts, c.DecodeWatts} {
		for _, x := range w {
			if !(x >= 0) {
				return fmt.Errorf("fakellm: %v: watts must be 0 or more", w)
			}
		}
	}
	_, err := parseFault(c.Fault)
	return err
}

func (c Config) lead() time.Duration {
	if c.Lead == 0 {
		return DefaultLead
	}
	return c.Lead
}

// NetPrefillJoules is the energy of a request's prefill above idle, the
// power outside served slots, in joules: the same for every request,
// whatever it waited.
func (c Config) NetPrefillJoules(idle fakepm.Watts) float64 {
	return (c.PrefillWatts.Total() - idle.Total()) * c.Prefill.Seconds()
}

// NetDecodeJoules is the energy of a request's decode above idle, in
// joules: the same for every request, whatever its number of tokens.
func (c Config) NetDecodeJoules(idle fakepm.Watts) float64 {
	return (c.DecodeWatts.Total() - idle.Total()) * c.Decode.Seconds()
}

// fault is a parsed Config.Fault.
type fault struct {
	kind string
	n    int
}

func parseFault(s string) (fault, error) {
	name, arg, hasArg := strings.Cut(s, "=")
	switch name {
	case "", "no-usage", "no-done", "malformed", "redirect", "huge":
		if hasArg {
			return fault{}, fmt.Errorf("fakellm: fault %q takes no argument", s)
		}
		return fault{kind: name}, nil
	case "stall-after", "drop-after", "status":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 || name == "status" && (n < 100 || n > 599) {
			return fault{}, fmt.Errorf("fakellm: fault %q: want %s=N", s, name)
		}
		return fault{kind: name, n: n}, nil
	}
	return fault{}, fmt.Errorf("fakellm: unknown fault %q", s)
}
