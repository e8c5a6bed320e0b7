#!/usr/bin/env bash
# Catalogue de la Librairie des Quais (copie figée).
#   catalogue.sh chercher REQUETE [--format=tous|poche|broche|numerique] [--prix-max=EUROS]
#   catalogue.sh dispo ISBN [--magasin=quais|croix-rousse|part-dieu]
#   catalogue.sh reserver ISBN --magasin=M --client=NOM [--exemplaires=N] [--cadeau=true|false]
#   catalogue.sh commande NUMERO
set -euo pipefail

usage() { echo "$*" >&2; exit 2; }

cmd="${1:-}"
[ -n "$cmd" ] || usage "usage : catalogue.sh chercher|dispo|reserver|commande ..."
shift
declare -A flag=()
pos=()
for a in "$@"; do
  case "$a" in
    --*=*) k="${a%%=*}"; flag["${k#--}"]="${a#*=}" ;;
    --*) usage "option inconnue : $a" ;;
    *) pos+=("$a") ;;
  esac
done
opt() { printf '%s' "${flag[$1]:-$2}"; }
allow_flags() {
  local k f ok
  for k in "${!flag[@]}"; do
    ok=no; for f in "$@"; do [ "$k" = "$f" ] && ok=yes; done
    [ "$ok" = yes ] || usage "$cmd : option inconnue --$k"
  done
}
npos() { [ "${#pos[@]}" -eq "$1" ] || usage "$cmd : $1 argument(s) attendu(s), ${#pos[@]} reçu(s)"; }
one_of() {
  local v="$1" name="$2"; shift 2
  for x in "$@"; do [ "$v" = "$x" ] && return 0; done
  usage "$name doit être l'une des valeurs : $* (reçu : '$v')"
}
# Minuscules sans accents, apostrophes typographiques comprises.
norm() {
  printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | sed -e 's/[éèêëÉÈÊË]/e/g' -e 's/[àâäÀÂÄ]/a/g' \
    -e 's/[îïÎÏ]/i/g' -e 's/[ôöÔÖ]/o/g' -e 's/[ùûüÙÛÜ]/u/g' -e 's/[çÇ]/c/g' -e "s/’/'/g"
}
prix() { printf '%s' "$1" | tr . ,; }

# isbn|titre|auteur|format|prix|éditeur|stock quais|stock croix-rousse|stock part-dieu
livres="$(cat <<'DATA'
9782070377220|La Place|Annie Ernaux|poche|7.60|Folio|4|0|1
9782070402472|Les Années|Annie Ernaux|poche|9.20|Folio|0|2|3
9782070779222|Les Années|Annie Ernaux|broche|21.00|Gallimard|1|0|0
9782072943867|Le jeune homme|Annie Ernaux|broche|8.00|Gallimard|2|1|0
9782070360024|L'Étranger|Albert Camus|poche|6.90|Folio|3|1|2
9782070360420|La Peste|Albert Camus|poche|8.60|Folio|2|2|0
9782072730092|Le Petit Prince|Antoine de Saint-Exupéry|numerique|4.99|Gallimard|0|0|0
9782253087663|Vernon Subutex 1|Virginie Despentes|poche|8.90|Le Livre de Poche|1|0|2
DATA
)"

nom_magasin() { case "$1" in quais) echo "Quais" ;; croix-rousse) echo "Croix-Rousse" ;; part-dieu) echo "Part-Dieu" ;; esac; }
livre() {
  local isbn="${1//-/}"
  [[ "$isbn" =~ ^97[89][0-9]{10}$ ]] || usage "ISBN invalide : '$1' (13 chiffres, comme 9782070360024)"
  row="$(grep "^$isbn|" <<<"$livres" || true)"
  [ -n "$row" ] || { echo "Aucun livre au catalogue avec l'ISBN $isbn." >&2; exit 1; }
  IFS='|' read -r l_isbn l_titre l_auteur l_format l_prix l_editeur s_quais s_croix s_partdieu <<<"$row"
}
stock() { case "$1" in quais) echo "$s_quais" ;; croix-rousse) echo "$s_croix" ;; part-dieu) echo "$s_partdieu" ;; esac; }
ex() { [ "$1" -le 1 ] && echo "$1 exemplaire" || echo "$1 exemplaires"; }

