#!/usr/bin/env bash
# Records a real powermetrics stream on an Apple Silicon Mac, with exactly
# the flags exopower uses, for testdata/ or a bug report:
#
#   sudo scripts/record-fixture.sh [COUNT] [INTERVAL_MS] > testdata/real-<chip>-<macos>.plist
#
# COUNT documents (default 5) at INTERVAL_MS (default 100). The flags come
# from exopower itself (`exopower debug-args`), so a fixture can never be
# recorded with flags other than the ones exopower runs powermetrics with.
set -euo pipefail
count=${1:-5}
interval=${2:-100}
[ "$(uname -s)" = Darwin ] || { echo "record-fixture: needs a Mac (powermetrics is macOS only)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "record-fixture: powermetrics needs root: sudo $0 $*" >&2; exit 2; }
cd "$(dirname "$0")/.."
read -r -a args < <(go run ./cmd/exopower debug-args --interval "${interval}ms")
echo "record-fixture: $(sw_vers -productVersion) $(sysctl -n hw.model): powermetrics ${args[*]} -n $count" >&2
exec /usr/bin/powermetrics "${args[@]}" -n "$count"
