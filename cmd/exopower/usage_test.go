package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/cli"
)

// runInProcess runs exopower with args on buffers and returns its status,
// stdout and stderr.
func runInProcess(args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	code := run(context.Background(), args, &cli.Streams{Out: &out, Err: &errs,
		Getenv: func(string) string { return "" }, Environ: func() []string { return nil }})
	return code, out.String(), errs.String()
}

// Every command, those to come included, answers an unknown flag with
// its own --help and the nearest of its flags, and a stray argument with
// what it wants and its usage: none falls back to cobra's bare messages
// or to the root's help.
func TestEveryCommandAnswersAMistakeWithItsOwnHelp(t *testing.T) {
	var walk func(c *cobra.Command)
	var commands []*cobra.Command
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if !sub.Hidden && sub.Name() != "help" {
				commands = append(commands, sub)
				walk(sub)
			}
		}
	}
	walk(newRootCmd(context.Background(), &cli.Streams{}))
	for _, c := range commands {
		path := strings.Fields(c.CommandPath())[1:]
		t.Run(strings.Join(path, " "), func(t *testing.T) {
			code, out, errs := runInProcess(append(path, "--hepl")...)
			if code != cli.StatusFailure || out != "" {
				t.Errorf("status %d, stdout %q; want 125 and nothing", code, out)
			}
			for _, want := range []string{"exopower: error: unknown flag: --hepl\n", "exopower: hint: did you mean --help?\n",
				"exopower: hint: " + c.CommandPath() + " --help lists its "} {
				if !strings.Contains(errs, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errs)
				}
			}
			if c.HasAvailableSubCommands() || c.Name() == "run" || c.Name() == "bench" {
				// Their words are commands: shells, or the command to measure.
				return
			}
			stray := []string{"one", "two"}
			if c.Name() == "compare" {
				// Its two words are the exports it compares: a third is
				// the stray one.
				stray = append(stray, "three")
			}
			_, _, errs = runInProcess(append(path, stray...)...)
			if !strings.Contains(errs, "exopower: error: "+c.CommandPath()+" takes ") || !strings.Contains(errs, `"one" "two"`) ||
				!strings.Contains(errs, "exopower: hint: usage: "+c.UseLine()+"\n") {
				t.Errorf("%d arguments: stderr\n%s\nwant what %s takes, the arguments and its usage", len(stray), errs, c.CommandPath())
			}
		})
	}
}
