#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# conformance/matrix_test against rns 1.5.7: every message shape, four ways, each row
# covered and no disagreement (the baseline run covers 1.5.4).
set -u
. "$(dirname "$0")/../common/ref157_env.sh"
exec "$B/conformance/matrix_test"
