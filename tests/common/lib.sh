# SPDX-License-Identifier: MIT
# Sourced by the shell suites (`. "$(dirname "$0")/../common/lib.sh"`, the first thing after
# their `set` line): the preamble they all repeated. Sets B (the build tree, from make check's
# RNSC_BUILDDIR), S (the source tree: RNSC_SRCDIR, else the tree this file is in), RNSC (the
# rnsc program), VENV and PY (the baseline reference's venv and its python), the pass/fail
# counters and ok NAME / bad NAME [LOG...] (a failure shows the tail of each log given).
# A suite that needs something else (another venv, S required) sets it after sourcing this.
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
S=${RNSC_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
RNSC="$B/src/cli/rnsc"
VENV=${RNSC_VENV:-$B/.venv}
PY=$VENV/bin/python
pass=0 fail=0
ok() { pass=$((pass+1)); echo "ok   $1"; }
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -25 "$f" | sed 's/^/     /'; done; }
