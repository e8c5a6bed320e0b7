#!/usr/bin/env bash
# The Kelmouth tram, bus and train network. The network clock reads Monday 2026-12-07 08:10.
#   network.sh departures STOP [--mode=any|bus|tram|train] [--count=N]
#   network.sh trip FROM TO [--at=HH:MM] [--step-free=true|false]
set -euo pipefail

usage() { echo "$*" >&2; exit 2; }
cmd="${1:-}"
[ -n "$cmd" ] || usage "usage: network.sh departures|trip ..."
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
npos() { [ "${#pos[@]}" -eq "$1" ] || usage "$cmd: expected $1 argument(s), got ${#pos[@]}"; }

STOPS="elm_square central_station harbour_gate university old_town airport"
# Accepts "Elm Square", "elm-square" or "ELM_SQUARE" as well as elm_square.
stop_id() {
  local s
  s="$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | sed -E 's/^ +| +$//g; s/[ -]+/_/g')"
  [[ "$s" =~ ^[a-z][a-z_]*$ ]] || usage "not a stop name: '$1' (stops: $STOPS)"
  [[ " $STOPS " == *" $s "* ]] || { echo "No stop '$1' in the Kelmouth network. Stops: $STOPS" >&2; exit 1; }
  printf '%s' "$s"
}
NOW=$((8 * 60 + 10))

# line|mode|towards|first departure (minutes past the hour at the first stop)|every N min|stops
# stops: stop:minutes from the first stop:where you board:step-free (y/n)
lines="$(cat <<'DATA'
T4|tram|Harbour Gate|4|10|elm_square:0:stop A:y,central_station:9:stop F:y,harbour_gate:16:stop B:y
T4|tram|Elm Square|7|10|harbour_gate:0:stop A:y,central_station:7:stop G:y,elm_square:16:stop B:y
T2|tram|Old Town|5|10|university:0:stop B:y,central_station:8:stop D:y,old_town:14:tram stop:n
T2|tram|University|1|10|old_town:0:tram stop:n,central_station:6:stop E:y,university:14:stop A:y
31|bus|University|2|15|elm_square:0:stop C:y,university:15:stop C:y
31|bus|Elm Square|10|15|university:0:stop C:y,elm_square:15:stop C:y
S1|train|Airport|1|15|central_station:0:platform 9:y,airport:18:platform 1:y
S1|train|Central Station|7|15|airport:0:platform 1:y,central_station:18:platform 9:y
RE5|train|Northbridge|23|30|central_station:0:platform 11:y,northbridge:41:platform 2:y
47|bus|Old Town/Market|5|15|central_station:0:bay 6:y,old_town:11:Market stop:y
47|bus|Central Station|0|15|old_town:0:Market stop:y,central_station:11:bay 2:y
DATA
)"

names='elm_square=Elm Square;central_station=Central Station;harbour_gate=Harbour Gate;university=University;old_town=Old Town;airport=Airport;northbridge=Northbridge'
hhmm_ok() { [[ "$1" =~ ^([01]?[0-9]|2[0-3]):[0-5][0-9]$ ]]; }

