#!/usr/bin/env bash
# Times a run over many Macs on this one: N exopower serve instances over
# the fake powermetrics (100 ms windows), then ROUNDS runs of
# `exopower run --node ... -- sh -c 'date +%s%N'`. It prints, per round,
# how long after exopower was started the command started (the cost of
# reaching every node and opening its span, exopower's own start included)
# and how long the whole run took (the command itself takes a few ms; the
# rest is ending every span and the summary).
#
#   scripts/bench-cluster.sh [NODES] [ROUNDS]      (defaults: 16 nodes, 5 rounds)
set -euo pipefail
nodes=${1:-16}
rounds=${2:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/exopower" "$root/cmd/exopower"
go build -o "$work/fake-powermetrics" "$root/scripts/fake-powermetrics"
export EXOPOWER_POWERMETRICS=$work/fake-powermetrics
for i in $(seq 1 "$nodes"); do
  FAKEPM_PROFILE="0=$i,0,0" "$work/exopower" serve --listen 127.0.0.1:0 -i 100ms --node-name "n$i" 2>"$work/serve$i.err" &
  pids+=($!)
done
args=()
for i in $(seq 1 "$nodes"); do
  for _ in $(seq 1 100); do
    grep -q listening "$work/serve$i.err" && break
    sleep 0.1
  done
  args+=(--node "$(grep -o 'http://[0-9.:]*' "$work/serve$i.err")")
done
echo "round  command started after  whole run  (ms; $nodes nodes, 100 ms windows)"
for r in $(seq 1 "$rounds"); do
  t0=$(date +%s%N)
  "$work/exopower" run --json "${args[@]}" -- sh -c 'date +%s%N >&2' 2>"$work/cmd" >"$work/sum.json"
  t1=$(date +%s%N)
  started=$(grep -E '^[0-9]{19}$' "$work/cmd")
  echo "$r  $(( (started - t0) / 1000000 ))  $(( (t1 - t0) / 1000000 ))"
done
