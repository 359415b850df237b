// Command read-floor is the least a live power meter can do, the floor
// under exopower watch's CPU that scripts/cpu-bench measures it against:
// it reads its source, pulls four numbers from each reading and writes them
// as a JSON line, and does nothing else: no checks, no integration, no
// summary. What exopower spends beyond it is the work of measuring well.
//
// From powermetrics (the default), it reads a -f plist stream: stdin, or
// the stdout of a command it starts (as exopower starts powermetrics),
// cuts it into documents at each </plist> and takes the first elapsed_ns,
// cpu_power, gpu_power and ane_power of each.
//
// From IOReport (-ioreport INTERVAL), it opens the fake IOReport that
// exopower's tests read (over FAKEPM_PROFILE), selects the CPU, GPU, ANE
// and DRAM counters, and at each tick of INTERVAL reads them and writes
// each one's power since the tick before.
//
// To be a fair floor, it pays for what exopower must pay for to get the
// readings, and for nothing more:
//
//   - One P (runtime.GOMAXPROCS(1)), as exopower sets for itself: the
//     runtime's wake-ups per reading are then the same in both. With more
//     Ps the floor would wake a second thread to hand each read over and
//     cost more than exopower, which would flatter exopower.
//   - The stream through the runtime's poller, as exopower reads
//     powermetrics's stdout: a command's stdout through os.Pipe; stdin
//     through a non-blocking duplicate. A blocking read would save the
//     poller's epoll_wait and be cheaper than any reader that can be
//     stopped by closing its file, which exopower must be.
//   - Reads of 64 KiB, the pipe's capacity and exopower's read size
//     (internal/powermetrics readChunk): one read takes whatever the pipe
//     holds, so the floor reads no more often than exopower does.
//   - A write(2) per line, as a live view on a pipe must.
//
// Usage: read-floor [COMMAND [ARG...]]
//
//	read-floor -ioreport INTERVAL
package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
)

func main() {
	runtime.GOMAXPROCS(1)
	var err error
	if len(os.Args) == 3 && os.Args[1] == "-ioreport" {
		err = fromIOReport(os.Args[2])
	} else {
		err = fromPowermetrics(os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "read-floor:", err)
		os.Exit(1)
	}
}

// fromPowermetrics reads the stream of the command args, or stdin, to its
// end.
func fromPowermetrics(args []string) error {
	f, cmd, err := open(args)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var pending, line []byte
	end := []byte("</plist>")
	for {
		n, err := f.Read(buf)
		pending = append(pending, buf[:n]...)
		for {
			i := bytes.Index(pending, end)
			if i < 0 {
				break
			}
			line = appendLine(line[:0], pending[:i])
			if _, err := os.Stdout.Write(line); err != nil {
				return err
			}
			pending = pending[:copy(pending, pending[i+len(end):])]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if cmd != nil {
		return cmd.Wait()
	}
	return nil
}

// open is the stream to read: the stdout of the command args through
// os.Pipe, or a non-blocking duplicate of stdin.
func open(args []string) (*os.File, *exec.Cmd, error) {
	if len(args) > 0 {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, nil, err
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdout, cmd.Stderr = w, os.Stderr
		err = cmd.Start()
		w.Close()
		return r, cmd, err
	}
	fd, err := syscall.Dup(0)
	if err != nil {
		return nil, nil, err
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fd), "stdin"), nil, nil
}

var keys = [4]string{"elapsed_ns", "cpu_power", "gpu_power", "ane_power"}

// appendLine appends the JSON line of one document: the first value of
// each of keys, 0 where it is missing.
func appendLine(line, doc []byte) []byte {
	line = append(line, '{')
	for i, k := range keys {
		if i > 0 {
			line = append(line, ',')
		}
		line = strconv.AppendQuote(line, k)
		line = append(line, ':')
		line = strconv.AppendFloat(line, valueOf(doc, k), 'f', -1, 64)
	}
	return append(line, '}', '\n')
}

// valueOf is the number in the element after <key>k</key> in doc.
func valueOf(doc []byte, k string) float64 {
	i := bytes.Index(doc, []byte("<key>"+k+"</key>"))
	if i < 0 {
		return 0
	}
	rest := doc[i+len(k)+11:]
	open := bytes.IndexByte(rest, '>')
	if open < 0 {
		return 0
	}
	rest = rest[open+1:]
	shut := bytes.IndexByte(rest, '<')
	if shut < 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(string(rest[:shut]), 64)
	return v
}

// rails are the fake IOReport's channels of the four rails, and what each
// one's unit is in joules.
var rails = [4]struct {
	name, key string
	joule     float64
}{{"CPU Energy", `,"cpu_watts":`, 1e-3}, {"GPU Energy", `,"gpu_watts":`, 1e-9}, {"ANE", `,"ane_watts":`, 1e-3}, {"DRAM", `,"dram_watts":`, 1e-3}}

// fromIOReport reads the fake IOReport at each tick of interval until it
// is killed.
func fromIOReport(interval string) error {
	every, err := time.ParseDuration(interval)
	if err != nil {
		return err
	}
	prof, err := fakepm.ParseProfile(cmp.Or(os.Getenv("FAKEPM_PROFILE"), fakepm.DefaultProfile))
	if err != nil {
		return err
	}
	lib := fakepm.NewLiveIOReport(fakepm.LivePower{Profile: prof}, "", nil)
	channels, err := lib.Subscribe()
	if err != nil {
		return err
	}
	var index [4]int
	for r, rail := range rails {
		index[r] = -1
		for i, c := range channels {
			if c.Name == rail.name {
				index[r] = i
			}
		}
		if index[r] < 0 {
			return fmt.Errorf("no channel %q", rail.name)
		}
	}
	lib.Select(index[:])
	return tick(lib, index, len(channels), every)
}

// tick writes a line of the four rails' power at each tick of every.
func tick(lib *fakepm.IOReport, index [4]int, n int, every time.Duration) error {
	now, before := make([]int64, n), make([]int64, n)
	if err := lib.Read(before); err != nil {
		return err
	}
	last := time.Now()
	var line []byte
	for t := range time.Tick(every) {
		if err := lib.Read(now); err != nil {
			return err
		}
		dt := t.Sub(last).Seconds()
		line = append(line[:0], `{"seconds":`...)
		line = strconv.AppendFloat(line, dt, 'g', -1, 64)
		for r, i := range index {
			line = append(line, rails[r].key...)
			line = strconv.AppendFloat(line, float64(now[i]-before[i])*rails[r].joule/dt, 'g', -1, 64)
		}
		line = append(line, '}', '\n')
		if _, err := os.Stdout.Write(line); err != nil {
			return err
		}
		now, before, last = before, now, t
	}
	return nil
}
