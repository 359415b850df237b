package fakellm

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
)

// options are the command line's: the server's Config, where to serve
// it, and the idle power of the profile to print.
type options struct {
	addr string
	idle fakepm.Watts
	c    Config
}

// Main is the command fake-openai (scripts/fake-openai) with args (the
// program name left out): it serves a fake on a loopback address, prints
// its URL and then the FAKEPM_PROFILE and FAKEPM_OVERRIDES lines with
// which to run the fake powermetrics, all in one write, serves until ctx
// ends, and returns the exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	temp := o.c.Overrides == ""
	if temp {
		// Left behind on exit: a fake powermetrics may still read it.
		f, err := os.CreateTemp("", "fake-openai-*.overrides")
		if err != nil {
			fmt.Fprintln(stderr, "fake-openai:", err)
			return 1
		}
		f.Close()
		o.c.Overrides = f.Name()
	}
	url, stop, err := NewHandler(o.c).Start(o.addr)
	if err != nil {
		if temp {
			os.Remove(o.c.Overrides)
		}
		fmt.Fprintln(stderr, "fake-openai:", err)
		return 1
	}
	defer stop()
	w := func(x float64) string { return fmt.Sprint(x) }
	profile := "0=" + w(o.idle[0]) + "," + w(o.idle[1]) + "," + w(o.idle[2])
	fmt.Fprintf(stdout, "%s\nFAKEPM_PROFILE=%s\nFAKEPM_OVERRIDES=%s\n", url, quote(profile), quote(o.c.Overrides))
	<-ctx.Done()
	return 0
}

// parseFlags reads the command line. -h prints the flags to stdout and
// returns flag.ErrHelp: help asked for is no error. What is wrong with a
// bad command line goes to stderr, with the flags after a bad flag.
func parseFlags(args []string, stdout, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("fake-openai", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	usage := func(w io.Writer) {
		fs.SetOutput(w)
		fmt.Fprintln(w, "Usage of fake-openai:")
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	fs.StringVar(&o.addr, "addr", "127.0.0.1:0", "loopback `address` to serve on (port 0: any free port)")
	fs.DurationVar(&o.c.Period, "period", time.Second, "length of a slot; one request is served per slot")
	fs.DurationVar(&o.c.Lead, "lead", DefaultLead, "least time from a request's arrival to its slot")
	fs.DurationVar(&o.c.Prefill, "prefill", 200*time.Millisecond, "time from a slot's start to the first token")
	fs.DurationVar(&o.c.Decode, "decode", 600*time.Millisecond, "time from the first token to the last")
	fs.IntVar(&o.c.Tokens, "tokens", 32, "tokens of an answer, unless max_tokens is fewer")
	watts(fs, &o.idle, "idle", "2,0.5,0.1", "power outside served slots")
	watts(fs, &o.c.PrefillWatts, "prefill-watts", "12,2,0.2", "power during a prefill")
	watts(fs, &o.c.DecodeWatts, "decode-watts", "8,10,0.2", "power during a decode")
	fs.StringVar(&o.c.Overrides, "overrides", "", "fakepm overrides `file` to append to (default: a new temporary file)")
	fs.Func("models", "comma-separated `models` served (default: any)", func(s string) error {
		o.c.Models = strings.Split(s, ",")
		return nil
	})
	fs.StringVar(&o.c.APIKey, "api-key", "", "bearer `token` that requests must carry")
	fs.StringVar(&o.c.Fault, "fault", "", "`fault` to misbehave with (see internal/fakellm's Config.Fault)")
	fs.IntVar(&o.c.FaultAfter, "fault-after", 0, "serve the first `N` completion requests well, then misbehave (1: exopower llm's check of one token passes, the measured requests meet the fault)")
	fs.StringVar(&o.c.RedirectTo, "redirect-to", "", "`URL` that -fault redirect sends clients to")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		usage(stdout)
		return o, err
	} else if err != nil {
		usage(stderr)
		return o, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fake-openai: unexpected argument %q\n", fs.Arg(0))
		return o, errors.New("unexpected argument")
	}
	return o, nil
}

// watts defines a flag of watts per component, cpu,gpu,ane.
func watts(fs *flag.FlagSet, w *fakepm.Watts, name, def, usage string) {
	fs.Func(name, usage+": cpu,gpu,ane `watts` (default "+def+")", func(s string) error {
		p, err := fakepm.ParseProfile("0=" + s)
		if err != nil {
			return errors.New("want cpu,gpu,ane watts")
		}
		*w = p.Steps[0].W
		return nil
	})
	p, _ := fakepm.ParseProfile("0=" + def)
	*w = p.Steps[0].W
}

// quote quotes s for a POSIX shell, so that the lines can be eval'd.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
