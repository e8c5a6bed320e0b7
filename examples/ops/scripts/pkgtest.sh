#!/usr/bin/env bash
# pkgtest PACKAGE: runs (pretends to) the tests of one package.
here="$(cd "$(dirname "$0")" && pwd)"
"$here/record.sh" pkgtest "$@"
case "${1:-}" in
  greet) echo "greet: 12 passed, 0 failed" ;;
  billing) echo "billing: 40 passed, 1 failed (test_refund_rounding)"; exit 1 ;;
  *) echo "no package named '${1:-}'" >&2; exit 1 ;;
esac
