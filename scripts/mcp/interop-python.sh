#!/usr/bin/env bash
# Interop tests with the official MCP Python SDK client (`mcp`, pinned in
# interop/python/requirements.txt) against picomcp's examples over stdio and
# Streamable HTTP, in the SDK's default "auto" mode (server/discover probe, then
# fallback to initialize) and in "legacy" mode.
#
#   scripts/mcp/interop-python.sh
# Env: MCP_INTEROP_TRANSPORTS=stdio,http  MCP_INTEROP_PY_MODES=auto,legacy
#      INTEROP_SKIP_BUILD=1
# The venv lives in ${MM_DEV_CACHE:-~/.cache/mm-dev}/py-mcp (idempotent).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$MCP_ROOT"

CACHE="${MM_DEV_CACHE:-$HOME/.cache/mm-dev}"
VENV="$CACHE/py-mcp"
REQ="$MCP_ROOT/interop/python/requirements.txt"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.mm-req.sha256" 2>/dev/null)" != "$want" ]; then
  echo "[interop-python] creating $VENV from $REQ" >&2
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$REQ"
  "$VENV/bin/pip" check >&2
  echo "$want" >"$VENV/.mm-req.sha256"
fi

if [ "${INTEROP_SKIP_BUILD:-0}" != 1 ]; then
  mcp_build_examples --example echo --example search_issues --example get_price --example image --example slow
fi
export PICOMCP_EXAMPLES_DIR="$PICOMCP_TARGET_DIR/debug/examples"
exec "$VENV/bin/python" "$MCP_ROOT/interop/python/picomcp_interop.py"
