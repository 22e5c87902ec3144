#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Requests, large requests and responses (resources) and Buffer streams through a transport
# node (tests/request_interop_test.sh with REQ_RELAY): client and server are each a TCP
# client of the node and reach each other only through it (path, link, requests, resources,
# channel). First an `rnsc daemon` (enable_transport) between them, in all four pairings;
# then the reference's rnsd, with an rnsc end on at least one side (rnsc to rnsc, reference
# to rnsc, rnsc to reference). Exact accounting as the direct test: every response
# byte-exact, the server's handlers called exactly N / M / 0 times, the /denied requests
# failed at the client, the /big responses (beyond the link MDU, so resources) and /bigreq
# requests byte-exact with counts and byte sums equal at both ends, a stream each way with
# content hashes equal. Fewer requests and smaller streams than the direct test to keep the
# run short (REQ_* in the environment override them).
here=$(cd "$(dirname "$0")" && pwd)
run() { # run RELAY PAIRS
  REQ_RELAY=$1 REQ_PAIRS=${REQ_RELAY_PAIRS:-$2} REQ_N=${REQ_N:-12} REQ_M=${REQ_M:-3} \
    REQ_D=${REQ_D:-2} REQ_STREAM=${REQ_STREAM:-120000} REQ_BIG=${REQ_BIG-"1500 200000"} \
    REQ_BIGREQ=${REQ_BIGREQ-"6000 40000"} REQ_TIMEOUT=${REQ_TIMEOUT:-90} \
    "$here/request_interop_test.sh"
}
echo "## through an rnsc transport node"
run rnsc "rnsc:rnsc ref:rnsc rnsc:ref ref:ref"
rc=$?
echo "## through the reference's rnsd"
run ref "rnsc:rnsc ref:rnsc rnsc:ref"
rc2=$?
[ $rc = 0 ] && [ $rc2 = 0 ]
