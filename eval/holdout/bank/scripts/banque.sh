#!/usr/bin/env bash
# Comptes de Camille Martin (copie figée au lundi 07/12/2026, 10:42).
#   banque.sh solde COMPTE [--operations=N]
#   banque.sh virement --de=COMPTE --vers=COMPTE|BENEFICIAIRE --montant=EUROS [--instantane=true|false]
#   banque.sh carte [--carte=visa|mastercard] --bloquer=true|false
#   banque.sh depenses [--compte=courant|joint] [--mois=1..12] [--categorie=CATEGORIE]
set -euo pipefail

usage() { echo "$*" >&2; exit 2; }
fail() { echo "$*" >&2; exit 1; }

cmd="${1:-}"
[ -n "$cmd" ] || usage "usage : banque.sh solde|virement|carte|depenses ..."
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
# Montant en centimes -> "1 284,37 €"
eur() {
  awk -v c="$1" 'BEGIN {
    s = ""; if (c < 0) { s = "-"; c = -c }
    e = int(c / 100); d = c % 100; t = sprintf("%d", e); o = ""
    while (length(t) > 3) { o = " " substr(t, length(t) - 2) o; t = substr(t, 1, length(t) - 3) }
    printf "%s%s%s,%02d €", s, t, o, d }'
}

# Comptes et bénéficiaires : des identifiants de la banque.
compte_nom() { case "$1" in courant) echo "compte courant" ;; livret) echo "Livret A" ;; joint) echo "compte joint" ;; esac; }
solde_cts() { case "$1" in courant) echo 128437 ;; livret) echo 691255 ;; joint) echo 203790 ;; esac; }
ident() {
  local v="$1" quoi="$2"
  [[ "$v" =~ ^[a-z][a-z-]*$ ]] || usage "$quoi invalide : '$v' (en minuscules, comme courant ou livret)"
}
compte() {
  ident "$1" compte
  case "$1" in
    courant|livret|joint) ;;
    maman|lefevre) fail "« $1 » est un bénéficiaire, pas un de vos comptes (comptes : courant, livret, joint)." ;;
    *) fail "Aucun compte « $1 ». Vos comptes : courant, livret, joint." ;;
  esac
}

ops_courant="$(cat <<'DATA'
06/12|MONOPRIX LYON 3 (carte)|-2380
05/12|PATHE BELLECOUR (carte)|-2200
04/12|FREE MOBILE (prélèvement)|-1599
03/12|BOULANGERIE DU PARC (carte)|-640
01/12|SALAIRE ATELIERS DU RHONE (virement reçu)|241260
30/11|SNCF CONNECT (carte)|-4800
29/11|LE BOUCHON DES FILLES (carte)|-4600
28/11|EDF (prélèvement)|-6500
27/11|PHARMACIE GAMBETTA (carte)|-1270
26/11|Virement permanent vers Livret A|-10000
25/11|CARREFOUR CITY (carte)|-3745
24/11|TCL ABONNEMENT (carte)|-2500
DATA
)"
ops_livret="$(cat <<'DATA'
26/11|Virement permanent du compte courant|10000
26/10|Virement permanent du compte courant|10000
15/10|Virement vers le compte joint|-30000
26/09|Virement permanent du compte courant|10000
26/08|Virement permanent du compte courant|10000
01/01|Intérêts 2025|10418
DATA
)"
ops_joint="$(cat <<'DATA'
06/12|LEROY MERLIN (carte)|-6490
05/12|BIOCOOP CROIX-ROUSSE (carte)|-5820
04/12|MAIF ASSURANCE HABITATION (prélèvement)|-2140
02/12|JULIEN DUPONT (virement reçu)|60000
02/12|CAMILLE MARTIN (virement reçu)|60000
30/11|LIDL (carte)|-8235
28/11|DECATHLON (carte)|-4999
25/11|CHEZ PAUL (carte)|-5400
22/11|LIDL (carte)|-7110
20/11|ENGIE (prélèvement)|-4800
DATA
)"

