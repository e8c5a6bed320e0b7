#!/usr/bin/env bash
# Northwind HR system (fixed test data).
#   hr.sh balance EMPLOYEE
#   hr.sh request EMPLOYEE --kind=K --start=YYYY-MM-DD --days=D
#   hr.sh cancel REQUEST [--notify-manager=true|false]
#   hr.sh holidays COUNTRY [--year=YYYY] [--month=M]
#   hr.sh out TEAM YYYY-MM-DD
set -euo pipefail

usage() { echo "$*" >&2; exit 2; }
cmd="${1:-}"
[ -n "$cmd" ] || usage "usage: hr.sh balance|request|cancel|holidays|out ..."
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
one_of() {
  local v="$1" name="$2"; shift 2
  for x in "$@"; do [ "$v" = "$x" ] && return 0; done
  usage "$name must be one of: $* (got '$v')"
}
isodate() {
  [[ "$2" =~ ^20[0-9]{2}-[01][0-9]-[0-3][0-9]$ ]] && date -d "$2" +%F >/dev/null 2>&1 \
    || usage "$1 must be a date YYYY-MM-DD (got '$2')"
}
employee() {
  e="$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]')"
  [[ "$e" =~ ^E[0-9]{4}$ ]] || usage "not an employee id: '$1' (they look like E1042)"
  case "$e" in
    E1042) e_name="Sam Ortiz"; e_left=5.5; e_taken=14.5; e_planned=3; e_sick=2; e_manager="Dana Reyes" ;;
    E1077) e_name="Ana Lima"; e_left=9; e_taken=11; e_planned=3; e_sick=0; e_manager="Dana Reyes" ;;
    E1103) e_name="Ben Okafor"; e_left=12; e_taken=8; e_planned=3; e_sick=4; e_manager="Dana Reyes" ;;
    *) echo "no employee $e" >&2; exit 1 ;;
  esac
}

