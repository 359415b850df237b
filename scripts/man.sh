#!/usr/bin/env bash
# Writes exopower's man pages, made from the commands' own help by
# cobra's doc package (the hidden `exopower gen-man`, in a build with
# -tags genman only, so that exopower itself carries no doc package), into DIR: by
# default man/ at the top of the repository, where they are checked in
# and from where the Homebrew formula installs them. .ci/run writes them
# into a temporary DIR and fails when they differ from man/.
#
#   scripts/man.sh [DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/man}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go run -tags genman ./cmd/exopower gen-man "$tmp")
# The page of a command that is gone goes too.
rm -f "$dir"/exopower*.1
cp "$tmp"/*.1 "$dir"/
