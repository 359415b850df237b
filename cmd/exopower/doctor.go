package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/doctor"
	"github.com/exopower/exopower/internal/wire"
)

type doctorOptions struct {
	powermetrics string
	serve        string
	wall         wallOptions
}

func newDoctorCmd(s *cli.Streams) *cobra.Command {
	var o doctorOptions
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check that exopower can measure on this machine, and say how to fix what is missing",
		Long: `Check the macOS version, Apple Silicon, powermetrics, the privileges to run it
(root, or sudo -n) and one test sample, with the fix for each failure, and say
whether an exopower serve answers (at 127.0.0.1:10241 unless --serve says
where); with --wall, read the plug at the wall for a few seconds, and without
it, on a MacBook, what macOS reports of its adapter (--wall adapter). Exits 0
when every check passes and 1 when one fails; no serve running is not a
failure.`,
		Args: usage.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := doctor.CheckAddr(o.serve); err != nil {
				return err
			}
			plug, err := o.plug(s)
			if err != nil {
				return err
			}
			ctx, stop := cli.CancelOnSignal(c.Context(), s.Signals)
			defer stop()
			return doctor.Run(ctx, s, o.serve, powermetricsPath(o.powermetrics, s.Getenv), openIOReport, openKernel, plug)
		},
	}
	addPowermetricsFlag(c, &o.powermetrics)
	c.Flags().StringVar(&o.serve, "serve", wire.DefaultListen, "look for exopower serve at `ADDR` (host:port)")
	o.wall.addFlags(c)
	return c
}

// plug is the plug of --wall to check, or nil.
func (o *doctorOptions) plug(s *cli.Streams) (*doctor.Wall, error) {
	if o.wall.url == "" && o.wall.credentials == "" {
		return nil, nil
	}
	id, err := child.Identify(false, os.Geteuid(), s.Getenv, s.Environ())
	if err != nil {
		return nil, err
	}
	t, c, err := o.wall.read(s, id)
	if err != nil {
		return nil, err
	}
	return &doctor.Wall{Target: t, Credentials: c}, nil
}
