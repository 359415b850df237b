package keys

import "time"

// aLongTimeAgo is a read deadline in the past: it ends a read that is
// waiting, where the terminal can be polled.
var aLongTimeAgo = time.Unix(1, 0)
