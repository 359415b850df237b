package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/access"
	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
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
}

// Run measures what f asks of the server at rawURL, as the user id: it
// checks the files, asks the server for its models, then starts the
// meter (start: this Mac's stream, or the nodes) and sends the
// requests, and writes the report.
func Run(ctx context.Context, s *cli.Streams, f *Flags, id child.Identity, rawURL string, start func(context.Context) (*Meter, error)) error {
	if f.Changed("duration") && !f.Changed("requests") {
		// --duration alone sends for the whole duration: -r's default is
		// not a bound the user gave.
		f.Requests = 0
	}
	cfg, err := f.config(ctx, s, id, rawURL)
	if err != nil {
		return err
	}
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
		return Config{}, err
	}
	cfg := Config{Client: client, Settings: settings, Prompts: prompts, Requests: o.Requests, Duration: o.Duration,
		Warmup: o.Warmup, Baseline: o.Baseline, Interval: o.Interval, Signals: s.Signals, Messages: s.Err}
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
	return NewClient(u, api, key, o.Stall, opts), nil
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
	defer f.Close()
	p, err := ReadPrompts(f, o.Prompts)
	if err != nil {
		return nil, cli.Fail(fmt.Errorf("--prompts: %w", err))
	}
	return p, nil
}

// settings asks the server for its models, which checks that it answers
// before anything is measured, and makes a setting of every model and
// concurrency.
func (o *Flags) settings(ctx context.Context, s *cli.Streams, c *Client) ([]Setting, error) {
	pctx, stop := cli.CancelOnSignal(ctx, s.Signals)
	listed, err := c.Models(pctx)
	if stop() {
		return nil, cli.Fail(errors.New("interrupted before the first request; nothing was measured"))
	}
	var se *StatusError
	var ne net.Error
	var oe *net.OpError
	switch {
	case err != nil && (errors.As(err, &ne) || errors.As(err, &oe)):
		return nil, cli.Fail(fmt.Errorf("the server does not answer: %w", err), "check that it runs and listens there: curl "+c.URL.Redacted())
	case err != nil && errors.As(err, &se) && (se.Code == 401 || se.Code == 403):
		return nil, cli.Fail(err, "give the server's key in $OPENAI_API_KEY or --api-key-file")
	case err != nil && len(o.Models) == 0:
		return nil, cli.Fail(fmt.Errorf("no --model, and the server's list of models could not be read: %w", err), "name the model with -m")
	}
	// With -m, a list of models that cannot be read is no matter: the
	// server answered, and the requests will say what it takes.
	models := o.Models
	if len(models) == 0 {
		if len(listed) != 1 {
			return nil, cli.Fail(fmt.Errorf("no --model, and the server lists %d models: %v", len(listed), listed), "name the model with -m")
		}
		models = listed
	}
	var out []Setting
	for _, m := range models {
		for _, n := range o.Concurrency {
			out = append(out, Setting{Model: m, Concurrency: n})
		}
	}
	return out, nil
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
