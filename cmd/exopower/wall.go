package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/access"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/ioreport"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// wallOptions are --wall and --wall-credentials: the metered plug the
// Mac is plugged into, read beside the Mac's own source.
type wallOptions struct {
	url, credentials string
}

func (o *wallOptions) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.url, "wall", "", "also measure at the wall, with the metered plug at `URL`: shelly://HOST, tasmota://HOST, ha://HOST:8123/sensor.ENERGY, kasa://HOST, http://HOST to ask it what it is, or adapter for a MacBook's own adapter (no plug)")
	c.Flags().StringVar(&o.credentials, "wall-credentials", "", "read the plug's credentials from `FILE`, lines of user NAME, password SECRET or token SECRET (default: $EXOPOWER_WALL_USER, $EXOPOWER_WALL_PASSWORD, $EXOPOWER_WALL_TOKEN)")
}

// credentials are the plug's credentials: --wall-credentials's, read as
// the user who ran exopower, or the environment's.
func (o *wallOptions) read(s *cli.Streams, id child.Identity) (wall.Target, wall.Credentials, error) {
	if o.credentials != "" && o.url == "" {
		return wall.Target{}, wall.Credentials{}, cli.Fail(errors.New("--wall-credentials without --wall: no plug to give them to"), "name the plug with --wall URL")
	}
	t, err := wall.Parse(o.url)
	if err != nil {
		return t, wall.Credentials{}, cli.Fail(err, "name the plug as shelly://HOST, tasmota://HOST, ha://HOST:8123/sensor.ENERGY, kasa://HOST or http://HOST, or a MacBook's adapter as adapter")
	}
	var r io.Reader
	if o.credentials != "" {
		f, err := access.Open(o.credentials, id.Cred)
		if err != nil {
			return t, wall.Credentials{}, cli.Fail(fmt.Errorf("--wall-credentials: %w", err), "name a file that you may read")
		}
		defer f.Close()
		r = f
	}
	c, err := wall.ReadCredentials(r, s.Getenv)
	if err != nil {
		return t, c, cli.Fail(fmt.Errorf("--wall-credentials %s: %w", o.credentials, err))
	}
	return t, c, nil
}

// start opens the plug of --wall and polls it, before anything else
// starts: a plug that cannot be read stops the command before it runs.
// It returns nil without --wall.
func (o *wallOptions) start(ctx context.Context, s *cli.Streams, id child.Identity) (*wall.Session, error) {
	if o.url == "" && o.credentials == "" {
		return nil, nil
	}
	t, c, err := o.read(s, id)
	if err != nil {
		return nil, err
	}
	sess, err := wall.Start(ctx, t, c)
	var ae *wall.AuthError
	var ue *wall.UnsupportedError
	switch {
	case errors.As(err, &ae):
		return nil, cli.Fail(fmt.Errorf("--wall: %w", err), "give the plug's credentials in --wall-credentials FILE or $EXOPOWER_WALL_PASSWORD ($EXOPOWER_WALL_TOKEN for Home Assistant)")
	case errors.As(err, &ue):
		return nil, cli.Fail(fmt.Errorf("--wall: %w", err))
	case err != nil:
		return nil, cli.Fail(fmt.Errorf("--wall: %w", err), "check that the plug is on and reachable from this Mac, and its URL: docs/wall.md")
	}
	return sess, nil
}

// addWall gives sum the energy at the wall over [from, to], from plug
// (none without --wall), and its warnings.
func addWall(sum *wire.Summary, plug *wall.Session, from, to time.Time) {
	if plug == nil {
		return
	}
	var warnings []string
	sum.Wall, warnings = output.NewWall(plug.Finish(from, to), plug.Info(), plug.Interval(), to.Sub(from).Seconds())
	sum.Warnings = append(sum.Warnings, warnings...)
}

// wallReader reads the energy of plug (none without --wall) over a
// stretch of the run's windows: once the plug was read after the run's
// end (addWall), so that its readings hold the last window too.
func wallReader(plug *wall.Session) output.WallReader {
	if plug == nil {
		return nil
	}
	return plug.Read
}

