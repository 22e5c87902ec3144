#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Coverage gate: compares per-area line coverage from an lcov tracefile with the
# thresholds in coverage/thresholds. Exits 1 when any area is below its minimum.
# Usage: coverage/gate.sh TRACEFILE [THRESHOLDS]
set -euo pipefail
info=${1:?usage: gate.sh TRACEFILE [THRESHOLDS]}
thr=${2:-$(dirname "$0")/thresholds}
[ -s "$info" ] || { echo "coverage gate: tracefile $info is missing or empty" >&2; exit 1; }
fail=0
while read -r area patterns min; do
  case "$area" in ''|'#'*) continue ;; esac
  # Sum LF (lines found) and LH (lines hit) over the source files of this area.
  read -r found hit < <(awk -v pats="$patterns" '
    BEGIN { n = split(pats, p, ",") }
    /^SF:/ { f = substr($0, 4); keep = 0
             for (i = 1; i <= n; i++) if (index(f, "/" p[i]) > 0 || index(f, p[i]) == 1) keep = 1 }
    /^LF:/ { if (keep) lf += substr($0, 4) }
    /^LH:/ { if (keep) lh += substr($0, 4) }
    END { printf "%d %d\n", lf, lh }' "$info")
  if [ "$found" -eq 0 ]; then
    echo "coverage gate: $area: no instrumented lines found (patterns $patterns)" >&2
    fail=1; continue
  fi
  pct=$(awk -v h="$hit" -v f="$found" 'BEGIN { printf "%.1f", 100 * h / f }')
  ok=$(awk -v p="$pct" -v m="$min" 'BEGIN { print (p + 0 >= m + 0) ? 1 : 0 }')
  printf 'coverage gate: %-8s %6s%% of %5d lines (minimum %s%%) %s\n' "$area" "$pct" "$found" "$min" \
    "$([ "$ok" = 1 ] && echo ok || echo BELOW)"
  [ "$ok" = 1 ] || fail=1
done < "$thr"
exit $fail
