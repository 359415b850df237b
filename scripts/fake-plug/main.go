// Command fake-plug serves a fake metered plug (internal/fakeplug) on a
// loopback address, for trying exopower --wall with no plug. It prints
// the --wall URL to give exopower, then serves until SIGINT or SIGTERM.
// Its power is a square wave, its energy counter the exact integral of
// it in the kind's own resolution.
//
// Usage: fake-plug [-kind shelly-gen2] [-addr 127.0.0.1:0] [-low 20]
// [-high 80] [-low-for 2s] [-high-for 2s] [-password P]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/fakeplug"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fake-plug", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kind := fs.String("kind", string(fakeplug.ShellyGen2), "the `kind` of plug: shelly-gen2, shelly-gen1, tasmota, home-assistant or kasa")
	addr := fs.String("addr", "127.0.0.1:0", "loopback `address` to serve on (port 0: any free port)")
	low := fs.Float64("low", 20, "the square wave's low power, in `watts`")
	high := fs.Float64("high", 80, "the square wave's high power, in `watts`")
	lowFor := fs.Duration("low-for", 2*time.Second, "how long the power is low")
	highFor := fs.Duration("high-for", 2*time.Second, "how long the power is high")
	password := fs.String("password", "", "ask for this `password` (and Home Assistant's token), each kind in its own way")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	cfg := fakeplug.Config{Kind: fakeplug.Kind(*kind), Profile: fakeplug.Square(time.Now(), *low, *high, *lowFor, *highFor),
		Password: *password, Token: *password}
	if cfg.Kind == fakeplug.HomeAssistant && cfg.Token == "" {
		cfg.Token = "fake-plug-token"
		fmt.Fprintln(stderr, "fake-plug: Home Assistant asks for a token: EXOPOWER_WALL_TOKEN="+cfg.Token)
	}
	url, stopServing, err := fakeplug.New(cfg).Start(*addr)
	if err != nil {
		fmt.Fprintln(stderr, "fake-plug:", err)
		return 1
	}
	defer stopServing()
	fmt.Fprintln(stdout, url)
	<-ctx.Done()
	return 0
}
