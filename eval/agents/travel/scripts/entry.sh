#!/usr/bin/env bash
# entry.sh --passport=CC --destination=CC: entry rules (as of 2026-12-01).
set -euo pipefail
usage() { echo "$*" >&2; exit 2; }
p=""; d=""
for a in "$@"; do
  case "$a" in
    --passport=*) p="${a#*=}" ;;
    --destination=*) d="${a#*=}" ;;
    *) usage "unknown argument: $a" ;;
  esac
done
codes=" US UK DE FR ES IN BR JP NO PT "
[[ -n "$p" && "$codes" == *" $p "* ]] || usage "passport must be one of:$codes(got '$p')"
[[ -n "$d" && "$codes" == *" $d "* ]] || usage "destination must be one of:$codes(got '$d')"
schengen=" DE FR ES NO PT "
if [ "$p" = "$d" ]; then echo "$p passport to $d: your own country, no visa."; exit 0; fi
case "$p:$d" in
  US:BR) echo "US passport to BR (Brazil): e-visa required since 2025-04-10. Apply online at least 10 days ahead; fee USD 80.90; valid 10 years, stays up to 90 days." ;;
  IN:BR) echo "IN passport to BR (Brazil): visa required, apply at a Brazilian consulate; fee USD 40." ;;
  *:UK) echo "$p passport to UK: no visa for visits up to 6 months, but an ETA (electronic travel authorisation, GBP 16) is needed before travelling." ;;
  IN:US|BR:US) echo "$p passport to US: B-2 visitor visa required (fee USD 185), interview at a consulate." ;;
  *:US) echo "$p passport to US: no visa for up to 90 days with an approved ESTA (USD 40), apply at least 72 h before departure." ;;
  *:IN) echo "$p passport to IN (India): e-visa required (e-Tourist visa, from USD 25), apply at least 4 days ahead." ;;
  IN:JP) echo "IN passport to JP: visa required (single entry, JPY 3,000)." ;;
  *:JP) echo "$p passport to JP: no visa for stays up to 90 days." ;;
  *:BR) echo "$p passport to BR (Brazil): no visa for stays up to 90 days." ;;
  *)
    if [[ "$schengen" == *" $p "* && "$schengen" == *" $d "* ]]; then
      echo "$p passport to $d: Schengen area, no visa and no passport control; carry an ID card."
    elif [ "$p" = IN ]; then
      echo "IN passport to $d: Schengen visa required (fee EUR 90), apply up to 6 months ahead."
    else
      echo "$p passport to $d: no visa for stays up to 90 days in any 180; from late 2026 an ETIAS authorisation (EUR 20) is needed."
    fi ;;
esac
