package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"
)

// aMac is a system on which every check of the doctor passes: an Apple
// Silicon Mac, exopower as root, powermetrics where macOS keeps it, and no
// exopower serve running.
func aMac() system {
	return system{
		goos: "darwin", euid: 0, user: "ada",
		lookPath: func(p string) (string, error) { return p, nil },
		output: func(_ context.Context, name string, args ...string) (string, error) {
			switch strings.Join(append([]string{name}, args...), " ") {
			case "sw_vers -productVersion":
				return "15.5", nil
			case "sw_vers -buildVersion":
				return "24F74", nil
			case "sysctl -n machdep.cpu.brand_string":
				return "Apple M4 Pro", nil
			case "sysctl -n sysctl.proc_translated":
				return "0", nil
			}
			return "", errors.New("not allowed")
		},
		sample: func(context.Context, string) check { return check{name: "test sample", ok: true, detail: "3.2 W"} },
		ioreport: func(context.Context) check {
			return check{name: "ioreport", ok: true, detail: "no root needed: SoC 3.1 W"}
		},
		sideBySide: func(context.Context, string) check {
			return check{name: "side by side", ok: true, detail: "powermetrics / ioreport"}
		},
		processes: func() (attrib.Kernel, error) {
			return &stubKernel{info: attrib.Info{MacOS: "15.5", Chip: "Apple M4 Pro", ProcessEnergy: true, AcceleratorEnergy: true}}, nil
		},
		serveAddr: "127.0.0.1:10241",
		get: func(context.Context, string) (*http.Response, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		},
	}
}

// stubKernel is a kernel's accounting of processes that gives exopower's
// own 1.5 J and two processes' GPU time, or the errors set.
type stubKernel struct {
	info             attrib.Info
	usageErr, gpuErr error
}

func (k *stubKernel) Usage(int32) (attrib.Usage, error) {
	return attrib.Usage{EnergyNJ: 1.5e9}, k.usageErr
}
func (k *stubKernel) GPUTimes([]attrib.GPUTime) ([]attrib.GPUTime, error) {
	return []attrib.GPUTime{{Pid: 1}, {Pid: 2}}, k.gpuErr
}
func (k *stubKernel) Pids([]int32) ([]int32, error)        { return nil, nil }
func (k *stubKernel) Identify(int32) (attrib.Ident, error) { return attrib.Ident{}, nil }
func (k *stubKernel) CoalitionOf(int32) (uint64, error)    { return 0, nil }
func (k *stubKernel) CoalitionUsage(uint64) (attrib.CoalitionUsage, error) {
	return attrib.CoalitionUsage{}, nil
}
func (k *stubKernel) WaitExited(int32) error { return nil }
func (k *stubKernel) Info() attrib.Info      { return k.info }
func (k *stubKernel) Close() error           { return nil }

// answers makes the system's HTTP client get one answer for every URL.
func answers(s *system, code int, contentType, server, body string) {
	s.get = func(context.Context, string) (*http.Response, error) {
		h := http.Header{"Content-Type": {contentType}}
		if server != "" {
			h.Set("Server", server)
		}
		return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Header: h, Body: io.NopCloser(strings.NewReader(body))}, nil
	}
}

// answer makes the system answer one command line with out and err.
func answer(s *system, cmdline, out string, err error) {
	prev := s.output
	s.output = func(ctx context.Context, name string, args ...string) (string, error) {
		if strings.Join(append([]string{name}, args...), " ") == cmdline {
			return out, err
		}
		return prev(ctx, name, args...)
	}
}

// doctorCase breaks a system that passes every check, and says what the
// report must hold then.
type doctorCase struct {
	name   string
	breaks func(*system)
	want   []string
}

