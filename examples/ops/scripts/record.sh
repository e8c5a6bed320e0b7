#!/usr/bin/env bash
# Records one call of an ops script: its name and exact arguments, shell-quoted on one line, in
# $MM_OPS_LOG (default: $TMPDIR/mm-ops-calls.log). Tests read this file to know what really ran.
log="${MM_OPS_LOG:-${TMPDIR:-/tmp}/mm-ops-calls.log}"
{ printf '%s' "$1"; shift; for a in "$@"; do printf ' %q' "$a"; done; printf '\n'; } >> "$log"
