#!/usr/bin/env bash
# The family recipe box.
#   recipes.sh find INGREDIENT [--max-minutes=N] [--vegetarian=true|false]
#   recipes.sh get RECIPE [--servings=N]
#   recipes.sh nutrition RECIPE [--per=serving|whole_pot]
#   recipes.sh substitute INGREDIENT
set -euo pipefail

usage() { echo "$*" >&2; exit 2; }
cmd="${1:-}"
[ -n "$cmd" ] || usage "usage: recipes.sh find|get|nutrition|substitute ..."
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
RECIPES="shakshuka mushroom_risotto buttermilk_pancakes chili_con_carne lentil_soup chickpea_curry"
recipe() { [[ " $RECIPES " == *" $1 "* ]] || usage "unknown recipe '$1'; recipes: $RECIPES"; }
# Lower case, singular-ish: "Tomatoes" -> tomato, "chickpeas" -> chickpea, "eggs" -> egg.
stem() { printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | sed -E 's/^ +| +$//g; s/oes$/o/; s/([^s])s$/\1/'; }

# name|minutes|vegetarian|ingredients (per 4 servings: amount unit name; amounts scale)
box="$(cat <<'DATA'
shakshuka|30|yes|6 - eggs;800 g canned tomatoes;2 - red peppers;1 - onion;2 - garlic cloves;1 tsp cumin;0.5 tsp smoked paprika;100 g feta
mushroom_risotto|40|yes|320 g arborio rice;400 g mushrooms;1 - onion;1.2 l vegetable stock;100 ml white wine;60 g parmesan;30 g butter
buttermilk_pancakes|25|yes|250 g flour;500 ml buttermilk;2 - eggs;2 tbsp sugar;2 tsp baking powder;40 g butter
chili_con_carne|75|no|500 g minced beef;400 g kidney beans;800 g canned tomatoes;2 - onions;1 - red pepper;2 tsp chili powder;1 tsp cumin
lentil_soup|45|yes|300 g red lentils;2 - carrots;1 - onion;400 g canned tomatoes;1.2 l vegetable stock;1 tsp cumin;1 - lemon
chickpea_curry|35|yes|480 g chickpeas (drained);400 ml coconut milk;400 g canned tomatoes;300 g spinach;1 - onion;2 tbsp curry paste;200 g basmati rice
DATA
)"
steps() {
  case "$1" in
    shakshuka) echo "Soften onion and peppers 10 min, add garlic and spices, then tomatoes; simmer 10 min. Make wells, crack in the eggs, cover 6-8 min. Crumble feta on top." ;;
    mushroom_risotto) echo "Fry onion, toast the rice, add wine, then the hot stock a ladle at a time for 18 min; fry the mushrooms apart and stir in with butter and parmesan." ;;
    buttermilk_pancakes) echo "Whisk dry, whisk wet, fold together (lumps are fine), rest 10 min, cook 2 min a side on medium heat." ;;
    chili_con_carne) echo "Brown the beef, add onions and pepper, spices, tomatoes; simmer 45 min, add beans for the last 15." ;;
    lentil_soup) echo "Sweat onion and carrots, add lentils, tomatoes, stock and cumin; simmer 25 min, blend half, squeeze in the lemon." ;;
    chickpea_curry) echo "Fry onion and curry paste, add tomatoes and coconut milk, then chickpeas; simmer 15 min, wilt in the spinach. Serve with rice." ;;
  esac
}
num() { awk -v x="$1" 'BEGIN { s = sprintf("%.2f", x); sub(/0+$/, "", s); sub(/\.$/, "", s); print s }'; }

