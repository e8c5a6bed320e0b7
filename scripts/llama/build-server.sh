#!/usr/bin/env bash
# Build llama.cpp's `llama-server` from a pinned source release taken from PyPI
# (the sdist of llama-cpp-python vendors the full llama.cpp tree under
# vendor/llama.cpp, including tools/server).
#
# Idempotent: the binary is cached at
#   ~/.cache/mm-dev/llama-server-<LLAMA_CPP_PYTHON_VERSION>/llama-server
# and reused if present and runnable. Prints the binary path on stdout (last line).
#
# Env:
#   LLAMA_CPP_PYTHON_VERSION  pinned sdist version (default below)
#   MM_DEV_CACHE              cache root (default ~/.cache/mm-dev)
#   JOBS                      parallel build jobs (default 2)
#   FORCE=1                   rebuild even if cached
#
# Build flags (do not change lightly):
#   -DGGML_NATIVE=OFF + explicit AVX2/FMA/F16C: a native build on the Xeon CI/dev
#   hosts picks AMX kernels and the server segfaults at the first matmul.
#   -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF: no network during the build
#   (the web UI would otherwise be downloaded or built with npm); the API is unaffected.
set -euo pipefail

VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
CACHE="${MM_DEV_CACHE:-$HOME/.cache/mm-dev}"
JOBS="${JOBS:-2}"
OUT_DIR="$CACHE/llama-server-$VERSION"
BIN="$OUT_DIR/llama-server"
SRC_CACHE="$CACHE/src"
BUILD_ROOT="$CACHE/build/llama-cpp-python-$VERSION"

log() { echo "[build-server] $*" >&2; }

if [[ -x "$BIN" && "${FORCE:-0}" != 1 ]]; then
  if "$BIN" --version >/dev/null 2>&1; then
    log "cached: $BIN"
    echo "$BIN"
    exit 0
  fi
  log "cached binary at $BIN does not run; rebuilding"
fi

# --- toolchain -------------------------------------------------------------
need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
command -v c++ >/dev/null 2>&1 || need_apt+=(g++)
command -v make >/dev/null 2>&1 || need_apt+=(make)
if ((${#need_apt[@]})); then
  log "installing ${need_apt[*]} via apt"
  apt-get update -qq && apt-get install -y -qq "${need_apt[@]}" >&2
fi

# cmake: use one on PATH if >= 3.18, else a pip-installed one in our own venv.
CMAKE=""
if command -v cmake >/dev/null 2>&1; then
  v="$(cmake --version | head -1 | awk '{print $3}')"
  if [[ "$(printf '3.18\n%s\n' "$v" | sort -V | head -1)" == 3.18 ]]; then
    CMAKE="$(command -v cmake)"
  fi
fi
if [[ -z "$CMAKE" ]]; then
  VENV="$CACHE/venv-tools"
  if [[ ! -x "$VENV/bin/cmake" ]]; then
    log "installing cmake into $VENV (pip)"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --only-binary :all: 'cmake>=3.18,<5' >&2
  fi
  CMAKE="$VENV/bin/cmake"
fi
log "cmake: $CMAKE ($("$CMAKE" --version | head -1))"

# --- source ----------------------------------------------------------------
mkdir -p "$SRC_CACHE"
SDIST="$SRC_CACHE/llama_cpp_python-$VERSION.tar.gz"
if [[ ! -s "$SDIST" ]]; then
  log "downloading llama-cpp-python==$VERSION sdist from PyPI"
  # --no-binary only for this package: build deps used for metadata may be wheels.
  pip download --no-deps --no-binary llama-cpp-python \
    "llama-cpp-python==$VERSION" -d "$SRC_CACHE" >&2
fi
[[ -s "$SDIST" ]] || { log "sdist not found at $SDIST"; exit 1; }

SRC="$BUILD_ROOT/llama_cpp_python-$VERSION/vendor/llama.cpp"
if [[ ! -f "$SRC/tools/server/server.cpp" ]]; then
  log "unpacking $SDIST"
  rm -rf "$BUILD_ROOT"
  mkdir -p "$BUILD_ROOT"
  tar xzf "$SDIST" -C "$BUILD_ROOT"
fi
[[ -f "$SRC/tools/server/server.cpp" ]] || { log "no tools/server in vendored llama.cpp"; exit 1; }

# --- build -----------------------------------------------------------------
BUILD="$BUILD_ROOT/build"
start=$(date +%s)
log "configuring in $BUILD"
"$CMAKE" -S "$SRC" -B "$BUILD" \
  -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_CURL=OFF \
  -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF \
  -DGGML_NATIVE=OFF \
  -DGGML_AVX=ON \
  -DGGML_AVX2=ON \
  -DGGML_FMA=ON \
  -DGGML_F16C=ON \
  -DGGML_AVX512=OFF \
  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
  >&2
log "building target llama-server with -j$JOBS"
"$CMAKE" --build "$BUILD" --target llama-server -j "$JOBS" >&2
end=$(date +%s)

built="$(find "$BUILD" -type f -name llama-server -perm -u+x | head -1)"
[[ -n "$built" ]] || { log "llama-server not produced"; exit 1; }
mkdir -p "$OUT_DIR"
cp "$built" "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
echo "llama-cpp-python sdist $VERSION; built $(date -u +%FT%TZ) in $((end - start))s" >"$OUT_DIR/BUILD_INFO"
"$BIN" --version >&2 || true
log "built in $((end - start))s: $BIN"
echo "$BIN"
