#!/usr/bin/env bash
# release VERSION --channel=CHANNEL [--dry-run=BOOL]: publishes (pretends to) a release.
here="$(cd "$(dirname "$0")" && pwd)"
"$here/record.sh" release "$@"
version="${1:-}"; shift || true
channel=""; dry="false"
for a in "$@"; do
  case "$a" in
    --channel=*) channel="${a#--channel=}" ;;
    --dry-run=*) dry="${a#--dry-run=}" ;;
    *) echo "unexpected argument: $a" >&2; exit 2 ;;
  esac
done
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then echo "not a version: '$version'" >&2; exit 2; fi
if [ "$dry" = "true" ]; then echo "would publish $version to $channel"; else echo "published $version to $channel"; fi