// serveCases are the serve check's: no serve running is information, not
// a failure; a serve passes; anything else at its address fails.
func serveCases() []doctorCase {
	return []doctorCase{
		{"serve and the rest pass when an exopower serve answers", func(s *system) {
			answers(s, 200, "application/json", "", `{"node":"mini-1","source":{"tool":"powermetrics"},"uptime_seconds":3725.4,"source_restarts":0,"source_error":null}`)
		}, []string{"ok    serve          exopower serve answers at 127.0.0.1:10241: node mini-1, up 1h2m5s\n"}},
		{"serve fails when something else answers at its address", func(s *system) {
			answers(s, 404, "text/html", "nginx/1.25.3", "<html>\n<head><title>404 Not Found</title></head>")
		}, []string{`FAIL  serve          something else answers at 127.0.0.1:10241: HTTP 404 Not Found, Server nginx/1.25.3, text/html, "<html>"`,
			"fix: exopower serve listens there by default", "fix: see what listens there: sudo lsof -nP -iTCP:10241 -sTCP:LISTEN"}},
		{"serve fails when JSON other than exopower's answers", func(s *system) {
			answers(s, 200, "application/json", "", `{"status":"ok"}`)
		}, []string{`FAIL  serve          something else answers at 127.0.0.1:10241: HTTP 200 OK, application/json, "{\"status\":\"ok\"}"`}},
		{"serve fails when something takes connections but does not answer", func(s *system) {
			s.get = func(context.Context, string) (*http.Response, error) {
				return nil, &url.Error{Op: "Get", URL: "http://127.0.0.1:10241/v1/status", Err: context.DeadlineExceeded}
			}
		}, []string{"FAIL  serve          something at 127.0.0.1:10241 took connections but gave no answer within 1s"}},
	}
}

