#!/usr/bin/env bash
# Checks the fallback to the source-built llama-server (scripts/llama/server.sh).
#
#   scripts/llama/check-fallback.sh --quick   the choice, with a stub build (seconds)
#   scripts/llama/check-fallback.sh --if-built  --quick, then the full check when the source
#                                             build is cached already (what test.sh runs)
#   scripts/llama/check-fallback.sh           the real thing: builds llama-server from source
#                                             (10-18 min on 2 cores the first time, cached), starts
#                                             it on Qwen2.5-Coder-0.5B and has it answer a chat
#                                             request with a tool call
#
# --quick checks that server.sh picks the source build when asked (--from-source,
# MM_LLAMA_FROM_SOURCE=1), when the CPU lacks AVX2 (a fake cpuinfo), and when the wheel failed its
# self-test here before; and that it picks the wheel otherwise. test.sh runs --quick always, and
# the full check too when the source build is already cached (a build does not fit the suite's
# time on a fresh machine; docs/local-model.md).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${MM_DEV_CACHE:-$HOME/.cache/mm-dev}"
log() { echo "[check-fallback] $*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

quick() {
  local tmp stub got
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  stub="$tmp/build-stub.sh"
  printf '#!/bin/sh\necho "%s/source-built-llama-server"\n' "$tmp" >"$stub"
  chmod +x "$stub"
  export MM_LLAMA_BUILD="$stub"
  got="$("$HERE/server.sh" --from-source 2>/dev/null | tail -1)"
  [[ "$got" == "$tmp/source-built-llama-server" ]] || fail "--from-source gave $got"
  got="$(MM_LLAMA_FROM_SOURCE=1 "$HERE/server.sh" 2>/dev/null | tail -1)"
  [[ "$got" == "$tmp/source-built-llama-server" ]] || fail "MM_LLAMA_FROM_SOURCE=1 gave $got"
  grep -v -w avx2 /proc/cpuinfo >"$tmp/cpuinfo" || true
  got="$(MM_CPUINFO="$tmp/cpuinfo" "$HERE/server.sh" 2>"$tmp/err" | tail -1)"
  [[ "$got" == "$tmp/source-built-llama-server" ]] || fail "a CPU without AVX2 gave $got"
  grep -q "no AVX2" "$tmp/err" || fail "no reason given for a CPU without AVX2: $(cat "$tmp/err")"
  # A wheel that failed its self-test here: a private cache with that verdict.
  local version
  version="$(sed -n 's/^VERSION=//p' "$HERE/server.sh")"
  mkdir -p "$tmp/cache/xllamacpp-$version"
  echo "illegal instruction (exit 132)" >"$tmp/cache/xllamacpp-$version/self-test.failed"
  got="$(MM_DEV_CACHE="$tmp/cache" "$HERE/server.sh" 2>"$tmp/err" | tail -1)"
  [[ "$got" == "$tmp/source-built-llama-server" ]] || fail "a failed self-test gave $got"
  grep -q "illegal instruction" "$tmp/err" || fail "the reason was not given: $(cat "$tmp/err")"
  unset MM_LLAMA_BUILD
  got="$("$HERE/server.sh" 2>/dev/null | tail -1)"
  [[ "$got" == */xllamacpp-*/llama-server ]] || fail "this machine should use the wheel, got $got"
  log "ok: the source build is chosen on request, without AVX2 and after a failed self-test; the wheel otherwise"
}

full() {
  local bin model port pid reply started
  started=$(date +%s)
  bin="$("$HERE/server.sh" --from-source | tail -1)"
  model="$("$ROOT/scripts/model/fetch-qwen-0.5b.sh" 2>/dev/null)"
  out="$(LLAMA_SERVER="$bin" MM_DEV_CACHE="$(mktemp -d)" "$HERE/serve.sh" start --model "$model" -- --temp 0)"
  port="$(sed -n 's|^MM_BASE_URL=http://127.0.0.1:\([0-9]*\)/v1|\1|p' <<<"$out")"
  pid="$(sed -n 's/^MM_LLAMA_PID=//p' <<<"$out")"
  trap 'kill "$pid" 2>/dev/null || true' RETURN
  reply="$(curl -sf "http://127.0.0.1:$port/v1/chat/completions" -H 'Content-Type: application/json' -d '{
    "messages": [{"role": "user", "content": "What is the status of the billing service?"}],
    "tools": [{"type": "function", "function": {"name": "status", "description": "Report the status of a service.",
      "parameters": {"type": "object", "properties": {"service": {"type": "string"}}}}}],
    "max_tokens": 60}')" || fail "the source build did not answer"
  grep -q 'status' <<<"$reply" || fail "no call of status in: $reply"
  "$bin" --version 2>&1 | head -2 >&2 || true
  log "ok: the source build ($bin) served a chat request with a tool ($(($(date +%s) - started)) s)"
}

built() {
  local version
  version="$(sed -n 's/^VERSION="${LLAMA_CPP_PYTHON_VERSION:-\(.*\)}"$/\1/p' "$HERE/build-server.sh")"
  [[ -x "$CACHE/llama-server-$version/llama-server" ]]
}

case "${1:-}" in
  --quick) quick ;;
  --if-built)
    quick
    if built; then
      full
    else
      log "the source build is not cached: not built here (scripts/llama/check-fallback.sh builds it)"
    fi
    ;;
  "") quick; full ;;
  *) echo "usage: $0 [--quick|--if-built]" >&2; exit 2 ;;
esac
