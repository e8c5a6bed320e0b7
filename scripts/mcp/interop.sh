#!/usr/bin/env bash
# Interop tests: the official MCP TypeScript SDK client (pinned in
# interop/package.json) against picomcp's examples (echo, search_issues,
# get_price, image, slow) and against `mm serve` (target/debug/mm, built by the
# suite's build step) over stdio and Streamable HTTP, using node's built-in
# test runner (Node 22 from scripts/mcp/setup-node.sh).
#
#   scripts/mcp/interop.sh                 # build examples, run all tests
#   scripts/mcp/interop.sh --reference     # run the same tests against TS SDK
#                                          # reference servers (checks the harness)
# Env: MCP_INTEROP_TRANSPORTS=stdio|http|stdio,http, MCP_INTEROP_TRACE=1,
#      INTEROP_SKIP_BUILD=1, extra args after `--` go to `node --test`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$MCP_ROOT"
mcp_setup_node

reference=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --reference) reference=1 ;;
    --) shift; extra=("$@"); break ;;
    *) extra+=("$1") ;;
  esac
  shift
done

if [ "$reference" = 1 ]; then
  dir="$PICOMCP_TARGET_DIR/ts-reference-bin"
  mkdir -p "$dir"
  for e in echo search_issues get_price image slow; do
    printf '#!/bin/sh\nexec "%s" "%s" %s "$@"\n' "$NODE22" "$MCP_ROOT/interop/reference/ts-servers.mjs" "$e" >"$dir/$e"
    chmod +x "$dir/$e"
  done
  export PICOMCP_EXAMPLES_DIR="$dir"
else
  if [ "${INTEROP_SKIP_BUILD:-0}" != 1 ]; then
    mcp_build_examples --example echo --example search_issues --example get_price --example image --example slow
  fi
  export PICOMCP_EXAMPLES_DIR="$PICOMCP_TARGET_DIR/debug/examples"
fi

cd interop
exec "$NODE22" --test --test-reporter=spec --test-timeout=120000 "${extra[@]}" test/*.test.mjs
