package attrib

import (
	"testing"
	"time"
)

// gpuOnly is a Kernel that gives the GPU times it is set to.
type gpuOnly struct {
	Kernel
	times []GPUTime
}

func (g *gpuOnly) GPUTimes(buf []GPUTime) ([]GPUTime, error) { return append(buf[:0], g.times...), nil }

// A process that closes one of its clients of the GPU reads less GPU time
// than before: nothing is known of that poll's time, and no more than
// that is lost. Counting the process's whole time again (as for a pid
// taken by a new process) gave a browser's hour to one poll.
func TestAClientClosedLosesOnePollOfGPUTime(t *testing.T) {
	k := &gpuOnly{times: []GPUTime{{Pid: 10, Time: time.Hour}, {Pid: 20, Time: 0}}}
	tree := map[int32]*proc{20: {}}
	var g gpuShare
	g.poll(k, tree, true, false)
	// The browser (10) closes a client of 0.15 s, and uses 0.1 s more;
	// the tree's process (20) uses 0.1 s.
	k.times = []GPUTime{{Pid: 10, Time: time.Hour - 150*time.Millisecond + 100*time.Millisecond}, {Pid: 20, Time: 100 * time.Millisecond}}
	g.poll(k, tree, false, false)
	k.times[0].Time += 100 * time.Millisecond
	k.times[1].Time += 100 * time.Millisecond
	g.poll(k, tree, false, false)
	if g.tree != 200*time.Millisecond || g.all != 300*time.Millisecond {
		t.Errorf("tree %v of %v, want 200ms of 300ms", g.tree, g.all)
	}
}
