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
[ $# -gt 0 ] || { echo "usage: scripts/count-instructions.sh COMMAND [ARG...]" >&2; exit 2; }
for tool in valgrind callgrind_annotate; do
  command -v "$tool" >/dev/null || { echo "count-instructions: $tool is not installed (apt-get install valgrind)" >&2; exit 2; }
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# The command's own output is dropped; a command that fails is counted all the same, said so, and exit 1:
# a count of a run that went wrong (a wrong URL, no emulator) compares with nothing.
status=0
valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>&1 || status=$?
[ "$status" -eq 0 ] || echo "count-instructions: the command exited $status: its count is not that of a run that worked (exit 1)" >&2
summary=$(callgrind_annotate --inclusive=no "$out" 2>/dev/null)
total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }' <<<"$summary")
[ -n "$total" ] || { echo "count-instructions: callgrind recorded nothing" >&2; exit 1; }
seed=$(awk '/detail::sprp/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' <<<"$summary")
echo "$(( (total - seed) / 1000000 )) million instructions (${seed} of V8's hash-seed search left out): $*"
# A count of a failed run is printed (to see what it did) but is no success for a script.
[ "$status" -eq 0 ] || exit 1
