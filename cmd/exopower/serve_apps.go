package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/serve"
)

// serveAppsOptions are serve's --apps flags: every app's energy as
// counters.
type serveAppsOptions struct {
	on     bool
	top    int
	forget time.Duration
	tuned  bool // --apps.top or --apps.forget given
}

func (o *serveAppsOptions) addFlags(c *cobra.Command) {
	c.Flags().BoolVar(&o.on, "apps", false, "also count every app's energy (exopower_app_energy_joules_total), reading the process table at each window; without root, serve's own user's processes only")
	c.Flags().IntVar(&o.top, "apps.top", 20, "with --apps, give the `N` apps of the most energy of late a series of their own, the others together as app=\"other\"")
	c.Flags().DurationVar(&o.forget, "apps.forget", time.Hour, "with --apps, drop the series of an app whose processes have all been gone for `D`")
}

// open opens the kernel's accounting of processes and the poller of
// --apps, which serve closes when it stops reading them; nil without
// --apps.
func (o *serveAppsOptions) open(root bool) (*serve.Apps, error) {
	if !o.on {
		if o.tuned {
			return nil, cli.Fail(errors.New("--apps.top and --apps.forget tune --apps, which is not given"), "add --apps")
		}
		return nil, nil
	}
	if o.top < 1 {
		return nil, cli.Fail(fmt.Errorf("--apps.top %d is out of range: at least one app has a series of its own", o.top), "the default is 20")
	}
	if o.forget <= 0 {
		return nil, cli.Fail(fmt.Errorf("--apps.forget %v is out of range: it takes a time, such as 1h", o.forget))
	}
	k, d, err := openAppsKernel("--apps")
	if err != nil {
		return nil, err
	}
	return &serve.Apps{Poller: apps.New(k, d, apps.Config{Forget: o.forget, MaxGone: 4 * o.top, AllUsers: root}), Top: o.top, Kernel: k, Whose: appsLine(root)}, nil
}

// appsLine says whose processes serve --apps counts, as it starts.
func appsLine(root bool) string {
	if root {
		return "counting every user's processes (root)"
	}
	name := strconv.Itoa(os.Geteuid())
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	return "counting " + name + "'s processes only (not root): the other users' CPU energy is in the remainder, exopower_app_remainder_energy_joules_total"
}
