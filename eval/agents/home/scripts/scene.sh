#!/usr/bin/env bash
# scene.sh NAME [--delay=MINUTES]   (the house clock reads 22:30)
set -euo pipefail
. "$(dirname "$0")/common.bash"
name=""; delay=0
for a in "$@"; do
  case "$a" in
    --delay=*) delay="${a#*=}" ;;
    --*) usage "unknown option: $a" ;;
    *) [ -z "$name" ] || usage "one scene only"; name="$a" ;;
  esac
done
[ -n "$name" ] || usage "usage: scene.sh NAME [--delay=MINUTES]"
one_of "$name" scene movie_night away good_morning good_night
[[ "$delay" =~ ^[0-9]+$ ]] && [ "$delay" -le 240 ] || usage "delay must be whole minutes from 0 to 240 (got '$delay')"
case "$name" in
  movie_night) what="living room lights at 15 %, blinds down, hallway light off" ;;
  away) what="all 6 rooms dark, heating to eco 16 °C, all 3 doors locked, alarm armed" ;;
  good_morning) what="bedroom and kitchen lights on, blinds up, heating to comfort 21 °C" ;;
  good_night) what="7 lights off, all 3 doors locked, downstairs heating to 17 °C" ;;
esac
if [ "$delay" -eq 0 ]; then
  echo "$name: running now ($what)"
else
  at=$(( 22 * 60 + 30 + delay ))
  printf '%s: scheduled for %02d:%02d, in %d min (%s)\n' "$name" $(( at / 60 % 24 )) $(( at % 60 )) "$delay" "$what"
fi
