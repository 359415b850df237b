#!/usr/bin/env bash
# exopower's benchmarks, side by side, in one run, as ratios to baselines
# measured in the same run on the same machine:
#   - decoding: exopower's decoder against a full howett.net/plist decode
#     and (where python3 exists) Python's plistlib, on the same bytes;
#   - the integrator and the whole pipeline (decoder + sampler) per sample;
#   - memory over 1,000,000 windows;
#   - exopower's own CPU while it samples every 100 ms, as a ratio to a
#     floor: a Go program that only reads the same stream the same way
#     (scripts/read-floor);
#   - the time from the command's exit to exopower's exit.
# Usage: scripts/bench.sh [BENCHTIME]   (default 1s; go test -benchtime)
#        scripts/bench.sh --cpu         (the CPU against the floor only)
# BENCH_ROUNDS and BENCH_SECONDS set the CPU comparison's rounds (7) and
# their length (10 s); BENCH_LAYOUT the fake's chip (ultra, the largest
# documents; m1, the commonest Mac).
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
rounds=${BENCH_ROUNDS:-7} secs=${BENCH_SECONDS:-10} layout=${BENCH_LAYOUT:-ultra}
echo "== CPU while reading a stream of the fake's $layout layout at 100 ms, against the floor ($rounds rounds of $secs s)"
# The floor (scripts/read-floor) reads the stream as exopower does, on one
# P, through the poller, 64 KiB at a time, and does nothing else: what
# exopower spends beyond it is its own work, decoding, integrating and
# printing; the cost of waking a Go program for each sample is in both.
#
# A virtual machine's CPU figures drift by tens of percent from one minute
# to the next, so every round runs all the consumers at once, each on its
# own fake powermetrics (the same seed and a constant power: the same
# windows and documents for all, started 20 ms apart so that their
# wake-ups do not collide), and reads the CPU time of
# each over the same $secs s: the kernel's run time of each of its
# threads (/proc/PID/task/*/schedstat, in ns), which needs no perf, adds
# nothing to the process measured, and leaves start-up and exit out. A
# ratio is taken within each round, where the machine was the same for
# all, and the median of the rounds is reported with their spread. The
# samples in a round are the bytes the floor read over the size of a
# document (the documents of one layout differ by a few bytes).
go build -o "$tmp/read-floor" ./scripts/read-floor
export FAKEPM_PROFILE=0=8,3,0.5
docsize=$(FAKEPM_OFFLINE=1 FAKEPM_LAYOUT=$layout "$tmp/fake-powermetrics" -f plist -n 100 2>/dev/null | wc -c | awk '{print $1 / 100}')
cpu_now() { # PID: its CPU time so far in ns, all threads, and its context switches
  awk 'FNR == 1 && FILENAME ~ /schedstat$/ {ns += $1} /ctxt_switches/ {cs += $2} END {print ns + 0, cs + 0}' \
    /proc/"$1"/task/*/schedstat /proc/"$1"/task/*/status 2>/dev/null || true
}
read_bytes() { awk '$1 == "rchar:" {print $2}' /proc/"$1"/io; }
consumers=(floor cat watch run)
one_round() {
  local -A pid before
  local name
  for name in "${consumers[@]}"; do
    case $name in
      run)
        SUDO_UID=0 EXOPOWER_POWERMETRICS="$tmp/fake-powermetrics" FAKEPM_LAYOUT=$layout \
          "$tmp/exopower" run -i 100ms -o "$tmp/run.json" -- sleep $((secs + 3)) 2>/dev/null &
        ;;
      *)
        local consumer=("$tmp/read-floor")
        [ "$name" = cat ] && consumer=(cat)
        [ "$name" = watch ] && consumer=("$tmp/exopower" watch --from -)
        FAKEPM_LAYOUT=$layout FAKEPM_PIDFILE="$tmp/fake.$name" "$tmp/fake-powermetrics" -f plist -i 100 2>/dev/null |
          "${consumer[@]}" >/dev/null 2>&1 &
        ;;
    esac
    pid[$name]=$!
    sleep 0.02
  done
  sleep 2
  local read0; read0=$(read_bytes "${pid[floor]}")
  for name in "${consumers[@]}"; do before[$name]=$(cpu_now "${pid[$name]}"); done
  sleep "$secs"
  local read1; read1=$(read_bytes "${pid[floor]}")
  for name in "${consumers[@]}"; do
    # ns, switches, samples (the same windows for all, give or take the
    # one at either edge)
    echo "$(cpu_now "${pid[$name]}") ${before[$name]}" |
      awk -v b=$((read1 - read0)) -v d="$docsize" '{print $1 - $3, $2 - $4, b / d}' >>"$tmp/cpu.$name"
  done
  for name in "${consumers[@]}"; do
    if [ -f "$tmp/fake.$name" ]; then kill "$(cat "$tmp/fake.$name")" 2>/dev/null || true; fi
    rm -f "$tmp/fake.$name"
  done
  for name in "${consumers[@]}"; do wait "${pid[$name]}" || true; done
}
if ! [ -r /proc/self/schedstat ]; then
  echo "skipped: needs Linux's /proc/PID/task/*/schedstat"
else
  rm -f "$tmp"/cpu.*
  for _ in $(seq "$rounds"); do one_round; done
  median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
  echo "(medians of the rounds; CPU in each round's $secs s; the ratio to the floor within each round, and its range)"
  printf '%-24s %8s %9s %10s %10s  %s\n' process "CPU ms" "of a core" "µs/sample" "switches" "x the floor"
  for name in "${consumers[@]}"; do
    label=$name
    case $name in
      floor) label="read-floor (the floor)" ;;
      watch) label="exopower watch --from -" ;;
      run) label="exopower run -- sleep" ;;
    esac
    ms=$(awk '{print $1 / 1e6}' "$tmp/cpu.$name" | median)
    us=$(awk '{print $1 / 1e3 / $3}' "$tmp/cpu.$name" | median)
    cs=$(awk '{print $2 / $3}' "$tmp/cpu.$name" | median)
    ratios=$(paste -d' ' "$tmp/cpu.$name" "$tmp/cpu.floor" | awk '{print $1 / $4}')
    printf '%-24s %8.1f %8.3f%% %10.1f %10.1f  %.2fx (%.2f-%.2f)\n' "$label" "$ms" "$(awk -v m="$ms" -v s="$secs" 'BEGIN {print m / s / 10}')" \
      "$us" "$cs" "$(echo "$ratios" | median)" "$(echo "$ratios" | sort -g | head -1)" "$(echo "$ratios" | sort -g | tail -1)"
  done
fi
unset FAKEPM_PROFILE

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
