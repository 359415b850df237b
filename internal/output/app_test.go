package output

import (
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// run --app's text: the app's processes and reads, its CPU and GPU
// energy and power each with how it was obtained, and their sum.
func TestWriteTextSaysWhatAnAppDrew(t *testing.T) {
	sum := NewSummary(testResult(), time.Time{}, time.Second)
	sum.App = &wire.App{Name: "Safari", Seen: true, Processes: 3, ProcessesRunning: 2, ProcessesNotReadable: 1, Reads: 5, ReadSeconds: 5,
		EnergyJoules:  wire.AppFigures{Total: 67.5, CPU: 35.5, GPU: 32},
		AvgPowerWatts: wire.AppFigures{Total: 13.5, CPU: 7.1, GPU: 6.4}}
	var b strings.Builder
	if err := WriteText(&b, sum, &Styles{Plain: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  the app Safari: 3 processes seen, 2 running at the end (1 of another user's, which it may not read); 5 reads of every process over 5.000 s\n",
		"  CPU            35.50 J   7.100 W  measured by the kernel\n",
		"  GPU            32.00 J   6.400 W  estimated from the share of GPU time\n",
		"  app            67.50 J   13.50 W  the two, added\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
