package doctor

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/ioreport"
	"github.com/exopower/exopower/internal/wall"
)

type oneEntry struct{ e ioreport.BatteryEntry }

func (o oneEntry) Read() (ioreport.BatteryEntry, error) { return o.e, nil }
func (oneEntry) Close() error                           { return nil }

// The adapter's check says what it read: the wall, the input and the
// loss, the load, the battery's flow, on AC or on battery; and where
// PowerTelemetryData is missing, that it is.
func TestTheAdapterIsDescribed(t *testing.T) {
	flags := func(ac bool) map[string]bool {
		return map[string]bool{"BatteryInstalled": true, "ExternalConnected": ac}
	}
	tele := func(in, loss, load, battery int64) map[string]int64 {
		return map[string]int64{"SystemPowerIn": in, "AdapterEfficiencyLoss": loss, "SystemLoad": load, "BatteryPower": battery}
	}
	for _, tc := range []struct {
		e    ioreport.BatteryEntry
		want string
	}{
		{ioreport.BatteryEntry{Found: true, Flags: flags(true), Telemetry: tele(42825, 1181, 19852, 22973)},
			"on AC: 44.01 W at the wall, 42.83 W coming in from the adapter and 1.181 W of its loss as macOS estimates it (AppleSmartBattery's PowerTelemetryData); the Mac's load 19.85 W; the battery takes 22.97 W (PowerTelemetryData's BatteryPower)"},
		{ioreport.BatteryEntry{Found: true, Flags: flags(false), Telemetry: tele(0, 0, 4636, -4636)},
			"on battery: 0 W at the wall; the Mac's load 4.636 W; the battery discharges at 4.636 W (PowerTelemetryData's BatteryPower), which is what the Mac draws"},
		{ioreport.BatteryEntry{Found: true, Flags: flags(true), SMC: map[string]float64{"PDTR": 35.25}},
			"on AC: 35.25 W coming in from the adapter, from the SMC's PDTR: PowerTelemetryData is missing on this model"},
	} {
		p, err := wall.OpenAdapter(oneEntry{tc.e}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := describeAdapter(p); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s\nwant\n%s", got, tc.want)
		}
	}
}

// doctor --wall adapter off macOS fails, saying why and what to use; on
// a Mac plain doctor looks at the adapter for information.
func TestTheAdapterCheck(t *testing.T) {
	if runtime.GOOS != "darwin" {
		c := checkWall(context.Background(), Wall{Target: wall.Target{Scheme: wall.KindAdapter}}, wall.MinInterval, nil)
		if c.ok || !strings.Contains(c.detail, "only on macOS") || !strings.Contains(strings.Join(c.fixes, ""), "metered plug") {
			t.Errorf("%+v", c)
		}
	}
	if adapterOn("linux") != nil || adapterOn("darwin") == nil {
		t.Error("plain doctor looks at the adapter on macOS alone")
	}
	sys := aMac()
	sys.adapter = func(context.Context) check {
		return check{name: "adapter", ok: true, info: true, detail: "this Mac has no battery"}
	}
	var out bytes.Buffer
	if err := run(context.Background(), &cli.Streams{Out: &out, Getenv: func(string) string { return "" }}, sys, "/usr/bin/powermetrics"); err != nil || !strings.Contains(out.String(), "info  adapter        this Mac has no battery") {
		t.Errorf("%v\n%s", err, out.String())
	}
}
