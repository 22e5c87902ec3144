#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Config honesty: every option the installed reference reads (derived from its source by
# tests/data/ref_config_keys.py: the [logging]/[reticulum] loops of Reticulum.py,
# _synthesize_interface and each interface class) has a row in rnsc's option table
# (src/runtime/cfg_keys.c, printed by tests/live/cfg_keys_dump), honoured or refused; the
# table has no row the reference does not read; docs/config-options.md shows exactly
# the table. A failure names each key that is missing, stale or documented wrongly.
set -u
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
S=${RNSC_SRCDIR:?RNSC_SRCDIR must point at the source tree}
PY=${RNSC_VENV:-$B/.venv}/bin/python
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-cfgkeys.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0

"$PY" -c 'import RNS' 2>/dev/null || { echo "FAIL the reference (RNS) is not importable by $PY"; exit 1; }
ver=$("$PY" -c 'import RNS; print(RNS.__version__)' 2>/dev/null || echo unknown)
"$PY" "$S/tests/data/ref_config_keys.py" >"$tmp/ref" || { echo "FAIL cannot derive the reference's keys"; exit 1; }
"$B/tests/live/cfg_keys_dump" >"$tmp/table" || { echo "FAIL cfg_keys_dump"; exit 1; }
cut -f1,2 "$tmp/table" | sort >"$tmp/rows"
nref=$(wc -l <"$tmp/ref")
[ "$nref" -ge 150 ] || { echo "FAIL only $nref keys found in the reference's source: the extractor no longer understands it"; fail=1; }

missing=$(comm -23 <(sort "$tmp/ref") "$tmp/rows")
stale=$(comm -13 <(sort "$tmp/ref") "$tmp/rows")
if [ -n "$missing" ]; then
  echo "FAIL keys rns $ver reads that rnsc's table neither honours nor refuses:"; echo "$missing" | sed 's/^/     /'; fail=1
else echo "ok   all $nref keys rns $ver reads are honoured or refused"; fi
if [ -n "$stale" ]; then
  echo "FAIL table rows for keys rns $ver does not read:"; echo "$stale" | sed 's/^/     /'; fail=1
else echo "ok   no table row for a key rns $ver does not read"; fi
echo "     $(grep -c $'\thonoured\t' "$tmp/table") honoured, $(grep -c $'\trefused\t' "$tmp/table") refused"

# The document's rows: | scope | `key` | status | why |
sed -n 's/^| \([A-Za-z0-9.]*\) | `\([a-z0-9_]*\)` | \(honoured\|refused\) | \(.*\) |$/\1\t\2\t\3\t\4/p' \
  "$S/docs/config-options.md" | sort >"$tmp/doc"
if diff <(sort "$tmp/table") "$tmp/doc" >"$tmp/docdiff"; then
  echo "ok   docs/config-options.md shows the table ($(wc -l <"$tmp/doc") rows)"
else
  echo "FAIL docs/config-options.md differs from the table (< table, > document):"
  sed 's/^/     /' "$tmp/docdiff" | head -40; fail=1
fi
echo "config_keys_test: $([ $fail = 0 ] && echo passed || echo FAILED)"
exit $fail