// Each check of the doctor can fail, and says how to fix it.
func TestEveryDoctorCheckCanFail(t *testing.T) {
	tests := []doctorCase{
		{"all pass on an Apple Silicon Mac as root", func(*system) {}, []string{"ok    macOS          15.5 (24F74)", "ok    Apple Silicon  Apple M4 Pro",
			"ok    processes      macOS 15.5, Apple M4 Pro: the kernel measures each process's CPU energy (exopower's own so far: 1.500 J); the GPU's time of 2 processes; coalitions carry",
			"info  serve          not running: nothing listens at 127.0.0.1:10241 (optional", "exopower can measure on this machine"}},
		{"macOS fails elsewhere", func(s *system) { s.goos = "linux" }, []string{"FAIL  macOS          this is linux", "fix: exopower measures on macOS"}},
		{"macOS fails when sw_vers does", func(s *system) {
			answer(s, "sw_vers -productVersion", "", errors.New("exit status 1"))
		}, []string{"FAIL  macOS          sw_vers failed: exit status 1"}},
		{"Apple Silicon fails under Rosetta", func(s *system) {
			answer(s, "sysctl -n sysctl.proc_translated", "1", nil)
		}, []string{"FAIL  Apple Silicon  Apple M4 Pro, but exopower runs under Rosetta", "fix: install the arm64 build"}},
		{"Apple Silicon fails on an Intel Mac", func(s *system) {
			answer(s, "sysctl -n machdep.cpu.brand_string", "Intel(R) Core(TM) i9-9880H", nil)
		}, []string{"FAIL  Apple Silicon  Intel(R) Core(TM) i9-9880H: an Intel Mac"}},
		{"powermetrics fails when it is not found", func(s *system) {
			s.lookPath = func(string) (string, error) { return "", exec.ErrNotFound }
		}, []string{"FAIL  powermetrics   not found at /usr/bin/powermetrics"}},
		{"privileges fail without root when sudo -n will not run powermetrics", func(s *system) { s.euid = 501 }, []string{
			"FAIL  privileges     not root, and sudo -n will not run /usr/bin/powermetrics without a password",
			"fix:   ada ALL=(root) NOPASSWD: /usr/bin/powermetrics"}},
		{"privileges pass without root when sudo -n will run powermetrics", func(s *system) {
			s.euid = 501
			answer(s, "sudo -n -l /usr/bin/powermetrics", "/usr/bin/powermetrics", nil)
		}, []string{"ok    privileges     not root: exopower runs powermetrics through sudo -n"}},
		{"processes pass for information on a Mac without process energy", func(s *system) {
			s.processes = func() (attrib.Kernel, error) {
				return &stubKernel{info: attrib.Info{MacOS: "12.7", Chip: "Apple M1"}}, nil
			}
		}, []string{"info  processes      this Mac keeps no energy per process (macOS 12.7, Apple M1): run --attribute needs macOS 13 or later"}},
		{"processes pass for information where the binding cannot load", func(s *system) {
			s.processes = func() (attrib.Kernel, error) { return nil, errors.New("no libSystem") }
		}, []string{"info  processes      run --attribute cannot read processes' energy here: no libSystem"}},
		{"processes fail when exopower's own cannot be read", func(s *system) {
			s.processes = func() (attrib.Kernel, error) {
				return &stubKernel{info: attrib.Info{MacOS: "15.5", Chip: "Apple M4 Pro", ProcessEnergy: true}, usageErr: attrib.ErrNotPermitted}, nil
			}
		}, []string{"FAIL  processes      macOS 15.5 keeps energy per process, but exopower's own could not be read: not permitted", "fix: run --attribute will fail"}},
		{"the test sample fails when powermetrics does", func(s *system) {
			s.sample = func(context.Context, string) check {
				return check{name: "test sample", detail: "powermetrics ended before its first sample", fixes: []string{"check"}}
			}
		}, []string{"FAIL  test sample    powermetrics ended before its first sample"}},
	}
	for _, tt := range append(tests, serveCases()...) {
		t.Run(tt.name, func(t *testing.T) {
			sys := aMac()
			tt.breaks(&sys)
			var out bytes.Buffer
			err := run(context.Background(), &cli.Streams{Out: &out, Getenv: func(string) string { return "" }}, sys, "/usr/bin/powermetrics")
			fails, want := strings.Count(out.String(), "FAIL"), 1
			switch {
			case strings.HasPrefix(tt.name, "all pass"), strings.Contains(tt.name, " pass "):
				want = 0
			case sys.goos != "darwin":
				want = 2 // not macOS, so not an Apple Silicon Mac either
			}
			if fails != want || (err == nil) != (fails == 0) {
				t.Errorf("%d failed checks and error %v; want %d, and an error exactly when one fails", fails, err, want)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// The serve check asks over HTTP, and tells a closed port, something else
// and something silent apart.
func TestDoctorServeCheckOverHTTP(t *testing.T) {
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>Grafana</title>")
	}))
	defer html.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close() // its connections wait in the backlog, never answered
	tests := []struct {
		name, addr string
		ok, info   bool
		detail     string
	}{
		{"a closed port is information: no serve runs", closed, true, true, "not running: nothing listens at " + closed},
		{"another web server fails, named", html.Listener.Addr().String(), false, false, `HTTP 200 OK, text/html, "<!doctype html><title>Grafana</title>"`},
		{"a listener that never answers fails", silent.Addr().String(), false, false, "took connections but gave no answer within 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := system{serveAddr: tt.addr, get: httpGet}.checkServe(context.Background())
			if c.ok != tt.ok || c.info != tt.info || !strings.Contains(c.detail, tt.detail) {
				t.Errorf("ok %v, info %v, %q; want ok %v, info %v, and %q", c.ok, c.info, c.detail, tt.ok, tt.info, tt.detail)
			}
		})
	}
}

// The two sources are held against each other: within 10 % they pass,
// beyond it they fail with what to send; energies below a tenth of a
// joule, which the millijoules' rounding alone sets apart, are shown but
// not judged; the system's power is named beside the SoC's.
func TestTheSourcesSideBySide(t *testing.T) {
	res := func(cpu, gpu, ane, system float64) sampler.Result {
		r := sampler.Result{Duration: 3 * time.Second, Energy: power.Values{CPU: cpu, GPU: gpu, ANE: ane}.Summed()}
		r.Average = r.Energy.Scale(1.0 / 3)
		if system > 0 {
			r.Has.System, r.Energy.System, r.Average.System = true, system*3, system
		}
		return r
	}
	pass := compared(res(12, 3, 0.05, 0), res(12.6, 2.9, 0.08, 40))
	if !pass.ok || !strings.Contains(pass.detail, "CPU 12.00 J / 12.60 J (1.050)") || strings.Contains(pass.detail, "ANE 0.050 J / 0.080 J (") ||
		!strings.Contains(pass.detail, "the system draws 40.00 W beside the SoC's 5.193 W") {
		t.Errorf("within 10 %%: %+v", pass)
	}
	fail := compared(res(12, 3, 0.5, 0), res(12, 3.6, 0.5, 0))
	if fail.ok || !strings.Contains(fail.detail, "GPU 3.000 J / 3.600 J (1.200)") || len(fail.fixes) != 1 {
		t.Errorf("20 %% apart: %+v", fail)
	}
	if c := (system{euid: 501}).compare(context.Background(), ""); !c.ok || !c.info {
		t.Errorf("not root: %+v, want information", c)
	}
}
