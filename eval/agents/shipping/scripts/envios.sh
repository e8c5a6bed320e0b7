#!/usr/bin/env bash
# Paquetería Rápida (datos de prueba fijos).
#   envios.sh rastrear SEGUIMIENTO
#   envios.sh pedido NUMERO
#   envios.sh desviar SEGUIMIENTO --destino=pickup_point|neighbour|locker|depot
#   envios.sh tarifa PESO_KG --zona=Z [--urgente=true|false] [--seguro=true|false]
#   envios.sh devolver PEDIDO --linea=N --motivo=damaged|wrong_item|not_needed|late
set -euo pipefail

usage() { echo "$*" >&2; exit 2; }
cmd="${1:-}"
[ -n "$cmd" ] || usage "uso: envios.sh rastrear|pedido|desviar|tarifa|devolver ..."
shift
declare -A flag=()
pos=()
for a in "$@"; do
  case "$a" in
    --*=*) k="${a%%=*}"; flag["${k#--}"]="${a#*=}" ;;
    --*) usage "opción desconocida: $a" ;;
    *) pos+=("$a") ;;
  esac
done
opt() { printf '%s' "${flag[$1]:-$2}"; }
allow_flags() {
  local k f ok
  for k in "${!flag[@]}"; do
    ok=no; for f in "$@"; do [ "$k" = "$f" ] && ok=yes; done
    [ "$ok" = yes ] || usage "$cmd: opción desconocida --$k"
  done
}
npos() { [ "${#pos[@]}" -eq "$1" ] || usage "$cmd: se esperaban $1 argumento(s), llegaron ${#pos[@]}"; }
one_of() {
  local v="$1" name="$2"; shift 2
  for x in "$@"; do [ "$v" = "$x" ] && return 0; done
  usage "$name debe ser uno de: $* (llegó '$v')"
}
seguimiento() {
  s="$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]')"
  [[ "$s" =~ ^PR-[0-9]{4}-[0-9]{4}$ ]] || usage "número de seguimiento no válido: '$1' (son como PR-7720-3391)"
  case "$s" in PR-7720-3391|PR-7720-4410|PR-7719-0082) ;; *) echo "No hay ningún envío $s." >&2; exit 1 ;; esac
}
entero() { [[ "$2" =~ ^[0-9]+$ ]] || usage "$1 debe ser un número entero (llegó '$2')"; }