case "$cmd" in
  find)
    allow_flags max-minutes vegetarian; npos 1
    maxm="$(opt max-minutes "")"; veg="$(opt vegetarian false)"
    if [ -n "$maxm" ]; then [[ "$maxm" =~ ^[0-9]+$ ]] && [ "$maxm" -ge 1 ] || usage "max-minutes must be a whole number of minutes (got '$maxm')"; fi
    [ "$veg" = true ] || [ "$veg" = false ] || usage "vegetarian must be true or false (got '$veg')"
    want="$(stem "${pos[0]}")"
    [ -n "$want" ] || usage "give an ingredient"
    n=0
    while IFS='|' read -r name mins isveg ings; do
      found=no
      IFS=';' read -ra items <<<"$ings"
      for it in "${items[@]}"; do
        for w in ${it#* * }; do [ "$(stem "$w")" = "$want" ] && found=yes; done
      done
      [ "$found" = yes ] || continue
      [ "$veg" = false ] || [ "$isveg" = yes ] || continue
      [ -z "$maxm" ] || [ "$mins" -le "$maxm" ] || continue
      n=$((n + 1))
      echo "$name: ready in $mins min$([ "$isveg" = yes ] && echo ", vegetarian")"
    done <<<"$box"
    [ "$n" -gt 0 ] || echo "Nothing in the recipe box with '${pos[0]}'$([ "$veg" = true ] && echo ", vegetarian")${maxm:+, in $maxm min or less}."
    ;;
  get)
    allow_flags servings; npos 1; recipe "${pos[0]}"
    s="$(opt servings 4)"
    [[ "$s" =~ ^[0-9]+$ ]] && [ "$s" -ge 1 ] && [ "$s" -le 40 ] || usage "servings must be a whole number from 1 to 40 (got '$s')"
    row="$(grep "^${pos[0]}|" <<<"$box")"
    IFS='|' read -r name mins isveg ings <<<"$row"
    echo "$name for $s ($mins min):"
    IFS=';' read -ra items <<<"$ings"
    for it in "${items[@]}"; do
      read -r amount unit rest <<<"$it"
      a="$(num "$(awk -v a="$amount" -v s="$s" 'BEGIN { print a * s / 4 }')")"
      if [ "$unit" = - ]; then echo "- $a $rest"; else echo "- $a $unit $rest"; fi
    done
    echo "$(steps "$name")"
    ;;
  nutrition)
    allow_flags per; npos 1; recipe "${pos[0]}"
    per="$(opt per serving)"
    [ "$per" = serving ] || [ "$per" = whole_pot ] || usage "per must be serving or whole_pot (got '$per')"
    case "${pos[0]}" in
      shakshuka) k=290; p=16; c=18; f=17 ;;
      mushroom_risotto) k=520; p=14; c=72; f=18 ;;
      buttermilk_pancakes) k=380; p=11; c=58; f=12 ;;
      chili_con_carne) k=540; p=38; c=34; f=27 ;;
      lentil_soup) k=310; p=18; c=48; f=4 ;;
      chickpea_curry) k=610; p=19; c=74; f=27 ;;
    esac
    if [ "$per" = serving ]; then
      echo "${pos[0]}, per serving (1 of 4): $k kcal, protein $p g, carbs $c g, fat $f g"
    else
      echo "${pos[0]}, whole pot (4 servings): $((k * 4)) kcal, protein $((p * 4)) g, carbs $((c * 4)) g, fat $((f * 4)) g"
    fi
    ;;
  substitute)
    allow_flags; npos 1
    case "$(stem "${pos[0]}")" in
      buttermilk) echo "buttermilk: 240 ml milk + 15 ml lemon juice or vinegar, rest 10 min; or 180 g plain yogurt + 60 ml milk" ;;
      egg) echo "1 egg: 1 tbsp ground flaxseed + 3 tbsp water, rest 5 min (baking); or 60 g apple sauce (cakes)" ;;
      "white wine") echo "white wine: the same amount of stock + 1 tsp lemon juice per 100 ml" ;;
      feta) echo "feta: crumbled goat cheese, or ricotta with a pinch of salt" ;;
      "coconut milk") echo "coconut milk: 300 ml cream + 100 ml water, or cashew cream" ;;
      *) echo "No substitute on file for '${pos[0]}'." ;;
    esac
    ;;
  *) usage "unknown command '$cmd': find, get, nutrition or substitute" ;;
esac
