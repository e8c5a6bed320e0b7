#!/usr/bin/env bash
# Run the official MCP conformance suite against picomcp's conformance fixture
# (example `picomcp-conformance`, Streamable HTTP at http://127.0.0.1:$PORT/mcp).
#
#   1. @modelcontextprotocol/conformance@0.1.16 (latest stable):
#        conformance server --url URL --suite all --spec-version 2025-11-25
#   2. @modelcontextprotocol/conformance@0.2.0-alpha.12 (npm alias conformance-next),
#      the first CLI line with the frozen requirement sets:
#        conformance server --url URL --requirements 2025-11-25
#   3. the same CLI, the modern era's requirement set (MCP 2026-07-28, no initialize,
#      every request stateless) against the same dual-era fixture:
#        conformance server --url URL --requirements 2026-07-28
#
# No expected-failures baseline: any failed scored scenario fails the script. Scenarios the
# CLI itself lists as "Not scored" (extensions such as tasks, and pending ones) are run and
# reported, but do not count.
# Results (checks.json per scenario) go to ${CONFORMANCE_OUT:-target-picomcp/conformance}.
# Env: CONFORMANCE_FIXTURE=cmd (reads $PORT) instead of the picomcp fixture;
#      CONFORMANCE_SKIP_BUILD=1 to reuse the built fixture;
#      CONFORMANCE_RUNS="suite requirements modern" (the default) to choose runs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$MCP_ROOT"

mcp_setup_node
# CONFORMANCE_FIXTURE=/path/to/cmd overrides the fixture (it must read $PORT).
if [ -n "${CONFORMANCE_FIXTURE:-}" ]; then
  FIXTURE="$CONFORMANCE_FIXTURE"
else
  if [ "${CONFORMANCE_SKIP_BUILD:-0}" != 1 ]; then
    mcp_build_examples --example picomcp-conformance
  fi
  FIXTURE="$PICOMCP_TARGET_DIR/debug/examples/picomcp-conformance"
fi
[ -x "$FIXTURE" ] || { echo "fixture not built: $FIXTURE" >&2; exit 1; }

OUT="${CONFORMANCE_OUT:-$PICOMCP_TARGET_DIR/conformance}"
rm -rf "$OUT"
mkdir -p "$OUT"
STABLE_CLI="$MCP_ROOT/interop/node_modules/@modelcontextprotocol/conformance/dist/index.js"
NEXT_CLI="$MCP_ROOT/interop/node_modules/conformance-next/dist/index.js"

FIXTURE_PID=""
stop_fixture() {
  if [ -n "$FIXTURE_PID" ] && kill -0 "$FIXTURE_PID" 2>/dev/null; then
    kill "$FIXTURE_PID" 2>/dev/null || true
    for _ in $(seq 30); do kill -0 "$FIXTURE_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$FIXTURE_PID" 2>/dev/null || true
    wait "$FIXTURE_PID" 2>/dev/null || true
  fi
  FIXTURE_PID=""
}
trap stop_fixture EXIT INT TERM

# A fresh fixture per run, so one run's state (subscriptions, sessions) cannot
# leak into the other.
start_fixture() {
  PORT="$(mcp_free_port)"
  PORT="$PORT" "$FIXTURE" >"$OUT/fixture-$1.log" 2>&1 &
  FIXTURE_PID=$!
  mcp_wait_port "$PORT" "$FIXTURE_PID" 30 || { cat "$OUT/fixture-$1.log" >&2; exit 1; }
  URL="http://127.0.0.1:$PORT/mcp"
}

# summarize NAME DIR LOG: prints "NAME: P/T scenarios passed (F failed: a, b)", returns 1 on
# failure. Scenarios the CLI's LOG lists under "Not scored" are reported apart.
summarize() {
  "$NODE22" - "$1" "$2" "$3" <<'JS'
const fs = require('fs'), path = require('path');
const [name, dir, log] = process.argv.slice(2);
const unscored = new Set();
const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
const block = text.split(/^Not scored for .*$/m)[1] || '';
for (const m of block.matchAll(/^\s+[✓✗]\s+(\S+)\s+\((\w+)\)/gm)) unscored.add(m[1]);
const files = [];
(function walk(d) { for (const e of fs.readdirSync(d, { withFileTypes: true })) {
  const p = path.join(d, e.name);
  if (e.isDirectory()) walk(p); else if (e.name === 'checks.json') files.push(p);
} })(dir);
const failed = [], warned = [], extra = [];
let scored = 0;
for (const f of files) {
  const checks = JSON.parse(fs.readFileSync(f, 'utf8'));
  const scen = path.basename(path.dirname(f)).replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
  const bad = checks.some((c) => c.status === 'FAILURE');
  if (unscored.has(scen)) { if (bad) extra.push(scen); continue; }
  scored++;
  if (bad) failed.push(scen);
  else if (checks.some((c) => c.status === 'WARNING')) warned.push(scen);
}
const total = scored, pass = total - failed.length;
console.log(`${name}: ${pass}/${total} scenarios passed` +
  (failed.length ? `; FAILED: ${failed.sort().join(', ')}` : '') +
  (warned.length ? `; warnings: ${warned.sort().join(', ')}` : '') +
  (unscored.size ? `; not scored: ${unscored.size - extra.length}/${unscored.size} passed` +
    (extra.length ? ` (failing: ${extra.sort().join(', ')})` : '') : ''));
process.exit(failed.length || total === 0 ? 1 : 0);
JS
}

RUNS="${CONFORMANCE_RUNS:-suite requirements modern}"
status=0
summaries=()
for run in $RUNS; do
  start_fixture "$run"
  case "$run" in
    suite)
      label="conformance@0.1.16 --suite all --spec-version 2025-11-25"
      cmd=("$NODE22" "$STABLE_CLI" server --url "$URL" --suite all --spec-version 2025-11-25 -o "$OUT/$run") ;;
    requirements)
      label="conformance@0.2.0-alpha.12 --requirements 2025-11-25"
      cmd=("$NODE22" "$NEXT_CLI" server --url "$URL" --requirements 2025-11-25 -o "$OUT/$run") ;;
    modern)
      label="conformance@0.2.0-alpha.12 --requirements 2026-07-28"
      cmd=("$NODE22" "$NEXT_CLI" server --url "$URL" --requirements 2026-07-28 -o "$OUT/$run") ;;
    *) echo "unknown run $run" >&2; exit 2 ;;
  esac
  echo "=== $label against $URL ==="
  rc=0
  cli_rc=0
  "${cmd[@]}" >"$OUT/$run.log" 2>&1 || cli_rc=$?
  grep -E '^(✓|✗|Total|Not scored|  [✓✗])' "$OUT/$run.log" || true
  mkdir -p "$OUT/$run"
  # The CLI's own exit status counts unscored scenarios too; the summary decides.
  if line="$(summarize "$label" "$OUT/$run" "$OUT/$run.log")"; then :; else rc=1; fi
  [ "$rc" = 0 ] || status=1
  summaries+=("$line (cli exit $cli_rc)")
  stop_fixture
done

echo
echo "=== conformance summary ==="
for s in "${summaries[@]}"; do echo "$s"; done
if [ "$status" = 0 ]; then echo "conformance: PASS"; else echo "conformance: FAIL (results in $OUT)"; fi
exit "$status"
