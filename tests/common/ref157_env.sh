# SPDX-License-Identifier: MIT
# Sourced by the ref157_* suites: points every reference lookup at the second pinned release
# (rns 1.5.7 in $RNSC_VENV_157, made by `make venv`) and fails loudly when that venv does not
# hold it, so a suite can never pass against the baseline by accident.
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
V157=${RNSC_VENV_157:?RNSC_VENV_157 must point at the rns 1.5.7 venv (make venv)}
have=$("$V157/bin/python" -c 'import RNS; print(RNS.__version__)' 2>/dev/null)
if [ "$have" != 1.5.7 ]; then
  echo "FAIL $V157 does not hold rns 1.5.7 (it holds '${have:-nothing}'); run make venv"
  exit 1
fi
BASE_VENV=${RNSC_VENV:-$B/.venv} # the baseline's, for the suites' refusal checks
export RNSC_REF_VERSION=1.5.7 RNSC_VENV="$V157"
