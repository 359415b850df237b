//go:build genman

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
)

// manDate is the date every man page carries: a fixed one, so that the
// pages checked in under man/ change only when the commands' help does,
// and CI can compare them with freshly made ones.
var manDate = time.Unix(0, 0).UTC()

func init() { genManCmd = newGenManCmd }

// newGenManCmd writes a man page for each command, from the commands'
// own help (scripts/man.sh runs it). It is part of exopower, not a
// program of its own, because the commands are built here in package main;
// it is built only with -tags genman, so that the binary users run does
// not carry cobra's doc package and the Markdown and YAML packages under
// it, whose set-up every command would pay for at start.
func newGenManCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "gen-man DIR",
		Short:  "Write exopower's man pages into DIR",
		Hidden: true,
		Args:   usage.OneArg("DIR, where the pages go", nil),
		RunE: func(c *cobra.Command, args []string) error {
			return genMan(c.Root(), args[0])
		},
	}
}

func genMan(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return cli.Fail(fmt.Errorf("man pages: %w", err))
	}
	root.DisableAutoGenTag = true
	header := &doc.GenManHeader{Section: "1", Date: &manDate, Source: "exopower", Manual: "exopower manual"}
	if err := doc.GenManTree(root, header, dir); err != nil {
		return cli.Fail(fmt.Errorf("man pages: %w", err))
	}
	return nil
}