case "$cmd" in
  chercher)
    allow_flags format prix-max; npos 1
    format="$(opt format tous)"; prix_max="$(opt prix-max "")"
    one_of "$format" format tous poche broche numerique
    if [ -n "$prix_max" ]; then
      [[ "$prix_max" =~ ^[0-9]+([.][0-9]+)?$ ]] || usage "prix-max doit être un nombre, comme 10 ou 12.5 (reçu : '$prix_max')"
    fi
    set -f; q="$(norm "${pos[0]}")"
    [ -n "${q// /}" ] || usage "la requête est vide"
    n=0
    while IFS='|' read -r isbn titre auteur fmt p editeur _ _ _; do
      hay="$(norm "$isbn $titre $auteur")"
      ok=yes
      for w in $q; do [[ "$hay" == *"$w"* ]] || ok=no; done
      [ "$ok" = yes ] || continue
      [ "$format" = tous ] || [ "$format" = "$fmt" ] || continue
      if [ -n "$prix_max" ]; then awk -v p="$p" -v m="$prix_max" 'BEGIN { exit !(p <= m) }' || continue; fi
      n=$((n + 1))
      echo "$n. $titre — $auteur ($fmt, $editeur) — $(prix "$p") € — ISBN $isbn"
    done <<<"$livres"
    [ "$n" -gt 0 ] || echo "Aucun résultat pour « ${pos[0]} » (format : $format${prix_max:+, prix max : $prix_max €})."
    ;;
  dispo)
    allow_flags magasin; npos 1; livre "${pos[0]}"
    magasin="$(opt magasin "")"
    echo "$l_titre — $l_auteur ($l_format, $(prix "$l_prix") €, ISBN $l_isbn)"
    if [ "$l_format" = numerique ]; then echo "Livre numérique : pas de stock en magasin, disponible sur le site."; exit 0; fi
    if [ -n "$magasin" ]; then
      one_of "$magasin" magasin quais croix-rousse part-dieu
      echo "$(nom_magasin "$magasin") : $(ex "$(stock "$magasin")")"
    else
      echo "Quais : $(ex "$s_quais") · Croix-Rousse : $(ex "$s_croix") · Part-Dieu : $(ex "$s_partdieu")"
    fi
    ;;
  reserver)
    allow_flags magasin client exemplaires cadeau; npos 1; livre "${pos[0]}"
    magasin="$(opt magasin "")"; client="$(opt client "")"; n="$(opt exemplaires 1)"; cadeau="$(opt cadeau false)"
    [ -n "$magasin" ] || usage "reserver : --magasin est obligatoire"
    one_of "$magasin" magasin quais croix-rousse part-dieu
    [ -n "${client// /}" ] || usage "reserver : --client est obligatoire (prénom et nom)"
    [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 10 ] || usage "exemplaires : un nombre entier de 1 à 10 (reçu : '$n')"
    one_of "$cadeau" cadeau true false
    [ "$l_format" != numerique ] || { echo "$l_titre est un livre numérique : il ne se réserve pas en magasin." >&2; exit 1; }
    s="$(stock "$magasin")"
    [ "$s" -ge "$n" ] || { echo "Impossible : $(nom_magasin "$magasin") n'a que $(ex "$s") de $l_titre ($l_format)." >&2; exit 1; }
    total="$(awk -v p="$l_prix" -v n="$n" 'BEGIN { printf "%.2f", p * n }')"
    echo "Réservation R-3391 : $n × $l_titre ($l_format, $(prix "$l_prix") €) pour $client$([ "$cadeau" = true ] && echo ", paquet cadeau")."
    echo "À retirer à la librairie $(nom_magasin "$magasin") avant le 2026-12-12 ; $(prix "$total") € à payer sur place."
    ;;
  commande)
    allow_flags; npos 1
    [[ "${pos[0]}" =~ ^[0-9]+$ ]] || usage "numéro de commande invalide : '${pos[0]}' (des chiffres, comme 77104)"
    case "${pos[0]}" in
      77104)
        echo "Commande 77104 (passée le 2026-11-29) : 3 livres, 31,70 €."
        echo "Expédiée le 2026-12-02 par Colissimo, suivi 6A19384427710 ; livraison prévue le 2026-12-05." ;;
      76988)
        echo "Commande 76988 (passée le 2026-11-20) : 1 livre, 21,00 €. Livrée le 2026-11-24." ;;
      *) echo "Aucune commande n° ${pos[0]}." >&2; exit 1 ;;
    esac
    ;;
  *) usage "commande inconnue « $cmd » : chercher, dispo, reserver ou commande" ;;
esac
