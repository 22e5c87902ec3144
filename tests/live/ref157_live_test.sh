#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The live session (interop/live_session.sh: rnsd and rnsc daemon over TCP, announces, paths,
# probes both ways, resources and requests over links both ways) with rns 1.5.7's rnsd,
# rnprobe and rnpath as the reference side. Exit 0 only if every step happened.
set -u
. "$(dirname "$0")/../common/ref157_env.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-ref157-live.XXXXXX")
RNSC_SESSION_DIR="$dir" "${RNSC_SRCDIR:-$(dirname "$0")/../..}/interop/live_session.sh"
rc=$?
[ $rc -eq 0 ] || { for f in "$dir"/*.log "$dir"/*/*.log; do [ -f "$f" ] && { echo "---- $f"; tail -20 "$f"; }; done; }
[ $rc -eq 0 ] && rm -rf "$dir" # kept when a step failed
exit $rc
