#!/usr/bin/env bash
# status SERVICE: the (canned) status of one of ACME's services.
here="$(cd "$(dirname "$0")" && pwd)"
"$here/record.sh" status "$@"
# Lenient about the form of the name ("Billing", "billing_service", "billing-svc"): the first
# known service named in it.
name="$(printf '%s' "${1:-}" | tr '[:upper:]' '[:lower:]' | grep -oE 'billing|auth|search' | head -n 1)"
case "$name" in
  billing) echo "billing: running, version 2.3.1, up 4 days, error rate 0.02%" ;;
  auth)    echo "auth: running, version 1.9.0, up 12 days, error rate 0.00%" ;;
  search)  echo "search: degraded, version 3.0.2, 1 of 3 replicas down" ;;
  *) echo "no service named '${1:-}'; the services are: billing, auth, search" >&2; exit 1 ;;
esac
