#!/usr/bin/env bash
# exopower report over a long recording: the wall time and the peak RSS
# of the process, for the summary, --json and --samples csv and ndjson,
# on an IOReport recording of one channel made for the run (1,000,000
# readings 100 ms apart are 118 MB; scripts/make-recording). The rows are
# written to /dev/null, the summary to a file.
# Usage: scripts/bench-report.sh [READINGS]   (default 1000000)
# EXOPOWER sets the exopower binary to measure (built from this tree
# without it), to compare a build with another on the same input.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "machine: $(uname -sm), $(nproc) cores, $(go version | cut -d' ' -f3)"
exopower=${EXOPOWER:-$tmp/exopower}
[ -n "${EXOPOWER:-}" ] || go build -o "$exopower" ./cmd/exopower
go run ./scripts/make-recording -n "$n" -o "$tmp/readings.ndjson"
echo "input: $n readings, $(wc -c <"$tmp/readings.ndjson") bytes"
for args in "" "--json" "--samples csv" "--samples ndjson"; do
	# shellcheck disable=SC2086 # the flags are words
	/usr/bin/time -f "%e %M" -o "$tmp/time" "$exopower" report $args "$tmp/readings.ndjson" >/dev/null 2>"$tmp/summary"
	read -r wall rss <"$tmp/time"
	printf 'report %-17s %6s s wall  %7.1f MB peak RSS\n' "${args:-(summary)}" "$wall" "$(echo "$rss / 1024" | bc -l)"
done
