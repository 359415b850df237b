package attrib

import "time"

// gpuShare adds up the GPU time of the tree's processes and of every
// process, between polls. A process's GPU time is the sum over its
// clients of the GPU, which go when it closes them or ends: the time of
// a client between the last poll and its end is not seen.
type gpuShare struct {
	buf        []GPUTime
	prev, next map[int32]time.Duration
	tree, all  time.Duration
	polls      int   // the readings that succeeded
	failed     int   // and those that did not
	err        error // why the last one that failed did
}

// poll reads every process's GPU time and adds what each used since the
// last poll. At the first poll every process counts from here, except
// the tree's when it counts from birth.
func (g *gpuShare) poll(k Kernel, tree map[int32]*proc, first, fromBirth bool) {
	var err error
	if g.buf, err = k.GPUTimes(g.buf); err != nil {
		// The times are cumulative: the next reading takes in what
		// this one missed, but for clients that close meanwhile.
		g.failed, g.err = g.failed+1, err
		return
	}
	if g.prev == nil {
		g.prev, g.next = map[int32]time.Duration{}, map[int32]time.Duration{}
	}
	clear(g.next)
	for _, c := range g.buf {
		g.next[c.Pid] += c.Time
	}
	for pid, now := range g.next {
		// A process's time goes down when it closes one of its
		// clients, or when another process has its pid: either way
		// nothing is known of the time since the last poll, and it
		// counts from here.
		d := max(now-g.prev[pid], 0)
		if first && (!fromBirth || tree[pid] == nil) {
			d = 0
		}
		g.all += d
		if tree[pid] != nil {
			g.tree += d
		}
	}
	g.prev, g.next = g.next, g.prev
	g.polls++
}
