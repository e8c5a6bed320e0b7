#!/usr/bin/env bash
# timer.sh MINUTES: starts the kitchen timer (the kitchen clock reads 18:45:00).
set -euo pipefail
[ "$#" -eq 1 ] || { echo "usage: timer.sh MINUTES" >&2; exit 2; }
m="$1"
[[ "$m" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "minutes must be a number like 10 or 7.5 (got '$m')" >&2; exit 2; }
secs="$(awk -v m="$m" 'BEGIN { printf "%d", m * 60 + 0.5 }')"
[ "$secs" -ge 1 ] && [ "$secs" -le 14400 ] || { echo "a timer runs from 1 second to 240 minutes (got $m)" >&2; exit 2; }
at=$(( 18 * 3600 + 45 * 60 + secs ))
printf 'Timer T3 started: %d min %02d s, rings at %02d:%02d:%02d.\n' $(( secs / 60 )) $(( secs % 60 )) \
  $(( at / 3600 % 24 )) $(( at / 60 % 60 )) $(( at % 60 ))
