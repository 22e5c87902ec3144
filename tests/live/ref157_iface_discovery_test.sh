#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/live/iface_discovery_interop_test.sh with rns 1.5.7 (and LXMF 1.2.1) as the reference.
set -u
. "$(dirname "$0")/../common/ref157_env.sh"
exec "${RNSC_SRCDIR:-$(dirname "$0")/../..}/tests/live/iface_discovery_interop_test.sh"
