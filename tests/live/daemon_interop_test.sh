#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Live interop of `rnsc daemon`, `rnsc probe` and `rnsc path` with the pinned reference's
# rnsd, rnpath and rnprobe, as real processes on 127.0.0.1 with ephemeral ports and private
# config folders (the reference's shared instance gets a unique instance name, so
# parallel runs never meet). Topology:
#
#   rnsd (A: TCPServer :P1, IFAC TCPServer :P3,   <-- TCP --  rnsc daemon (B: TCPClient to P1,
#         transport, probes)                                   TCPServer :P2, transport, probes)
#     ^ rnpath/rnprobe --config A (shared instance)           ^ rnprobe --config C (TCPClient to P2)
#     ^ rnsc probe/path --config D (TCPClient to P1); E, F: TCPClient to P3 with right/wrong IFAC
#
# Checked: (a) each side's probe announce lands in the other's path table (rnsc's log, the
# reference's rnpath -t); (b) the reference's rnprobe gets replies from rnsc's probe
# destination, through rnsd and directly; (c) rnsc probe gets replies from rnsd's, also
# over IFAC, and nothing with a wrong passphrase; rnsc path lookups and -t listing;
# garbage, runt and oversized frames on rnsc's TCP server are counted and dropped while the
# daemon keeps working; clean shutdown on SIGTERM; known destinations, path table and
# announce cache written in the reference's layouts (read back with the reference's own
# umsgpack and Packet), reloaded, and truncated files tolerated on restart; bad configs
# rejected with one line naming section and option. Every wait is bounded; a reference
# that cannot start fails the test.
set -u
. "$(dirname "$0")/../common/lib.sh"

for tool in rnsd rnpath rnprobe; do
  if [ ! -x "$VENV/bin/$tool" ]; then
    echo "FAIL the reference's $tool is not in $VENV/bin (make venv)"; exit 1
  fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-daemon-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap "for p in \"\${pids[@]}\"; do kill \$p 2>/dev/null; done" EXIT

# Two free TCP ports chosen by the kernel.
read -r P1 P2 P3 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
inst="rnsctest$$"

wait_for() { # wait_for SECONDS COMMAND...: polls every 0.2 s
  local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done
  return 1
}
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }
alive() { kill -0 "$1" 2>/dev/null; }

mkdir -p "$tmp/A" "$tmp/B" "$tmp/C" "$tmp/D"
cat >"$tmp/A/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = yes
  instance_name = $inst
  respond_to_probes = yes
[logging]
  loglevel = 5
