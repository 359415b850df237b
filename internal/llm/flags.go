package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/access"
	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/safe"
)

// Flags are exopower llm's flags as the command line gave them: Validate
// refuses what cannot work before anything is sent, and Run measures
// what they ask for.
type Flags struct {
	// Interval is -i, the sample interval; JSON is --json.
	Interval                       time.Duration
	JSON                           bool
	Models                         []string
	Concurrency                    []int
	Requests, Warmup               int
	Duration, Baseline, Stall      time.Duration
	RequestTimeout                 time.Duration
	Prompts                        string
	PromptWords, MaxTokens         int
	Temperature                    float64
	Seed                           int64
	Completions                    bool
	KeyFile, Style                 string
	ExportJSON, ExportCSV          string
	ExportRequests, ExportMarkdown string
	Plot                           string
	// Changed says whether the flag of that long name was given.
	Changed func(name string) bool
	// Rates are --price and --carbon-intensity (or --grid) as read.
	Rates cost.Rates
}

// Run measures what f asks of the server at rawURL, as the user id: it
// checks the files, asks the server for its models, then starts the
// meter (start: this Mac's stream, or the nodes) and sends the
// requests, and writes the report.
func Run(ctx context.Context, s *cli.Streams, f *Flags, id child.Identity, rawURL string, start func(context.Context) (*Meter, error)) error {
	if f.Duration > 0 && !f.Changed("requests") {
		// --duration alone sends for the whole duration: -r's default is
		// not a bound the user gave.
		f.Requests = 0
	}
	cfg, err := f.config(ctx, s, id, rawURL)
	if err != nil {
		return err
	}
	defer cfg.Prompts.Close()
	meter, err := start(ctx)
	if err != nil {
		return err
	}
	var text *Text
	if !f.JSON && f.Style != "none" {
		text = NewText(s.Out, s.Err, bench.Styles(f.Style, s.Out, s.OutTTY, s.Getenv), bench.Styles(f.Style, s.Err, s.ErrTTY, s.Getenv))
		cfg.Finished = text.Setting
	}
	meter.Start(ctx)
	r := NewRunner(cfg, meter)
	rep := r.Measure(ctx)
	if err := f.deliver(s, rep, id, text); err != nil {
		return err
	}
	if sig := r.Signal(); sig != 0 {
		return cli.Exit(128 + sig)
	}
	for _, res := range rep.Results {
		if res.Figures == nil || res.Figures.Requests == 0 {
			return cli.Fail(fmt.Errorf("no request of %s, %d in flight, ended as it should: the requests' errors are in the report", res.Model, res.Concurrency))
		}
	}
	return nil
}

// config checks the exports, makes the client and the prompts and asks
// the server for its models: what the runner needs but a meter.
func (o *Flags) config(ctx context.Context, s *cli.Streams, id child.Identity, rawURL string) (Config, error) {
	if err := o.checkFiles(id); err != nil {
		return Config{}, err
	}
	client, err := o.client(s, id, rawURL)
	if err != nil {
		return Config{}, err
	}
	prompts, err := o.readPrompts(id)
	if err != nil {
		return Config{}, err
	}
	settings, err := o.settings(ctx, s, client)
	if err != nil {
		prompts.Close()
		return Config{}, err
	}
	cfg := Config{Client: client, Settings: settings, Prompts: prompts, Requests: o.Requests, Duration: o.Duration,
		Warmup: o.Warmup, Baseline: o.Baseline, Interval: o.Interval, Signals: s.Signals, Messages: s.Err, Rates: o.Rates}
	var w io.Writer
	if s.ErrTTY && o.Style != "basic" && o.Style != "color" && o.Style != "none" {
		w = s.Err
	}
	cfg.Progress = bench.NewProgress(w, len(settings)*o.Requests, o.Baseline)
	return cfg, nil
}

