#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc-conformance-bridge wire_* commands: live rnsc nodes on loopback TCP against the pinned
# reference (rns in $RNSC_VENV, driven by wire_ref_peer.py) in every pairing.
set -u
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
S=${RNSC_SRCDIR:?RNSC_SRCDIR must point at the source tree}
PY=${RNSC_VENV:?RNSC_VENV must point at the reference venv}/bin/python
if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL: the reference (import RNS) is not available from $PY" >&2
  exit 1
fi
exec timeout 240 "$PY" "$S/src/bridge/tests/wire_check.py" "$B/src/bridge/rnsc-conformance-bridge" \
  "$PY" "$S/src/bridge/tests/wire_ref_peer.py"
