#!/usr/bin/env bash
# The whole test suite: lints, unit and integration tests, the end-to-end tests against a real
# llama.cpp server with a real model, MCP conformance and interop with the official SDK.
# Run on a fresh machine as is: it installs what it needs first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# The MCP scripts build the picomcp examples into the workspace's own target folder.
export PICOMCP_TARGET_DIR="$PWD/target"
started=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$1" "$(( $(date +%s) - started ))"; }

step "setup"
scripts/setup.sh

step "format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
scripts/check-deps.py   # no unused dependency, one version of each (issue 20)
# No import cycle between sibling modules (the team's checker, beside the repository).
if [[ -f ../shared/tools/modcycles.py ]]; then
  python3 ../shared/tools/modcycles.py crates
else
  echo "module cycles: not checked (../shared/tools/modcycles.py is not beside this clone)"
fi

step "build"
cargo build --workspace --all-targets --locked

step "unit, integration and end-to-end tests (real llama-server)"
# The end-to-end tests find the models and the server through these (set by the scripts).
MM_TEST_MODEL="$(scripts/model/fetch-gemma.sh)"
MM_TEST_QWEN="$(scripts/model/fetch-qwen-0.5b.sh)"
MM_TEST_SMOLLM="$(scripts/model/fetch-smollm2.sh)"
MM_LLAMA_SERVER="$(scripts/llama/server.sh | tail -1)"
export MM_TEST_MODEL MM_TEST_QWEN MM_TEST_SMOLLM MM_LLAMA_SERVER MM_E2E=1
# Node 22 for the MCP test against a server written with the official TypeScript SDK.
MM_NODE="$(eval "$(scripts/mcp/setup-node.sh --env)"; echo "$NODE22")"
export MM_NODE
cargo test --workspace --locked

step "llama-server: the source build as the fallback (scripts/llama/check-fallback.sh)"
scripts/llama/check-fallback.sh --if-built

step "hostile corpus: counts (docs/hardening.md)"
scripts/hostile-counts.sh

step "MCP: official conformance suite against picomcp"
scripts/mcp/conformance.sh

step "MCP: official conformance suite's client scenarios against mm's MCP client"
scripts/mcp/conformance-client.sh

step "MCP: interop with the official TypeScript SDK client"
scripts/mcp/interop.sh

step "MCP: interop with the official Python SDK client"
scripts/mcp/interop-python.sh

step "all passed"
