package llm

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// A server's usage is the only count of a request's tokens, and every
// figure per token divides by it; a server that is wrong, or hostile,
// can send any number there. Usage that cannot be true of the answer is
// not used: the request's tokens are then its streamed pieces, as for a
// server that gives no usage, and a warning says why.
const (
	// MaxUsageTokens is the most tokens of either kind a request's usage
	// may count: a hundred times the longest context of any model, and
	// small enough that a day of requests cannot overflow their sum.
	MaxUsageTokens = 1e9
	// MaxPromptRate is the most prompt tokens a second that a request's
	// prefill may process, as the client sees it (its time to first
	// token): hundreds of times what the fastest servers do. The output
	// tokens are held to the pieces instead, not to their pace: a proxy
	// that holds the stream back delivers every piece at once.
	MaxPromptRate = 1e7
	// A request's completion tokens are at least one per piecesPerToken
	// streamed pieces (a piece carries a token, or a part of one), and
	// at most tokensPerPiece per piece, and as many again.
	piecesPerToken = 16
	tokensPerPiece = 256
)

// takeUsage reads a chunk's usage: the counts where they are whole
// numbers from 0 to MaxUsageTokens (a count left out is 0), otherwise
// the reason they are not. The last usage of a stream is the one that
// counts.
func (a *Answer) takeUsage(u *usage) {
	var cached json.Number
	if d := u.PromptTokensDetails; d != nil {
		cached = d.CachedTokens
	}
	a.Usage, a.badUsage = false, ""
	var n [3]int
	for i, x := range []json.Number{u.PromptTokens, u.CompletionTokens, cached} {
		f, err := 0.0, error(nil)
		if x != "" {
			f, err = strconv.ParseFloat(string(x), 64)
		}
		if err != nil || !(f >= 0 && f <= MaxUsageTokens) || f != math.Trunc(f) {
			a.badUsage = fmt.Sprintf("%s prompt, %s completion, %s cached tokens: each must be a whole number from 0 to %d",
				orZero(u.PromptTokens), orZero(u.CompletionTokens), orZero(cached), int(MaxUsageTokens))
			return
		}
		n[i] = int(f)
	}
	a.Usage = true
	a.PromptTokens, a.CompletionTokens, a.CachedTokens = n[0], n[1], min(n[2], n[0])
}

// orZero is x as JSON wrote it, 0 where it was left out, cut to a
// length that a message holds.
func orZero(x json.Number) string {
	switch {
	case x == "":
		return "0"
	case len(x) > 24:
		return string(x[:24]) + "…"
	}
	return string(x)
}

// judgeUsage holds the usage of an answer that ended well against what
// the client saw of it: its pieces and their times. Usage that cannot be
// true is let go, with a warning that says why.
func judgeUsage(a *Answer) {
	why := a.badUsage
	if a.Usage && a.Err == nil {
		why = usageDoubt(a)
	}
	if why == "" {
		return
	}
	a.Usage, a.PromptTokens, a.CompletionTokens, a.CachedTokens = false, 0, 0, 0
	a.Warnings = append(a.Warnings, "the server's usage cannot be true ("+why+"): the request's tokens are its streamed pieces")
}

// usageDoubt says why a's usage cannot be true of it, or "".
func usageDoubt(a *Answer) string {
	n := a.CompletionTokens
	switch {
	case a.Pieces > 0 && n*piecesPerToken < a.Pieces:
		return fmt.Sprintf("%d completion tokens for %d streamed pieces of text", n, a.Pieces)
	case n > tokensPerPiece*(a.Pieces+1):
		return fmt.Sprintf("%d completion tokens for %d streamed pieces of text", n, a.Pieces)
	}
	if ttft := a.First.Sub(a.Sent).Seconds(); !a.First.IsZero() && ttft > 0 {
		if rate := float64(a.PromptTokens-a.CachedTokens) / ttft; rate > MaxPromptRate {
			return fmt.Sprintf("%d prompt tokens processed in %.3g s, %.3g a second", a.PromptTokens-a.CachedTokens, ttft, rate)
		}
	}
	return ""
}