case "$cmd" in
  departures)
    allow_flags mode count; npos 1
    s="$(stop_id "${pos[0]}")"
    mode="$(opt mode any)"; count="$(opt count 3)"
    case "$mode" in any|bus|tram|train) ;; *) usage "mode must be any, bus, tram or train (got '$mode')" ;; esac
    [[ "$count" =~ ^[0-9]+$ ]] && [ "$count" -ge 1 ] && [ "$count" -le 10 ] || usage "count must be a whole number from 1 to 10 (got '$count')"
    deps="$(awk -F'|' -v s="$s" -v mode="$mode" -v now="$NOW" -v names="$names" '
      BEGIN { n = split(names, kv, ";"); for (i = 1; i <= n; i++) { split(kv[i], p, "="); nm[p[1]] = p[2] } }
      {
        ns = split($6, st, ",")
        for (i = 1; i < ns; i++) {
          split(st[i], f, ":")
          if (f[1] != s) continue
          if (mode != "any" && $2 != mode) continue
          base = $4 + f[2]
          t = base + int((now + 1 - base + $5 - 1) / $5) * $5
          for (; t <= now + 90; t += $5)
            printf "%05d|%02d:%02d  %s %s to %s, %s (in %d min)\n", t, int(t / 60) % 24, t % 60, $2, $1, $3, f[3], t - now
        }
      }' <<<"$lines" | sort -t'|' -k1,1n -s | head -n "$count" | cut -d'|' -f2-)"
    case "$mode" in any) label=departures ;; bus) label=buses ;; *) label="${mode}s" ;; esac
    sname="$(tr ';' '\n' <<<"$names" | grep "^$s=" | cut -d= -f2)"
    if [ -n "$deps" ]; then
      echo "$sname, Mon 7 Dec 08:10, next $label:"
      sed 's/^/  /' <<<"$deps"
    else
      echo "$sname: no $label in the next 90 minutes."
    fi
    ;;
  trip)
    allow_flags at step-free; npos 2
    from="$(stop_id "${pos[0]}")"; to="$(stop_id "${pos[1]}")"
    [ "$from" != "$to" ] || usage "from and to are the same stop ($from)"
    at="$(opt at 08:10)"; sf="$(opt step-free false)"
    hhmm_ok "$at" || usage "at must be a time like 17:30 (got '$at')"
    [ "$sf" = true ] || [ "$sf" = false ] || usage "step-free must be true or false (got '$sf')"
    t0=$(( 10#${at%%:*} * 60 + 10#${at#*:} ))
    awk -F'|' -v from="$from" -v to="$to" -v t0="$t0" -v sf="$sf" -v names="$names" '
      function hm(t) { return sprintf("%02d:%02d", int(t / 60) % 24, t % 60) }
      function nxt(l, i, t,   base) { base = first[l] + rel[l, i]; if (t <= base) return base; return base + int((t - base + every[l] - 1) / every[l]) * every[l] }
      function ok(l, i) { return sf != "true" || free[l, i] == "y" }
      function leg(l, i, j, d, a) {
        return sprintf("  %s  %s %s towards %s, %s %s -> %s %s", hm(d), mode[l], line[l], dest[l], nm[stop[l, i]], where[l, i], nm[stop[l, j]], hm(a))
      }
      BEGIN { n = split(names, kv, ";"); for (k = 1; k <= n; k++) { split(kv[k], p, "="); nm[p[1]] = p[2] } }
      {
        L++; line[L] = $1; mode[L] = $2; dest[L] = $3; first[L] = $4; every[L] = $5
        cnt[L] = split($6, st, ",")
        for (k = 1; k <= cnt[L]; k++) { split(st[k], f, ":"); stop[L, k] = f[1]; rel[L, k] = f[2]; where[L, k] = f[3]; free[L, k] = f[4] }
      }
      END {
        best = 1e9
        for (l = 1; l <= L; l++) for (i = 1; i <= cnt[l]; i++) {
          if (stop[l, i] != from || !ok(l, i)) continue
          d = nxt(l, i, t0)
          for (j = i + 1; j <= cnt[l]; j++) {
            if (!ok(l, j)) continue
            a = d + rel[l, j] - rel[l, i]
            if (stop[l, j] == to) {
              if (a < best || (a == best && legs > 1)) { best = a; legs = 1; dep = d; out = leg(l, i, j, d, a) }
              continue
            }
            for (m = 1; m <= L; m++) {
              if (line[m] == line[l]) continue
              for (r = 1; r <= cnt[m]; r++) {
                if (stop[m, r] != stop[l, j] || !ok(m, r)) continue
                d2 = nxt(m, r, a + 3)
                for (q = r + 1; q <= cnt[m]; q++) {
                  if (stop[m, q] != to || !ok(m, q)) continue
                  a2 = d2 + rel[m, q] - rel[m, r]
                  if (a2 < best) { best = a2; legs = 2; dep = d; out = leg(l, i, j, d, a) "\n" sprintf("  change at %s, %d min", nm[stop[l, j]], d2 - a) "\n" leg(m, r, q, d2, a2) }
                }
              }
            }
          }
        }
        if (best == 1e9) { print "No connection found." > "/dev/stderr"; exit 1 }
        printf "%s -> %s, leaving %s, Mon 7 Dec%s:\n", nm[from], nm[to], hm(t0), (sf == "true" ? ", step-free" : "")
        print out
        zones = (from == "airport" || to == "airport") ? 2 : 1
        printf "Arrive %s (%d min from %s, %s). Fare: %d zone%s.\n", hm(best), best - t0, hm(t0), (legs == 1 ? "direct" : "1 change"), zones, (zones > 1 ? "s" : "")
        if (sf == "true" && (from == "old_town" || to == "old_town"))
          print "Note: the Old Town tram stop has stairs only (lift out of service until 18 Dec); bus 47 has level boarding."
      }' <<<"$lines"
    ;;
  *) usage "unknown command '$cmd': departures or trip" ;;
esac
