#!/usr/bin/env bash
# exopower's benchmarks, side by side, in one run, as ratios to baselines
# measured in the same run on the same machine:
#   - decoding: exopower's decoder against a full howett.net/plist decode
#     and (where python3 exists) Python's plistlib, on the same bytes;
#   - the integrator and the whole pipeline (decoder + sampler) per sample;
#   - memory over 1,000,000 windows;
#   - exopower watch's own CPU, as a ratio to the least a live meter
#     does (scripts/read-floor), on powermetrics (the fake) and on IOReport
#     (the fake, in cmd/exopower's test binary) (scripts/cpu-bench);
#   - the time from the command's exit to exopower's exit.
# Usage: scripts/bench.sh [BENCHTIME]   (default 1s; go test -benchtime)
#        scripts/bench.sh --cpu         (the CPU against the floor only)
# BENCH_ROUNDS, BENCH_WINDOWS and BENCH_INTERVAL set the CPU comparison's
# rounds (30), their windows (200) and the interval (20ms); BENCH_LAYOUT
# the fake's chip (m1, the commonest Mac; ultra, the largest documents).
set -euo pipefail
cd "$(dirname "$0")/.."
cpu_only=false
if [ "${1:-}" = --cpu ]; then cpu_only=true; shift; fi
benchtime=${1:-1s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "machine: $(uname -sm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //' || sysctl -n machdep.cpu.brand_string), $(go version | cut -d' ' -f3)"
go build -o "$tmp/exopower" ./cmd/exopower
go build -o "$tmp/fake-powermetrics" ./scripts/fake-powermetrics

if ! $cpu_only; then
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
fi # ! $cpu_only

echo
echo "== exopower watch's CPU a window against the least a live meter does (scripts/cpu-bench)"
# scripts/read-floor reads the same source, pulls four numbers from each
# reading and writes a JSON line: what exopower spends beyond it is the
# work of measuring well. cpu-bench runs both at once, each on its own
# source, and takes the ratio over the same blocks of 10 windows; rounds
# of BENCH_WINDOWS windows (200) at BENCH_INTERVAL (20ms), BENCH_ROUNDS
# of them (30: fewer cannot tell 10 %); BENCH_VS names a second exopower build to measure beside
# this one (and, for IOReport, BENCH_VS_TEST its test binary).
go build -o "$tmp/read-floor" ./scripts/read-floor
go build -o "$tmp/cpu-bench" ./scripts/cpu-bench
go test -c -o "$tmp/exopower.test" ./cmd/exopower
cpu_args=(-rounds "${BENCH_ROUNDS:-30}" -windows "${BENCH_WINDOWS:-200}" -interval "${BENCH_INTERVAL:-20ms}" -floor "$tmp/read-floor")
if ! [ -r /proc/self/schedstat ]; then
  echo "skipped: needs Linux's /proc/PID/task/*/schedstat"
else
  "$tmp/cpu-bench" "${cpu_args[@]}" -source powermetrics -layout "${BENCH_LAYOUT:-m1}" \
    -exopower "$tmp/exopower" -fake "$tmp/fake-powermetrics" ${BENCH_VS:+-vs "$BENCH_VS"}
  echo
  "$tmp/cpu-bench" "${cpu_args[@]}" -source ioreport -exopower "$tmp/exopower.test" ${BENCH_VS_TEST:+-vs "$BENCH_VS_TEST"}
fi

$cpu_only && exit 0

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
