#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One-command set-up and run for rnsc on a fresh Debian machine.
#
#   ./run.sh main    install what is missing, build, then run the main job:
#                    rnsc conform (cross-check against the embedded reference), the
#                    message matrix (rnsc conform --matrix), a live session between
#                    the reference's rnsd and rnsc daemon (announces, paths, probes),
#                    each against both pinned reference releases (rns 1.5.4 and 1.5.7,
#                    interop/REFERENCE-VERSIONS.md),
#                    rnsc bench --quick (scenarios in all four pairings) and
#                    rnsc bench crypto (rnsc vs reference, same run)
#   ./run.sh test    install what is missing, build with gcov instrumentation in its own
#                    tree, run the full test suite (make check: unit, CLI, vector,
#                    cross-check, interop and benchmark-conformance suites), then apply
#                    the coverage gate (make coverage: lcov + coverage/thresholds)
#
# Environment: BUILD_DIR (main's build tree, default ./build), TEST_BUILD_DIR (test's,
# default ./build-test), RNSC_VENV (default ./.venv), RNSC_VENV_157 (rns 1.5.7's venv,
# default RNSC_VENV-1.5.7), JOBS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/build}
venv=${RNSC_VENV:-$here/.venv}
venv157=${RNSC_VENV_157:-$venv-1.5.7}
jobs=${JOBS:-$(nproc)}

need_packages() {
  local missing=()
  while read -r p; do
    case "$p" in ''|'#'*) continue ;; esac
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done < "$here/.ci/packages.txt"
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "run.sh: installing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

# setup [configure flags...]: packages, configure (once per build tree), build, venv.
setup() {
  need_packages
  [ -x "$here/configure" ] || (cd "$here" && autoreconf -fi)
  mkdir -p "$build"
  if [ ! -f "$build/Makefile" ]; then
    (cd "$build" && "$here/configure" --enable-werror RNSC_VENV="$venv" RNSC_VENV_157="$venv157" "$@" ${CONFIGURE_FLAGS:-})
  fi
  make -C "$build" -j"$jobs"
  make -C "$build" venv
}

case "${1:-}" in
  main)
    setup
    mkdir -p "$here/bench/results"
    # rns 1.5.4 (the baseline, its report in conform-report.md), then rns 1.5.7
    for ref in 1.5.4 1.5.7; do
      if [ "$ref" = 1.5.4 ]; then v=$venv sfx=""; else v=$venv157 sfx="-$ref"; fi
      echo "== rnsc conform: rnsc against the embedded reference, rns $ref =="
      RNSC_REF_VERSION=$ref RNSC_VENV="$v" \
        "$build/src/cli/rnsc" conform --report "$build/conform-report$sfx.md"
      echo
      echo "== rnsc conform --matrix: every message shape the reference defines, four ways, rns $ref =="
      RNSC_REF_VERSION=$ref RNSC_VENV="$v" "$build/src/cli/rnsc" conform --matrix
      echo
      echo "== live session: the reference's rnsd (rns $ref) and rnsc daemon on 127.0.0.1 =="
      RNSC_BUILDDIR="$build" RNSC_VENV="$v" RNSC_SESSION_DIR="$build/session$sfx" \
        "$here/interop/live_session.sh"
      echo
    done
    echo "== rnsc bench --quick: scenarios, rnsc and the reference in all four pairings =="
    RNSC_VENV="$venv" "$build/src/cli/rnsc" bench --quick --report "$build/bench-scenarios"
    echo
    echo "== rnsc bench crypto: the crypto bound, rnsc vs reference =="
    "$build/src/cli/rnsc" bench crypto --json "$build/bench-crypto.json"
    echo
    echo "Reports: $build/conform-report.md, $build/session/ (live session logs; rns 1.5.7's:"
    echo "         conform-report-1.5.7.md, session-1.5.7/),"
    echo "         $build/bench-scenarios/scenarios.{md,json,svg}, $build/bench-crypto.json"
    ;;
  test)
    # A separate tree: main's benchmarks must not run an -O0 instrumented build.
    build=${TEST_BUILD_DIR:-$here/build-test}
    setup --enable-coverage
    make -C "$build" -j"$jobs" coverage
    ;;
  *)
    awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"
    exit 2
    ;;
esac
