package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// aMac is a system on which every check of the doctor passes: an Apple
// Silicon Mac, exopower as root, powermetrics where macOS keeps it.
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

// Each check of the doctor can fail, and says how to fix it.
func TestEveryDoctorCheckCanFail(t *testing.T) {
	tests := []struct {
		name   string
		breaks func(*system)
		want   []string
	}{
		{"all pass on an Apple Silicon Mac as root", func(*system) {}, []string{"ok    macOS          15.5 (24F74)", "ok    Apple Silicon  Apple M4 Pro", "exopower can measure on this machine"}},
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
		{"the test sample fails when powermetrics does", func(s *system) {
			s.sample = func(context.Context, string) check {
				return check{name: "test sample", detail: "powermetrics ended before its first sample", fixes: []string{"check"}}
			}
		}, []string{"FAIL  test sample    powermetrics ended before its first sample"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := aMac()
			tt.breaks(&sys)
			var out bytes.Buffer
			err := runDoctor(context.Background(), &streams{Out: &out, Getenv: func(string) string { return "" }}, sys, "/usr/bin/powermetrics")
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
