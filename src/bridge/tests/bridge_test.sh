#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc-conformance-bridge: the line protocol (READY, one response per line, malformed and
# oversized lines, hex) and a sample of commands per family, checked against published
# vectors and against the pinned reference (rns in $RNSC_VENV) on the same inputs.
set -u
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
S=${RNSC_SRCDIR:?RNSC_SRCDIR must point at the source tree}
PY=${RNSC_VENV:?RNSC_VENV must point at the reference venv}/bin/python
if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL: the reference (import RNS) is not available from $PY" >&2
  exit 1
fi
BR="$B/src/bridge/rnsc-conformance-bridge"
"$BR" --help >/dev/null; rc=$?
[ "$rc" = 0 ] || { echo "FAIL --help exits $rc, want 0"; exit 1; }
"$BR" --no-such-option 2>/dev/null; rc=$?
[ "$rc" = 2 ] || { echo "FAIL an unknown option exits $rc, want 2"; exit 1; }
echo "ok   --help 0, unknown option 2"
exec timeout 120 "$PY" "$S/src/bridge/tests/bridge_check.py" "$BR"