case "$cmd" in
  solde)
    allow_flags operations; npos 1; compte "${pos[0]}"; c="${pos[0]}"
    n="$(opt operations 5)"
    [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 0 ] && [ "$n" -le 50 ] || usage "operations : un nombre entier de 0 à 50 (reçu : '$n')"
    case "$c" in courant) ops="$ops_courant"; iban="FR76 1027 8073 ···· ···· ··· 5208" ;;
                 livret) ops="$ops_livret"; iban="FR76 1027 8073 ···· ···· ··· 7731" ;;
                 joint) ops="$ops_joint"; iban="FR76 1027 8073 ···· ···· ··· 0466" ;; esac
    echo "$(compte_nom "$c") ($iban) — solde au 07/12/2026 : $(eur "$(solde_cts "$c")")"
    total="$(wc -l <<<"$ops")"
    [ "$n" -le "$total" ] || { echo "(seulement $total opérations sur les 12 derniers mois)"; n="$total"; }
    [ "$n" -gt 0 ] || exit 0
    echo "$n dernières opérations :"
    head -n "$n" <<<"$ops" | while IFS='|' read -r d lib m; do
      if [ "$m" -gt 0 ]; then s="+$(eur "$m")"; else s="$(eur "$m")"; fi
      echo "  $d  $lib  $s"
    done
    ;;
  virement)
    allow_flags de vers montant instantane; npos 0
    de="$(opt de "")"; vers="$(opt vers "")"; m="$(opt montant "")"; inst="$(opt instantane false)"
    [ -n "$de" ] || usage "virement : --de est obligatoire"
    [ -n "$vers" ] || usage "virement : --vers est obligatoire"
    [ -n "$m" ] || usage "virement : --montant est obligatoire"
    [[ "$m" =~ ^[0-9]+([.][0-9]+)?$ ]] || usage "montant : un nombre en euros avec un point, comme 150 ou 42.50 (reçu : '$m')"
    cts="$(awk -v m="$m" 'BEGIN { printf "%d", m * 100 + 0.5 }')"
    awk -v m="$m" -v c="$cts" 'BEGIN { exit !((m * 100 - c) < 0.001 && (c - m * 100) < 0.001) }' \
      || usage "montant : au plus deux décimales (reçu : '$m')"
    [ "$cts" -gt 0 ] || usage "montant : doit être plus grand que 0 (reçu : '$m')"
    one_of "$inst" instantane true false
    compte "$de"
    ident "$vers" destinataire
    case "$vers" in
      courant|livret|joint) dest="le $(compte_nom "$vers") (Camille Martin)" ;;
      maman) dest="Françoise Martin (maman)" ;;
      lefevre) dest="Bernard Lefèvre (propriétaire)" ;;
      *) fail "Aucun compte ni bénéficiaire enregistré « $vers ». Comptes : courant, livret, joint ; bénéficiaires : maman, lefevre." ;;
    esac
    [ "$de" != "$vers" ] || usage "virement : le compte à débiter et le destinataire sont le même ($de)"
    if [ "$de" = livret ] && [ "$vers" != courant ] && [ "$vers" != joint ]; then
      fail "Refusé : depuis le Livret A, on ne peut virer que vers vos propres comptes (courant ou joint)."
    fi
    s="$(solde_cts "$de")"
    [ "$cts" -le "$s" ] || fail "Refusé : solde insuffisant. Le $(compte_nom "$de") n'a que $(eur "$s") ; virement demandé : $(eur "$cts")."
    if [ "$vers" = livret ] && [ $(( $(solde_cts livret) + cts )) -gt 2295000 ]; then
      fail "Refusé : le Livret A dépasserait son plafond de 22 950,00 € (solde actuel : $(eur "$(solde_cts livret)"))."
    fi
    ref="VIR-$(( $(printf '%s|%s|%s|%s' "$de" "$vers" "$cts" "$inst" | cksum | cut -d' ' -f1) % 90000 + 10000 ))"
    echo "Virement $ref enregistré le 07/12/2026 à 10:42 : $(eur "$cts") du $(compte_nom "$de") vers $dest."
    if [ "$inst" = true ]; then echo "Virement instantané : crédité immédiatement."; else echo "Arrivée prévue le 08/12/2026."; fi
    echo "Nouveau solde du $(compte_nom "$de") : $(eur $(( s - cts )))."
    ;;
  carte)
    allow_flags carte bloquer; npos 0
    carte="$(opt carte visa)"
    one_of "$carte" carte visa mastercard
    b="$(opt bloquer "")"
    [ -n "$b" ] || usage "carte : --bloquer=true ou --bloquer=false est obligatoire"
    one_of "$b" bloquer true false
    case "$carte" in
      visa) nom="Visa •••• 4417 (compte courant)" ;;
      mastercard) nom="Mastercard •••• 0932 (compte joint)" ;;
    esac
    if [ "$b" = true ]; then
      echo "Carte $nom bloquée le 07/12/2026 à 10:42 : paiements et retraits refusés jusqu'au déblocage."
      echo "Si elle a été volée, faites aussi opposition (définitive) depuis l'appli ; une nouvelle carte arrive sous 5 jours ouvrés."
    else
      echo "Carte $nom débloquée le 07/12/2026 à 10:42 : paiements et retraits de nouveau acceptés."
    fi
    ;;
  depenses)
    allow_flags compte mois categorie; npos 0
    c="$(opt compte courant)"; mois="$(opt mois 12)"; cat="$(opt categorie "")"
    one_of "$c" compte courant joint
    [[ "$mois" =~ ^[0-9]+$ ]] && [ "$mois" -ge 1 ] && [ "$mois" -le 12 ] || usage "mois : un nombre entier de 1 à 12 (reçu : '$mois')"
    [ -z "$cat" ] || one_of "$cat" categorie courses restaurants transport logement loisirs sante autres
    noms=(x janvier février mars avril mai juin juillet août septembre octobre novembre décembre)
    titre="Dépenses du $(compte_nom "$c") — ${noms[$mois]} 2026"
    [ "$mois" -ne 12 ] || titre="$titre (du 1er au 7)"
    echo "$titre"
    # catégorie|base courant (cts)|base joint (cts)|commerçants
    awk -F'|' -v m="$mois" -v compte="$c" -v only="$cat" '
      function eur(c,   e, d, t, o) {
        e = int(c / 100); d = c % 100; t = sprintf("%d", e); o = ""
        while (length(t) > 3) { o = " " substr(t, length(t) - 2) o; t = substr(t, 1, length(t) - 3) }
        return sprintf("%s%s,%02d €", t, o, d) }
      {
        i = NR; base = (compte == "courant") ? $2 : $3
        f = (85 + (m * 29 + i * 47) % 31) / 100
        if ($1 == "logement") f = 1
        if (m == 12) f = f * 0.23
        if ($1 == "logement" && m == 12) f = 0
        amt = int(base * f); n = (amt == 0) ? 0 : 2 + (m * 7 + i * 3) % 9
        if ($1 == "logement" && amt > 0) n = 2
        tot += amt
        if (only == "" ) { if (amt > 0) printf "  %-12s %12s  (%d paiements)\n", $1, eur(amt), n }
        else if ($1 == only) {
          if (amt == 0) printf "%s : aucune dépense.\n", $1
          else printf "%s : %s en %d paiements.\nChez : %s.\n", $1, eur(amt), n, $4
          }
      }
      END { if (only == "") printf "Total : %s\n", eur(tot) }' <<'DATA'
courses|41230|53870|Carrefour City, Monoprix Lyon 3, Boulangerie du Parc
restaurants|16890|9240|Le Bouchon des Filles, Sushi Shop Part-Dieu, Café Mokxa
transport|9640|0|TCL, SNCF Connect, Vélo'v
logement|84500|0|M. Lefèvre (loyer), EDF
loisirs|7499|13000|Pathé Bellecour, Fnac, Decathlon
sante|3850|2200|Pharmacie Gambetta, Dr Roux
autres|12115|6480|Free Mobile, Amazon, La Poste
DATA
    ;;
  *) usage "commande inconnue « $cmd » : solde, virement, carte ou depenses" ;;
esac
