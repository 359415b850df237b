package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/access"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
)

// maxPromptWords bounds --prompt-tokens: 128 K tokens, beyond the context
// of most models, at a few bytes a word for every request in flight.
const maxPromptWords = 128 << 10

type llmOptions struct {
	commonOptions
	models                         []string
	concurrency                    []int
	requests, warmup               int
	duration, baseline, stall      time.Duration
	prompts                        string
	promptWords, maxTokens         int
	temperature                    float64
	seed                           int64
	completions                    bool
	keyFile, style                 string
	exportJSON, exportCSV          string
	exportRequests, exportMarkdown string
	plot                           string
	nodes                          nodeOptions
}

func newLLMCmd(s *cli.Streams) *cobra.Command {
	var o llmOptions
	c := &cobra.Command{
		Use:   "llm [flags] URL",
		Short: "Measure a language-model server's energy per token, prefill and decode apart",
		Long: `Send streamed requests to an OpenAI-compatible server at URL (llama.cpp's
server, Ollama, LM Studio, MLX-LM, vLLM, a cluster's API) and measure each
one's energy on this Mac, or on every --node, split at its first token into
prefill (the prompt's processing) and decode (the generation): J per output
token, J per prompt token, J per request, time to first token and tokens a
second, as mean ± σ, median and p90, net of the idle Mac's power (measured
for --baseline before the first request and after the last), as exopower
bench measures commands. URL is the server's base (http://127.0.0.1:8080) or
its route (…/v1/chat/completions, …/v1/completions).

With --concurrency above 1, requests overlap: the run's energy and its J per
output token stay exact; each request's share is an estimate, and says so.
The key, from $OPENAI_API_KEY or --api-key-file, goes to URL's host only:
no redirect is followed.`,
		Example: `  exopower llm -m llama3.2:1b http://127.0.0.1:11434
  exopower llm -m qwen2.5-7b -c 1,4 -r 20 --prompt-tokens 512 --max-tokens 256 http://127.0.0.1:8080
  exopower llm --node http://mac1:10241 --node http://mac2:10241 -m mlx-community/Llama-3.2-3B-Instruct-4bit http://mac1:52415`,
		Args: usage.OneArg("URL, the server's", func([]string) string { return llmExample }),
		RunE: func(c *cobra.Command, args []string) error {
			return runLLM(c.Context(), s, &o, args[0], c.Flags().Changed)
		},
	}
	o.addFlags(c, 100*time.Millisecond)
	f := c.Flags()
	f.StringSliceVarP(&o.models, "model", "m", nil, "the `MODEL`s to ask, comma-separated or repeated, each a setting of its own (default: the one the server lists, when it lists one)")
	f.IntSliceVarP(&o.concurrency, "concurrency", "c", []int{1}, "requests in flight at once, `N`; several (1,4,8) are settings of their own")
	f.IntVarP(&o.requests, "requests", "r", 10, "measured requests of each setting, `NUM` (with --duration: at most this many when given)")
	f.DurationVar(&o.duration, "duration", 0, "send measured requests for this long in each setting, instead of a count")
	f.IntVarP(&o.warmup, "warmup", "w", 1, "`NUM` requests of each setting before the measured ones, not measured (the model's load is not a request's cost)")
	f.StringVar(&o.prompts, "prompts", "", "take the prompts from `FILE`, JSON lines of \"text\", {\"prompt\": ...} or {\"messages\": [...]}, in turn")
	f.IntVar(&o.promptWords, "prompt-tokens", 128, "without --prompts, make each prompt about `N` tokens long (N common words; the server's count is what the figures use)")
	f.IntVar(&o.maxTokens, "max-tokens", 128, "ask for at most `N` output tokens a request (max_tokens; 0 leaves the server's default)")
	f.Float64Var(&o.temperature, "temperature", 0, "pass `T` as the requests' temperature (default: the server's)")
	f.Int64Var(&o.seed, "seed", 0, "pass `N` as the requests' seed, and make the prompts from it (default: none passed, prompts from a new seed each run, in the JSON's prompt_seed)")
	f.BoolVar(&o.completions, "completions", false, "with a base URL, use /v1/completions rather than /v1/chat/completions")
	f.StringVar(&o.keyFile, "api-key-file", "", "read the API key from `FILE` (default $OPENAI_API_KEY); it is never printed")
	f.DurationVar(&o.stall, "stall", 2*time.Minute, "give up on a request when the server sends nothing for this long (its answer's head or its next line of data; comments that keep the line open do not count)")
	f.DurationVar(&o.baseline, "baseline", 5*time.Second, "measure the idle Mac this long before the first request and after the last; 0: no baseline")
	f.StringVar(&o.style, "style", "auto", "the output's `TYPE`: auto, basic (no colour, no progress line), full, nocolor, color or none (nothing but --json and the exports)")
	f.StringVar(&o.exportJSON, "export-json", "", "write the results as JSON to `FILE` (- is stdout)")
	f.StringVar(&o.exportCSV, "export-csv", "", "write a CSV row per setting to `FILE` (- is stdout)")
	f.StringVar(&o.exportRequests, "export-requests", "", "write a CSV row per request to `FILE` (- is stdout)")
	f.StringVar(&o.exportMarkdown, "export-markdown", "", "write a Markdown table to `FILE` (- is stdout)")
	f.StringVar(&o.plot, "plot", "", "draw the power over time with each request's prefill and decode to `FILE` (.svg or .png)")
	o.nodes.addFlags(c)
	return c
}

