#!/usr/bin/env bash
# hotels.sh CITY --nights=N [--max-price=EUR] [--breakfast=true|false]
set -euo pipefail
usage() { echo "$*" >&2; exit 2; }
city=""; nights=""; max=""; breakfast=false
for a in "$@"; do
  case "$a" in
    --nights=*) nights="${a#*=}" ;;
    --max-price=*) max="${a#*=}" ;;
    --breakfast=*) breakfast="${a#*=}" ;;
    --*) usage "unknown option: $a" ;;
    *) [ -z "$city" ] || usage "one city only"; city="$a" ;;
  esac
done
[ -n "$city" ] || usage "usage: hotels.sh CITY --nights=N [--max-price=EUR] [--breakfast=true|false]"
[[ "$nights" =~ ^[0-9]+$ ]] && [ "$nights" -ge 1 ] && [ "$nights" -le 30 ] || usage "nights must be a whole number from 1 to 30 (got '$nights')"
if [ -n "$max" ]; then [[ "$max" =~ ^[0-9]+([.][0-9]+)?$ ]] || usage "max-price must be a number of EUR (got '$max')"; fi
[ "$breakfast" = true ] || [ "$breakfast" = false ] || usage "breakfast must be true or false (got '$breakfast')"
key="$(printf '%s' "$city" | tr '[:upper:]' '[:lower:]' | sed -E 's/^ +| +$//g; s/,.*//')"
# name|price per night|breakfast included|area
case "$key" in
  porto|oporto) list="Casa do Rio|98|yes|Ribeira, by the river
Hotel Aliados|115|yes|city centre
Porto Lounge Hostel|42|no|Bolhão
The Yeatman|310|yes|Vila Nova de Gaia, wine hotel" ;;
  oslo) list="Thon Hotel Opera|165|yes|next to the station
Citybox Oslo|89|no|city centre" ;;
  lisbon|lisboa|lisbonne|lissabon) list="Casa Alfama|105|yes|Alfama
My Story Rossio|129|no|Baixa" ;;
  *) echo "We have no partner hotels in '$city'." >&2; exit 1 ;;
esac
n=0
while IFS='|' read -r name price bf area; do
  [ "$breakfast" = false ] || [ "$bf" = yes ] || continue
  if [ -n "$max" ]; then awk -v p="$price" -v m="$max" 'BEGIN { exit !(p <= m) }' || continue; fi
  n=$((n + 1))
  echo "$name ($area): $price EUR/night$([ "$bf" = yes ] && echo ", breakfast included"), $((price * nights)) EUR for $nights nights"
done <<<"$list"
[ "$n" -gt 0 ] || echo "No hotel in $city matches (${max:+at most $max EUR/night, }breakfast: $breakfast)."
