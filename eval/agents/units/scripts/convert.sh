#!/usr/bin/env bash
# Unit converter.
#   convert.sh length|weight VALUE FROM TO [--decimals=N]
#   convert.sh temperature VALUE FROM TO
#   convert.sh volume VALUE FROM TO [--us=true|false]
#   convert.sh currency AMOUNT FROM TO
set -euo pipefail

usage() { echo "$*" >&2; exit 2; }

kind="${1:-}"
[ -n "$kind" ] || usage "usage: convert.sh length|temperature|weight|volume|currency VALUE FROM TO [options]"
shift
decimals=2; us=true; pos=()
for a in "$@"; do
  case "$a" in
    --decimals=*) [ "$kind" = length ] || [ "$kind" = weight ] || usage "--decimals is only for length and weight"
                  decimals="${a#*=}" ;;
    --us=*) [ "$kind" = volume ] || usage "--us is only for volume"
            us="${a#*=}" ;;
    --*) usage "unknown option: $a" ;;
    *) pos+=("$a") ;;
  esac
done
[ "${#pos[@]}" -eq 3 ] || usage "expected VALUE FROM TO, got ${#pos[@]} argument(s)"
value="${pos[0]}"; from="${pos[1]}"; to="${pos[2]}"
[[ "$value" =~ ^-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?$ ]] || usage "not a number: '$value'"
[[ "$decimals" =~ ^[0-9]$ ]] || usage "decimals must be a whole number from 0 to 9 (got '$decimals')"
[ "$us" = true ] || [ "$us" = false ] || usage "--us must be true or false (got '$us')"

# Factor of each unit in the base unit of its kind: m, g, ml, EUR (units of currency per EUR).
factor() {
  case "$kind:$1" in
    length:mm) echo 0.001 ;; length:cm) echo 0.01 ;; length:m) echo 1 ;; length:km) echo 1000 ;;
    length:in) echo 0.0254 ;; length:ft) echo 0.3048 ;; length:yd) echo 0.9144 ;; length:mi) echo 1609.344 ;;
    weight:g) echo 1 ;; weight:kg) echo 1000 ;; weight:oz) echo 28.349523125 ;;
    weight:lb) echo 453.59237 ;; weight:st) echo 6350.29318 ;;
    volume:ml) echo 1 ;; volume:l) echo 1000 ;;
    volume:tsp)  [ "$us" = true ] && echo 4.92892159375 || echo 5.91938802083 ;;
    volume:tbsp) [ "$us" = true ] && echo 14.78676478125 || echo 17.7581640625 ;;
    volume:cup)  [ "$us" = true ] && echo 236.5882365 || echo 284.130625 ;;
    volume:floz) [ "$us" = true ] && echo 29.5735295625 || echo 28.4130625 ;;
    volume:pt)   [ "$us" = true ] && echo 473.176473 || echo 568.26125 ;;
    volume:gal)  [ "$us" = true ] && echo 3785.411784 || echo 4546.09 ;;
    currency:EUR) echo 1 ;; currency:USD) echo 1.0842 ;; currency:GBP) echo 0.8571 ;;
    currency:CHF) echo 0.9367 ;; currency:JPY) echo 162.35 ;;
    *) return 1 ;;
  esac
}
units_of() {
  case "$kind" in
    length) echo "mm cm m km in ft yd mi" ;; weight) echo "g kg oz lb st" ;;
    volume) echo "ml l tsp tbsp cup floz pt gal" ;; currency) echo "EUR USD GBP CHF JPY" ;;
    temperature) echo "C F K" ;;
  esac
}
# Rounds to N decimals and drops trailing zeros: 37.00 -> 37, 9.10 -> 9.1.
fmt() { awk -v x="$1" -v n="$2" 'BEGIN { s = sprintf("%." n "f", x); if (n > 0) { sub(/0+$/, "", s); sub(/\.$/, "", s) } if (s == "-0") s = "0"; print s }'; }

case "$kind" in
  length|weight|volume|currency)
    f1="$(factor "$from")" || usage "unknown $kind unit '$from'; units: $(units_of)"
    f2="$(factor "$to")" || usage "unknown $kind unit '$to'; units: $(units_of)"
    awk -v v="$value" 'BEGIN { exit !(v >= 0) }' || usage "a $kind cannot be negative (got $value)"
    if [ "$kind" = currency ]; then
      result="$(awk -v v="$value" -v a="$f1" -v b="$f2" 'BEGIN { printf "%.10f", v / a * b }')"
      rate="$(awk -v a="$f1" -v b="$f2" 'BEGIN { printf "%.10f", b / a }')"
      echo "$value $from = $(fmt "$result" 2) $to (reference rate 1 $from = $(fmt "$rate" 4) $to, 2026-12-01)"
    else
      [ "$kind" = volume ] && decimals=2
      result="$(awk -v v="$value" -v a="$f1" -v b="$f2" 'BEGIN { printf "%.12f", v * a / b }')"
      note=""
      if [ "$kind" = volume ] && [[ " tsp tbsp cup floz pt gal " == *" $from "* || " tsp tbsp cup floz pt gal " == *" $to "* ]]; then
        [ "$us" = true ] && note=" (US measures)" || note=" (imperial measures)"
      fi
      echo "$value $from = $(fmt "$result" "$decimals") $to$note"
    fi
    ;;
  temperature)
    case "$from" in C|F|K) ;; *) usage "unknown temperature unit '$from'; units: C F K" ;; esac
    case "$to" in C|F|K) ;; *) usage "unknown temperature unit '$to'; units: C F K" ;; esac
    kelvin="$(awk -v v="$value" -v u="$from" 'BEGIN { if (u == "C") k = v + 273.15; else if (u == "F") k = (v - 32) * 5 / 9 + 273.15; else k = v; printf "%.10f", k }')"
    awk -v k="$kelvin" 'BEGIN { exit !(k >= -0.000001) }' || usage "$value $from is below absolute zero"
    result="$(awk -v k="$kelvin" -v u="$to" 'BEGIN { if (u == "C") r = k - 273.15; else if (u == "F") r = (k - 273.15) * 9 / 5 + 32; else r = k; printf "%.10f", r }')"
    sym() { [ "$1" = K ] && echo "K" || echo "°$1"; }
    echo "$value $(sym "$from") = $(fmt "$result" 2) $(sym "$to")"
    ;;
  *) usage "unknown kind '$kind': length, temperature, weight, volume or currency" ;;
esac
