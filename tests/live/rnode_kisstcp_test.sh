#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TCPClientInterface with kiss_framing = yes, live between the pinned reference and rnsc:
# rnsd A and an rnsc daemon B are each a KISS-over-TCP client of a relay on 127.0.0.1 (a
# stand-in for a software modem: what one client writes the other reads). Checked: both
# send KISS data frames (C0 00 ... C0, no HDLC flags) and neither a tunnel synthesis (the
# reference's KISS client synthesizes none); rnprobe on A gets proofs from B's probe
# destination and rnsc probe on B from A's, across the relay; rnsc's KISS client counts a
# non-data KISS command from the modem as a drop and keeps going. Every wait is bounded; a
# reference that cannot start fails the test.
set -u
. "$(dirname "$0")/../common/lib.sh"
for tool in rnsd rnprobe; do
  [ -x "$VENV/bin/$tool" ] || { echo "FAIL the reference's $tool is not in $VENV/bin (make venv)"; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-kisstcp-test.XXXXXX")
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
# The relay: two listening ports; bytes from the connection on one go to the other's, and
# to a log per direction. "inject" in $tmp/inject makes it send a KISS command to port 2.
"$PY" - "$tmp" >"$tmp/relay.log" 2>&1 <<'PYX' & pids+=($!)
import os, selectors, socket, sys, time
tmp = sys.argv[1]
ls = []
for _ in range(2):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0)); s.listen(4); ls.append(s)
open(os.path.join(tmp, "ports"), "w").write("%d %d\n" % (ls[0].getsockname()[1], ls[1].getsockname()[1]))
sel = selectors.DefaultSelector()
conn = [None, None]
logs = [open(os.path.join(tmp, "from%d.bin" % (i + 1)), "ab", buffering=0) for i in range(2)]
for i, s in enumerate(ls):
    sel.register(s, selectors.EVENT_READ, ("listen", i))
end = time.time() + 120
injected = False
while time.time() < end:
    if not injected and conn[1] and os.path.exists(os.path.join(tmp, "inject")):
        conn[1].sendall(bytes([0xC0, 0x06, 0x01, 0x02, 0xC0]))  # SETHARDWARE: not data
        injected = True
        print("injected", flush=True)
    for key, _ in sel.select(0.1):
        kind, i = key.data
        if kind == "listen":
            c, _ = key.fileobj.accept()
            if conn[i]:
                sel.unregister(conn[i]); conn[i].close()
            conn[i] = c
            sel.register(c, selectors.EVENT_READ, ("conn", i))
            print("client on port %d" % (i + 1), flush=True)
        else:
            d = key.fileobj.recv(65536)
            if not d:
                sel.unregister(key.fileobj); key.fileobj.close(); conn[i] = None
                continue
            logs[i].write(d)
            if conn[1 - i]:
                conn[1 - i].sendall(d)
PYX
wait_for 10 test -s "$tmp/ports" || { bad "relay did not start" "$tmp/relay.log"; exit 1; }
read -r P1 P2 <"$tmp/ports"
client() { printf '  [[Modem]]\n    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %s\n    kiss_framing = yes\n' "$1"; }
mkdir -p "$tmp/A" "$tmp/B"
printf '[reticulum]\n  enable_transport = yes\n  share_instance = yes\n  instance_name = rnsckisstcp%sa\n  respond_to_probes = yes\n[logging]\n  loglevel = 6\n[interfaces]\n%s\n' "$$" "$(client "$P1")" >"$tmp/A/config"
printf '[reticulum]\n  enable_transport = yes\n  share_instance = yes\n  instance_name = rnsckisstcp%sb\n  respond_to_probes = yes\n[logging]\n  loglevel = 6\n[interfaces]\n%s\n' "$$" "$(client "$P2")" >"$tmp/B/config"
"$VENV/bin/rnsd" --config "$tmp/A" >"$tmp/rnsd.log" 2>&1 & pids+=($!)
"$RNSC" daemon --config "$tmp/B" -vvv >"$tmp/rnsc.log" 2>&1 & RB=$!; pids+=($RB)
wait_for 30 grep -qs "client on port 1" "$tmp/relay.log" && wait_for 20 grep -qs "client on port 2" "$tmp/relay.log" &&
  ok "both KISS TCP clients connected to the relay" || { bad "a client did not connect" "$tmp/relay.log" "$tmp/rnsd.log" "$tmp/rnsc.log"; exit 1; }
ref_probe=$(probe_hash "$tmp/A/storage/transport_identity")
rnsc_probe=$(probe_hash "$tmp/B/storage/transport_identity")
timeout 40 "$RNSC" probe --config "$tmp/B" rnstransport.probe "$ref_probe" -t 15 -n 2 >"$tmp/probe.out" 2>&1; rc=$?
[ $rc = 0 ] && [ "$(grep -c "Valid reply from <$ref_probe>" "$tmp/probe.out")" = 2 ] &&
  ok "rnsc probe (on B) gets 2 of 2 proofs from rnsd over KISS/TCP" || bad "rnsc probe -> rnsd (exit $rc)" "$tmp/probe.out" "$tmp/rnsc.log"
touch "$tmp/inject"
wait_for 5 grep -qs injected "$tmp/relay.log"
timeout 40 "$VENV/bin/rnprobe" --config "$tmp/A" rnstransport.probe "$rnsc_probe" -t 15 -n 2 >"$tmp/rnprobe.out" 2>&1; rc=$?
[ $rc = 0 ] && [ "$(grep -c "Valid reply from <$rnsc_probe>" "$tmp/rnprobe.out")" = 2 ] &&
  ok "rnprobe (on A) gets 2 of 2 proofs from rnsc over KISS/TCP (after a non-data KISS command)" || bad "rnprobe -> rnsc (exit $rc)" "$tmp/rnprobe.out" "$tmp/rnsd.log"
kill "$RB"; wait "$RB" 2>/dev/null
# Both streams: only KISS data frames; the relay's logs hold what each side wrote.
check_stream() { "$PY" - "$1" <<'PYX'
import sys
d = open(sys.argv[1], "rb").read()
frames = [f for f in d.split(b"\xc0") if f]
ok = d[:1] == b"\xc0" and d[-1:] == b"\xc0" and frames and all(f[0] == 0 for f in frames) and b"\x7e" not in d[:1]
print(len(frames), "frames")
sys.exit(0 if ok else 1)
PYX
}
n1=$(check_stream "$tmp/from1.bin") && ok "the reference wrote only KISS data frames ($n1)" || bad "the reference's stream is not KISS data frames"
n2=$(check_stream "$tmp/from2.bin") && ok "rnsc wrote only KISS data frames ($n2)" || bad "rnsc's stream is not KISS data frames"
grep -q "Modem.*garbage [1-9]" "$tmp/rnsc.log" && ok "rnsc counted the modem's non-data command as a drop" || bad "non-data command not counted" "$tmp/rnsc.log"
! grep -qs "tunnel synthesized for" "$tmp/rnsc.log" && ok "rnsc synthesized no tunnel on its KISS client" || bad "rnsc synthesized a tunnel" "$tmp/rnsc.log"
echo "rnode_kisstcp_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