// llmExample is the hint of a URL that is wrong or missing.
const llmExample = "such as exopower llm -m MODEL http://127.0.0.1:8080"

// validate refuses, before anything is sent, options that cannot work.
func (o *llmOptions) validate(changed func(string) bool) error {
	switch {
	case o.requests < 0:
		return cli.Fail(fmt.Errorf("--requests %d: it takes 0 or more (0: no bound, with --duration)", o.requests))
	case o.warmup < 0:
		return cli.Fail(fmt.Errorf("--warmup %d: it takes 0 or more", o.warmup))
	case o.requests == 0 && o.duration <= 0:
		return cli.Fail(errors.New("--requests 0 with no --duration: nothing would be measured"), "give --requests, --duration, or both")
	case o.duration < 0:
		return cli.Fail(fmt.Errorf("--duration %v: it takes a duration, or 0 for none", o.duration))
	case o.baseline < 0:
		return cli.Fail(fmt.Errorf("--baseline %v: it takes a duration, or 0 for none", o.baseline))
	case o.stall <= 0:
		return cli.Fail(fmt.Errorf("--stall %v: it takes a duration above 0", o.stall), "2m, the default, suits most servers")
	case o.promptWords < 4 || o.promptWords > maxPromptWords:
		return cli.Fail(fmt.Errorf("--prompt-tokens %d: it takes 4 to %d", o.promptWords, maxPromptWords), "longer than any model's context; a file of --prompts takes longer ones")
	case o.maxTokens < 0:
		return cli.Fail(fmt.Errorf("--max-tokens %d: it takes 0 (the server's default) or more", o.maxTokens))
	case changed("model") && len(o.models) == 0:
		return cli.Fail(errors.New("--model: an empty name"), "name the model, or leave -m out to take the one the server lists")
	case changed("temperature") && (math.IsNaN(o.temperature) || math.IsInf(o.temperature, 0) || o.temperature < 0):
		return cli.Fail(fmt.Errorf("--temperature %v: it takes 0 or more", o.temperature))
	case changed("prompts") && changed("prompt-tokens"):
		return cli.Fail(errors.New("--prompts and --prompt-tokens: give one of them"))
	}
	for _, n := range o.concurrency {
		if n < 1 || n > 1024 {
			return cli.Fail(fmt.Errorf("--concurrency %d: it takes 1 to 1024", n))
		}
	}
	for _, m := range o.models {
		if strings.TrimSpace(m) == "" {
			return cli.Fail(errors.New("--model: an empty name"))
		}
	}
	if !map[string]bool{"auto": true, "basic": true, "full": true, "nocolor": true, "color": true, "none": true}[o.style] {
		return cli.Fail(fmt.Errorf("--style %s: it takes auto, basic, full, nocolor, color or none", o.style))
	}
	return o.commonOptions.validate()
}

// key is the API key: --api-key-file's, read as the user who ran
// exopower, else $OPENAI_API_KEY.
func (o *llmOptions) key(s *cli.Streams, id child.Identity) (string, error) {
	if o.keyFile == "" {
		k := strings.TrimSpace(s.Getenv("OPENAI_API_KEY"))
		if strings.ContainsAny(k, "\r\n") {
			return "", cli.Fail(errors.New("$OPENAI_API_KEY holds more than one line: want the key alone"))
		}
		return k, nil
	}
	f, err := access.Open(o.keyFile, id.Cred)
	if err != nil {
		return "", cli.Fail(fmt.Errorf("--api-key-file: %w", err), "name a file that you may read, holding the key alone")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", cli.Fail(fmt.Errorf("--api-key-file: %w", err))
	}
	k := strings.TrimSpace(string(b))
	if k == "" || strings.ContainsAny(k, "\r\n") {
		return "", cli.Fail(fmt.Errorf("--api-key-file %s: want the key alone on one line", o.keyFile))
	}
	return k, nil
}
