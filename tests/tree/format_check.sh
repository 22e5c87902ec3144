#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# House style: every C source and header of the tree follows .clang-format (clang-format 14,
# Debian's clang-format). Fails naming each file that does not, with the first lines
# clang-format would change; `clang-format -i FILE` fixes one. Then a planted badly
# formatted file must fail the check, so the check itself is known to bite.
#
#   tests/tree/format_check.sh [SRCDIR]
set -euo pipefail
src=${1:-${RNSC_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}}
command -v clang-format >/dev/null || { echo "FAIL: clang-format not found (apt-get install clang-format)"; exit 1; }
[ -f "$src/.clang-format" ] || { echo "FAIL: $src/.clang-format is missing"; exit 1; }

check() { # check FILE...: 1 when one of them is not formatted
  local bad=0 f
  for f in "$@"; do
    if ! clang-format --style=file:"$src/.clang-format" --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "format_check: ${f#"$src"/} does not follow .clang-format:"
      clang-format --style=file:"$src/.clang-format" "$f" | diff "$f" - | head -8 || true
      bad=1
    fi
  done
  return $bad
}

mapfile -t files < <(cd "$src" && find src plugins bench tests conformance interop examples include \
  -path tests/fuzz/corpus -prune -o -name '*.[ch]' -print | sort | sed "s|^|$src/|")
if ! check "${files[@]}"; then
  echo "FAIL: files above do not follow .clang-format"
  exit 1
fi
echo "ok: ${#files[@]} C files follow .clang-format"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'static int  planted=1 ;\n' >"$tmp/planted.c"
if check "$tmp/planted.c" >/dev/null; then
  echo "FAIL: the check passed a badly formatted file"
  exit 1
fi
echo "PASS: the tree follows .clang-format and the check bites"
