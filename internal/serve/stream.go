package serve

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// windows streams the windows as they come: GET /v1/windows answers with
// NDJSON, one line per window (the lines of exopower watch --json, with
// the node's name; energy cumulative from the stream's start), flushed as
// each comes, until the client goes. It holds a span open meanwhile, and
// counts against MaxOpenSpans. A slow client gets what every live output
// gets (output.Feed): sampling never waits for it, and beyond
// output.FeedSize windows behind it misses some, whose energy the next
// line it gets holds.
func (s *Server) windows(w http.ResponseWriter, r *http.Request) {
	if !s.reserve(w, &s.streams) {
		return
	}
	lines := output.NewFeed[wire.SampleLine]()
	sp := s.meter.Begin(r.Context(), func(win sampler.Window, tot sampler.Totals) {
		l := output.NewSampleLine(win, tot)
		l.Node = s.cfg.Node
		lines.Put(l)
	})
	defer func() {
		s.mu.Lock()
		s.streams--
		s.mu.Unlock()
		// No wait for a window: nobody reads this span's result.
		ctx, cancel := contextDone()
		defer cancel()
		s.meter.End(ctx, sp, s.cfg.Now())
	}()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	enc := json.NewEncoder(w)
	for {
		select {
		case <-r.Context().Done():
			return
		case l := <-lines.C():
			// The server's write timeout is for answers; a stream lives
			// as long as its client reads, one line at a time.
			rc.SetWriteDeadline(time.Now().Add(s.cfg.Interval + 10*time.Second))
			if enc.Encode(l) != nil || rc.Flush() != nil {
				return
			}
		}
	}
}
