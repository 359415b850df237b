package main

import (
	"strings"
	"testing"
)

// exopower doctor finds a running exopower serve by its status, at the
// address --serve gives.
func TestDoctorFindsARunningServe(t *testing.T) {
	t.Parallel()
	addr := startServe(t, "0=4,1,0.5", nil, "--node-name", "doctor-test").addr
	cmd, _ := exopowerCmd(t, "doctor", "--serve", addr)
	out, _ := cmd.Output()
	want := "ok    serve          exopower serve answers at " + addr + ": node doctor-test, up "
	if !strings.Contains(string(out), want) {
		t.Errorf("no %q in:\n%s", want, out)
	}
	if strings.Contains(string(out), "FAIL  serve") {
		t.Errorf("serve check failed:\n%s", out)
	}
}
