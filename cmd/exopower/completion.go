package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
)

// addCompletion adds cobra's completion command now rather than at
// Execute, so that the man pages have it too, and makes a missing or
// unknown shell an error: cobra's own prints the help and exits 0, which
// a script redirecting it into a file would take for a completion script.
func addCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		for _, shell := range c.Commands() {
			shell.Args = usage.NoArgs
		}
		c.RunE = func(*cobra.Command, []string) error {
			return cli.Fail(errors.New("completion needs a shell: bash, zsh, fish or powershell"),
				"exopower completion bash > FILE writes bash's script; exopower completion --help says where it goes")
		}
		c.Args = func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			return usage.Fail(c, fmt.Errorf("completion knows no shell %q: bash, zsh, fish or powershell", args[0]))
		}
	}
}
