#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# conformance/xcheck_test against rns 1.5.7 (the baseline run covers 1.5.4): the embedding
# checks and every randomized cross-check over every backend, with fewer cases per check
# (at most 25, RNSC_XCHECK_CASES may cap it lower: the reference modules these cases drive are
# byte-identical in 1.5.4 and 1.5.7, and under ASan a case costs about a second).
# First, how the release is chosen (interop/REFERENCE-VERSIONS.md): an unpinned release and a
# venv holding another release than the one asked for are refused (exit 3, naming both); a
# venv alone picks whichever pinned release it holds.
set -u
. "$(dirname "$0")/../common/ref157_env.sh"
RNSC="$B/src/cli/rnsc"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-ref157.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() { # expect NAME RC PATTERN cmd...: the exit code and a line of its output
  local name=$1 want=$2 pat=$3 rc=0; shift 3
  "$@" >"$tmp/out" 2>&1 || rc=$?
  if [ "$rc" -eq "$want" ] && grep -q -- "$pat" "$tmp/out"; then echo "ok   $name"
  else fail=1; echo "FAIL $name (exit $rc, want $want and /$pat/)"; tail -5 "$tmp/out"; fi
}
expect "an unpinned release is refused by name" 3 "RNSC_REF_VERSION=9.9.9 names no pinned" \
  env RNSC_REF_VERSION=9.9.9 "$RNSC" conform --cases 1
expect "a path is no release" 3 "RNSC_REF_VERSION=../x names no pinned" \
  env RNSC_REF_VERSION=../x "$RNSC" conform --cases 1
expect "the baseline venv is refused when 1.5.7 is asked for" 3 \
  "holds rns 1.5.4 but RNSC_REF_VERSION asks for 1.5.7" \
  env RNSC_VENV="$BASE_VENV" "$RNSC" conform --cases 1
expect "1.5.7's venv is refused when the baseline is asked for" 3 \
  "holds rns 1.5.7 but RNSC_REF_VERSION asks for 1.5.4" \
  env RNSC_REF_VERSION=1.5.4 "$RNSC" conform --cases 1
expect "the venv alone picks its pinned release" 0 "Reference: rns 1.5.7, embedded" \
  env -u RNSC_REF_VERSION "$RNSC" conform --cases 1
expect "RNSC_REF_VERSION alone picks the build's 1.5.7 venv" 0 "Reference: rns 1.5.7, embedded" \
  env -u RNSC_VENV "$RNSC" conform --cases 1
[ $fail -eq 0 ] || exit 1
cases=${RNSC_XCHECK_CASES:-25}
[ "$cases" -gt 25 ] && cases=25
RNSC_XCHECK_CASES=$cases "$B/conformance/xcheck_test"
