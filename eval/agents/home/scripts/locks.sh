#!/usr/bin/env bash
# locks.sh DOOR --locked=true|false
set -euo pipefail
. "$(dirname "$0")/common.bash"
door=""; locked=""
for a in "$@"; do
  case "$a" in
    --locked=*) locked="${a#*=}" ;;
    --*) usage "unknown option: $a" ;;
    *) [ -z "$door" ] || usage "one door only"; door="$a" ;;
  esac
done
[ -n "$door" ] && [ -n "$locked" ] || usage "usage: locks.sh DOOR --locked=true|false"
one_of "$door" door front back garage
one_of "$locked" locked true false
case "$door:$locked" in
  front:true) echo "front door: was already locked (since 22:31)" ;;
  back:true) echo "back door: locked" ;;
  garage:true) echo "garage door: locked (it had been open since 18:05)" ;;
  front:false) echo "front door: unlocked; it locks itself again in 2 min" ;;
  back:false) echo "back door: unlocked" ;;
  garage:false) echo "garage door: was already open (since 18:05)" ;;
esac
