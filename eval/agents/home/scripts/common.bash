# Shared by the home scripts: sourced, not run.
usage() { echo "$*" >&2; exit 2; }
one_of() { # VALUE NAME ALLOWED...
  local v="$1" name="$2"; shift 2
  for x in "$@"; do [ "$v" = "$x" ] && return 0; done
  usage "$name must be one of: $* (got '$v')"
}
ROOMS=(living_room kitchen bedroom office hallway garden)
