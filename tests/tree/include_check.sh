#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The public contract is include/rnsc/: plugins (interface, crypto and scenario plugins under
# plugins/) and examples/ may include only those headers, headers of their own folder tree
# and the build's config.h; the CLI may not include a core-internal header (*_internal.h).
# Then the checker is run on a copy of the tree with a planted violation of each rule and
# must fail on it, so the check itself is known to bite.
#
#   tests/tree/include_check.sh [SRCDIR]      (default: $RNSC_SRCDIR, else the script's tree)
set -euo pipefail
src=${1:-${RNSC_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}}

# check ROOT: prints each violation, returns 1 when there is one.
check() {
  local root=$1 bad=0 f inc dir
  while IFS= read -r f; do
    dir=$(dirname "$f")
    while IFS= read -r inc; do
      case "$inc" in
        config.h) continue ;;
      esac
      if [ -f "$dir/$inc" ]; then
        # a header of its own folder tree: it must stay inside plugins/ or examples/
        case "$(realpath -m "$dir/$inc")" in
          "$(realpath "$root")"/plugins/*|"$(realpath "$root")"/examples/*) continue ;;
        esac
      elif [ -f "$root/include/rnsc/$inc" ]; then
        continue
      fi
      echo "include_check: ${f#"$root"/} includes \"$inc\", which is not in include/rnsc/ nor its own folder"
      bad=1
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    while IFS= read -r inc; do
      case "$inc" in
        rnsc/*) [ -f "$root/include/$inc" ] && continue ;;
        *) continue ;; # system headers
      esac
      echo "include_check: ${f#"$root"/} includes <$inc>, which include/ does not have"
      bad=1
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' "$f")
  done < <(find "$root/plugins" "$root/examples" -name '*.[ch]' | sort)
  while IFS= read -r f; do
    if grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*_internal\.h"' "$f"; then
      echo "include_check: ${f#"$root"/} (the CLI) includes a core-internal header"
      bad=1
    fi
  done < <(find "$root/src/cli" -name '*.[ch]' | sort)
  return $bad
}

if ! check "$src"; then
  echo "FAIL: the include rules are broken (see above)"
  exit 1
fi
n=$(find "$src/plugins" "$src/examples" -name '*.[ch]' | wc -l)
echo "ok: $n plugin and example sources include only include/rnsc/ and their own headers"

# The check must fail on planted violations.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plant() { # plant FILE LINE: a copy of the tree with LINE added to FILE; the check must fail
  rm -rf "$tmp/t"; mkdir -p "$tmp/t"
  cp -r "$src/plugins" "$src/examples" "$src/include" "$tmp/t/"
  mkdir -p "$tmp/t/src"; cp -r "$src/src/cli" "$tmp/t/src/"
  printf '%s\n' "$2" >>"$tmp/t/$1"
  if check "$tmp/t" >"$tmp/out"; then
    echo "FAIL: the check passed a planted violation ($2 in $1)"
    exit 1
  fi
  grep -q "${1##*/}" "$tmp/out" || { cat "$tmp/out"; echo "FAIL: the report does not name $1"; exit 1; }
  echo "ok: planted '$2' in $1 is caught"
}
plant plugins/iface/pipe.c '#include "transport_internal.h"'
plant plugins/crypto/sodium/sodium.c '#include "../../src/lib/ctx_internal.h"'
plant plugins/scenario/single.c '#include "timelock.h"'
plant examples/echo/echo.c '#include <rnsc/ctx_internal.h>'
plant src/cli/cmd_path.c '#include "transport_internal.h"'
echo "PASS: include rules hold and the check bites"
