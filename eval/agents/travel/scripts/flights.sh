#!/usr/bin/env bash
# flights.sh FLIGHT: today's (2026-12-07) status of a flight.
set -euo pipefail
[ "$#" -eq 1 ] || { echo "usage: flights.sh FLIGHT" >&2; exit 2; }
f="$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]' | tr -d ' ')"
[[ "$f" =~ ^[A-Z0-9]{2}[0-9]{1,4}$ ]] || { echo "not a flight number: '$1' (like LH2034)" >&2; exit 2; }
case "$f" in
  LH2034) echo "LH2034 Munich (MUC) → Oslo (OSL): delayed 45 min, departs 14:35 instead of 13:50, gate G26; arrives 17:00." ;;
  IB3171) echo "IB3171 Madrid (MAD) → Munich (MUC): on time, departs 10:20, gate J58; arrives 12:55." ;;
  TP557)  echo "TP557 Munich (MUC) → Lisbon (LIS): cancelled; passengers rebooked on TP559 at 18:40." ;;
  *) echo "No flight $f today." >&2; exit 1 ;;
esac
