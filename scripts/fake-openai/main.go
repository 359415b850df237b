// Command fake-openai serves a fake OpenAI-compatible model server
// (internal/fakellm) on a loopback address, for trying exopower llm with
// no model. It prints three lines to stdout: the URL it listens on, then
// the FAKEPM_PROFILE and FAKEPM_OVERRIDES with which to run the fake
// powermetrics (scripts/fake-powermetrics) so that its power is the idle
// power outside the requests served and steps with their prefill and
// decode. It serves until SIGINT or SIGTERM.
//
// Usage: fake-openai [-addr 127.0.0.1:0] [-period 1s] [-prefill 200ms]
// [-decode 600ms] [-tokens 32] [-idle 2,0.5,0.1] [-prefill-watts W]
// [-decode-watts W] [-overrides FILE] [-models A,B] [-api-key KEY]
// [-fault FAULT] [-fault-after N] [-redirect-to URL]
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/exopower/exopower/internal/fakellm"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := fakellm.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