case "$cmd" in
  rastrear)
    allow_flags; npos 1; seguimiento "${pos[0]}"
    case "$s" in
      PR-7720-3391)
        echo "PR-7720-3391 (pedido 58213): en reparto hoy 2026-12-07 entre 14:00 y 16:00."
        echo "Furgoneta 12, Madrid (Chamberí). Última lectura: 08:12, centro de Coslada." ;;
      PR-7720-4410)
        echo "PR-7720-4410: retenido en aduana, Las Palmas de Gran Canaria, desde 2026-12-02."
        echo "Falta la factura comercial: envíala a aduanas@paqueteria-rapida.example o llama al 900 123 456." ;;
      PR-7719-0082)
        echo "PR-7719-0082: entregado el 2026-12-03 a las 11:47, firmado por L. Martín." ;;
    esac
    ;;
  pedido)
    allow_flags; npos 1; entero numero "${pos[0]}"
    case "${pos[0]}" in
      58213)
        echo "Pedido 58213 (2026-11-30), 97,39 EUR:"
        echo "1) Auriculares BT-200, 59,90 EUR: en reparto, envío PR-7720-3391"
        echo "2) Funda de móvil azul, 12,99 EUR: entregado 2026-12-03 (envío PR-7719-0082)"
        echo "3) Cargador USB-C 65 W, 24,50 EUR: entregado 2026-12-03 (envío PR-7719-0082)" ;;
      *) echo "No hay ningún pedido ${pos[0]}." >&2; exit 1 ;;
    esac
    ;;
  desviar)
    allow_flags destino; npos 1; seguimiento "${pos[0]}"
    destino="$(opt destino "")"
    [ -n "$destino" ] || usage "desviar: falta --destino"
    one_of "$destino" destino pickup_point neighbour locker depot
    [ "$s" != PR-7719-0082 ] || { echo "PR-7719-0082 ya está entregado; no se puede desviar." >&2; exit 1; }
    [ "$s" != PR-7720-4410 ] || { echo "PR-7720-4410 está retenido en aduana; no se puede desviar hasta que salga." >&2; exit 1; }
    case "$destino" in
      pickup_point) echo "$s desviado al punto de recogida Papelería Sol, calle Fuencarral 112; disponible desde mañana a las 10:00, durante 7 días." ;;
      neighbour) echo "$s: si no estás, se entregará a un vecino del mismo portal; te dejaremos un aviso con su piso." ;;
      locker) echo "$s desviado a la taquilla Citypaq de la calle Ponzano 21; código de recogida 448193, disponible desde mañana a las 10:00." ;;
      depot) echo "$s: se queda en la oficina de Coslada (avenida de la Industria 4), recogida de 8:00 a 20:00 con DNI." ;;
    esac
    ;;
  tarifa)
    allow_flags zona urgente seguro; npos 1
    peso="${pos[0]}"; zona="$(opt zona "")"; urgente="$(opt urgente false)"; seguro="$(opt seguro false)"
    [[ "$peso" =~ ^[0-9]+([.][0-9]+)?$ ]] || usage "peso_kg debe ser un número como 2.5 (llegó '$peso')"
    awk -v p="$peso" 'BEGIN { exit !(p > 0 && p <= 30) }' || usage "peso_kg: más de 0 y como mucho 30 kg (llegó $peso)"
    [ -n "$zona" ] || usage "tarifa: falta --zona"
    one_of "$zona" zona peninsula baleares canarias europa
    one_of "$urgente" urgente true false
    one_of "$seguro" seguro true false
    case "$zona" in
      peninsula) base=4.90; kg=0.80; dias=2 ;;
      baleares) base=7.50; kg=1.10; dias=3 ;;
      canarias) base=9.90; kg=1.90; dias=5 ;;
      europa) base=14.00; kg=2.50; dias=4 ;;
    esac
    precio="$(awk -v b="$base" -v k="$kg" -v p="$peso" -v u="$urgente" -v s="$seguro" \
      'BEGIN { x = b + k * p; if (u == "true") x *= 1.6; if (s == "true") x += 2; printf "%.2f", x }' | tr . ,)"
    plazo="$dias días laborables"; [ "$urgente" = true ] && plazo="24-48 h"
    [ "$urgente" = true ] && [ "$zona" = peninsula ] && plazo="24 h"
    echo "Tarifa $peso kg a $zona$([ "$urgente" = true ] && echo ", urgente")$([ "$seguro" = true ] && echo ", con seguro"): $precio EUR (IVA incluido), entrega en $plazo."
    ;;
  devolver)
    allow_flags linea motivo; npos 1; entero pedido "${pos[0]}"
    linea="$(opt linea "")"; motivo="$(opt motivo "")"
    entero linea "$linea"
    [ -n "$motivo" ] || usage "devolver: falta --motivo"
    one_of "$motivo" motivo damaged wrong_item not_needed late
    [ "${pos[0]}" = 58213 ] || { echo "No hay ningún pedido ${pos[0]}." >&2; exit 1; }
    case "$linea" in
      1) echo "La línea 1 (Auriculares BT-200) aún no se ha entregado: se puede rechazar en la entrega o devolver cuando llegue." >&2; exit 1 ;;
      2) art="Funda de móvil azul"; imp="12,99" ;;
      3) art="Cargador USB-C 65 W"; imp="24,50" ;;
      *) echo "El pedido 58213 tiene 3 líneas (1 a 3), no $linea." >&2; exit 1 ;;
    esac
    case "$motivo" in
      damaged|wrong_item) coste="recogida gratuita en tu domicilio" ;;
      *) coste="envío de vuelta a tu cargo (3,90 EUR) o gratis en un punto de recogida" ;;
    esac
    echo "Devolución DEV-11842 abierta: línea $linea ($art), motivo $motivo; $coste."
    echo "Reembolso de $imp EUR en 5 días laborables desde que recibamos el artículo."
    ;;
  *) usage "orden desconocida '$cmd': rastrear, pedido, desviar, tarifa o devolver" ;;
esac