// errWallWithNodes refuses --wall with --node: the plug is this Mac's,
// and each node's serve reads its own (serve --wall). where says what
// of the nodes' walls the command gives: run sums them, the others not
// yet.
func errWallWithNodes(where string) error {
	return cli.Fail(errors.New("--wall reads this Mac's plug, not the nodes': not with --node"), "give each node's exopower serve its own plug (serve --wall URL): "+where)
}

// startAsSelf opens the plug of --wall, read as the user who ran exopower
// (its credentials file too), for a command with no command of the
// user's to run as (serve, watch); nil without --wall.
func (o *wallOptions) startAsSelf(ctx context.Context, s *cli.Streams) (*wall.Session, error) {
	if o.url == "" && o.credentials == "" {
		return nil, nil
	}
	id, err := child.Identify(false, os.Geteuid(), s.Getenv, s.Environ())
	if err != nil {
		return nil, err
	}
	return o.start(ctx, s, id)
}

// liveWall gives a live view the plug's figures at each window: its
// power now, and its energy since the view started, from the running
// total (cheap at every window, however long the watch); the summary at
// the end is the span's own. Nil without a plug.
func liveWall(plug *wall.Session) func() *wire.SampleWall {
	if plug == nil {
		return nil
	}
	base := plug.Total().Joules
	return func() *wire.SampleWall {
		w := &wire.SampleWall{EnergyJoules: wire.Num(plug.Total().Joules - base)}
		if now, ok := plug.PowerNow(); ok {
			p := wire.Num(now)
			w.PowerWatts = &p
		}
		return w
	}
}

// recordWall is what record --wall adds to a recording: the plug in its
// header, and after each reading the plug's readings since the last
// written (after the last reading, once the plug has given one after
// it, so that the recording's end is held). Nil without a plug.
func recordWall(plug *wall.Session) *ioreport.Extra {
	if plug == nil {
		return nil
	}
	in := plug.Info()
	var written time.Time
	return &ioreport.Extra{
		Wall: &ioreport.PlugInfo{Kind: in.Kind, Model: in.Model, Firmware: in.Firmware, Name: in.Name, Address: in.Address,
			CounterResolutionJoules: in.CounterResolution, HasCounter: in.HasCounter, HasPower: in.HasPower, IntervalSeconds: plug.Interval().Seconds()},
		Lines: func(origin time.Time, last bool) [][]byte {
			if last {
				plug.WaitAfter(context.Background(), time.Now())
			}
			var lines [][]byte
			for _, r := range plug.Since(written) {
				lines = append(lines, ioreport.PlugLine(ioreport.PlugReading{At: r.At, Power: r.Power, HasPower: r.HasPower, Counter: r.Counter, HasCounter: r.HasCounter}, origin))
				written = r.At
			}
			return lines
		},
	}
}

// addRecordedWall gives a report's summary the wall over its span, from
// the plug's readings that the recording holds (record --wall), measured
// as a live span's would have been.
func addRecordedWall(sum *wire.Summary, plug source.Plugged, res sampler.Result) {
	p := plug.Info
	if p == nil {
		return
	}
	info := wall.Info{Kind: p.Kind, Model: p.Model, Firmware: p.Firmware, Name: p.Name, Address: p.Address,
		CounterResolution: p.CounterResolutionJoules, HasCounter: p.HasCounter, HasPower: p.HasPower}
	readings := make([]wall.Timed, len(plug.Readings))
	for i, r := range plug.Readings {
		readings[i] = wall.Timed{At: r.At, Reading: wall.Reading{Power: r.Power, HasPower: r.HasPower, Counter: r.Counter, HasCounter: r.HasCounter}}
	}
	interval := time.Duration(p.IntervalSeconds * float64(time.Second))
	m := wall.Replay(info, interval, readings)
	var warnings []string
	sum.Wall, warnings = output.NewWall(m.Energy(res.Start, res.Start.Add(res.Duration)), info, m.Interval(), res.Duration.Seconds())
	sum.Warnings = append(sum.Warnings, warnings...)
}