[interfaces]
  [[Reference Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P1
  [[Reference IFAC Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P3
    network_name = rnsc test net
    passphrase = not so secret
    ifac_size = 64
EOF
cat >"$tmp/B/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = no
  respond_to_probes = yes
[logging]
  loglevel = 4
[interfaces]
  [[To Reference]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P1
  [[rnsc Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P2
EOF
client_cfg() { # client_cfg DIR PORT
  cat >"$1/config" <<EOF
[reticulum]
  share_instance = no
[logging]
  loglevel = 4
[interfaces]
  [[Client]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $2
EOF
}
client_cfg "$tmp/C" "$P2"
client_cfg "$tmp/D" "$P1"
mkdir -p "$tmp/E" "$tmp/F"
client_cfg "$tmp/E" "$P3"
printf '    networkname = rnsc test net\n    pass_phrase = not so secret\n    ifac_size = 64\n' >>"$tmp/E/config"
client_cfg "$tmp/F" "$P3"
printf '    network_name = rnsc test net\n    passphrase = wrong\n    ifac_size = 64\n' >>"$tmp/F/config"

# ---- bad configurations: one line naming the section and option, non-zero exit ----------
mkdir -p "$tmp/bad1" "$tmp/bad2"
printf '[reticulum]\n  enable_transport = maybe\n' >"$tmp/bad1/config"
timeout 20 "$RNSC" daemon --config "$tmp/bad1" >"$tmp/bad1.out" 2>"$tmp/bad1.err"; rc=$?
if [ $rc = 3 ] && grep -qs "enable_transport" "$tmp/bad1.err" && [ "$(wc -l <"$tmp/bad1.err")" = 1 ]; then
  ok "bad boolean rejected naming the option"; else bad "bad boolean (exit $rc)" "$tmp/bad1.err"; fi
printf '[interfaces]\n  [[Broken]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = abc\n' >"$tmp/bad2/config"
timeout 20 "$RNSC" daemon --config "$tmp/bad2" >"$tmp/bad2.out" 2>"$tmp/bad2.err"; rc=$?
if [ $rc = 3 ] && grep -qs "Broken.*listen_port" "$tmp/bad2.err"; then
  ok "bad interface option rejected naming section and option"; else bad "bad interface option (exit $rc)" "$tmp/bad2.err"; fi
timeout 10 "$RNSC" daemon --nope >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && ok "unknown daemon option is a usage error" || bad "unknown option exit $rc"
timeout 10 "$RNSC" daemon --help >"$tmp/help" 2>&1 && grep -q -- "--service" "$tmp/help" \
  && ok "daemon --help" || bad "daemon --help" "$tmp/help"

timeout 10 "$RNSC" daemon --version >"$tmp/ver" 2>&1 && grep -qs "^rnsc daemon " "$tmp/ver" \
  && ok "daemon --version" || bad "daemon --version" "$tmp/ver"
# Service mode: logs go to DIR/logfile, nothing to stdout; SIGINT stops it cleanly.
mkdir -p "$tmp/S"
printf '[reticulum]\n  share_instance = no\n[logging]\n  loglevel = 4\n' >"$tmp/S/config"
"$RNSC" daemon -s --config "$tmp/S" >"$tmp/S.out" 2>&1 &
pids+=($!); P=$!
if wait_for 20 grep -qs "started rnsc daemon" "$tmp/S/logfile"; then
  kill -INT "$P"
  if wait_for 15 eval '! alive $P' && wait "$P" && grep -qs "stopped" "$tmp/S/logfile" && [ ! -s "$tmp/S.out" ] \
     && [ -f "$tmp/S/storage/transport_identity" ]; then
    ok "service mode logs to DIR/logfile and stops on SIGINT"
  else bad "service mode shutdown" "$tmp/S/logfile" "$tmp/S.out"; fi
else bad "service mode did not log to DIR/logfile" "$tmp/S.out"; fi

# ---- start both daemons --------------------------------------------------------------------
"$VENV/bin/rnsd" --config "$tmp/A" >"$tmp/rnsd.log" 2>&1 &
pids+=($!); RNSD_PID=$!
if wait_for 30 port_open "$P1" && [ -f "$tmp/A/storage/transport_identity" ]; then ok "reference rnsd started"
else bad "reference rnsd did not start within 30 s" "$tmp/rnsd.log"; exit 1; fi
"$RNSC" daemon --config "$tmp/B" -vv >"$tmp/rnsc.log" 2>&1 &
pids+=($!); RNSC_PID=$!
if wait_for 20 port_open "$P2"; then ok "rnsc daemon started"
else bad "rnsc daemon did not start" "$tmp/rnsc.log"; exit 1; fi

REF_PROBE=$("$RNSC" id -i "$tmp/A/storage/transport_identity" -H rnstransport.probe | sed -n 's/.*destination for this Identity is <\([0-9a-f]*\)>.*/\1/p')
RNSC_PROBE=$(sed -n 's/.*respond to probe requests on <\([0-9a-f]*\)>.*/\1/p' "$tmp/rnsc.log" | head -1)
RNSC_PROBE_ID=$("$RNSC" id -i "$tmp/B/storage/transport_identity" -H rnstransport.probe | sed -n 's/.*destination for this Identity is <\([0-9a-f]*\)>.*/\1/p')
if [ ${#REF_PROBE} = 32 ] && [ ${#RNSC_PROBE} = 32 ] && [ "$RNSC_PROBE" = "$RNSC_PROBE_ID" ]; then
  ok "probe destinations: reference <$REF_PROBE>, rnsc <$RNSC_PROBE> (from its stored identity)"
else bad "probe hashes ref='$REF_PROBE' rnsc='$RNSC_PROBE' id='$RNSC_PROBE_ID'" "$tmp/rnsc.log"; exit 1; fi

# ---- (a) announces: the management announces go out 15 s after start ----------------------
if wait_for 45 grep -qs "path to <$REF_PROBE> is 1 hop via To Reference" "$tmp/rnsc.log"; then
  ok "(a) reference probe announce in rnsc's path table (1 hop via To Reference)"
else bad "(a) reference probe announce not seen by rnsc" "$tmp/rnsc.log" "$tmp/rnsd.log"; fi
# rnpath -t lists the running rnsd's own path table (over the shared instance's RPC), so a
# path there came from rnsc's announce, not from a request made by the query.
ref_table_has() { timeout 20 "$VENV/bin/rnpath" --config "$tmp/A" -t >"$tmp/rnpath.out" 2>&1 && grep -qs "<$RNSC_PROBE> is 1 hop  away via" "$tmp/rnpath.out"; }
if wait_for 45 grep -qs "announced the probe destination" "$tmp/rnsc.log" && wait_for 20 ref_table_has; then
  ok "(a) rnsc probe announce in rnsd's path table: $(grep "$RNSC_PROBE" "$tmp/rnpath.out")"
else bad "(a) rnsd's path table lacks rnsc's probe destination" "$tmp/rnpath.out" "$tmp/rnsd.log"; fi

# ---- hostile input on rnsc's TCP server ----------------------------------------------------
"$PY" - "$P2" <<'EOF' >"$tmp/hostile.out" 2>&1
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)
s.sendall(b"no frame here " * 20)                        # bytes outside any frame
s.sendall(os.urandom(3000))                              # noise, some of it framed
s.sendall(b"\x7e" + b"\x01\x02" + b"\x7e")               # a runt frame
s.sendall(b"\x7e" + os.urandom(40).replace(b"\x7e", b"\x00").replace(b"\x7d", b"\x00") + b"\x7e")  # junk packet
s.sendall(b"\x7e" + b"\x41" * 300000 + b"\x7e")          # beyond the HW_MTU
time.sleep(0.5)
s.close()
print("sent")
EOF
sleep 1
if alive "$RNSC_PID"; then ok "daemon survives garbage, runt, junk and oversized frames"
else bad "daemon died on hostile input" "$tmp/rnsc.log" "$tmp/hostile.out"; fi

# ---- (b) the reference's rnprobe reaches rnsc's probe destination --------------------------
timeout 60 "$VENV/bin/rnprobe" --config "$tmp/A" rnstransport.probe "$RNSC_PROBE" -t 15 >"$tmp/rnprobe_a.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -qs "Valid reply from <$RNSC_PROBE>" "$tmp/rnprobe_a.out" && grep -qs "packet loss 0.0%" "$tmp/rnprobe_a.out"; then
  ok "(b) rnprobe through rnsd gets a reply from rnsc"
else bad "(b) rnprobe through rnsd (exit $rc)" "$tmp/rnprobe_a.out" "$tmp/rnsc.log"; fi
timeout 60 "$VENV/bin/rnprobe" --config "$tmp/C" rnstransport.probe "$RNSC_PROBE" -t 15 -n 2 >"$tmp/rnprobe_c.out" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c "Valid reply from <$RNSC_PROBE>" "$tmp/rnprobe_c.out")" = 2 ]; then
  ok "(b) rnprobe connected to rnsc's TCP server gets 2 of 2 replies"
else bad "(b) rnprobe direct to rnsc (exit $rc)" "$tmp/rnprobe_c.out" "$tmp/rnsc.log"; fi

# ---- rnsc as the transport node between two reference nodes -------------------------------
# rnprobe (its own reference node, connected only to rnsc's TCP server) -> rnsc daemon ->
# rnsd's probe destination: the path request, the data and the proof all cross rnsc.
timeout 60 "$VENV/bin/rnprobe" --config "$tmp/C" rnstransport.probe "$REF_PROBE" -t 15 -n 2 >"$tmp/rnprobe_via.out" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c "Valid reply from <$REF_PROBE>" "$tmp/rnprobe_via.out")" = 2 ] \
   && grep -qs "over 2 hops" "$tmp/rnprobe_via.out"; then
  ok "reference -> rnsc (transport) -> reference: rnprobe gets 2 of 2 replies over 2 hops"
else bad "rnprobe through rnsc as transport node (exit $rc)" "$tmp/rnprobe_via.out" "$tmp/rnsc.log"; fi

# ---- (c) rnsc probe reaches rnsd's probe destination ---------------------------------------
timeout 60 "$RNSC" probe --config "$tmp/D" rnstransport.probe "$REF_PROBE" -t 15 -n 2 -v >"$tmp/probe_d.out" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c "Valid reply from <$REF_PROBE>" "$tmp/probe_d.out")" = 2 ] \
   && grep -qs "Sent 2, received 2, packet loss 0.0%" "$tmp/probe_d.out" && grep -qs "over 1 hop$" "$tmp/probe_d.out" \
   && grep -qs "^Sent probe 1 (16 bytes) to <$REF_PROBE> via <$REF_PROBE> on TCPInterface\[Client/127.0.0.1:$P1\]" "$tmp/probe_d.out"; then
  ok "(c) rnsc probe gets 2 of 2 replies from rnsd"
else bad "(c) rnsc probe (exit $rc)" "$tmp/probe_d.out" "$tmp/rnsd.log"; fi
# ... and, through rnsd, rnsc's own daemon two hops away.
timeout 60 "$RNSC" probe --config "$tmp/D" rnstransport.probe "$RNSC_PROBE" -t 15 >"$tmp/probe_d2.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -qs "over 2 hops" "$tmp/probe_d2.out"; then
  ok "(c) rnsc probe reaches rnsc daemon through rnsd (2 hops)"
else bad "(c) rnsc probe over 2 hops (exit $rc)" "$tmp/probe_d2.out" "$tmp/rnsc.log"; fi
# rnsc path: a lookup answered by rnsd (a transport node) for rnsc's daemon, and a miss.
timeout 60 "$RNSC" path --config "$tmp/D" "$RNSC_PROBE" -w 15 >"$tmp/path_d.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -qs "Path found, destination <$RNSC_PROBE> is 2 hops away via <[0-9a-f]*> on TCPInterface\[Client/127.0.0.1:$P1\]" "$tmp/path_d.out"; then
  ok "rnsc path finds rnsc's daemon through rnsd: $(tail -1 "$tmp/path_d.out")"
else bad "rnsc path lookup (exit $rc)" "$tmp/path_d.out"; fi
timeout 30 "$RNSC" path --config "$tmp/D" 00112233445566778899aabbccddeeff -w 2 >"$tmp/path_none.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -qs "Path not found" "$tmp/path_none.out"; then ok "rnsc path: unknown destination (exit 1)"
else bad "rnsc path unknown destination (exit $rc)" "$tmp/path_none.out"; fi

# IFAC: an 8-byte access code from network name and passphrase (the alternative spellings
# networkname/pass_phrase on rnsc's side); a wrong passphrase gets nothing through.
timeout 60 "$RNSC" probe --config "$tmp/E" rnstransport.probe "$REF_PROBE" -t 15 >"$tmp/probe_e.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -qs "Valid reply from <$REF_PROBE>" "$tmp/probe_e.out"; then
  ok "(c) rnsc probe over an IFAC interface of rnsd gets a reply"
else bad "(c) rnsc probe over IFAC (exit $rc)" "$tmp/probe_e.out" "$tmp/rnsd.log"; fi
timeout 60 "$RNSC" probe --config "$tmp/F" rnstransport.probe "$REF_PROBE" -t 4 >"$tmp/probe_f.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -qs "Path request timed out" "$tmp/probe_f.out"; then
  ok "wrong IFAC passphrase: nothing gets through (exit 1)"
else bad "wrong IFAC passphrase (exit $rc)" "$tmp/probe_f.out"; fi

# A probe larger than the MTU allows: rnprobe's message and exit code 3.
timeout 60 "$RNSC" probe --config "$tmp/D" rnstransport.probe "$REF_PROBE" -s 600 -t 15 >"$tmp/probe_big.out" 2>&1; rc=$?
if [ $rc = 3 ] && grep -qs "Error: Probe packet size of [0-9]* bytes exceed MTU of 500 bytes" "$tmp/probe_big.out"; then
  ok "oversized probe refused (exit 3)"
else bad "oversized probe (exit $rc)" "$tmp/probe_big.out"; fi

# A destination nobody announces: the path request times out with rnprobe's exit code 1.
timeout 30 "$RNSC" probe --config "$tmp/D" rnstransport.probe 00112233445566778899aabbccddeeff -t 2 >"$tmp/probe_none.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -qs "Path request timed out" "$tmp/probe_none.out"; then ok "probe of an unknown destination times out (exit 1)"
else bad "probe of unknown destination (exit $rc)" "$tmp/probe_none.out"; fi
timeout 10 "$RNSC" probe rnstransport.probe 0011 >"$tmp/probe_len.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -qs "must be 32 hexadecimal characters" "$tmp/probe_len.out"; then ok "probe rejects a short hash"
else bad "probe short hash (exit $rc)" "$tmp/probe_len.out"; fi

# ---- clean shutdown, counters and persistence ----------------------------------------------
kill -TERM "$RNSC_PID"
if wait_for 15 eval '! alive $RNSC_PID'; then
  wait "$RNSC_PID"; rc=$?
  if [ $rc = 0 ] && grep -qs "stopped" "$tmp/rnsc.log"; then ok "daemon exits 0 on SIGTERM"
  else bad "daemon exit status $rc on SIGTERM" "$tmp/rnsc.log"; fi
else bad "daemon did not stop within 15 s of SIGTERM" "$tmp/rnsc.log"; fi
if grep -Eq "rnsc Server: .*oversize [1-9][0-9]* garbage [1-9][0-9]* bytes" "$tmp/rnsc.log" \
   && grep -Eq "refused by transport: [0-9]*|IFAC drops" "$tmp/rnsc.log"; then
  ok "hostile frames counted: $(grep -o 'rnsc Server: .*' "$tmp/rnsc.log" | tail -1)"
else bad "hostile frames not counted" "$tmp/rnsc.log"; fi
"$PY" - "$tmp/B/storage/known_destinations" "$REF_PROBE" >"$tmp/known.out" 2>&1 <<'EOF'
import sys
import RNS.vendor.umsgpack as umsgpack
d = umsgpack.unpackb(open(sys.argv[1], "rb").read())
e = d[bytes.fromhex(sys.argv[2])]
assert isinstance(e[0], float) and len(e[1]) == 32 and len(e[2]) == 64 and e[3] is None, e
print(len(d), "entries")
EOF
if [ $? = 0 ]; then ok "known_destinations written in the reference's layout ($(cat "$tmp/known.out"))"
else bad "known_destinations unreadable by the reference" "$tmp/known.out"; fi

"$PY" - "$tmp/B/storage" "$REF_PROBE" "TCPInterface[To Reference/127.0.0.1:$P1]" >"$tmp/paths.out" 2>&1 <<'EOF'
import hashlib, os, sys
import RNS
import RNS.vendor.umsgpack as umsgpack
storage, dest, iface = sys.argv[1], bytes.fromhex(sys.argv[2]), sys.argv[3]
table = umsgpack.unpackb(open(os.path.join(storage, "destination_table"), "rb").read())
e = [x for x in table if x[0] == dest][0]
assert isinstance(e[1], float) and e[3] == 1 and isinstance(e[4], float) and e[4] > e[1], e
assert len(e[5]) >= 1 and all(len(b) == 10 for b in e[5]), e[5]
assert e[6] == hashlib.sha256(iface.encode()).digest(), "interface hash"
raw, ref = umsgpack.unpackb(open(os.path.join(storage, "cache", "announces", e[7].hex()), "rb").read())
p = RNS.Packet(None, raw)
assert p.unpack() and p.packet_type == RNS.Packet.ANNOUNCE and p.destination_hash == dest
assert p.get_hash() == e[7] and ref == iface, (ref, iface)
print(len(table), "paths")
EOF
if [ $? = 0 ]; then ok "destination_table and announce cache readable by the reference ($(cat "$tmp/paths.out"))"
else bad "destination_table not in the reference's layout" "$tmp/paths.out"; fi

# The persisted table, listed by rnsc path -t on a node started from the same folder.
timeout 30 "$RNSC" path --config "$tmp/B" -t -w 0 >"$tmp/path_t.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -qs "^<$REF_PROBE> is 1 hop  away via <[0-9a-f]*> on TCPInterface\[To Reference/127.0.0.1:$P1\] expires 20" "$tmp/path_t.out"; then
  ok "rnsc path -t lists the restored table: $(grep "$REF_PROBE" "$tmp/path_t.out")"
else bad "rnsc path -t (exit $rc)" "$tmp/path_t.out"; fi

# The reference's own rnsd started on a copy of rnsc's storage restores the path from
# rnsc's destination_table and announce cache: rnpath -t shows the same entry (same
# expiry) that rnsc path -t listed.
cp -R "$tmp/B" "$tmp/G"
sed -i -e "s/share_instance = no/share_instance = yes\n  instance_name = ${inst}g/" \
  -e '/\[\[rnsc Server\]\]/,$d' "$tmp/G/config"
"$VENV/bin/rnsd" --config "$tmp/G" >"$tmp/rnsd_g.log" 2>&1 &
pids+=($!); G_PID=$!
ref_g_table() { timeout 20 "$VENV/bin/rnpath" --config "$tmp/G" -t >"$tmp/rnpath_g.out" 2>&1 && grep -qs "<$REF_PROBE>" "$tmp/rnpath_g.out"; }
want=$(grep -o "expires .*" "$tmp/path_t.out" | head -1)
if wait_for 30 ref_g_table && grep -qs "<$REF_PROBE> is 1 hop  away via .* on TCPInterface\[To Reference/127.0.0.1:$P1\] $want" "$tmp/rnpath_g.out"; then
  ok "reference rnsd restores rnsc's persisted path: $(grep "$REF_PROBE" "$tmp/rnpath_g.out")"
else bad "reference rnsd did not restore rnsc's path table (want '$want')" "$tmp/rnpath_g.out" "$tmp/rnsd_g.log" "$tmp/G/config"; fi
kill -TERM "$G_PID"; wait_for 15 eval '! alive $G_PID'

# Restart: the remembered identity lets a probe go out before any new announce; then a
# corrupt file is logged and ignored.
"$RNSC" daemon --config "$tmp/B" -v >"$tmp/rnsc2.log" 2>&1 &
pids+=($!); P=$!
if wait_for 20 grep -qs "loaded [1-9][0-9]* known destination" "$tmp/rnsc2.log"; then ok "known destinations reloaded at start"
else bad "known destinations not reloaded" "$tmp/rnsc2.log"; fi
if wait_for 20 grep -qs "loaded [1-9][0-9]* packet hashes" "$tmp/rnsc2.log" \
   && [ $(( $(stat -c %s "$tmp/B/storage/packet_hashlist.raw") % 32 )) = 0 ]; then ok "packet hashlist persisted (32-byte hashes) and reloaded"
else bad "packet hashlist not reloaded" "$tmp/rnsc2.log"; fi
if wait_for 20 grep -qs "loaded 1 path table entry" "$tmp/rnsc2.log"; then ok "path through To Reference restored at start (spawned clients' paths are not, as in the reference)"
else bad "path table not restored" "$tmp/rnsc2.log"; fi
kill -TERM "$P"; wait_for 15 eval '! alive $P' || bad "restarted daemon did not stop"
head -c 57 "$tmp/B/storage/known_destinations" >"$tmp/trunc" && mv "$tmp/trunc" "$tmp/B/storage/known_destinations"
head -c 70 "$tmp/B/storage/destination_table" >"$tmp/trunc" && mv "$tmp/trunc" "$tmp/B/storage/destination_table"
"$RNSC" daemon --config "$tmp/B" >"$tmp/rnsc3.log" 2>&1 &
pids+=($!); P=$!
if wait_for 20 grep -qs "known_destinations is corrupt" "$tmp/rnsc3.log" && grep -qs "destination_table is corrupt" "$tmp/rnsc3.log" \
   && wait_for 10 port_open "$P2" && alive "$P"; then
  ok "truncated known_destinations and destination_table: logged, started empty, running"
else bad "truncated known_destinations" "$tmp/rnsc3.log"; fi
kill -TERM "$P"; wait_for 15 eval '! alive $P' || bad "third daemon did not stop"
kill -TERM "$RNSD_PID"

echo "daemon_interop_test: $pass passed, $fail failed"
[ $fail = 0 ]
