#!/usr/bin/env bash
# The project's test command: formatting, vet, staticcheck, the whole suite
# under the race detector, a short fuzz of the decoder, and a build for the
# Macs exopower is for. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"

step() { printf '\n== %s\n' "$*"; }

step gofmt
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then echo "not gofmt-ed: $unformatted"; exit 1; fi

step go mod tidy
cp go.mod /tmp/exopower-go.mod.$$ && cp go.sum /tmp/exopower-go.sum.$$
go mod tidy
if ! cmp -s go.mod /tmp/exopower-go.mod.$$ || ! cmp -s go.sum /tmp/exopower-go.sum.$$; then
  git diff -- go.mod go.sum || true
  echo "go mod tidy changed go.mod or go.sum: commit the tidy result"; exit 1
fi
rm -f /tmp/exopower-go.mod.$$ /tmp/exopower-go.sum.$$

step go vet
go vet ./...

step staticcheck
command -v staticcheck >/dev/null || GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
staticcheck ./...

step "build for macOS on Apple Silicon"
GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go build ./...

step "go test -race"
go test -race -count=1 ./...

step "soak: 10,000 samples through decoder and sampler, without the race detector"
go test -count=1 -run '^TestSoak$' -v ./internal/sampler/ | grep -E 'heap|^(ok|---|FAIL)'

step "fuzz the decoder and the fast path against the full decoder (${FUZZTIME:=20s} each)"
# Minimising a new input of tens of KB would take the whole budget.
go test -run '^$' -fuzz '^FuzzDecoder$' -fuzztime "$FUZZTIME" -fuzzminimizetime 100x ./internal/powermetrics/
go test -run '^$' -fuzz '^FuzzFastPath$' -fuzztime "$FUZZTIME" -fuzzminimizetime 100x ./internal/powermetrics/
