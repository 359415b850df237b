#!/usr/bin/env bash
# exopower's benchmarks, side by side, in one run, as ratios to baselines
# measured in the same run on the same machine:
#   - decoding: exopower's decoder against a full howett.net/plist decode
#     and (where python3 exists) Python's plistlib, on the same bytes;
#   - the integrator and the whole pipeline (decoder + sampler) per sample;
#   - memory over 1,000,000 windows;
#   - exopower's own CPU while it samples every 100 ms, against cat and a
#     five-line Go program reading the same stream;
#   - the time from the command's exit to exopower's exit.
# Usage: scripts/bench.sh [BENCHTIME]   (default 1s; go test -benchtime)
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime=${1:-1s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "machine: $(uname -sm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //' || sysctl -n machdep.cpu.brand_string), $(go version | cut -d' ' -f3)"
go build -o "$tmp/exopower" ./cmd/exopower
go build -o "$tmp/fake-powermetrics" ./scripts/fake-powermetrics
mkdir "$tmp/docs"
FAKEPM_WRITE_BENCH_DOCS="$tmp/docs" "$tmp/fake-powermetrics" -f plist

echo
echo "== decoding one document (ns per document; ratio = time / exopower's)"
EXOPOWER_BENCH_DOCS="$tmp/docs" go test -run '^$' -bench '^BenchmarkParse$' -benchtime "$benchtime" ./internal/powermetrics/ >"$tmp/parse.txt"
python_ns() {
  command -v python3 >/dev/null || { echo "-"; return; }
  python3 - "$1" <<'PY'
import plistlib, sys, time
doc = open(sys.argv[1], "rb").read()
best = None
for _ in range(5):
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 0.4:
        plistlib.loads(doc)
        n += 1
    ns = (time.perf_counter() - t0) / n * 1e9
    best = ns if best is None else min(best, ns)
print(int(best))
PY
}
printf '%-24s %8s %12s %14s %8s %14s %8s\n' document KB exopower "howett full" ratio "py plistlib" ratio
for f in "$tmp"/docs/*.plist; do
  name=$(basename "$f" .plist)
  kb=$(( $(wc -c <"$f") / 1024 ))
  fast=$(awk -v n="BenchmarkParse/$name/fast" 'index($1, n) == 1 {print int($3)}' "$tmp/parse.txt")
  full=$(awk -v n="BenchmarkParse/$name/full" 'index($1, n) == 1 {print int($3)}' "$tmp/parse.txt")
  py=$(python_ns "$f")
  pyratio="-"
  [ "$py" != "-" ] && pyratio=$(awk -v a="$py" -v b="$fast" 'BEGIN {printf "%.0fx", a / b}')
  printf '%-24s %8d %12s %14s %8s %14s %8s\n' "$name" "$kb" "$fast" "$full" \
    "$(awk -v a="$full" -v b="$fast" 'BEGIN {printf "%.0fx", a / b}')" "$py" "$pyratio"
done

echo
echo "== integrator, pipeline, memory"
go test -run '^$' -bench '^BenchmarkAccumulatorAdd$' -benchtime "$benchtime" ./internal/trapz/ | grep '^Benchmark'
go test -run '^$' -bench '^BenchmarkDecoder$' -benchtime "$benchtime" ./internal/powermetrics/ | grep '^Benchmark'
go test -run '^$' -bench '^BenchmarkPipeline$' -benchtime "$benchtime" ./internal/sampler/ | grep '^Benchmark'
go test -run '^$' -bench '^BenchmarkMillionWindows$' -benchtime 1x ./internal/sampler/ | grep '^Benchmark'

echo
echo "== CPU of the process reading 20 s of an M2 Ultra's stream at 100 ms (task-clock; median of 3)"
cat >"$tmp/gocat.go" <<'GO'
package main

import (
	"io"
	"os"
)

func main() { io.Copy(io.Discard, os.Stdin) }
GO
(cd "$tmp" && go mod init gocat >/dev/null 2>&1 && go build -o gocat gocat.go)
# cpu_of PID: the CPU time of that process alone until it exits, in ms,
# and its context switches: perf's task-clock and context-switches where
# perf works, else /proc's ticks (10 ms: coarse, but the process's own) and
# no count of switches. The switches are the figure that carries over to
# another machine: each one is a wake-up, whose price varies from machine to
# machine (and is high on a virtual one).
cpu_of() {
  local pid=$1
  if perf stat -e task-clock true >/dev/null 2>&1; then
    sleep 0.2
    perf stat -e task-clock,context-switches -x, -p "$pid" -o "$tmp/perf" 2>/dev/null &
    local perfpid=$!
    wait "$pid" || true
    sleep 0.1
    kill -INT "$perfpid" 2>/dev/null; wait "$perfpid" 2>/dev/null || true
    awk -F, '/task-clock/ {ms = $1} /context-switches/ {cs = $1} END {printf "%.1f %s", ms, cs}' "$tmp/perf"
  else
    local last=""
    while kill -0 "$pid" 2>/dev/null; do last=$(cat /proc/$pid/stat 2>/dev/null || echo "$last"); sleep 0.2; done
    wait "$pid" || true
    echo "$last" | sed 's/.*) //' | awk -v t="$(getconf CLK_TCK)" '{printf "%.1f -", ($12 + $13) * 1000 / t}'
  fi
}
cpu_ms() { # the CPU of a consumer of 200 samples at 100 ms, in ms, and its switches
  FAKEPM_LAYOUT=ultra "$tmp/fake-powermetrics" -f plist -i 100 -n 200 2>/dev/null | "$@" >/dev/null 2>&1 &
  cpu_of $!
}
median3() { # the middle of three runs of a measurement, by CPU
  { "$@"; echo; "$@"; echo; "$@"; echo; } | sort -n | sed -n 2p
}
row() { # row LABEL "MS SWITCHES" BASE_MS
  local ms=${2% *} cs=${2#* }
  printf '%-28s %10s ms  %.3f%% of a core  %5.2fx the Go reader  %s switches a sample\n' "$1" "$ms" \
    "$(awk -v m="$ms" 'BEGIN {print m / 200}')" "$(awk -v m="$ms" -v b="$3" 'BEGIN {print m / b}')" \
    "$(awk -v c="$cs" 'BEGIN {if (c == "-") print "-"; else printf "%.1f", c / 200}')"
}
base=$(median3 cpu_ms "$tmp/gocat")
row "Go io.Copy reader (baseline)" "$base" "${base% *}"
# exopower run, measuring sleep 20 with the fake powermetrics: its own
# process only, not powermetrics's nor the command's.
run_ms() {
  SUDO_UID=0 EXOPOWER_POWERMETRICS="$tmp/fake-powermetrics" FAKEPM_LAYOUT=ultra \
    "$tmp/exopower" run -i 100ms -o "$tmp/run.json" -- sleep 20 &
  cpu_of $!
}
row cat "$(median3 cpu_ms cat)" "${base% *}"
row "exopower watch --from -" "$(median3 cpu_ms "$tmp/exopower" watch --from -)" "${base% *}"
row "exopower run -- sleep 20" "$(median3 run_ms)" "${base% *}"

echo
echo "== from the command's exit to exopower's exit (ms; 10 runs: median, max)"
latency() {
  local all=()
  for _ in $(seq 10); do
    env SUDO_UID=0 EXOPOWER_POWERMETRICS="$tmp/fake-powermetrics" "$@" "$tmp/exopower" run -i 100ms --json -- \
      sh -c "sleep 0.3; date +%s%N >$tmp/end" >/dev/null 2>&1
    local now; now=$(date +%s%N)
    all+=($(( (now - $(cat "$tmp/end")) / 1000 )))
  done
  printf '%s\n' "${all[@]}" | sort -n | awk '{a[NR] = $1} END {printf "%.1f ms median, %.1f ms max\n", a[int((NR + 1) / 2)] / 1000, a[NR] / 1000}'
}
echo "asking powermetrics for the last sample (root):      $(latency)"
echo "waiting for its next window (-i 100ms, no requests): $(latency FAKEPM_MODE=ignore-signal)"
