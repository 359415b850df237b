#!/bin/sh
# energy-check.sh: an energy regression check for any CI, with exopower.
#
#   energy-check.sh BASELINE.json BENCH-ARGUMENT...
#
# Benches with exopower bench and the arguments given (its flags, then the
# commands: --source ioreport --runs 10 -n build 'make -j8'), writing the
# export to energy.json; then, where BASELINE.json exists, compares the two
# with exopower compare: the verdicts on stdout, the Markdown for a pull
# request's comment in energy.md. Where there is no baseline yet, there is
# nothing to compare, and the check passes. With ENERGY_SAVE=1 (on the main
# branch) the new export then becomes the baseline, kept wherever the CI
# keeps files between runs.
#
# Exit status: compare's (0, 1 when a figure regressed, 125 when the
# exports cannot be compared), or bench's where the bench itself failed.
#
# Environment: ENERGY_NEW (default energy.json) and ENERGY_MARKDOWN
# (energy.md) name the files written; ENERGY_COMPARE holds more flags for
# compare (such as --threshold 3%); EXOPOWER names exopower (default: the
# one in PATH).
set -eu

if [ $# -lt 2 ]; then
	echo "usage: energy-check.sh BASELINE.json BENCH-ARGUMENT..." >&2
	exit 2
fi
baseline=$1
shift
exopower=${EXOPOWER:-exopower}
new=${ENERGY_NEW:-energy.json}
markdown=${ENERGY_MARKDOWN:-energy.md}

"$exopower" bench --export-json "$new" "$@"

status=0
if [ -f "$baseline" ]; then
	# ENERGY_COMPARE is split into words on purpose: it holds flags.
	# shellcheck disable=SC2086
	"$exopower" compare ${ENERGY_COMPARE:-} --export-markdown "$markdown" "$baseline" "$new" || status=$?
else
	echo "energy-check: no baseline at $baseline yet: nothing to compare" >&2
	printf '### exopower compare: no baseline yet\n\nThis run measured; a run on the main branch saves the baseline.\n' >"$markdown"
fi

if [ "${ENERGY_SAVE:-}" = 1 ]; then
	cp "$new" "$baseline"
fi
exit "$status"
