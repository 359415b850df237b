package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/cluster"
	"github.com/exopower/exopower/internal/llm"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
)

// llmOptions are llm's flags: its own, whose meaning llm.Flags holds,
// and those of every measuring command.
type llmOptions struct {
	commonOptions
	llm.Flags
	nodes nodeOptions
	wall  wallOptions
	cost  costOptions
	// mac is this Mac's stream as it began, which names the Mac and
	// says whether it reads the system's power: set by meter.
	mac sampler.StreamTotals
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
		Args: usage.OneArg("URL, the server's", func([]string) string { return llm.Example }),
		RunE: func(c *cobra.Command, args []string) error {
			o.Changed = c.Flags().Changed
			return runLLM(c.Context(), s, &o, args[0])
		},
	}
	o.addFlags(c, 100*time.Millisecond)
	f := c.Flags()
	f.StringSliceVarP(&o.Models, "model", "m", nil, "the `MODEL`s to ask, comma-separated or repeated, each a setting of its own (default: the one the server lists, when it lists one)")
	f.IntSliceVarP(&o.Concurrency, "concurrency", "c", []int{1}, "requests in flight at once, `N`; several (1,4,8) are settings of their own")
	f.IntVarP(&o.Requests, "requests", "r", 10, "measured requests of each setting, `NUM` (with --duration: at most this many when given)")
	f.DurationVar(&o.Duration, "duration", 0, "measure each setting for this long, instead of a count: requests still in flight at its end are cut short there")
	f.IntVarP(&o.Warmup, "warmup", "w", 1, "`NUM` requests of each setting before the measured ones, not measured (the model's load is not a request's cost)")
	f.StringVar(&o.Prompts, "prompts", "", "take the prompts from `FILE`, JSON lines of \"text\", {\"prompt\": ...} or {\"messages\": [...]}, in turn")
	f.IntVar(&o.PromptWords, "prompt-tokens", 128, "without --prompts, make each prompt about `N` tokens long (N common words; the server's count is what the figures use)")
	f.IntVar(&o.MaxTokens, "max-tokens", 128, "ask for at most `N` output tokens a request (max_tokens; 0 leaves the server's default)")
	f.Float64Var(&o.Temperature, "temperature", 0, "pass `T` as the requests' temperature (default: the server's)")
	f.Int64Var(&o.Seed, "seed", 0, "pass `N` as the requests' seed, and make the prompts from it (default: none passed, prompts from a new seed each run, in the JSON's prompt_seed)")
	f.BoolVar(&o.Completions, "completions", false, "with a base URL, use /v1/completions rather than /v1/chat/completions")
	f.StringVar(&o.KeyFile, "api-key-file", "", "read the API key from `FILE` (default $OPENAI_API_KEY); it is never printed")
	f.DurationVar(&o.Stall, "stall", 2*time.Minute, "give up on a request when the server shows no progress for this long (its answer's head, a piece of text, its end; comments, empty events and usage sent again do not count)")
	f.DurationVar(&o.RequestTimeout, "request-timeout", 10*time.Minute, "give up on a request that has not ended this long after it was sent, however it progresses")
	f.DurationVar(&o.Baseline, "baseline", 5*time.Second, "measure the idle Mac this long before the first request and after the last; 0: no baseline")
	f.StringVar(&o.Style, "style", "auto", "the output's `TYPE`: auto, basic (no colour, no progress line), full, nocolor, color or none (nothing but --json and the exports)")
	f.StringVar(&o.ExportJSON, "export-json", "", "write the results as JSON to `FILE` (- is stdout)")
	f.StringVar(&o.ExportCSV, "export-csv", "", "write a CSV row per setting to `FILE` (- is stdout)")
	f.StringVar(&o.ExportRequests, "export-requests", "", "write a CSV row per request to `FILE` (- is stdout)")
	f.StringVar(&o.ExportMarkdown, "export-markdown", "", "write a Markdown table to `FILE` (- is stdout)")
	f.StringVar(&o.Plot, "plot", "", "draw the power over time with each request's prefill and decode to `FILE` (.svg or .png)")
	o.nodes.addFlags(c)
	o.wall.addFlags(c)
	o.cost.addFlags(c)
	return c
}

func runLLM(ctx context.Context, s *cli.Streams, o *llmOptions, rawURL string) error {
	o.Interval, o.JSON = o.interval, o.json
	if err := o.Validate(); err != nil {
		return err
	}
	if err := o.commonOptions.validate(); err != nil {
		return err
	}
	if err := o.cost.resolve(s.Getenv); err != nil {
		return err
	}
	o.Rates = o.cost.rates
	if o.wall.url != "" && o.nodes.Given() {
		return errWallWithNodes("llm --node sums them")
	}
	id, err := child.Identify(false, os.Geteuid(), s.Getenv, s.Environ())
	if err != nil {
		return err
	}
	// The plug is read before anything is sent to the server (the check
	// of its route included): one that cannot be read stops llm then.
	plug, err := o.wall.start(ctx, s, id)
	if err != nil {
		return err
	}
	defer plug.Close()
	return llm.Run(ctx, s, &o.Flags, id, rawURL, func(ctx context.Context) (*llm.Meter, error) {
		m, err := o.meter(ctx, s)
		if err != nil {
			return nil, err
		}
		m.AtWall(plug)
		// Without a plug, each run's wall is estimated from this Mac's
		// calibration; not over the nodes, whose fits are their own.
		if plug == nil && !o.nodes.Given() {
			m.EstimateWall(findCalibration(id, readSerial).forMac(o.mac.HWModel, o.mac.Has.System))
		}
		return m, nil
	})
}

// meter starts this Mac's stream, or reaches the nodes of --node.
func (o *llmOptions) meter(ctx context.Context, s *cli.Streams) (*llm.Meter, error) {
	opts := o.sourceOptions(s.Getenv, "exopower llm")
	const nothing = "interrupted before the first request; nothing was measured"
	if o.nodes.Given() {
		members, skipped, err := connect(ctx, s, o.nodes.setup(s, opts), nothing)
		if err != nil {
			return nil, err
		}
		return llm.NewMeter(members, skipped, o.interval), nil
	}
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
	sm, err := source.Start(startCtx, opts)
	if stopStart() {
		if err == nil {
			sm.Stop()
		}
		return nil, cli.Fail(errors.New(nothing))
	}
	if err != nil {
		return nil, err
	}
	o.mac = sm.Totals()
	return llm.NewMeter([]cluster.Member{cluster.NewLocal(sm, o.interval)}, nil, o.interval), nil
}
