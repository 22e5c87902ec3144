#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Requests, large requests and responses (resources) and Buffer streams through a transport
# node (tests/live/request_interop_test.sh with REQ_RELAY): client and server are each a TCP
# client of the node and reach each other only through it (path, link, requests, resources,
# channel). First an `rnsc daemon` (enable_transport) between them, in all four pairings;
# then the reference's rnsd, with an rnsc end on at least one side (rnsc to rnsc, reference
# to rnsc, rnsc to reference). Exact accounting as the direct test: every response
# byte-exact, the server's handlers called exactly N / M / 0 times, the /denied requests
# failed at the client, the /big responses (beyond the link MDU, so resources) and /bigreq
# requests byte-exact with counts and byte sums equal at both ends, a stream each way with
# content hashes equal. Also, through the rnsc node in every pairing (REQ_NONE,
# REQ_CANCEL): requests to an ALLOW_NONE path fail at the client unanswered, and of two 3 MB
# resources (3 segments) from client to server the one its sender cancels mid-transfer ends
# FAILED at the receiver, the one its receiver cancels ends REJECTED at the sender (through
# rnsd too with REQ_RELAY_NONE / REQ_RELAY_CANCEL). Last, the same two checks directly over
# TCP (no transport node) between rnsc and the reference both ways. Fewer requests and
# smaller streams than the direct test to keep the run short (REQ_* in the environment
# override them). Measured: 90 s on the shared 2-core machine at load 7-10, 115 s at 40.
here=$(cd "$(dirname "$0")" && pwd)
run() { # run RELAY PAIRS NONE CANCEL
  REQ_RELAY=$1 REQ_PAIRS=${REQ_RELAY_PAIRS:-$2} REQ_N=${REQ_N:-12} REQ_M=${REQ_M:-3} \
    REQ_D=${REQ_D:-2} REQ_STREAM=${REQ_STREAM:-120000} REQ_BIG=${REQ_BIG-"1500 200000"} \
    REQ_BIGREQ=${REQ_BIGREQ-"6000 40000"} REQ_TIMEOUT=${REQ_TIMEOUT:-90} \
    REQ_NONE=$3 REQ_CANCEL=$4 "$here/request_interop_test.sh"
}
echo "## through an rnsc transport node"
run rnsc "rnsc:rnsc ref:rnsc rnsc:ref ref:ref" "${REQ_NONE:-3}" "${REQ_CANCEL:-3000000}"
rc=$?
echo "## through the reference's rnsd"
run ref "rnsc:rnsc ref:rnsc rnsc:ref" "${REQ_RELAY_NONE:-0}" "${REQ_RELAY_CANCEL:-0}"
rc2=$?
echo "## directly, ALLOW_NONE and cancellation between rnsc and the reference"
REQ_RELAY= REQ_PAIRS="ref:rnsc rnsc:ref" REQ_N=3 REQ_M=1 REQ_D=1 REQ_STREAM=0 REQ_BIG= \
  REQ_BIGREQ= REQ_NONE=${REQ_NONE:-3} REQ_CANCEL=${REQ_CANCEL:-3000000} \
  REQ_TIMEOUT=${REQ_TIMEOUT:-90} "$here/request_interop_test.sh"
rc3=$?
[ $rc = 0 ] && [ $rc2 = 0 ] && [ $rc3 = 0 ]
