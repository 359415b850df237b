package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

func TestReportIsTheOneMessageAndStatusOfAnError(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		status int
		text   string
	}{
		{"nothing wrong", nil, 0, ""},
		{"the command's own status says nothing", Exit(3), 3, ""},
		{"a failure with hints", Fail(errors.New("powermetrics needs root"), "run exopower with sudo"), 125,
			"exopower: error: powermetrics needs root\nexopower: hint: run exopower with sudo\n"},
		{"a failure with the command's status", &Error{Status: 127, Err: errors.New("nosuch: command not found")}, 127,
			"exopower: error: nosuch: command not found\n"},
		{"a message wrapped around a failure keeps its words and the failure's status and hints",
			fmt.Errorf("the summary above was not saved: %w", Fail(errors.New("-o x: directory y does not exist"), "create it first")), 125,
			"exopower: error: the summary above was not saved: -o x: directory y does not exist\nexopower: hint: create it first\n"},
		{"an error of usage from cobra", errors.New(`unknown flag: --nope`), 125,
			"exopower: error: unknown flag: --nope\nexopower: hint: exopower --help shows the usage\n"},
		{"a write to a pipe whose reader went", Wrote("stdout", &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}), 141, ""},
		{"a write that failed names the stream once", Wrote("stdout", &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}), 125,
			"exopower: error: write stdout: no space left on device\n"},
	} {
		var b bytes.Buffer
		if got := Report(&b, c.err); got != c.status || b.String() != c.text {
			t.Errorf("%s: status %d, text %q; want %d, %q", c.name, got, b.String(), c.status, c.text)
		}
	}
}

func TestExitZeroIsNoError(t *testing.T) {
	if err := Exit(0); err != nil {
		t.Errorf("Exit(0) = %v, want nil", err)
	}
}
