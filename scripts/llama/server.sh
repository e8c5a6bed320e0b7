#!/usr/bin/env bash
# Prints the path of a llama-server to use (last line of stdout; logs on stderr), installing it
# first when needed. Idempotent; everything is cached under ~/.cache/mm-dev/.
#
#   scripts/llama/server.sh [--from-source] [--model GGUF]
#
# By default: llama.cpp's own server from the pinned `xllamacpp` wheel (PyPI, MIT, ~34 MB, no
# dependencies), installed hash-checked into ~/.cache/mm-dev/xllamacpp-<VERSION>/venv, with
# scripts/llama/wheel_server.py copied beside it as `llama-server` (llama-server's flags). Ready in
# seconds, where a source build takes 10-18 minutes on 2 cores.
#
# The source build (scripts/llama/build-server.sh) is used instead:
#   - on request: --from-source, or MM_LLAMA_FROM_SOURCE=1;
#   - automatically when the wheel cannot run here: the CPU lacks AVX2/FMA/F16C (the wheel's
#     build), the install or import fails, or its self-test fails (it loads a model and writes one
#     token; an illegal instruction or a loader error shows there). The verdict is remembered in
#     the cache folder (self-test.ok / self-test.failed; FORCE=1 tries again).
# The self-test model is --model GGUF, else the smallest model already cached, else SmolLM2-135M
# (scripts/model/fetch-smollm2.sh).
#
# Env: MM_DEV_CACHE (default ~/.cache/mm-dev), MM_LLAMA_FROM_SOURCE=1, FORCE=1.
#      For scripts/llama/check-fallback.sh: MM_CPUINFO (default /proc/cpuinfo), MM_LLAMA_BUILD
#      (the fallback's build script, default scripts/llama/build-server.sh).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${MM_DEV_CACHE:-$HOME/.cache/mm-dev}"
# Pinned: xllamacpp 2026.10.11549, cp310-abi3-manylinux2014_x86_64 (the only file of that release
# for x86_64 Linux). Changing the version means changing the hash.
VERSION=2026.10.11549
SHA256=c54e7d13520ecc989c63dc99d55de3065e2f343a91f43f053d16b5e62077c261
DIR="$CACHE/xllamacpp-$VERSION"
VENV="$DIR/venv"
BIN="$DIR/llama-server"

log() { echo "[server] $*" >&2; }

from_source=${MM_LLAMA_FROM_SOURCE:-0}
model=""
while (($#)); do
  case "$1" in
    --from-source) from_source=1; shift ;;
    --model) model="$2"; shift 2 ;;
    *) log "unknown argument: $1"; exit 2 ;;
  esac
done

source_build() {
  log "$1: using the source build (scripts/llama/build-server.sh)"
  exec "${MM_LLAMA_BUILD:-$HERE/build-server.sh}"
}

[[ "$from_source" == 1 ]] && source_build "--from-source"
[[ "$(uname -m)" == x86_64 ]] || source_build "the wheel is for x86_64 only (this is $(uname -m))"
for flag in avx2 fma f16c; do
  grep -qw "$flag" "${MM_CPUINFO:-/proc/cpuinfo}" 2>/dev/null || source_build "this CPU has no ${flag^^} (the wheel is built for AVX2/FMA/F16C)"
done
if [[ -f "$DIR/self-test.failed" && "${FORCE:-0}" != 1 ]]; then
  source_build "the wheel failed its self-test here earlier ($(head -1 "$DIR/self-test.failed"); FORCE=1 tries again)"
fi

# --- the wheel, hash-checked -------------------------------------------------------------------
if ! "$VENV/bin/python" -c 'import xllamacpp' 2>/dev/null; then
  log "installing xllamacpp==$VERSION into $VENV (PyPI, sha256-checked)"
  rm -rf "$VENV"
  mkdir -p "$DIR"
  python3 -m venv "$VENV" >&2 || source_build "python3 -m venv failed"
  req="$DIR/requirements.txt"
  echo "xllamacpp==$VERSION --hash=sha256:$SHA256" >"$req"
  if ! "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary :all: \
    --require-hashes -r "$req" >&2; then
    rm -rf "$VENV"
    source_build "the wheel could not be installed"
  fi
  "$VENV/bin/python" -c 'import xllamacpp' >&2 || source_build "the wheel does not import"
fi

# The launcher, with the venv's Python: copied when it changed (a clone's own copy is the truth).
want="#!$VENV/bin/python"
if ! { [[ -f "$BIN" ]] && [[ "$(head -1 "$BIN")" == "$want" ]] &&
  cmp -s <(tail -n +2 "$BIN") "$HERE/wheel_server.py"; }; then
  { echo "$want"; cat "$HERE/wheel_server.py"; } >"$BIN.tmp"
  chmod +x "$BIN.tmp"
  mv "$BIN.tmp" "$BIN"
fi

# --- self-test, once --------------------------------------------------------------------------
if [[ ! -f "$DIR/self-test.ok" || "${FORCE:-0}" == 1 ]]; then
  if [[ -z "$model" ]]; then
    for f in smollm2-135m-instruct-q4_1.gguf gemma-3-270m-q4_k_m.gguf qwen2.5-coder-0.5b-instruct-q4_k_m.gguf; do
      [[ -f "$CACHE/models/$f" ]] && { model="$CACHE/models/$f"; break; }
    done
    [[ -n "$model" ]] || model="$(find "$CACHE/models" -maxdepth 1 -name '*.gguf' 2>/dev/null | head -1)"
    [[ -n "$model" ]] || model="$("$ROOT/scripts/model/fetch-smollm2.sh" | tail -1)"
  fi
  log "self-test: loading $(basename "$model") with the wheel's server"
  if out="$("$BIN" --self-test "$model" 2>"$DIR/self-test.log")"; then
    log "$out"
    rm -f "$DIR/self-test.failed"
    { echo "$out"; "$BIN" --version 2>/dev/null; } >"$DIR/self-test.ok"
  else
    code=$?
    why="exit $code"
    ((code == 132)) && why="illegal instruction (exit 132)"
    ((code > 128 && code != 132)) && why="killed by signal $((code - 128))"
    { echo "$why"; tail -5 "$DIR/self-test.log"; } >"$DIR/self-test.failed"
    log "the wheel's self-test failed: $why; last lines of $DIR/self-test.log:"
    tail -5 "$DIR/self-test.log" >&2 || true
    source_build "the wheel cannot run here"
  fi
fi
log "xllamacpp $VERSION: $BIN"
echo "$BIN"