case "$cmd" in
  balance)
    allow_flags; npos 1; employee "${pos[0]}"
    echo "$e ($e_name), vacation 2026: 23 days, $e_taken taken, $e_planned planned, $e_left left."
    echo "Sick days taken in 2026: $e_sick."
    ;;
  request)
    allow_flags kind start days; npos 1; employee "${pos[0]}"
    kind="$(opt kind "")"; start="$(opt start "")"; days="$(opt days "")"
    [ -n "$kind" ] || usage "request: --kind is required"
    one_of "$kind" kind vacation sick parental unpaid
    isodate start "$start"
    [[ "$days" =~ ^[0-9]+([.][0-9]+)?$ ]] || usage "days must be a number like 1 or 0.5 (got '$days')"
    awk -v d="$days" 'BEGIN { exit !(d > 0 && d <= 60 && d * 2 == int(d * 2)) }' || usage "days must be more than 0, at most 60, in half days (got $days)"
    dow="$(date -d "$start" +%u)"
    [ "$dow" -le 5 ] || { echo "$start is a $(LC_ALL=C date -d "$start" +%A): leave starts on a working day." >&2; exit 1; }
    case "$kind" in
      vacation)
        awk -v d="$days" -v l="$e_left" 'BEGIN { exit !(d <= l) }' || { echo "Not enough vacation: $e ($e_name) has $e_left days left, asked for $days." >&2; exit 1; }
        left="$(awk -v d="$days" -v l="$e_left" 'BEGIN { print l - d }')"
        echo "LV-2291 submitted: vacation, $days days from $start for $e ($e_name)."
        echo "Waiting for approval by $e_manager. Vacation left after it: $left days." ;;
      sick)
        echo "LV-2292 recorded: sick leave, $days days from $start for $e ($e_name). No approval needed."
        echo "From the 4th day in a row a doctor's note is needed." ;;
      parental)
        echo "LV-2293 recorded: parental leave, $days days from $start for $e ($e_name). HR will contact you." ;;
      unpaid)
        echo "LV-2294 submitted: unpaid leave, $days days from $start for $e ($e_name). Waiting for approval by $e_manager." ;;
    esac
    ;;
  cancel)
    allow_flags notify-manager; npos 1
    notify="$(opt notify-manager true)"; one_of "$notify" notify-manager true false
    r="$(printf '%s' "${pos[0]}" | tr '[:lower:]' '[:upper:]')"
    [[ "$r" =~ ^LV-[0-9]{4}$ ]] || usage "not a request id: '${pos[0]}' (they look like LV-1187)"
    case "$r" in
      LV-2291) echo "LV-2291 cancelled (vacation, 5 days from 2026-12-21); the days are back in the balance." ;;
      LV-2292) echo "LV-2292 cancelled (sick leave)." ;;
      LV-2188) echo "LV-2188 cancelled (vacation, 3 days from 2027-01-04); the days are back in the balance." ;;
      *) echo "no request $r" >&2; exit 1 ;;
    esac
    if [ "$notify" = true ]; then echo "Dana Reyes (manager) was notified."; else echo "The manager was not notified."; fi
    ;;
  holidays)
    allow_flags year month; npos 1
    country="${pos[0]}"; year="$(opt year 2026)"; month="$(opt month "")"
    one_of "$country" country ES FR DE UK US PT
    [[ "$year" =~ ^[0-9]{4}$ ]] || usage "year must be a year like 2026 (got '$year')"
    if [ -n "$month" ]; then
      [[ "$month" =~ ^[0-9]{1,2}$ ]] && [ "$month" -ge 1 ] && [ "$month" -le 12 ] || usage "month must be from 1 to 12 (got '$month')"
    fi
    [ "$year" = 2026 ] || { echo "Only the 2026 calendars are loaded (asked for $year)." >&2; exit 1; }
    case "$country" in
      ES) list="01-01 Año Nuevo|01-06 Epifanía del Señor|04-03 Viernes Santo|05-01 Fiesta del Trabajo|08-15 Asunción de la Virgen|10-12 Fiesta Nacional de España|11-01 Todos los Santos|12-06 Día de la Constitución|12-08 Inmaculada Concepción|12-25 Navidad" ;;
      FR) list="01-01 Jour de l'An|04-06 Lundi de Pâques|05-01 Fête du Travail|05-08 Victoire 1945|05-14 Ascension|05-25 Lundi de Pentecôte|07-14 Fête nationale|08-15 Assomption|11-01 Toussaint|11-11 Armistice|12-25 Noël" ;;
      DE) list="01-01 Neujahr|04-03 Karfreitag|04-06 Ostermontag|05-01 Tag der Arbeit|05-14 Christi Himmelfahrt|05-25 Pfingstmontag|10-03 Tag der Deutschen Einheit|12-25 1. Weihnachtstag|12-26 2. Weihnachtstag" ;;
      UK) list="01-01 New Year's Day|04-03 Good Friday|04-06 Easter Monday|05-04 Early May bank holiday|05-25 Spring bank holiday|08-31 Summer bank holiday|12-25 Christmas Day|12-28 Boxing Day (substitute day)" ;;
      US) list="01-01 New Year's Day|01-19 Martin Luther King Jr. Day|02-16 Washington's Birthday|05-25 Memorial Day|06-19 Juneteenth|07-03 Independence Day (observed)|09-07 Labor Day|10-12 Columbus Day|11-11 Veterans Day|11-26 Thanksgiving Day|12-25 Christmas Day" ;;
      PT) list="01-01 Ano Novo|04-03 Sexta-feira Santa|04-05 Páscoa|04-25 Dia da Liberdade|05-01 Dia do Trabalhador|06-04 Corpo de Deus|06-10 Dia de Portugal|08-15 Assunção de Nossa Senhora|10-05 Implantação da República|11-01 Todos os Santos|12-01 Restauração da Independência|12-08 Imaculada Conceição|12-25 Natal" ;;
    esac
    n=0
    IFS='|' read -ra days <<<"$list"
    for d in "${days[@]}"; do
      md="${d%% *}"; name="${d#* }"
      if [ -n "$month" ] && [ "$((10#${md%-*}))" -ne "$((10#$month))" ]; then continue; fi
      n=$((n + 1))
      echo "$year-$md $name ($(LC_ALL=C date -d "$year-$md" +%A))"
    done
    [ "$n" -gt 0 ] || echo "No public holidays in $country in $year-$(printf '%02d' "$((10#$month))")."
    ;;
  out)
    allow_flags; npos 2
    team="${pos[0]}"; day="${pos[1]}"
    one_of "$team" team support sales engineering finance
    isodate date "$day"
    case "$team:$day" in
      support:2026-12-10) echo "support on 2026-12-10: Ana Lima (vacation, back 2026-12-14), Ben Okafor (sick)." ;;
      support:2026-12-11) echo "support on 2026-12-11: Ana Lima (vacation, back 2026-12-14)." ;;
      sales:2026-12-10) echo "sales on 2026-12-10: Chloé Martin (training, all day)." ;;
      *) echo "Nobody from $team is off on $day." ;;
    esac
    ;;
  *) usage "unknown command '$cmd': balance, request, cancel, holidays or out" ;;
esac
