#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# House style: every C line added or changed since .clang-format came in follows it (the
# code before it is reformatted only when touched, so history stays readable). Fails with
# the diff clang-format wants; `git clang-format BASE` applies it. Needs a git checkout and
# clang-format (Debian clang-format); without either it fails, it never skips.
#
#   tests/format_check.sh [SRCDIR]
set -euo pipefail
src=${1:-${RNSC_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}}
cd "$src"
command -v git-clang-format >/dev/null || { echo "FAIL: git-clang-format not found (apt-get install clang-format)"; exit 1; }
git rev-parse --git-dir >/dev/null 2>&1 || { echo "FAIL: $src is not a git checkout"; exit 1; }
base=$(git log --diff-filter=A --format=%H -- .clang-format | tail -1)
[ -n "$base" ] || { echo "FAIL: .clang-format is not committed"; exit 1; }
out=$(git clang-format --diff --extensions c,h "$base" -- src plugins bench tests conformance interop examples include 2>&1 || true)
case "$out" in
  *"no modified files to format"*|*"clang-format did not modify any files"*|"")
    echo "PASS: lines changed since $(git log -1 --format=%h "$base") follow .clang-format"; exit 0 ;;
esac
echo "$out" | head -80
echo "FAIL: these changed lines do not follow .clang-format (fix with: git clang-format $base)"
exit 1
