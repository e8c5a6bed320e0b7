#!/usr/bin/env bash
# weather.sh CITY [--days=1..7] [--units=metric|imperial]   (forecast issued 2026-12-07, a Monday)
set -euo pipefail
usage() { echo "$*" >&2; exit 2; }
city=""; days=3; units=metric
for a in "$@"; do
  case "$a" in
    --days=*) days="${a#*=}" ;;
    --units=*) units="${a#*=}" ;;
    --*) usage "unknown option: $a" ;;
    *) [ -z "$city" ] || usage "one city only (got '$city' and '$a')"; city="$a" ;;
  esac
done
[ -n "$city" ] || usage "usage: weather.sh CITY [--days=N] [--units=metric|imperial]"
[[ "$days" =~ ^[0-9]+$ ]] && [ "$days" -ge 1 ] && [ "$days" -le 7 ] || usage "days must be a whole number from 1 to 7 (got '$days')"
[ "$units" = metric ] || [ "$units" = imperial ] || usage "units must be metric or imperial (got '$units')"
key="$(printf '%s' "$city" | tr '[:upper:]' '[:lower:]' | sed -E 's/^ +| +$//g; s/,.*//; s/í/i/g')"
# high/low °C, weather, for Mon..Sun
case "$key" in
  oslo) name=Oslo; data="-4/-9/snow, 12 cm|-6/-11/clear|-2/-5/cloudy|-1/-4/snow, 3 cm|0/-3/cloudy|-3/-8/clear|-5/-10/clear" ;;
  madrid) name=Madrid; data="15/4/sunny|16/5/sunny|14/6/cloudy|13/5/rain, 4 mm|15/3/sunny|12/2/sunny|14/4/cloudy" ;;
  berlin) name=Berlin; data="7/2/rain, 14 mm|9/4/cloudy|6/1/showers|5/0/cloudy|4/-1/fog|3/-2/cloudy|5/1/rain, 6 mm" ;;
  porto|oporto) name=Porto; data="16/9/showers|17/10/cloudy|15/8/rain, 11 mm|16/9/sunny|18/10/sunny|17/11/cloudy|15/9/rain, 7 mm" ;;
  lisbon|lisboa|lisbonne|lissabon) name=Lisbon; data="17/10/sunny|18/11/sunny|17/11/cloudy|16/10/showers|18/12/sunny|19/12/sunny|17/11/cloudy" ;;
  munich|münchen|munchen|muenchen) name=Munich; data="2/-4/snow, 5 cm|1/-6/clear|3/-3/cloudy|4/-1/rain, 2 mm|2/-2/cloudy|0/-5/clear|1/-4/snow, 2 cm" ;;
  *) echo "No forecast for '$city'. Cities: Oslo, Madrid, Berlin, Porto, Lisbon, Munich." >&2; exit 1 ;;
esac
IFS='|' read -ra day <<<"$data"
names=(Mon Tue Wed Thu Fri Sat Sun)
unit="°C"; [ "$units" = imperial ] && unit="°F"
echo "$name, $days-day forecast ($unit):"
for ((i = 0; i < days; i++)); do
  IFS='/' read -r hi lo what <<<"${day[$i]}"
  if [ "$units" = imperial ]; then
    hi="$(awk -v c="$hi" 'BEGIN { f = c * 9 / 5 + 32; printf "%d", (f < 0 ? f - 0.5 : f + 0.5) }')"
    lo="$(awk -v c="$lo" 'BEGIN { f = c * 9 / 5 + 32; printf "%d", (f < 0 ? f - 0.5 : f + 0.5) }')"
  fi
  printf '%s 2026-12-%02d: high %s %s, low %s %s, %s\n' "${names[$i]}" $(( 7 + i )) "$hi" "$unit" "$lo" "$unit" "$what"
done