// MaxPromptWords bounds --prompt-tokens: 128 K tokens, beyond the context
// of most models, at a few bytes a word for every request in flight.
const MaxPromptWords = 128 << 10

// Example is the hint of a URL that is wrong or missing.
const Example = "such as exopower llm -m MODEL http://127.0.0.1:8080"

// Validate refuses, before anything is sent, flags that cannot work.
func (o *Flags) Validate() error {
	switch {
	case o.Requests < 0:
		return cli.Fail(fmt.Errorf("--requests %d: it takes 0 or more (0: no bound, with --duration)", o.Requests))
	case o.Warmup < 0:
		return cli.Fail(fmt.Errorf("--warmup %d: it takes 0 or more", o.Warmup))
	case o.Requests == 0 && o.Duration <= 0:
		return cli.Fail(errors.New("--requests 0 with no --duration: nothing would be measured"), "give --requests, --duration, or both")
	case o.Duration < 0:
		return cli.Fail(fmt.Errorf("--duration %v: it takes a duration, or 0 for none", o.Duration))
	case o.Baseline < 0:
		return cli.Fail(fmt.Errorf("--baseline %v: it takes a duration, or 0 for none", o.Baseline))
	case o.Stall <= 0:
		return cli.Fail(fmt.Errorf("--stall %v: it takes a duration above 0", o.Stall), "2m, the default, suits most servers")
	case o.RequestTimeout <= 0:
		return cli.Fail(fmt.Errorf("--request-timeout %v: it takes a duration above 0", o.RequestTimeout), "10m, the default, is as long as OpenAI's own clients wait")
	case o.PromptWords < 4 || o.PromptWords > MaxPromptWords:
		return cli.Fail(fmt.Errorf("--prompt-tokens %d: it takes 4 to %d", o.PromptWords, MaxPromptWords), "longer than any model's context; a file of --prompts takes longer ones")
	case o.MaxTokens < 0:
		return cli.Fail(fmt.Errorf("--max-tokens %d: it takes 0 (the server's default) or more", o.MaxTokens))
	case o.Changed("model") && len(o.Models) == 0:
		return cli.Fail(errors.New("--model: an empty name"), "name the model, or leave -m out to take the one the server lists")
	case o.Changed("temperature") && (math.IsNaN(o.Temperature) || math.IsInf(o.Temperature, 0) || o.Temperature < 0):
		return cli.Fail(fmt.Errorf("--temperature %v: it takes 0 or more", o.Temperature))
	case o.Changed("prompts") && o.Changed("prompt-tokens"):
		return cli.Fail(errors.New("--prompts and --prompt-tokens: give one of them"))
	}
	if len(o.Concurrency) == 0 {
		return cli.Fail(errors.New("--concurrency: no number"), "give the requests in flight at once, such as -c 1 or -c 1,4")
	}
	if len(o.Concurrency) == 0 {
		return cli.Fail(errors.New("--concurrency: no number"), "give the requests in flight at once, such as -c 1 or -c 1,4")
	}
	for _, n := range o.Concurrency {
		if n < 1 || n > 1024 {
			return cli.Fail(fmt.Errorf("--concurrency %d: it takes 1 to 1024", n))
		}
	}
	for _, m := range o.Models {
		if strings.TrimSpace(m) == "" {
			return cli.Fail(errors.New("--model: an empty name"))
		}
	}
	if !map[string]bool{"auto": true, "basic": true, "full": true, "nocolor": true, "color": true, "none": true}[o.Style] {
		return cli.Fail(fmt.Errorf("--style %s: it takes auto, basic, full, nocolor, color or none", o.Style))
	}
	return nil
}

