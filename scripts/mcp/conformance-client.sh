#!/usr/bin/env bash
# The official MCP conformance suite's *client* scenarios (2025-11-25, no OAuth) against mm's
# MCP client, through the example `mcp-conformance-client` (crates/mm-core/examples):
#   initialize, tools_call, elicitation-sep1034-client-defaults, sse-retry
# with @modelcontextprotocol/conformance@0.1.16:
#   conformance client --command BIN --scenario S -o OUT
# Any FAILURE fails the script. Results (checks.json per scenario) go to
# ${CONFORMANCE_OUT:-$PICOMCP_TARGET_DIR/conformance-client}.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$MCP_ROOT"

mcp_setup_node
(cd "$MCP_ROOT" && CARGO_TARGET_DIR="$PICOMCP_TARGET_DIR" cargo build --locked -p mm-core --example mcp-conformance-client)
CLIENT="$PICOMCP_TARGET_DIR/debug/examples/mcp-conformance-client"
CLI="$MCP_ROOT/interop/node_modules/@modelcontextprotocol/conformance/dist/index.js"
OUT="${CONFORMANCE_OUT:-$PICOMCP_TARGET_DIR/conformance-client}"
rm -rf "$OUT"
mkdir -p "$OUT"

SCENARIOS=(initialize tools_call elicitation-sep1034-client-defaults sse-retry)
status=0
for scenario in "${SCENARIOS[@]}"; do
  rc=0
  "$NODE22" "$CLI" client --command "$CLIENT" --scenario "$scenario" -o "$OUT" \
    >"$OUT/$scenario.log" 2>&1 || rc=$?
  checks="$(find "$OUT" -path "*$scenario*" -name checks.json | head -n1)"
  if [ -z "$checks" ]; then
    echo "$scenario: no checks.json (cli exit $rc)"; status=1; continue
  fi
  line="$("$NODE22" -e '
    const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const n = (s) => c.filter((x) => x.status === s).length;
    const bad = c.filter((x) => x.status === "FAILURE").map((x) => x.id + ": " + (x.errorMessage || ""));
    console.log(`${n("SUCCESS")} passed, ${n("FAILURE")} failed, ${n("WARNING")} warnings` + (bad.length ? "; " + bad.join("; ") : ""));
    process.exit(n("FAILURE") || !n("SUCCESS") ? 1 : 0);
  ' "$checks")" || status=1
  echo "$scenario: $line (cli exit $rc)"
done
if [ "$status" = 0 ]; then echo "conformance (client): PASS"; else echo "conformance (client): FAIL (results in $OUT)"; fi
exit "$status"
