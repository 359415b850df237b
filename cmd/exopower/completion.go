package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/cli"
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
		c.RunE = func(*cobra.Command, []string) error {
			return cli.Fail(errors.New("completion needs a shell: bash, zsh, fish or powershell"),
				"exopower completion bash > FILE writes bash's script; exopower completion --help says where it goes")
		}
	}
}
