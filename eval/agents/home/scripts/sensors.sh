#!/usr/bin/env bash
# sensors.sh ROOM temperature|humidity|co2|motion
set -euo pipefail
. "$(dirname "$0")/common.bash"
[ "$#" -eq 2 ] || usage "usage: sensors.sh ROOM temperature|humidity|co2|motion"
room="$1"; reading="$2"
one_of "$room" room "${ROOMS[@]}"
one_of "$reading" reading temperature humidity co2 motion
case "$reading:$room" in
  temperature:living_room) echo "living_room: 21.4 °C" ;;
  temperature:kitchen) echo "kitchen: 22.1 °C" ;;
  temperature:bedroom) echo "bedroom: 18.9 °C" ;;
  temperature:office) echo "office: 22.7 °C" ;;
  temperature:hallway) echo "hallway: 19.6 °C" ;;
  temperature:garden) echo "garden: 3.5 °C" ;;
  humidity:living_room) echo "living_room: 47 % relative humidity" ;;
  humidity:kitchen) echo "kitchen: 52 % relative humidity" ;;
  humidity:bedroom) echo "bedroom: 63 % relative humidity (above 60 %: ventilate)" ;;
  humidity:office) echo "office: 41 % relative humidity" ;;
  humidity:hallway) echo "hallway: 45 % relative humidity" ;;
  humidity:garden) echo "garden: 88 % relative humidity" ;;
  co2:living_room) echo "living_room: CO2 640 ppm" ;;
  co2:kitchen) echo "kitchen: CO2 710 ppm" ;;
  co2:bedroom) echo "bedroom: CO2 920 ppm" ;;
  co2:office) echo "office: CO2 1180 ppm (above 1000 ppm: open a window)" ;;
  co2:hallway) echo "hallway: CO2 560 ppm" ;;
  co2:garden) echo "garden has no CO2 sensor" >&2; exit 1 ;;
  motion:living_room) echo "living_room: last motion at 21:58" ;;
  motion:kitchen) echo "kitchen: last motion at 22:17" ;;
  motion:bedroom) echo "bedroom: last motion at 07:42" ;;
  motion:office) echo "office: last motion at 18:31" ;;
  motion:hallway) echo "hallway: last motion at 22:24" ;;
  motion:garden) echo "garden: last motion at 19:03" ;;
esac
