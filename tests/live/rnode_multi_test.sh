#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# RNodeMultiInterface live between the pinned reference and rnsc, through two simulated
# multi-radio RNodes (tests/common/rnode_sim.py --radios 2) on one simulated LoRa air (UDP on
# 127.0.0.1). Each device has two radios: vport 0 on 867.2 MHz SF7 / 500 kHz (21.88 kbit/s)
# and vport 1 on 869.525 MHz SF8 / 250 kHz (6.25 kbit/s), so each node's two subinterfaces
# reach the other's over two separate channels:
#   rnsd A (transport) -- pty -- multi sim 1 ~~2 channels~~ multi sim 2 -- pty -- rnsc daemon B
# Checked: the reference's RNodeMultiInterface and rnsc's send their simulators identical
# configuration byte streams (detect with INTERFACES, then per subinterface the select
# command and its radio parameters, in file order); both report both subinterfaces online
# with the reference's bitrates; rnsc status lists the subinterfaces as RNodeSubInterface
# children named <interface>[<subinterface>] as the reference names them; each side's
# announces land in the other's path table; rnsc cp -> rncp -l and rncp -> rnsc cp -l move a
# 3 kB file over a link with equal SHA-256; B's device is unplugged in the middle of a
# transfer: rnsc logs it, its shared instance keeps serving, the subinterfaces return when
# the pty does and a further transfer succeeds; on shutdown both detach alike (framebuffer
# off, each radio off behind its select, leave). Every wait is bounded.
set -u
. "$(dirname "$0")/../common/lib.sh"
RNCP=("$PY" -m RNS.Utilities.rncp)
for tool in rnsd rnpath rnstatus; do
  [ -x "$VENV/bin/$tool" ] || { echo "FAIL the reference's $tool is not in $VENV/bin (make venv)"; exit 1; }
