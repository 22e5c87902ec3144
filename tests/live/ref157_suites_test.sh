#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The request, link, transport, path and resource cross-check suites (conformance/*_xcheck_test)
# against rns 1.5.7: the same checks as their baseline runs, with the 1.5.7 reference embedded.
set -u
. "$(dirname "$0")/../common/ref157_env.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-ref157-suites.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
for t in request_xcheck_test link_xcheck_test transport_xcheck_test path_xcheck_test \
    resource_xcheck_test; do
  if RNSC_XCHECK_CASES=${RNSC_XCHECK_CASES:-100} "$B/conformance/$t" >"$tmp/$t.out" 2>&1 &&
     grep -q "rns 1\.5\.7 embedded" "$tmp/$t.out"; then
    echo "ok   $t (rns 1.5.7): $(tail -1 "$tmp/$t.out")"
  else
    fail=1; echo "FAIL $t (rns 1.5.7)"; tail -30 "$tmp/$t.out"
  fi
done
exit $fail
