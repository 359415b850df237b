package source

import "time"

// began is when this process started, on time.Now's clock (so with its
// monotonic reading), or the zero time when the system does not say. A
// pipe's producer started beside exopower: its first documents cannot
// cover much more time than has passed since (see sampler.Config.Began).
func began() time.Time {
	up, ok := uptime()
	if !ok || up < 0 {
		return time.Time{}
	}
	return time.Now().Add(-up)
}
