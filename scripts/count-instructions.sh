#!/usr/bin/env bash
# Instructions executed by one run of a command (all its threads), in millions, as valgrind's
# callgrind counts them: the same count for the same run whatever else the machine is doing, so two
# builds can be compared on a busy machine. V8 draws a random hash seed at every start and searches
# for a prime from it (`detail::sprp`), 5-16 million instructions that vary from run to run: they are
# left out. Needs valgrind (Debian: apt-get install valgrind). Start-up ratios stay the bench's job:
# instructions are not time (a cache miss costs more than an add).
#   scripts/count-instructions.sh node -e 0
#   scripts/count-instructions.sh node bin/imaging.cjs --env local --base-url http://127.0.0.1:PORT cpt 73721 --json
set -euo pipefail
command -v valgrind >/dev/null || { echo "count-instructions: valgrind is not installed" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>&1 || true
summary=$(callgrind_annotate --inclusive=no "$out" 2>/dev/null)
total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }' <<<"$summary")
seed=$(awk '/detail::sprp/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' <<<"$summary")
echo "$(( (total - seed) / 1000000 )) million instructions (${seed} of V8's hash-seed search left out): $*"