// key is the API key: --api-key-file's, read as the user who ran
// exopower, else $OPENAI_API_KEY.
func (o *Flags) key(s *cli.Streams, id child.Identity) (string, error) {
	if o.KeyFile == "" {
		k := strings.TrimSpace(s.Getenv("OPENAI_API_KEY"))
		if strings.ContainsAny(k, "\r\n") {
			return "", cli.Fail(errors.New("$OPENAI_API_KEY holds more than one line: want the key alone"))
		}
		if why := keyForm(k); why != "" {
			return "", cli.Fail(errors.New("$OPENAI_API_KEY: "+why), "want the key alone, as the server gave it")
		}
		return k, nil
	}
	f, err := access.Open(o.KeyFile, id.Cred)
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
		return "", cli.Fail(fmt.Errorf("--api-key-file %s: want the key alone on one line", o.KeyFile))
	}
	if why := keyForm(k); why != "" {
		return "", cli.Fail(fmt.Errorf("--api-key-file %s: %s", o.KeyFile, why), "want the key alone, as the server gave it")
	}
	return k, nil
}

// client makes the client of the endpoint, with the key.
func (o *Flags) client(s *cli.Streams, id child.Identity, rawURL string) (*Client, error) {
	api := Chat
	if o.Completions {
		api = Completions
	}
	u, api, err := Endpoint(rawURL, api)
	if err != nil {
		return nil, cli.Fail(err, Example)
	}
	key, err := o.key(s, id)
	if err != nil {
		return nil, err
	}
	opts := Options{MaxTokens: o.MaxTokens}
	if o.Changed("temperature") {
		opts.Temperature = &o.Temperature
	}
	if o.Changed("seed") {
		opts.Seed = &o.Seed
	}
	c := NewClient(u, api, key, o.Stall, opts)
	c.Timeout, c.InFlight = o.RequestTimeout, slices.Max(o.Concurrency)
	return c, nil
}

// readPrompts reads --prompts as the user who ran exopower, or makes
// prompts of --prompt-tokens words.
func (o *Flags) readPrompts(id child.Identity) (*Prompts, error) {
	if o.Prompts == "" {
		// A new seed each run, unless given: a server's cache of prompts
		// from an earlier run must not serve this one's.
		seed := uint64(time.Now().UnixNano())
		if o.Changed("seed") {
			seed = uint64(o.Seed)
		}
		return Generated(o.PromptWords, seed), nil
	}
	f, err := access.Open(o.Prompts, id.Cred)
	if err != nil {
		return nil, cli.Fail(fmt.Errorf("--prompts: %w", err), "name a file of JSON lines that you may read")
	}
	p, err := OpenPrompts(f, o.Prompts, o.promptsNeeded())
	if err != nil {
		f.Close()
		return nil, cli.Fail(fmt.Errorf("--prompts: %w", err))
	}
	return p, nil
}

// promptsNeeded is how many prompts the run takes at most, or 0 when it
// is not known (--duration without --requests), for the file's check.
func (o *Flags) promptsNeeded() int {
	n := float64(max(1, len(o.Models))) * float64(len(o.Concurrency)) * float64(o.Warmup+o.Requests)
	if o.Requests == 0 || n > 1<<40 {
		return 0
	}
	return int(n)
}

// settings asks the server for its models, which checks that it answers
// before anything is measured, makes a setting of every model and
// concurrency, and sends each model a request of one token: a model the
// server does not serve, or a route or key it refuses, is refused here,
// not after the baseline.
func (o *Flags) settings(ctx context.Context, s *cli.Streams, c *Client) ([]Setting, error) {
	pctx, stop := cli.CancelOnSignal(ctx, s.Signals)
	defer stop()
	interrupted := func() error {
		return cli.Fail(errors.New("interrupted before the first request; nothing was measured"))
	}
	models, err := o.models(pctx, c)
	if pctx.Err() != nil {
		return nil, interrupted()
	}
	if err != nil {
		return nil, err
	}
	for _, m := range models {
		err := c.Check(pctx, m)
		if pctx.Err() != nil {
			return nil, interrupted()
		}
		if err != nil {
			return nil, cli.Fail(fmt.Errorf("a first request of model %s, before anything is measured: %w", safe.Text(m), err), checkHint(err, c))
		}
	}
	var out []Setting
	for _, m := range models {
		for _, n := range o.Concurrency {
			out = append(out, Setting{Model: m, Concurrency: n})
		}
	}
	return out, nil
}

