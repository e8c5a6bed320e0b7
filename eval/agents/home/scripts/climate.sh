#!/usr/bin/env bash
# climate.sh ZONE TARGET [--mode=comfort|eco|off]
set -euo pipefail
. "$(dirname "$0")/common.bash"
mode=comfort; pos=()
for a in "$@"; do
  case "$a" in
    --mode=*) mode="${a#*=}" ;;
    --*) usage "unknown option: $a" ;;
    *) pos+=("$a") ;;
  esac
done
[ "${#pos[@]}" -eq 2 ] || usage "usage: climate.sh ZONE TARGET [--mode=comfort|eco|off]"
zone="${pos[0]}"; target="${pos[1]}"
one_of "$zone" zone downstairs upstairs
one_of "$mode" mode comfort eco off
[[ "$target" =~ ^[0-9]+([.][0-9]+)?$ ]] || usage "target must be a temperature in °C, like 20 or 19.5 (got '$target')"
awk -v t="$target" 'BEGIN { exit !(t >= 5 && t <= 28 && t * 2 == int(t * 2)) }' || usage "target must be from 5 to 28 °C, in steps of 0.5 (got $target)"
case "$zone" in downstairs) now=20.6 ;; upstairs) now=18.2 ;; esac
if [ "$mode" = off ]; then
  echo "$zone: heating off (frost protection at 5 °C), now $now °C"
  exit 0
fi
mins="$(awk -v n="$now" -v t="$target" 'BEGIN { d = t - n; if (d <= 0) print 0; else printf "%d", d * 27 + 0.5 }')"
if [ "$mins" -eq 0 ]; then
  echo "$zone: target $target °C ($mode), now $now °C: already warm enough, heating idle"
else
  echo "$zone: target $target °C ($mode), now $now °C: heating, reached in about $mins min"
fi
