#!/usr/bin/env bash
# Builds exopower's release binaries, one per platform, with -trimpath and
# without cgo, and writes their SHA-256 checksums beside them (SHA256SUMS,
# which `sha256sum -c SHA256SUMS` or `shasum -a 256 -c SHA256SUMS` checks).
#
#   scripts/release.sh [TAG]
#
# With TAG (v1.2.3) the binaries say that version (exopower --version): it
# is stamped in with -X main.version, and named in the files. Without it
# they carry the module version Go reads from the repository: the tag
# HEAD is on, else a pseudo-version (v0.0.0-20250102150405-0123456789ab,
# +dirty with uncommitted changes); (devel) outside a git clone.
#
# Environment:
#   OUT        where the binaries go (default dist/ at the top of the repository)
#   PLATFORMS  GOOS/GOARCH pairs (default "darwin/arm64 linux/amd64"; linux
#              is for trying exopower report and the fake powermetrics without a Mac)
set -euo pipefail
tag=${1:-}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/dist}
platforms=${PLATFORMS:-darwin/arm64 linux/amd64}
if [ $# -gt 1 ] || [[ -n $tag && ! $tag =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
  echo "release.sh: $* is not a version tag such as v1.2.3" >&2
  echo "usage: scripts/release.sh [TAG]" >&2
  exit 2
fi
ldflags="-s -w"
[ -n "$tag" ] && ldflags+=" -X main.version=$tag"
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
files=()
for p in $platforms; do
  goos=${p%/*} goarch=${p#*/}
  name=exopower${tag:+-$tag}-$goos-$goarch
  # -buildvcs=auto: a GOFLAGS=-buildvcs=false in the environment would
  # leave the untagged binaries without their revision.
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=auto -ldflags "$ldflags" -o "$out/$name" ./cmd/exopower
  files+=("$name")
done
cd "$out"
if command -v sha256sum >/dev/null; then
  sha256sum "${files[@]}" >SHA256SUMS
else
  shasum -a 256 "${files[@]}" >SHA256SUMS
fi
cat SHA256SUMS