done
"$PY" -c 'import serial' 2>/dev/null || { echo "FAIL pyserial is missing in $VENV (pip install -r interop/requirements.txt)"; exit 1; }
[ -x "$RNSC" ] || { echo "FAIL $RNSC is not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-rmulti-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.3
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
alive() { kill -0 "$1" 2>/dev/null; }
ctl() { "$PY" -c 'import socket,sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(sys.argv[2].encode(), sys.argv[1])' "$1" "$2"; }
# Two pairs of consecutive free UDP ports (each device's radios sit at PORT and PORT+1).
read -r P1 P2 < <("$PY" -c '
import random, socket
def pair():
    while True:
        p = random.randrange(20000, 60000, 2)
        try:
            s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
            s[0].bind(("127.0.0.1", p)); s[1].bind(("127.0.0.1", p + 1))
            for x in s: x.close()
            return p
        except OSError:
            pass
a = pair(); b = pair()
while abs(a - b) < 2: b = pair()
print(a, b)')

multi() { # multi PORT EXTRA: the RNodeMultiInterface stanza both sides use
  printf '  [[Multi]]\n    type = RNodeMultiInterface\n    enabled = yes\n    port = %s\n%b' "$1" "$2"
  printf '    [[[Radio A]]]\n      interface_enabled = true\n      vport = 0\n      frequency = 867200000\n      bandwidth = 500000\n      txpower = 7\n      spreadingfactor = 7\n      codingrate = 5\n      airtime_limit_short = 90\n'
  printf '    [[[Radio B]]]\n      interface_enabled = true\n      vport = 1\n      frequency = 869525000\n      bandwidth = 250000\n      txpower = 14\n      spreadingfactor = 8\n      codingrate = 5\n      airtime_limit_long = 75.5\n'
}
inst="rnscrmulti$$"
mkdir -p "$tmp/A" "$tmp/B" "$tmp/files" "$tmp/inA" "$tmp/inB"
printf '[reticulum]\n  enable_transport = yes\n  share_instance = yes\n  instance_name = %sa\n[logging]\n  loglevel = 6\n[interfaces]\n%s\n' \
  "$inst" "$(multi "$tmp/rnode1" '')" >"$tmp/A/config"
printf '[reticulum]\n  enable_transport = yes\n  share_instance = yes\n  instance_name = %sb\n[logging]\n  loglevel = 6\n[interfaces]\n%s\n' \
  "$inst" "$(multi "$tmp/rnode2" '    reconnect_wait = 1\n')" >"$tmp/B/config"

"$PY" "$S/tests/common/rnode_sim.py" --radios 2 --link "$tmp/rnode1" --air "$P1" --peer "$P2" --peer $((P2 + 1)) \
  --control "$tmp/ctl1" --rx-log "$tmp/host1.bin" --lifetime 300 >"$tmp/sim1.log" 2>&1 & pids+=($!)
"$PY" "$S/tests/common/rnode_sim.py" --radios 2 --link "$tmp/rnode2" --air "$P2" --peer "$P1" --peer $((P1 + 1)) \
  --control "$tmp/ctl2" --rx-log "$tmp/host2.bin" --lifetime 300 --seed 2 >"$tmp/sim2.log" 2>&1 & pids+=($!)
if ! wait_for 10 grep -qs READY "$tmp/sim1.log" || ! wait_for 10 grep -qs READY "$tmp/sim2.log"; then
  bad "the simulated RNodes did not start" "$tmp/sim1.log" "$tmp/sim2.log"; exit 1
fi
"$VENV/bin/rnsd" --config "$tmp/A" >"$tmp/rnsd.log" 2>&1 & RA=$!; pids+=($RA)
"$RNSC" daemon --config "$tmp/B" -vvv >"$tmp/rnsc.log" 2>&1 & RB=$!; pids+=($RB)
if wait_for 40 grep -qs "Multi\[Radio B\] is configured and powered up" "$tmp/rnsd.log" &&
   grep -qs "Multi\[Radio A\] is configured and powered up" "$tmp/rnsd.log"; then
  ok "reference RNodeMultiInterface configured both radios of its simulated RNode"
else bad "the reference's RNodeMultiInterface did not come up" "$tmp/rnsd.log" "$tmp/sim1.log"; exit 1; fi
if wait_for 40 grep -qs "Multi\[Radio B\] is now online" "$tmp/rnsc.log" &&
   grep -qs "Multi\[Radio A\] is now online" "$tmp/rnsc.log" &&
   grep -qs "Multi\[Radio A\] On-air bitrate is now 21.88 kbps" "$tmp/rnsc.log" &&
   grep -qs "Multi\[Radio B\] On-air bitrate is now 6.25 kbps" "$tmp/rnsc.log"; then
  ok "rnsc RNodeMultiInterface: both subinterfaces online, bitrates 21.88 and 6.25 kbps as the reference computes"
else bad "rnsc's RNodeMultiInterface did not come up" "$tmp/rnsc.log" "$tmp/sim2.log"; exit 1; fi
if grep -qs "Multi\[Radio A\] On-air bitrate is now 21.88 kbps" "$tmp/rnsd.log" &&
   grep -qs "Multi\[Radio B\] On-air bitrate is now 6.25 kbps" "$tmp/rnsd.log"; then
  ok "the reference logs the same two bitrates"
else bad "the reference's bitrates differ" "$tmp/rnsd.log"; fi

# The command frames each host sent before its first data frame, one per line (hex); a
# select frame right before that data frame belongs to the data.
cmds() { "$PY" - "$1" "${2:-head}" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
frames, cur = [], None
for b in data:
    if b == 0xC0:
        if cur: frames.append(bytes(cur))
        cur = bytearray()
    elif cur is not None:
        cur.append(b)  # escaped form kept: the bytes on the wire are compared
if sys.argv[2] == "head":
    out = []
    for f in frames:
        if f[0] == 0x00:
            if out and out[-1][0] == 0x1F: out.pop()
            break
        out.append(f)
else:  # tail: what follows the last data frame
    last = max([i for i, f in enumerate(frames) if f[0] == 0x00] or [-1])
    out = [f for f in frames[last + 1:] if f[0] != 0x1F or True]
    out = out[-6:]
print("\n".join(f.hex() for f in out))
EOF
}
wait_for 15 grep -qs "^R[01] TX" "$tmp/sim1.log"
wait_for 15 grep -qs "^R[01] TX" "$tmp/sim2.log"
cmds "$tmp/host1.bin" >"$tmp/cfg_ref.txt"; cmds "$tmp/host2.bin" >"$tmp/cfg_rnsc.txt"
# detect+interfaces, then per radio: select+param frames (8 for A with its short lock, 8 for B)
if [ -s "$tmp/cfg_ref.txt" ] && cmp -s "$tmp/cfg_ref.txt" "$tmp/cfg_rnsc.txt" &&
   grep -qx "7100" "$tmp/cfg_ref.txt" && grep -qx "1f01" "$tmp/cfg_ref.txt" &&
   grep -qx "0b2328" "$tmp/cfg_ref.txt" && grep -qx "0c1d7e" "$tmp/cfg_ref.txt"; then
  ok "configuration byte streams identical ($(wc -l <"$tmp/cfg_ref.txt") frames: $(tr '\n' ' ' <"$tmp/cfg_ref.txt"))"
else bad "configuration byte streams differ" "$tmp/cfg_ref.txt" "$tmp/cfg_rnsc.txt"; fi

# ---- the subinterfaces as status shows them ------------------------------------------------
timeout 20 "$RNSC" status --config "$tmp/B" -j >"$tmp/status.json" 2>&1
if "$PY" - "$tmp/status.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ifs = {i["name"]: i for i in d["interfaces"]}
a, b = ifs.get("Multi[Radio A]"), ifs.get("Multi[Radio B]")
ok = (a and b and a["type"] == "RNodeSubInterface" and b["type"] == "RNodeSubInterface"
      and a["status"] and b["status"] and a.get("parent_interface_name") == "RNodeMultiInterface[Multi]"
      and a["bitrate"] == 21875 and b["bitrate"] == 6250)
sys.exit(0 if ok else 1)
EOF
then ok "rnsc status: Multi[Radio A] and Multi[Radio B] are RNodeSubInterface children of RNodeMultiInterface[Multi], online, 21875 and 6250 bit/s"
else bad "rnsc status does not show the subinterfaces as expected" "$tmp/status.json"; fi

# ---- announces, then files both ways -------------------------------------------------------
idof() { sed -n 's/^Identity *: <\(.*\)>.*/\1/p'; }
dstof() { sed -n 's/^Listening on : <\(.*\)>.*/\1/p'; }
ID_A=$("${RNCP[@]}" --config "$tmp/A" -p 2>/dev/null | idof)
ID_B=$("$RNSC" cp --config "$tmp/B" -p 2>/dev/null | idof)
D_A=$("${RNCP[@]}" --config "$tmp/A" -p 2>/dev/null | dstof)
D_B=$("$RNSC" cp --config "$tmp/B" -p 2>/dev/null | dstof)
[ ${#ID_A} = 32 ] && [ ${#ID_B} = 32 ] && [ ${#D_A} = 32 ] && [ ${#D_B} = 32 ] ||
  { bad "could not read identities ('$ID_A' '$ID_B' '$D_A' '$D_B')"; exit 1; }
"${RNCP[@]}" --config "$tmp/A" -l -a "$ID_B" -s "$tmp/inA" >"$tmp/rncp_l.log" 2>&1 & pids+=($!)
"$RNSC" cp --config "$tmp/B" -l -b 5 -a "$ID_A" -s "$tmp/inB" -vv >"$tmp/cp_l.log" 2>&1 & LB=$!; pids+=($LB)
ref_knows() { timeout 10 "$VENV/bin/rnpath" --config "$tmp/A" -t >"$tmp/rnpath.out" 2>&1 && grep -qs "<$D_B>" "$tmp/rnpath.out"; }
if wait_for 40 ref_knows; then ok "rnsc cp -l's announce reached rnsd's path table over a subinterface ($(grep "<$D_B>" "$tmp/rnpath.out" | sed 's/.*via/via/' | cut -c1-60))"
else bad "rnsd never learned rnsc cp -l's destination" "$tmp/rnpath.out" "$tmp/cp_l.log"; fi
if wait_for 40 grep -qs "path to <$D_A> is" "$tmp/rnsc.log"; then ok "rncp -l's announce reached rnsc's path table over a subinterface"
else bad "rnsc never learned rncp -l's destination" "$tmp/rnsc.log"; fi

head -c 3000 /dev/urandom >"$tmp/files/small_ab.bin"
head -c 3000 /dev/urandom >"$tmp/files/small_ba.bin"
head -c 12000 /dev/urandom >"$tmp/files/cut.bin"
head -c 2000 /dev/urandom >"$tmp/files/after.bin"
same() { [ -f "$2" ] && [ "$(sha256sum <"$1")" = "$(sha256sum <"$2")" ]; }
# Both nodes send every announce and path request on both channels, and the simulated air
# lets frames that start within the same instant collide (as LoRa does): a link or resource
# packet lost that way fails the first attempt of either tool alike, so each direction may
# try once more, said aloud with the simulators' collision counts.
collisions() { cat "$tmp/sim1.log" "$tmp/sim2.log" | grep -c COLLISION; }
t0=$SECONDS; note=""
for try in 1 2; do
  (cd "$tmp" && timeout 90 "$RNSC" cp --config "$tmp/B" -S -w 40 "$tmp/files/small_ba.bin" "$D_A" >"$tmp/cp1_$try.log" 2>&1); rc=$?
  wait_for 10 same "$tmp/files/small_ba.bin" "$tmp/inA/small_ba.bin" && break
  why=$(tr '\r' '\n' <"$tmp/cp1_$try.log" | grep -v '^\s*$' | tail -1)
  note=" (second attempt; the first: $why; $(collisions) collisions on air so far)"
  echo "note rnsc cp -> rncp -l: attempt $try failed (rc=$rc): $why; $(collisions) collisions on air so far"
done
if same "$tmp/files/small_ba.bin" "$tmp/inA/small_ba.bin"; then
  ok "rnsc cp -> rncp -l over the multi-radio RNodes: 3000 bytes in $((SECONDS - t0)) s, SHA-256 equal (rc=$rc)$note"
else bad "rnsc cp -> rncp -l (rc=$rc)" "$tmp/cp1_1.log" "$tmp/cp1_2.log" "$tmp/rncp_l.log"; fi
t0=$SECONDS; note=""
for try in 1 2; do # a second attempt is said aloud (see above)
  (cd "$tmp" && timeout 90 "${RNCP[@]}" --config "$tmp/A" -S -w 40 "$tmp/files/small_ab.bin" "$D_B" >"$tmp/rncp$try.log" 2>&1); rc=$?
  wait_for 10 same "$tmp/files/small_ab.bin" "$tmp/inB/small_ab.bin" && break
  why=$(tr '\r' '\n' <"$tmp/rncp$try.log" | grep -v '^\s*$' | tail -1)
  note=" (second attempt; the first: $why; $(collisions) collisions on air so far)"
  echo "note rncp -> rnsc cp -l: attempt $try failed (rc=$rc): $why; $(collisions) collisions on air so far"
done
if same "$tmp/files/small_ab.bin" "$tmp/inB/small_ab.bin"; then
  ok "rncp -> rnsc cp -l over the multi-radio RNodes: 3000 bytes in $((SECONDS - t0)) s, SHA-256 equal (rncp rc=$rc)$note"
else bad "rncp -> rnsc cp -l (rc=$rc)" "$tmp/rncp1.log" "$tmp/rncp2.log" "$tmp/cp_l.log"; fi

# ---- unplug B's device in the middle of a transfer ---------------------------------------
(cd "$tmp" && timeout 60 "$RNSC" cp --config "$tmp/B" -S -w 20 "$tmp/files/cut.bin" "$D_A" >"$tmp/cp_cut.log" 2>&1) & CUT=$!; pids+=($CUT)
wait_for 20 grep -qs "^R[01] TX 4[0-9][0-9] bytes" "$tmp/sim2.log" # resource parts are on the air
ctl "$tmp/ctl2" unplug
if wait_for 10 grep -qs "A serial port error occurred on RNodeMultiInterface\[Multi\]" "$tmp/rnsc.log"; then
  ok "unplugging B's device mid-transfer is logged: $(grep -m1 "serial port error occurred on RNodeMultiInterface" "$tmp/rnsc.log" | cut -c1-160)"
else bad "rnsc did not log the unplugged device" "$tmp/rnsc.log"; fi
sleep 1
if timeout 15 "$RNSC" cp --config "$tmp/B" -p >"$tmp/during.out" 2>&1 && alive "$RB" && alive "$LB" &&
   timeout 15 "$RNSC" status --config "$tmp/B" >"$tmp/status_during.out" 2>&1; then
  ok "while the device is gone, rnsc's daemon and its shared instance keep serving local clients"
else bad "rnsc's daemon stopped serving while the device was gone" "$tmp/status_during.out" "$tmp/rnsc.log"; fi
ctl "$tmp/ctl2" plug
if wait_for 30 grep -qs "Reconnected serial port for RNodeMultiInterface\[Multi\]" "$tmp/rnsc.log" &&
   [ "$(grep -c "Multi\[Radio A\] is now online" "$tmp/rnsc.log")" -ge 2 ]; then
  ok "the device and its subinterfaces came back when the pty returned"
else bad "no reconnection after the pty returned" "$tmp/rnsc.log" "$tmp/sim2.log"; fi
wait "$CUT" 2>/dev/null
t0=$SECONDS; note=""
for try in 1 2; do # the path may point at a subinterface that was just re-created: said aloud
  (cd "$tmp" && timeout 90 "$RNSC" cp --config "$tmp/B" -S -w 40 "$tmp/files/after.bin" "$D_A" >"$tmp/cp2_$try.log" 2>&1); rc=$?
  wait_for 10 same "$tmp/files/after.bin" "$tmp/inA/after.bin" && break
  note=" (second attempt)"; echo "note transfer after reconnection: attempt $try failed (rc=$rc); $(collisions) collisions on air so far"
done
if same "$tmp/files/after.bin" "$tmp/inA/after.bin"; then
  ok "after the reconnection rnsc cp -> rncp -l moves 2000 bytes in $((SECONDS - t0)) s$note"
else bad "transfer after the reconnection (rc=$rc)" "$tmp/cp2_1.log" "$tmp/cp2_2.log" "$tmp/rnsc.log"; fi

# By now both nodes have announced and answered on both channels many times over.
rxc() { grep -c "^$2 RX" "$1"; }
if [ "$(rxc "$tmp/sim1.log" R0)" -gt 0 ] && [ "$(rxc "$tmp/sim1.log" R1)" -gt 0 ] &&
   [ "$(rxc "$tmp/sim2.log" R0)" -gt 0 ] && [ "$(rxc "$tmp/sim2.log" R1)" -gt 0 ]; then
  ok "both channels carried traffic both ways (packets heard: A $(rxc "$tmp/sim1.log" R0)+$(rxc "$tmp/sim1.log" R1), B $(rxc "$tmp/sim2.log" R0)+$(rxc "$tmp/sim2.log" R1), $(collisions) collisions)"
else bad "a channel stayed silent" "$tmp/sim1.log" "$tmp/sim2.log"; fi

# ---- shutdown: both detach the same way ---------------------------------------------------
kill "$RA" "$RB" 2>/dev/null
wait_for 20 sh -c "! kill -0 $RA 2>/dev/null && ! kill -0 $RB 2>/dev/null"
cmds "$tmp/host1.bin" tail >"$tmp/det_ref.txt"; cmds "$tmp/host2.bin" tail >"$tmp/det_rnsc.txt"
if [ "$(tr '\n' ' ' <"$tmp/det_ref.txt")" = "4100 1f00 0600 1f01 0600 0aff " ] && cmp -s "$tmp/det_ref.txt" "$tmp/det_rnsc.txt"; then
  ok "on shutdown both detach alike (framebuffer off, each radio off behind its select, leave)"
else bad "detach sequences differ" "$tmp/det_ref.txt" "$tmp/det_rnsc.txt"; fi
echo "rnode_multi_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
