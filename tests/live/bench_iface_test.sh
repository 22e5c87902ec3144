#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc bench iface (each interface plugin on its own, two rnsc runtimes, raw frames through
# the iface ABI): behaviour only, no timing asserted. Every interface that can run here
# carries 64 B, 500 B and HW_MTU frames intact with exact counts (sent = echoed back, none
# lost, late or corrupt; the echoing side echoed exactly those plus the warm-up frames that
# reached it), and those that cannot (auto, serial, rnode) are reported with why.
set -u
. "$(dirname "$0")/../common/lib.sh"
check() { # check NAME EXPECTED_STATUS COMMAND...
  local name=$1 want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  if [ "$got" = "$want" ]; then pass=$((pass+1)); echo "ok   $name"
  else fail=$((fail+1)); echo "FAIL $name: exit $got, want $want"
    sed 's/^/     /' "$tmp/out" | tail -30; sed 's/^/     /' "$tmp/err" | tail -12; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

check "help" 0 "$RNSC" bench iface --help
check "unknown interface" 2 "$RNSC" bench iface --iface carrier-pigeon
check "frame below the sequence number" 2 "$RNSC" bench iface --sizes 3
check "window out of range" 2 "$RNSC" bench iface --window 0
check "a frame above the HW_MTU is reported not run, with why" 0 \
  "$RNSC" bench iface --iface udp --sizes 2000 --seconds 0.2 --json "$tmp/big.json"
check "big frame report" 0 "$PY" -c '
import json, sys
(r,) = json.load(open(sys.argv[1]))["results"]
assert "above the interface" in r["not_run"] and r["hw_mtu"] == 1064, r
' "$tmp/big.json"
check "every interface x 64 B, 500 B, HW_MTU: intact, counts exact" 0 \
  "$RNSC" bench iface --seconds 0.3 --window 4 --report "$tmp"
cp "$tmp/out" "$tmp/terminal.txt"
check "report: every cell ran exactly, or says why not" 0 "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
rs = d["results"]
runnable = ["tcp", "backbone", "udp", "local", "pipe", "tls", "websocket"]
cannot = {"auto": "namespaces", "serial": "pty pair", "rnode": "simulator"}
assert [r["interface"] for r in rs] == [i for i in runnable + list(cannot) for _ in range(3)], rs
for r in rs:
    assert r["size"] in ("64", "500", "max"), r
    if r["interface"] in cannot:
        assert cannot[r["interface"]] in r["not_run"] and "sent" not in r, r
        continue
    assert "not_run" not in r and r["ok"] is True, r
    want = r["hw_mtu"] if r["size"] == "max" else int(r["size"])
    assert r["frame_bytes"] == want and want > 0, r
    assert r["sent"] == r["received"] > 0, r
    assert r["lost"] == r["corrupt"] == r["late"] == r["send_refused"] == 0, r
    assert r["echo_refused"] == 0, r
    # the echoing side saw every timed frame and at most the warm-up ones besides
    assert r["received"] <= r["echoed"] <= r["received"] + r["warmup_sent"], r
print(len(rs), "cells")
' "$tmp/iface.json"
check "markdown report lists every cell" 0 grep -c "^| " "$tmp/iface.md"
if [ "$(grep -c '^| ' "$tmp/iface.md")" -eq 31 ]; then pass=$((pass+1)); echo "ok   markdown rows"
else fail=$((fail+1))
  echo "FAIL markdown rows: $(grep -c '^| ' "$tmp/iface.md") lines, want 31 (header, 30 cells)"; fi

echo "bench_iface_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
