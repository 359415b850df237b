package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/exopower/exopower/internal/access"
	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cluster"
	"github.com/exopower/exopower/internal/llm"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/source"
)

func runLLM(ctx context.Context, s *cli.Streams, o *llmOptions, rawURL string, changed func(string) bool) error {
	if err := o.validate(changed); err != nil {
		return err
	}
	if changed("duration") && !changed("requests") {
		// --duration alone sends for the whole duration: -r's default is
		// not a bound the user gave.
		o.requests = 0
	}
	id, err := child.Identify(false, os.Geteuid(), s.Getenv, s.Environ())
	if err != nil {
		return err
	}
	if err := o.checkFiles(id); err != nil {
		return err
	}
	client, err := o.client(s, id, rawURL, changed)
	if err != nil {
		return err
	}
	prompts, err := o.readPrompts(id, changed)
	if err != nil {
		return err
	}
	settings, err := o.settings(ctx, s, client)
	if err != nil {
		return err
	}
	meter, err := o.meter(ctx, s)
	if err != nil {
		return err
	}
	cfg := llm.Config{Client: client, Settings: settings, Prompts: prompts, Requests: o.requests, Duration: o.duration,
		Warmup: o.warmup, Baseline: o.baseline, Interval: o.interval, Signals: s.Signals, Messages: s.Err}
	var w io.Writer
	if s.ErrTTY && o.style != "basic" && o.style != "color" && o.style != "none" {
		w = s.Err
	}
	cfg.Progress = bench.NewProgress(w, len(settings)*o.requests, o.baseline)
	var text *llm.Text
	if !o.json && o.style != "none" {
		text = llm.NewText(s.Out, s.Err, o.styles(s.Out, s.OutTTY, s.Getenv), o.styles(s.Err, s.ErrTTY, s.Getenv))
		cfg.Finished = text.Setting
	}
	meter.Start(ctx)
	r := llm.NewRunner(cfg, meter)
	rep := r.Measure(ctx)
	if err := o.deliver(s, rep, id, text); err != nil {
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

func (o *llmOptions) styles(w io.Writer, tty bool, getenv func(string) string) *output.Styles {
	return bench.Styles(o.style, w, tty, getenv)
}

// client makes the client of the endpoint, with the key.
func (o *llmOptions) client(s *cli.Streams, id child.Identity, rawURL string, changed func(string) bool) (*llm.Client, error) {
	api := llm.Chat
	if o.completions {
		api = llm.Completions
	}
	u, api, err := llm.Endpoint(rawURL, api)
	if err != nil {
		return nil, cli.Fail(err, llmExample)
	}
	key, err := o.key(s, id)
	if err != nil {
		return nil, err
	}
	opts := llm.Options{MaxTokens: o.maxTokens}
	if changed("temperature") {
		opts.Temperature = &o.temperature
	}
	if changed("seed") {
		opts.Seed = &o.seed
	}
	return llm.NewClient(u, api, key, o.stall, opts), nil
}

// readPrompts reads --prompts as the user who ran exopower, or makes
// prompts of --prompt-tokens words.
func (o *llmOptions) readPrompts(id child.Identity, changed func(string) bool) (*llm.Prompts, error) {
	if o.prompts == "" {
		// A new seed each run, unless given: a server's cache of prompts
		// from an earlier run must not serve this one's.
		seed := uint64(time.Now().UnixNano())
		if changed("seed") {
			seed = uint64(o.seed)
		}
		return llm.Generated(o.promptWords, seed), nil
	}
	f, err := access.Open(o.prompts, id.Cred)
	if err != nil {
		return nil, cli.Fail(fmt.Errorf("--prompts: %w", err), "name a file of JSON lines that you may read")
	}
	defer f.Close()
	p, err := llm.ReadPrompts(f, o.prompts)
	if err != nil {
		return nil, cli.Fail(fmt.Errorf("--prompts: %w", err))
	}
	return p, nil
}

// settings asks the server for its models, which checks that it answers
// before anything is measured, and makes a setting of every model and
// concurrency.
func (o *llmOptions) settings(ctx context.Context, s *cli.Streams, c *llm.Client) ([]llm.Setting, error) {
	pctx, stop := cli.CancelOnSignal(ctx, s.Signals)
	listed, err := c.Models(pctx)
	if stop() {
		return nil, cli.Fail(errors.New("interrupted before the first request; nothing was measured"))
	}
	var se *llm.StatusError
	var ne net.Error
	var oe *net.OpError
	switch {
	case err != nil && (errors.As(err, &ne) || errors.As(err, &oe)):
		return nil, cli.Fail(fmt.Errorf("the server does not answer: %w", err), "check that it runs and listens there: curl "+c.URL.Redacted())
	case err != nil && errors.As(err, &se) && (se.Code == 401 || se.Code == 403):
		return nil, cli.Fail(err, "give the server's key in $OPENAI_API_KEY or --api-key-file")
	case err != nil && len(o.models) == 0:
		return nil, cli.Fail(fmt.Errorf("no --model, and the server's list of models could not be read: %w", err), "name the model with -m")
	}
	// With -m, a list of models that cannot be read is no matter: the
	// server answered, and the requests will say what it takes.
	models := o.models
	if len(models) == 0 {
		if len(listed) != 1 {
			return nil, cli.Fail(fmt.Errorf("no --model, and the server lists %d models: %v", len(listed), listed), "name the model with -m")
		}
		models = listed
	}
	var out []llm.Setting
	for _, m := range models {
		for _, n := range o.concurrency {
			out = append(out, llm.Setting{Model: m, Concurrency: n})
		}
	}
	return out, nil
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
	return llm.NewMeter([]cluster.Member{cluster.NewLocal(sm, o.interval)}, nil, o.interval), nil
}

type llmExport struct {
	flag, path string
	write      func(io.Writer, *llm.Report) error
}

func (o *llmOptions) exports() []llmExport {
	return []llmExport{
		{"--export-json", o.exportJSON, func(w io.Writer, r *llm.Report) error { return output.WriteJSON(w, r) }},
		{"--export-csv", o.exportCSV, llm.WriteCSV},
		{"--export-requests", o.exportRequests, llm.WriteRequestsCSV},
		{"--export-markdown", o.exportMarkdown, llm.WriteMarkdown},
		{"--plot", o.plot, llm.WritePlot(o.plot)},
	}
}

// checkFiles refuses, before anything is sent, an export that cannot be
// written.
func (o *llmOptions) checkFiles(id child.Identity) error {
	for _, e := range o.exports() {
		if e.path == "" || e.path == "-" {
			continue
		}
		if err := output.CheckPath(e.flag, e.path, id.Cred); err != nil {
			return err
		}
	}
	if o.plot != "" {
		if _, err := llm.PlotFormat(o.plot); err != nil {
			return cli.Fail(fmt.Errorf("--plot: %w", err))
		}
	}
	return nil
}

// deliver writes the report: the text's end or the JSON, and the
// exports.
func (o *llmOptions) deliver(s *cli.Streams, rep *llm.Report, id child.Identity, text *llm.Text) error {
	var err error
	switch {
	case o.json:
		err = cli.Wrote("stdout", output.WriteJSON(s.Out, rep))
	case text != nil:
		err = cli.Wrote("stdout", text.Summary(rep))
	}
	var outs []output.Export
	for _, e := range o.exports() {
		outs = append(outs, output.Export{Path: e.path, Write: func(w io.Writer) error { return e.write(w, rep) }})
	}
	return output.WriteExports(s, id.Cred, err, outs)
}
