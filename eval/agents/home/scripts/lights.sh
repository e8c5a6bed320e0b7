#!/usr/bin/env bash
# lights.sh ROOM --on=true|false [--brightness=0-100]
set -euo pipefail
. "$(dirname "$0")/common.bash"
room=""; on=""; brightness=""
for a in "$@"; do
  case "$a" in
    --on=*) on="${a#*=}" ;;
    --brightness=*) brightness="${a#*=}" ;;
    --*) usage "unknown option: $a" ;;
    *) [ -z "$room" ] || usage "one room only (got '$room' and '$a')"; room="$a" ;;
  esac
done
[ -n "$room" ] || usage "usage: lights.sh ROOM --on=true|false [--brightness=0-100]"
one_of "$room" room "${ROOMS[@]}"
[ -n "$on" ] || usage "--on=true or --on=false is required"
one_of "$on" on true false
case "$room" in
  living_room) bulbs=4; watts=26; was="2 h 05 min" ;;
  kitchen) bulbs=3; watts=21; was="47 min" ;;
  bedroom) bulbs=2; watts=12; was="25 min" ;;
  office) bulbs=2; watts=18; was="5 h 40 min" ;;
  hallway) bulbs=3; watts=15; was="3 h 12 min" ;;
  garden) bulbs=6; watts=42; was="1 h 30 min" ;;
esac
if [ "$on" = true ]; then
  if [ -n "$brightness" ]; then
    [[ "$brightness" =~ ^[0-9]+$ ]] && [ "$brightness" -le 100 ] || usage "brightness must be a whole number from 0 to 100 (got '$brightness')"
  else
    brightness=100
  fi
  w=$(( watts * brightness / 100 ))
  echo "$room: on at $brightness % ($bulbs bulbs, drawing $w W)"
else
  [ -z "$brightness" ] || usage "brightness only applies when switching on"
  echo "$room: off (had been on for $was)"
fi
