#!/usr/bin/env bash
# Halvorsen & Co service desk (a canned copy of the ticket system).
#   desk.sh status TICKET
#   desk.sh open --category=C [--priority=P] --user=U SUMMARY
#   desk.sh close TICKET [--resolution=R] [--notify=true|false]
#   desk.sh list --user=U [--state=open|closed|all] [--limit=N]
#   desk.sh unlock USER [--reset-password=true|false]
#   desk.sh log TICKET --hours=H
set -euo pipefail

usage() { echo "$*" >&2; exit 2; }

cmd="${1:-}"
[ -n "$cmd" ] || usage "usage: desk.sh status|open|close|list|unlock|log ..."
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
  local k ok
  for k in "${!flag[@]}"; do
    ok=no
    for f in "$@"; do [ "$k" = "$f" ] && ok=yes; done
    [ "$ok" = yes ] || usage "$cmd: unknown option --$k"
  done
}
one_of() { # VALUE NAME ALLOWED...
  local v="$1" name="$2"; shift 2
  for x in "$@"; do [ "$v" = "$x" ] && return 0; done
  usage "$name must be one of: $* (got '$v')"
}
npos() { [ "${#pos[@]}" -eq "$1" ] || usage "$cmd: expected $1 argument(s), got ${#pos[@]}"; }

# ticket|category|priority|state|user|summary|assignee|hours logged
tickets='INC-40603|access|normal|closed 2026-11-19 (fixed)|mkovacs|Needs access to the Finance share|Priya Nair|0.5
INC-40655|email|low|closed 2026-11-28 (fixed)|jdoe|Outlook keeps asking for the password|Priya Nair|0.75
INC-40698|printer|normal|on hold: waiting for parts (fuser unit), ETA 2026-12-08|jdoe|Paper jams on printer PRN-3F|Luis Ortega|0.5
INC-40712|software|normal|in progress|jdoe|Excel crashes when opening files with macros|Tom Becker|1
INC-40721|network|high|in progress|mkovacs|VPN gateway unreachable from home|Priya Nair|2.25'

users='jdoe|John Doe|Tmp-8841-Kite
mkovacs|Mara Kovacs|Tmp-2093-Reed
tbauer|Tina Bauer|Tmp-5517-Moss'

find_ticket() {
  local t; t="$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]')"
  [[ "$t" =~ ^INC-[0-9]{5}$ ]] || usage "not a ticket number: '$1' (they look like INC-40721)"
  row="$(grep "^$t|" <<<"$tickets" || true)"
  [ -n "$row" ] || { echo "no ticket $t" >&2; exit 1; }
  IFS='|' read -r t_id t_cat t_prio t_state t_user t_sum t_assignee t_hours <<<"$row"
}
find_user() {
  [[ "$1" =~ ^[a-z][a-z0-9]*$ ]] || usage "not a username: '$1' (they look like jdoe)"
  row="$(grep "^$1|" <<<"$users" || true)"
  [ -n "$row" ] || { echo "no user named $1 (known: jdoe, mkovacs, tbauer)" >&2; exit 1; }
  IFS='|' read -r u_id u_name u_tmp <<<"$row"
}
bool() { one_of "$1" "$2" true false; }

case "$cmd" in
  status)
    allow_flags; npos 1; find_ticket "${pos[0]}"
    echo "$t_id [$t_cat, $t_prio] $t_sum"
    echo "requester: $t_user · assignee: $t_assignee · state: $t_state · time logged: $t_hours h"
    ;;
  open)
    allow_flags category priority user; npos 1
    category="$(opt category "")"; priority="$(opt priority normal)"; user="$(opt user "")"
    [ -n "$category" ] || usage "open: --category is required"
    one_of "$category" category network hardware software access email printer
    one_of "$priority" priority low normal high
    [ -n "$user" ] || usage "open: --user is required"
    find_user "$user"
    summary="${pos[0]}"
    [ -n "${summary// /}" ] || usage "open: the summary is empty"
    case "$category" in
      network|access) queue="Infrastructure" ;;
      hardware|printer) queue="Field support" ;;
      *) queue="Applications" ;;
    esac
    case "$priority" in
      high) sla="4 hours" ;;
      normal) sla="1 business day" ;;
      low) sla="3 business days" ;;
    esac
    echo "Opened INC-40733 [$category, $priority] for $user ($u_name): $summary"
    echo "queue: $queue · first response within $sla"
    ;;
  close)
    allow_flags resolution notify; npos 1; find_ticket "${pos[0]}"
    resolution="$(opt resolution fixed)"; notify="$(opt notify true)"
    one_of "$resolution" resolution fixed duplicate no_response wont_fix
    bool "$notify" notify
    case "$t_state" in closed*) echo "$t_id is already $t_state" >&2; exit 1 ;; esac
    echo "Closed $t_id ($t_sum) as $resolution."
    if [ "$notify" = true ]; then echo "$t_user was notified by email."; else echo "No email sent to $t_user."; fi
    ;;
  list)
    allow_flags user state limit; npos 0
    user="$(opt user "")"; state="$(opt state open)"; limit="$(opt limit 5)"
    [ -n "$user" ] || usage "list: --user is required"
    one_of "$state" state open closed all
    [[ "$limit" =~ ^[0-9]+$ ]] && [ "$limit" -ge 1 ] && [ "$limit" -le 50 ] || usage "limit must be a whole number from 1 to 50 (got '$limit')"
    find_user "$user"
    n=0
    while IFS='|' read -r id cat prio st usr sum _ _; do
      [ "$usr" = "$user" ] || continue
      case "$state:$st" in open:closed*|closed:[!c]*) continue ;; esac
      n=$((n + 1)); [ "$n" -le "$limit" ] || break
      echo "$n. $id [$cat, $prio] $sum — $st"
    done <<<"$tickets"
    [ "$n" -gt 0 ] || echo "$user ($u_name) has no $state tickets."
    ;;
  unlock)
    allow_flags reset-password; npos 1
    reset="$(opt reset-password false)"; bool "$reset" reset-password
    find_user "${pos[0]}"
    echo "Unlocked $u_id ($u_name); the account had been locked since 08:14 after 5 failed sign-ins."
    if [ "$reset" = true ]; then
      echo "Temporary password: $u_tmp (valid 24 h, must be changed at the next sign-in)."
    else
      echo "Password unchanged."
    fi
    ;;
  log)
    allow_flags hours; npos 1; find_ticket "${pos[0]}"
    hours="$(opt hours "")"
    [[ "$hours" =~ ^[0-9]+([.][0-9]+)?$ ]] || usage "hours must be a number like 1.5 (got '$hours')"
    awk -v h="$hours" 'BEGIN { exit !(h > 0 && h <= 24) }' || usage "hours must be more than 0 and at most 24 (got $hours)"
    total="$(awk -v a="$t_hours" -v h="$hours" 'BEGIN { printf "%.2f", a + h }' | sed -E 's/\.?0+$//')"
    echo "Logged $hours h on $t_id. Total time on $t_id: $total h."
    ;;
  *) usage "unknown command '$cmd': status, open, close, list, unlock or log" ;;
esac