// models are the models to measure: -m's, or the one the server lists.
func (o *Flags) models(ctx context.Context, c *Client) ([]string, error) {
	listed, err := c.Models(ctx)
	var se *StatusError
	switch {
	case errors.Is(err, ErrNoAnswer):
		return nil, cli.Fail(fmt.Errorf("the server does not answer: %w", err), checkHint(err, c))
	case errors.As(err, &se) && (se.Code == 401 || se.Code == 403):
		return nil, cli.Fail(err, checkHint(err, c))
	case err != nil && len(o.Models) == 0:
		return nil, cli.Fail(fmt.Errorf("no --model, and the server's list of models could not be read: %w", err), "name the model with -m")
	case len(o.Models) > 0:
		// With -m, a list that cannot be read is no matter: the server
		// answered, and the request of one token says whether it serves
		// the model.
		return o.Models, nil
	case listed.Count != 1:
		return nil, cli.Fail(fmt.Errorf("no --model, and the server lists %s", c.Listed(listed)), "name the model with -m")
	case c.text(listed.First[0]) != listed.First[0]:
		return nil, cli.Fail(fmt.Errorf("no --model, and the name of the one model the server lists holds what exopower will not print as it is: %s", c.text(listed.First[0])),
			"name the model with -m")
	}
	return listed.First, nil
}

// checkHint is what to do about a check that failed.
func checkHint(err error, c *Client) string {
	var se *StatusError
	switch {
	case errors.Is(err, ErrNoAnswer):
		return "check that it runs and listens there (and, for https://, that its certificate is one this Mac trusts): curl " + Where(c.URL)
	case errors.As(err, &se) && (se.Code == 401 || se.Code == 403):
		return "give the server's key in $OPENAI_API_KEY or --api-key-file"
	case errors.As(err, &se) && se.Code == 404:
		return "check the model's name (-m) and the URL's route (" + string(c.API) + "; --completions for /v1/completions)"
	}
	return "check the model's name (-m), the URL and the server's own log"
}

type export struct {
	flag, path string
	write      func(io.Writer, *Report) error
}

func (o *Flags) exports() []export {
	return []export{
		{"--export-json", o.ExportJSON, func(w io.Writer, r *Report) error { return output.WriteJSON(w, r) }},
		{"--export-csv", o.ExportCSV, WriteCSV},
		{"--export-requests", o.ExportRequests, WriteRequestsCSV},
		{"--export-markdown", o.ExportMarkdown, WriteMarkdown},
		{"--plot", o.Plot, WritePlot(o.Plot)},
	}
}

// checkFiles refuses, before anything is sent, an export that cannot be
// written.
func (o *Flags) checkFiles(id child.Identity) error {
	for _, e := range o.exports() {
		if e.path == "" || e.path == "-" {
			continue
		}
		if err := output.CheckPath(e.flag, e.path, id.Cred); err != nil {
			return err
		}
	}
	if o.Plot != "" {
		if _, err := PlotFormat(o.Plot); err != nil {
			return cli.Fail(fmt.Errorf("--plot: %w", err))
		}
	}
	return nil
}

// deliver writes the report: the text's end or the JSON, and the
// exports.
func (o *Flags) deliver(s *cli.Streams, rep *Report, id child.Identity, text *Text) error {
	var summary func() error
	if text != nil {
		summary = func() error { return text.Summary(rep) }
	}
	var outs []output.Export
	for _, e := range o.exports() {
		outs = append(outs, output.Export{Path: e.path, Write: func(w io.Writer) error { return e.write(w, rep) }})
	}
	return output.Deliver(s, id.Cred, o.JSON, rep, summary, outs)
}
