#!/usr/bin/env bash
# Kalender von Brandt Logistik (feste Testdaten).
#   kalender.sh termine DATUM [--person=KÜRZEL]
#   kalender.sh frei DATUM HH:MM [--stunden=H] [--plaetze=N] [--video=true|false]
#   kalender.sh buchen RAUM DATUM HH:MM [--stunden=H]
#   kalender.sh absagen TERMIN-ID [--benachrichtigen=true|false]
set -euo pipefail

usage() { echo "$*" >&2; exit 2; }
cmd="${1:-}"
[ -n "$cmd" ] || usage "Aufruf: kalender.sh termine|frei|buchen|absagen ..."
shift
declare -A flag=()
pos=()
for a in "$@"; do
  case "$a" in
    --*=*) k="${a%%=*}"; flag["${k#--}"]="${a#*=}" ;;
    --*) usage "unbekannte Option: $a" ;;
    *) pos+=("$a") ;;
  esac
done
opt() { printf '%s' "${flag[$1]:-$2}"; }
allow_flags() {
  local k f ok
  for k in "${!flag[@]}"; do
    ok=no; for f in "$@"; do [ "$k" = "$f" ] && ok=yes; done
    [ "$ok" = yes ] || usage "$cmd: unbekannte Option --$k"
  done
}
npos() { [ "${#pos[@]}" -eq "$1" ] || usage "$cmd: $1 Argument(e) erwartet, ${#pos[@]} bekommen"; }
datum() {
  [[ "$1" =~ ^20[0-9]{2}-[01][0-9]-[0-3][0-9]$ ]] && date -d "$1" +%F >/dev/null 2>&1 \
    || usage "kein Datum im Format JJJJ-MM-TT: '$1'"
}
# HH:MM (auch H:MM) -> Minuten seit Mitternacht
minuten() {
  [[ "$1" =~ ^([01]?[0-9]|2[0-3]):([0-5][0-9])$ ]] || usage "keine Uhrzeit im Format HH:MM: '$1'"
  echo $(( 10#${BASH_REMATCH[1]} * 60 + 10#${BASH_REMATCH[2]} ))
}
uhr() { printf '%02d:%02d' $(( $1 / 60 )) $(( $1 % 60 )); }
dauer() { # STUNDEN -> Minuten
  [[ "$1" =~ ^[0-9]+([.][0-9]+)?$ ]] || usage "stunden muss eine Zahl sein, z. B. 1 oder 1.5 (bekommen: '$1')"
  awk -v h="$1" 'BEGIN { m = h * 60; if (h <= 0 || h > 10 || m != int(m)) exit 1; print m }' \
    || usage "stunden: mehr als 0 und höchstens 10, in ganzen Minuten (bekommen: $1)"
}

# datum|von|bis|raum|titel|id|teilnehmende|person
termine="$(cat <<'DATA'
2026-12-09|09:00|09:30|Elbe|Stand-up Disposition|M-3301|4|jbrandt
2026-12-09|11:00|12:00|Alster|Angebot Spedition Kröger|M-3318|4|jbrandt
2026-12-09|15:00|16:30|Hafen|Budget 2027|M-3325|7|jbrandt
2026-12-09|10:00|12:00|-|Kundentermin Reederei Olsen (extern)|M-3327|3|tkoch
2026-12-09|14:00|15:00|Elbe|Einarbeitung Lager|M-3330|2|tkoch
2026-12-10|13:00|17:00|Hafen|Workshop Lagerverwaltung|M-3334|9|lweber
2026-12-10|14:00|15:00|Alster|Bewerbungsgespräch|M-3336|3|lweber
2026-12-11|09:00|11:00|Alster|Schulung Zoll|M-3338|5|tkoch
DATA
)"
declare -A plaetze=([Alster]=6 [Elbe]=4 [Hafen]=10 [Speicher]=16)
declare -A video=([Alster]=true [Elbe]=false [Hafen]=true [Speicher]=false)
declare -A buchung=([Alster]=M-3340 [Elbe]=M-3341 [Hafen]=M-3342 [Speicher]=M-3343)
RAEUME=(Alster Elbe Hafen Speicher)

belegt() { # RAUM DATUM VON BIS -> 0 wenn belegt (und gibt den Termin aus)
  local d v b r t id n p
  while IFS='|' read -r d v b r t id n p; do
    [ "$d" = "$2" ] && [ "$r" = "$1" ] || continue
    if [ "$(minuten "$v")" -lt "$4" ] && [ "$3" -lt "$(minuten "$b")" ]; then echo "$v–$b $t"; return 0; fi
  done <<<"$termine"
  return 1
}

case "$cmd" in
  termine)
    allow_flags person; npos 1; datum "${pos[0]}"
    person="$(opt person jbrandt)"
    case "$person" in jbrandt|tkoch|lweber) ;; *) echo "Unbekanntes Kürzel '$person' (bekannt: jbrandt, tkoch, lweber)." >&2; exit 1 ;; esac
    n=0
    while IFS='|' read -r d v b r t id tn p; do
      [ "$d" = "${pos[0]}" ] && [ "$p" = "$person" ] || continue
      n=$((n + 1))
      ort="Raum $r"; [ "$r" = - ] && ort="außer Haus"
      echo "$v–$b $t · $ort · $id"
    done <<<"$termine"
    [ "$n" -gt 0 ] || echo "$person hat am ${pos[0]} keine Termine."
    ;;
  frei)
    allow_flags stunden plaetze video; npos 2; datum "${pos[0]}"
    von="$(minuten "${pos[1]}")"; d="$(dauer "$(opt stunden 1)")"; bis=$(( von + d ))
    min="$(opt plaetze 1)"; vid="$(opt video false)"
    [[ "$min" =~ ^[0-9]+$ ]] && [ "$min" -ge 1 ] || usage "plaetze muss eine ganze Zahl ab 1 sein (bekommen: '$min')"
    [ "$vid" = true ] || [ "$vid" = false ] || usage "video muss true oder false sein (bekommen: '$vid')"
    n=0
    for r in "${RAEUME[@]}"; do
      [ "${plaetze[$r]}" -ge "$min" ] || continue
      [ "$vid" = false ] || [ "${video[$r]}" = true ] || continue
      belegt "$r" "${pos[0]}" "$von" "$bis" >/dev/null && continue
      n=$((n + 1))
      extra=""; [ "${video[$r]}" = true ] && extra=", Video"
      echo "frei: $r (${plaetze[$r]} Plätze$extra)"
    done
    [ "$n" -gt 0 ] || echo "Kein passender Raum frei am ${pos[0]} von $(uhr "$von") bis $(uhr "$bis")."
    ;;
  buchen)
    allow_flags stunden; npos 3
    r="${pos[0]}"
    [ -n "${plaetze[$r]:-}" ] || usage "unbekannter Raum '$r' (Räume: ${RAEUME[*]})"
    datum "${pos[1]}"
    von="$(minuten "${pos[2]}")"; d="$(dauer "$(opt stunden 1)")"; bis=$(( von + d ))
    if t="$(belegt "$r" "${pos[1]}" "$von" "$bis")"; then echo "$r ist am ${pos[1]} belegt: $t" >&2; exit 1; fi
    echo "Gebucht: $r, ${pos[1]}, $(uhr "$von")–$(uhr "$bis"). Buchungsnummer ${buchung[$r]}."
    ;;
  absagen)
    allow_flags benachrichtigen; npos 1
    info="$(opt benachrichtigen true)"
    [ "$info" = true ] || [ "$info" = false ] || usage "benachrichtigen muss true oder false sein (bekommen: '$info')"
    id="$(printf '%s' "${pos[0]}" | tr '[:lower:]' '[:upper:]')"
    [[ "$id" =~ ^M-[0-9]{4}$ ]] || usage "keine Termin-ID: '${pos[0]}' (sie sehen aus wie M-3318)"
    row="$(grep "|$id|" <<<"$termine" || true)"
    [ -n "$row" ] || { echo "Kein Termin $id." >&2; exit 1; }
    IFS='|' read -r d v b r t _ tn p <<<"$row"
    echo "Abgesagt: $id „$t“ ($d, $v, Raum $r)."
    if [ "$info" = true ]; then echo "$tn Teilnehmende per Mail benachrichtigt."; else echo "Niemand wurde benachrichtigt."; fi
    ;;
  *) usage "unbekannter Befehl '$cmd': termine, frei, buchen oder absagen" ;;
esac
