#!/usr/bin/env bash
# Kelmouth Transit fares, and tickets bought with the user's Kelmouth Pass card (today: Mon 2026-12-07, 08:10).
#   tickets.sh price single|day|week|month [--zones=1..4] [--reduced=true|false]
#   tickets.sh buy   single|day|week|month [--zones=1..4] [--reduced=true|false] [--travellers=1..6]
set -euo pipefail

usage() { echo "$*" >&2; exit 2; }
cmd="${1:-}"
[ -n "$cmd" ] || usage "usage: tickets.sh price|buy TICKET ..."
shift
declare -A flag=()
pos=()
for a in "$@"; do
  case "$a" in
    --*=*) k="${a%%=*}"; flag["${k#--}"]="${a#*=}" ;;
    --*) usage "unknown option: $a" ;;
    *) pos+=("$a") ;;
  esac
done
opt() { printf '%s' "${flag[$1]:-$2}"; }
allow_flags() {
  local k f ok
  for k in "${!flag[@]}"; do
    ok=no; for f in "$@"; do [ "$k" = "$f" ] && ok=yes; done
    [ "$ok" = yes ] || usage "$cmd: unknown option --$k"
  done
}
[ "${#pos[@]}" -eq 1 ] || usage "$cmd: expected one ticket type (single, day, week or month), got ${#pos[@]} argument(s)"
ticket="$(printf '%s' "${pos[0]}" | tr '[:upper:]' '[:lower:]')"

# adult prices in EUR for 1, 2, 3, 4 zones
case "$ticket" in
  single) prices=(2.80 3.60 4.40 5.20); what="Single ticket"; valid="90 minutes from when you first scan it, changes included" ;;
  day)    prices=(7.50 9.80 12.10 14.40); what="Day ticket"; valid="today until 03:00 Tue 8 Dec" ;;
  week)   prices=(24.00 29.40 35.00 41.50); what="Week ticket"; valid="Mon 7 Dec to Sun 13 Dec" ;;
  month)  prices=(79.00 96.50 114.00 131.00); what="Month ticket"; valid="7 Dec 2026 to 6 Jan 2027" ;;
  *) usage "unknown ticket '${pos[0]}': single, day, week or month" ;;
esac
zones="$(opt zones 1)"; reduced="$(opt reduced false)"
[[ "$zones" =~ ^[1-4]$ ]] || usage "zones must be a whole number from 1 to 4 (got '$zones')"
[ "$reduced" = true ] || [ "$reduced" = false ] || usage "reduced must be true or false (got '$reduced')"
adult="${prices[$((zones - 1))]}"
if [ "$reduced" = true ]; then
  # reduced fare: 60 % of adult, rounded to 10 cents
  each="$(awk -v p="$adult" 'BEGIN { printf "%.2f", int(p * 6 + 0.5) / 10 }')"; who="reduced (student, senior, child; carry your ID)"
else
  each="$adult"; who="adult"
fi
zw="$zones zone"; [ "$zones" -eq 1 ] || zw="${zw}s"

case "$cmd" in
  price)
    allow_flags zones reduced
    echo "$what, $zw, $who: EUR $each. Valid $valid."
    [ "$reduced" = true ] || echo "Reduced fare (students, seniors, kids): EUR $(awk -v p="$adult" 'BEGIN { printf "%.2f", int(p * 6 + 0.5) / 10 }')."
    ;;
  buy)
    allow_flags zones reduced travellers
    n="$(opt travellers 1)"
    [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 6 ] || usage "travellers must be a whole number from 1 to 6 (got '$n')"
    total="$(awk -v p="$each" -v n="$n" 'BEGIN { printf "%.2f", p * n }')"
    sum="$(printf '%s' "$ticket/$zones/$reduced/$n/2026-12-07" | cksum | cut -d' ' -f1)"
    code="KT-$(( sum % 9000 + 1000 ))-$(printf '%s' "ABCDEFGHJKLMNPQRSTUVWXYZ" | cut -c$(( sum % 24 + 1 )))$(( sum / 24 % 90 + 10 ))"
    echo "Bought $n x $(printf %s "$what" | tr "[:upper:]" "[:lower:]"), $zw, $who, EUR $each each: EUR $total charged to Kelmouth Pass card ending 4471."
    echo "Ticket code $code, valid $valid. Show the QR code in the Kelmouth app when asked."
    ;;
  *) usage "unknown command '$cmd': price or buy" ;;
esac
