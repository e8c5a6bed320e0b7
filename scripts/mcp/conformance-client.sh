#!/usr/bin/env bash
# The official MCP conformance suite's *client* scenarios that need no OAuth against mm's MCP
# client, through the example `mcp-conformance-client` (crates/mm-core/examples):
#   2025-11-25, with @modelcontextprotocol/conformance@0.1.16:
#     initialize, tools_call, elicitation-sep1034-client-defaults, sse-retry
#     conformance client --command BIN --scenario S -o OUT
#   2026-07-28 (the modern era: mm discovers it with server/discover), with
#   @modelcontextprotocol/conformance@0.2.0-alpha.12 (npm alias conformance-next):
#     tools_call, request-metadata, sep-2322-client-request-state, http-standard-headers,
#     http-custom-headers, http-invalid-tool-headers, json-schema-ref-no-deref,
#     json-schema-2020-12-preservation
#     conformance client --command BIN --scenario S --spec-version 2026-07-28 -o OUT
# Any FAILURE fails the script. Results (checks.json per scenario) go to
# ${CONFORMANCE_OUT:-$PICOMCP_TARGET_DIR/conformance-client}.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$MCP_ROOT"

mcp_setup_node
(cd "$MCP_ROOT" && CARGO_TARGET_DIR="$PICOMCP_TARGET_DIR" cargo build --locked -p mm-core --example mcp-conformance-client)
CLIENT="$PICOMCP_TARGET_DIR/debug/examples/mcp-conformance-client"
STABLE_CLI="$MCP_ROOT/interop/node_modules/@modelcontextprotocol/conformance/dist/index.js"
NEXT_CLI="$MCP_ROOT/interop/node_modules/conformance-next/dist/index.js"
OUT="${CONFORMANCE_OUT:-$PICOMCP_TARGET_DIR/conformance-client}"
rm -rf "$OUT"
mkdir -p "$OUT"

LEGACY=(initialize tools_call elicitation-sep1034-client-defaults sse-retry)
MODERN=(tools_call request-metadata sep-2322-client-request-state http-standard-headers
  http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref
  json-schema-2020-12-preservation)
RUNS=()
for s in "${LEGACY[@]}"; do RUNS+=("2025-11-25 $s"); done
for s in "${MODERN[@]}"; do RUNS+=("2026-07-28 $s"); done
status=0
for run in "${RUNS[@]}"; do
  version="${run%% *}"
  scenario="${run#* }"
  dir="$OUT/$version"
  mkdir -p "$dir"
  rc=0
  if [ "$version" = 2025-11-25 ]; then
    cmd=("$NODE22" "$STABLE_CLI" client --command "$CLIENT" --scenario "$scenario" -o "$dir")
  else
    cmd=("$NODE22" "$NEXT_CLI" client --command "$CLIENT" --scenario "$scenario"
      --spec-version "$version" -o "$dir")
  fi
  "${cmd[@]}" >"$dir/$scenario.log" 2>&1 || rc=$?
  checks="$(find "$dir" -path "*/$scenario-*" -name checks.json | head -n1)"
  if [ -z "$checks" ]; then
    echo "$version $scenario: no checks.json (cli exit $rc)"; status=1; continue
  fi
  line="$("$NODE22" -e '
    const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const n = (s) => c.filter((x) => x.status === s).length;
    const bad = c.filter((x) => x.status === "FAILURE").map((x) => x.id + ": " + (x.errorMessage || ""));
    console.log(`${n("SUCCESS")} passed, ${n("FAILURE")} failed, ${n("WARNING")} warnings` + (bad.length ? "; " + bad.join("; ") : ""));
    process.exit(n("FAILURE") || !n("SUCCESS") ? 1 : 0);
  ' "$checks")" || status=1
  echo "$version $scenario: $line (cli exit $rc)"
done
if [ "$status" = 0 ]; then echo "conformance (client): PASS"; else echo "conformance (client): FAIL (results in $OUT)"; fi
exit "$status"
