package fakepm

import (
	"bufio"
	"io"
	"math"
	"time"

	"github.com/exopower/exopower/internal/ioreport"
)

// BenchRecordingStart is when the readings of WriteBenchRecording begin:
// a whole second, so that a recording's times read the same wherever it
// is made.
var BenchRecordingStart = time.Unix(1796300000, 0)

// WriteBenchRecording writes an IOReport recording of n readings of one
// channel, the CPU's in mJ, taken every interval from BenchRecordingStart,
// whose counter is the exact energy of prof's CPU since the first reading,
// cut to whole millijoules. It is what exopower record writes on a Mac
// whose Energy Model has that one channel: the report benchmarks make a
// recording of any length from it, rather than keep one in the
// repository.
func WriteBenchRecording(w io.Writer, prof Profile, interval time.Duration, n int) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	channels := []ioreport.Channel{{Group: ioreport.Group, Name: "CPU Energy", Unit: "mJ"}}
	// The recorder flushes each line to what it is given: a writer that is
	// not itself a bufio.Writer keeps those flushes in bw's memory.
	rec, err := ioreport.NewRecorder(struct{ io.Writer }{bw}, ioreport.Header{HWModel: "Mac14,14", OSBuild: "24F74", IntervalSeconds: interval.Seconds()}, channels)
	if err != nil {
		return err
	}
	values := make([]int64, 1)
	for k := range n {
		at := BenchRecordingStart.Add(time.Duration(k) * interval)
		values[0] = int64(math.Floor(prof.Energy(BenchRecordingStart, at)[0] * 1000))
		if err := rec.Write(ioreport.Reading{At: at, Unix: at, Values: values}, BenchRecordingStart); err != nil {
			return err
		}
	}
	return bw.Flush()
}
