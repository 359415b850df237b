package wall_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/wall"
)

// serveEnv makes the test binary a fake plug of the kind it names, in a
// process of its own, so that a benchmark's CPU is the meter's alone.
const serveEnv = "WALL_TEST_SERVE_FAKEPLUG"

func TestMain(m *testing.M) {
	if kind := os.Getenv(serveEnv); kind != "" {
		serveFake(fakeplug.Kind(kind))
		return
	}
	os.Exit(m.Run())
}

// serveFake serves a fake plug, writes its URL, and ends when its stdin
// does.
func serveFake(kind fakeplug.Kind) {
	cfg := fakeplug.Config{Kind: kind, Profile: fakeplug.Constant(25), Token: token, HAPower: true}
	if strings.HasSuffix(string(kind), "+auth") {
		cfg.Kind, cfg.Password = fakeplug.Kind(strings.TrimSuffix(string(kind), "+auth")), password
	}
	u, stop, err := fakeplug.New(cfg).Start("127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(u)
	bufio.NewReader(os.Stdin).ReadString('\n')
	stop()
}

// startFakeProcess starts a fake plug in another process and returns its
// URL; the process ends, and is waited for, at the benchmark's end.
func startFakeProcess(b *testing.B, kind string) string {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"="+kind)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("fake plug: %v", err)
	}
	return strings.TrimSpace(line)
}

// cpu is the process's CPU time so far, user and system.
func cpu(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPoll is one poll of a plug by a Meter: the request, its
// answer decoded and checked, the reading kept. It reports the CPU of
// this process per poll (the fake answers from another) and what share
// of a core that is at one poll a second.
func BenchmarkPoll(b *testing.B) {
	kinds := []struct{ name, kind string }{
		{"shelly-gen2", "shelly-gen2"}, {"shelly-gen2-digest", "shelly-gen2+auth"}, {"shelly-gen1", "shelly-gen1"},
		{"tasmota", "tasmota"}, {"home-assistant", "home-assistant"}, {"kasa", "kasa"},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			target, err := wall.Parse(startFakeProcess(b, k.kind))
			if err != nil {
				b.Fatal(err)
			}
			p, err := wall.Open(context.Background(), target, wall.Credentials{Password: password, Token: token})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			m := wall.NewMeter(p, time.Second, nil)
			ctx := context.Background()
			before := cpu(b)
			for b.Loop() {
				if err := m.Poll(ctx); err != nil {
					b.Fatal(err)
				}
			}
			perPoll := float64(cpu(b)-before) / float64(b.N) / 1e3
			b.ReportMetric(perPoll, "cpu-µs/poll")
			b.ReportMetric(perPoll/1e6*100, "%core@1Hz")
		})
	}
}
