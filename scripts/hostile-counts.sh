#!/usr/bin/env bash
# The hostile corpus (docs/hardening.md): runs every `corpus_*` test of the workspace and prints
# each corpus's counts, "hostile corpus · NAME: N tried, M held", then the totals. A corpus that
# does not hold fails its test, and this script with it. Tests needing root (device nodes,
# /proc/kmsg) leave those inputs out when not run as root, and say so.
set -euo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
cargo test --workspace --locked -- corpus_ --nocapture --test-threads=2 >"$log" 2>&1 || status=$?
grep -h '^hostile corpus · ' "$log" | sort
grep -h '^hostile corpus · ' "$log" \
  | sed -E 's/.*: ([0-9]+) tried, ([0-9]+) held$/\1 \2/' \
  | awk '{ tried += $1; held += $2; n++ }
      END { printf "%d corpora: %d inputs tried, %d held\n", n, tried, held }'
if [ "$status" -ne 0 ]; then
  grep -E 'did not hold|panicked|FAILED' "$log" | head -40
  exit "$status"
fi
