#!/usr/bin/env bash
# Regenerates the fixtures in testdata/ from the fake powermetrics, with
# simulated time, so that they come out the same on every run. Real
# recordings come from scripts/record-fixture.sh on a Mac.
set -euo pipefail
cd "$(dirname "$0")/.."
fake() { FAKEPM_OFFLINE=1 go run ./scripts/fake-powermetrics -f plist -b 0 -s cpu_power,gpu_power,thermal "$@" 2>/dev/null; }

FAKEPM_LAYOUT=m1 fake -i 100 -n 6 >testdata/fake-m1-compact.plist
FAKEPM_LAYOUT=pro FAKEPM_INDENT=1 FAKEPM_SEED=2 fake -i 250 -n 4 >testdata/fake-pro-indented.plist
FAKEPM_LAYOUT=ultra FAKEPM_SEED=3 fake -i 1000 -n 3 >testdata/fake-ultra-compact.plist
# powermetrics stopped mid-write: three whole documents and part of a fourth.
FAKEPM_LAYOUT=m1 FAKEPM_SEED=4 fake -i 100 -n 4 >testdata/fake-m1-truncated.plist.tmp
size=$(wc -c <testdata/fake-m1-truncated.plist.tmp)
head -c $((size - size / 8)) testdata/fake-m1-truncated.plist.tmp >testdata/fake-m1-truncated.plist
rm testdata/fake-m1-truncated.plist.tmp
