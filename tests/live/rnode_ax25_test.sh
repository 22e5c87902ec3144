#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# AX25KISSInterface live between the pinned reference and rnsc: rnsd A and an rnsc daemon B
# each drive a KISS TNC (tests/common/rnode_sim.py --tnc: a pty, data frames on a 9600 bit/s
# channel over UDP on 127.0.0.1) with the same callsign, SSID and TNC options. Checked: the
# TNC configuration bytes both send are identical (TXDELAY, TXTAIL, P, SLOTTIME from the
# options, READY), the AX.25 header of their first data frames is identical and is the one
# the callsign gives (APZRNS-0 from N0CALL-7, UI, no layer 3); rnprobe on A gets proofs
# from B's probe destination and rnsc probe on B from A's, through both TNCs. Every wait is
# bounded; a reference that cannot start fails the test. Then the callsign and SSID checks.
set -u
. "$(dirname "$0")/../common/lib.sh"
for tool in rnsd rnprobe; do
  [ -x "$VENV/bin/$tool" ] || { echo "FAIL the reference's $tool is not in $VENV/bin (make venv)"; exit 1; }
done
"$PY" -c 'import serial' 2>/dev/null || { echo "FAIL pyserial is missing in $VENV (pip install -r interop/requirements.txt)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-ax25-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.3
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
probe_hash() { "$RNSC" id -i "$1" -H rnstransport.probe | sed -n 's/.*destination for this Identity is <\([0-9a-f]*\)>.*/\1/p'; }
read -r P1 P2 < <("$PY" -c '
import socket
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
tnc() { # tnc PORT
  printf '  [[Packet]]\n    type = AX25KISSInterface\n    enabled = yes\n    port = %s\n    speed = 115200\n    callsign = n0call\n    ssid = 7\n    preamble = 150\n    txtail = 30\n    persistence = 128\n    slottime = 50\n' "$1"
}
mkdir -p "$tmp/A" "$tmp/B"
printf '[reticulum]\n  enable_transport = yes\n  share_instance = yes\n  instance_name = rnscax25%sa\n  respond_to_probes = yes\n[logging]\n  loglevel = 6\n[interfaces]\n%s\n' "$$" "$(tnc "$tmp/tnc1")" >"$tmp/A/config"
printf '[reticulum]\n  enable_transport = yes\n  share_instance = yes\n  instance_name = rnscax25%sb\n  respond_to_probes = yes\n[logging]\n  loglevel = 6\n[interfaces]\n%s\n' "$$" "$(tnc "$tmp/tnc2")" >"$tmp/B/config"
"$PY" "$S/tests/common/rnode_sim.py" --tnc 9600 --link "$tmp/tnc1" --air "$P1" --peer "$P2" --rx-log "$tmp/host1.bin" --lifetime 120 >"$tmp/sim1.log" 2>&1 & pids+=($!)
"$PY" "$S/tests/common/rnode_sim.py" --tnc 9600 --link "$tmp/tnc2" --air "$P2" --peer "$P1" --rx-log "$tmp/host2.bin" --lifetime 120 >"$tmp/sim2.log" 2>&1 & pids+=($!)
wait_for 10 grep -qs READY "$tmp/sim1.log" && wait_for 10 grep -qs READY "$tmp/sim2.log" ||
  { bad "the TNC simulators did not start" "$tmp/sim1.log" "$tmp/sim2.log"; exit 1; }
"$VENV/bin/rnsd" --config "$tmp/A" >"$tmp/rnsd.log" 2>&1 & pids+=($!)
"$RNSC" daemon --config "$tmp/B" -vvv >"$tmp/rnsc.log" 2>&1 & RB=$!; pids+=($RB)
wait_for 30 grep -qs "AX.25 KISS interface configured" "$tmp/rnsd.log" &&
  ok "reference AX25KISSInterface configured its TNC" || { bad "the reference's AX.25 interface did not come up" "$tmp/rnsd.log"; exit 1; }
wait_for 20 grep -qs "AX.25 KISS interface configured" "$tmp/rnsc.log" &&
  ok "rnsc AX25KISSInterface configured its TNC" || { bad "rnsc's AX.25 interface did not come up" "$tmp/rnsc.log"; exit 1; }

frames() { "$PY" - "$1" "$2" <<'PYX'
import sys
data = open(sys.argv[1], "rb").read()
frames, cur = [], None
for b in data:
    if b == 0xC0:
        if cur: frames.append(bytes(cur))
        cur = bytearray()
    elif cur is not None:
        cur.append(b)
if sys.argv[2] == "config":
    out = []
    for f in frames:
        if f[0] == 0: break
        out.append(f.hex())
    print(" ".join(out))
else:
    d = [f for f in frames if f[0] == 0]
    print(d[0][1:17].hex() if d else "none")
PYX
}
ref=$(frames "$tmp/host1.bin" config); mine=$(frames "$tmp/host2.bin" config)
[ "$ref" = "010f 0403 0280 0305 0f01" ] && [ "$ref" = "$mine" ] &&
  ok "TNC configuration bytes identical: $ref" || bad "TNC configuration differs: reference '$ref', rnsc '$mine'"
want=$("$PY" -c '
h = bytes(c << 1 for c in b"APZRNS") + bytes([0x60]) + bytes(c << 1 for c in b"N0CALL") + bytes([0x60 | (7 << 1) | 1, 0x03, 0xF0])
print(h.hex())')
wait_for 15 grep -qs "^TX" "$tmp/sim1.log"; wait_for 15 grep -qs "^TX" "$tmp/sim2.log"
ref=$(frames "$tmp/host1.bin" header); mine=$(frames "$tmp/host2.bin" header)
[ "$ref" = "$want" ] && [ "$mine" = "$want" ] &&
  ok "AX.25 headers identical (APZRNS-0 from N0CALL-7, UI, PID F0): $want" || bad "AX.25 header: want $want, reference $ref, rnsc $mine"

ref_probe=$(probe_hash "$tmp/A/storage/transport_identity")
rnsc_probe=$(probe_hash "$tmp/B/storage/transport_identity")
timeout 40 "$RNSC" probe --config "$tmp/B" rnstransport.probe "$ref_probe" -t 15 -n 2 >"$tmp/probe.out" 2>&1; rc=$?
[ $rc = 0 ] && [ "$(grep -c "Valid reply from <$ref_probe>" "$tmp/probe.out")" = 2 ] &&
  ok "rnsc probe (on B) gets 2 of 2 proofs from rnsd over AX.25" || bad "rnsc probe -> rnsd (exit $rc)" "$tmp/probe.out" "$tmp/rnsc.log" "$tmp/sim2.log"
timeout 40 "$VENV/bin/rnprobe" --config "$tmp/A" rnstransport.probe "$rnsc_probe" -t 15 -n 2 >"$tmp/rnprobe.out" 2>&1; rc=$?
[ $rc = 0 ] && [ "$(grep -c "Valid reply from <$rnsc_probe>" "$tmp/rnprobe.out")" = 2 ] &&
  ok "rnprobe (on A) gets 2 of 2 proofs from rnsc over AX.25" || bad "rnprobe -> rnsc (exit $rc)" "$tmp/rnprobe.out" "$tmp/rnsd.log" "$tmp/sim1.log"
kill -0 "$RB" 2>/dev/null && ok "rnsc daemon still running" || bad "rnsc daemon died" "$tmp/rnsc.log"
# Options the reference refuses: a callsign outside 3..6 characters, an SSID outside 0..15
# or none at all. rnsc refuses them too, with the reference's message.
refuse() { # refuse TAG MESSAGE EXTRA
  local d="$tmp/bad_$1"
  mkdir -p "$d"
  printf '[reticulum]\n  share_instance = no\n[interfaces]\n  [[Bad]]\n    type = AX25KISSInterface\n    enabled = yes\n    port = /dev/null\n%b' "$3" >"$d/config"
  timeout 10 "$RNSC" daemon --config "$d" >"$d/log" 2>&1 & local p=$!
  wait_for 8 grep -qs -- "$2" "$d/log" && ok "refused: $1 ($2)" || bad "not refused: $1" "$d/log"
  kill "$p" 2>/dev/null; wait "$p" 2>/dev/null
}
refuse "short callsign" "Invalid callsign for AX25KISSInterface\[Bad\]" '    callsign = AB\n    ssid = 1\n'
refuse "long callsign" "Invalid callsign for AX25KISSInterface\[Bad\]" '    callsign = ABCDEFG\n    ssid = 1\n'
refuse "ssid 16" "Invalid SSID for AX25KISSInterface\[Bad\]" '    callsign = N0CALL\n    ssid = 16\n'
refuse "no ssid" "Invalid SSID for AX25KISSInterface\[Bad\]" '    callsign = N0CALL\n'
echo "rnode_ax25_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
