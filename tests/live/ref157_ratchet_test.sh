#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ratchet and destination live suites (tests/live/ratchet_interop_test.sh,
# tests/live/dest_interop_test.sh) against rns 1.5.7: the same checks as their baseline runs.
set -u
. "$(dirname "$0")/../common/ref157_env.sh"
S=${RNSC_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fail=0
for t in ratchet_interop_test dest_interop_test; do
  if out=$("$S/tests/live/$t.sh" 2>&1); then
    echo "ok   $t (rns 1.5.7): $(echo "$out" | tail -1)"
  else
    fail=1; echo "FAIL $t (rns 1.5.7)"; echo "$out" | tail -30
  fi
done
exit $fail
