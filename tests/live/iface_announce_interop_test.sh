#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc announcing its own discoverable interface (discovery_announcer.c) against the
# reference's InterfaceAnnouncer, as real processes on 127.0.0.1 (RNSC_VENV picks the
# reference: rns 1.5.4, or 1.5.7 through tests/live/ref157_iface_announce_test.sh). Topology:
#
#   rnsd A (discoverable TCPServerInterface :P1)    rnsc daemon C (the same section, :P2)
#      (job interval 12 s: tests/live/iface_discovery_ref_rnsd.py; RNSC_DISC_JOB_INTERVAL=12 for C)
#            ^ TCP (IFAC)                               ^ TCP (IFAC)
#            +------------- rnsd B (discover_interfaces = yes, required_discovery_value 8)
#
# Checked: B (the reference) stores both announces; the two records, and the two entries
# of the reference's rnstatus -d -j and -D on B, are equal field by field except what names
# the announcer (transport_id / network_id / discovery_hash, the stamp and the value it
# reached, the transport identity and port in the config entry, the port, and under 1.5.7
# impl_name/version: "RNS x" against "rnsc x") and the times; rnstatus -d lists both;
# C stops cleanly.
set -u
. "$(dirname "$0")/../common/lib.sh"
for tool in rnsd rnstatus; do
  if [ ! -x "$VENV/bin/$tool" ]; then echo "FAIL the reference's $tool is not in $VENV/bin (make venv)"; exit 1; fi
done
"$PY" -c 'import LXMF' 2>/dev/null || { echo "FAIL LXMF is not in $VENV (interop/requirements*.txt; make venv)"; exit 1; }
REFV=$("$PY" -c 'import RNS; print(RNS.__version__)')
echo "reference: rns $REFV"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-iann-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  local end=$((SECONDS + 5)) p
  for p in "${pids[@]}"; do
    while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
  done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
export HOME="$tmp/home"

read -r P1 P2 < <("$PY" -c '
import socket
a = socket.socket(); a.bind(("127.0.0.1", 0)); b = socket.socket(); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
instA="rnsciaA$$" instB="rnsciaB$$" instC="rnsciaC$$"
mkdir -p "$tmp/A" "$tmp/B" "$tmp/C"
server_cfg() { # server_cfg DIR INSTANCE PORT
  printf '%s\n' "[reticulum]" "  enable_transport = Yes" "  share_instance = Yes" \
    "  instance_name = $2" "[logging]" "  loglevel = 7" "[interfaces]" "  [[Disc Server]]" \
    "    type = TCPServerInterface" "    enabled = yes" "    listen_ip = 127.0.0.1" \
    "    listen_port = $3" "    discoverable = yes" "    discovery_name = rnsc  Announce  Test " \
    "    reachable_on = 127.0.0.1" "    discovery_stamp_value = 8" "    announce_interval = 10" \
    "    latitude = 52.52" "    longitude = 13.405" "    height = 34.5" \
    "    discovery_lxmf_address = 00112233445566778899aabbccddeeff" "    publish_ifac = yes" \
    "    network_name = rnscnet" "    passphrase = rnsc secret" >"$1/config"
}
server_cfg "$tmp/A" "$instA" "$P1"
server_cfg "$tmp/C" "$instC" "$P2"
client() { # client NAME PORT
  printf '%s\n' "  [[$1]]" "    type = TCPClientInterface" "    enabled = yes" \
    "    target_host = 127.0.0.1" "    target_port = $2" "    network_name = rnscnet" \
    "    passphrase = rnsc secret"
}
{ printf '%s\n' "[reticulum]" "  enable_transport = No" "  share_instance = Yes" \
    "  instance_name = $instB" "  discover_interfaces = yes" "  required_discovery_value = 8" \
    "[logging]" "  loglevel = 7" "[interfaces]"
  client "To A" "$P1"; client "To C" "$P2"; } >"$tmp/B/config"

wait_for() { # wait_for SECONDS COMMAND...
  local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.3; done
  return 1
}
has_sock() { grep -q "@rns/$1" /proc/net/unix 2>/dev/null; }
nstored() { [ "$(ls "$1/storage/discovery/interfaces" 2>/dev/null | wc -l)" -ge "$2" ]; }

# The servers first, then B: both servers' first announce (12 s after their start) must
# find B connected. A machine too loaded for that fails here loudly (the next announce is
# announce_interval's 5 minute floor away).
"$PY" "$S/tests/live/iface_discovery_ref_rnsd.py" --config "$tmp/A" >"$tmp/A.log" 2>&1 &
pids+=($!)
RNSC_DISC_JOB_INTERVAL=12 "$RNSC" daemon --config "$tmp/C" >"$tmp/C.log" 2>&1 &
C_PID=$!
pids+=($C_PID)
wait_for 30 has_sock "$instA" || { bad "rnsd A did not start" "$tmp/A.log"; exit 1; }
wait_for 30 has_sock "$instC" || { bad "rnsc daemon C did not start" "$tmp/C.log"; exit 1; }
"$VENV/bin/rnsd" --config "$tmp/B" >"$tmp/B.log" 2>&1 &
pids+=($!)
wait_for 30 has_sock "$instB" || { bad "rnsd B did not start" "$tmp/B.log"; exit 1; }
if wait_for 90 nstored "$tmp/B" 2; then ok "the reference (rnsd B) stored both discovered interfaces (rnsd A's and rnsc C's)"
else bad "rnsd B did not store two records ($(ls "$tmp/B/storage/discovery/interfaces" 2>/dev/null | wc -l))" "$tmp/A.log" "$tmp/C.log" "$tmp/B.log"; exit 1; fi
if grep -q "Sending interface discovery announce for Disc Server with" "$tmp/C.log"; then
  ok "C logged its announce as the reference does"
else bad "C did not log its announce" "$tmp/C.log"; fi

# The records B stored, as the reference reads them; A's and C's told apart by the
# transport identity hash each stored.
if "$PY" - "$tmp/A/storage/transport_identity" "$tmp/C/storage/transport_identity" \
     "$tmp/B/storage/discovery/interfaces" "$P1" "$P2" >"$tmp/rec.txt" 2>&1 <<'PYEOF'
import os, sys
import RNS
import RNS.vendor.umsgpack as mp
ida = RNS.Identity.from_file(sys.argv[1]).hash
idc = RNS.Identity.from_file(sys.argv[2]).hash
d = sys.argv[3]
recs = {}
for f in os.listdir(d):
    r = mp.unpackb(open(os.path.join(d, f), "rb").read())
    recs[r["transport_id"]] = r
ref, ours = recs.get(ida.hex()), recs.get(idc.hex())
assert ref is not None and ours is not None, ("records by transport id", list(recs))
for r, port, tid in ((ref, sys.argv[4], ida), (ours, sys.argv[5], idc)):
    for k in ("received", "discovered", "last_heard", "heard_count"):
        assert isinstance(r.pop(k), (int, float)), k
    assert r.pop("transport_id") == tid.hex()
    # the stamp is drawn over SHA-256 of the packed map, which holds the transport id; B
    # accepted both at required_discovery_value 8, and "value" is compared below
    r.pop("network_id"); r.pop("discovery_hash"); r.pop("stamp")
    # rns 1.5.7 stores the value the stamp reached (>= the required 8), not a fixed one
    assert r.pop("value") >= 8, "stamp value"
    assert r.pop("port") == int(port), "port"
    r["config_entry"] = r["config_entry"].replace(tid.hex(), "TID").replace(port, "PORT")
if "impl_name" in ref:
    assert (ref.pop("impl_name"), ref.pop("version")) == ("RNS", RNS.__version__)
    impl = (ours.pop("impl_name"), ours.pop("version"))
    assert impl[0] == "rnsc", impl
    print("rns", RNS.__version__, "records name the stack: RNS", RNS.__version__, "and", *impl)
if list(ref) != list(ours): print("key order differs:", list(ref), list(ours)); sys.exit(1)
for k in ref:
    if ref[k] != ours[k] or type(ref[k]) != type(ours[k]):
        print("field", k, "differs:", repr(ref[k]), repr(ours[k])); sys.exit(1)
print("fields:", ", ".join(ref))
PYEOF
then ok "B's record of C's announce equals its record of A's, in the same key order ($(tail -1 "$tmp/rec.txt"))"
else bad "B's records of A and C differ" "$tmp/rec.txt"; fi

RS=("$VENV/bin/rnstatus")
[ "$REFV" != 1.5.4 ] && RS+=(--show-unknown)
timeout 60 "${RS[@]}" --config "$tmp/B" -d -j >"$tmp/j.out" 2>"$tmp/j.err"; rj=$?
if [ $rj -eq 0 ] && "$PY" - "$tmp/j.out" >"$tmp/j.txt" 2>&1 <<'PYEOF'
import json, sys
lines = [l for l in open(sys.argv[1]).read().split("\n") if l.strip()]
d = json.loads(lines[-1])
assert len(d) == 2, len(d)
for i in d:
    for k in ("received", "discovered", "last_heard", "heard_count", "transport_id", "network_id",
              "discovery_hash", "port", "impl_name", "version", "stamp", "value"):
        i.pop(k, None)
    i["config_entry"] = "\n".join(l for l in i["config_entry"].split("\n")
                                  if "port" not in l and "transport_identity" not in l)
a, b = (json.dumps(i) for i in d)
if a != b: print(a); print(b); sys.exit(1)
print(len(json.loads(a)), "fields")
PYEOF
then ok "the reference's rnstatus -d -j on B lists C's interface with the fields it lists for A's ($(tail -1 "$tmp/j.txt"))"
else bad "rnstatus -d -j on B: exit $rj or entries differ" "$tmp/j.txt" "$tmp/j.err" "$tmp/j.out"; fi

timeout 60 "${RS[@]}" --config "$tmp/B" -D >"$tmp/D.out" 2>"$tmp/D.err"; rd=$?
# -D prints one block per entry; the lines that name the announcer or a time left out.
blocks() { "$PY" -c '
import sys
t = open(sys.argv[1]).read().strip().split("\n\n")
t = [b for b in t if "Name" in b]
skip = ("Transport ID", "Network   ID", "Discovered", "Last Heard", "Port", "Stack", "Running", "Stamp Value")
out = ["\n".join(l for l in b.split("\n") if not l.startswith(skip)
                 and "port" not in l and "transport_identity" not in l) for b in t]
print(len(out) == 2 and out[0] == out[-1])' "$1"; }
if [ $rd -eq 0 ] && [ "$(blocks "$tmp/D.out")" = True ]; then
  ok "the reference's rnstatus -D on B prints the same block for C as for A ($(wc -l <"$tmp/D.out") lines)"
else bad "rnstatus -D on B: exit $rd or blocks differ" "$tmp/D.out" "$tmp/D.err"; fi
# The table: the same row twice, the Value (the stamp reached) and, under 1.5.7, Running
# ("RNS 1.5.7" / "rnsc VERSION") aside.
rows() { grep "^rnsc Announce Test" "$1" | tr -s ' ' |
  sed -E -e 's/ Just now [0-9]+ / Just now V /' -e 's/ (RNS|rnsc) [0-9.]+ / STACK /' | sort -u; }
if timeout 60 "${RS[@]}" --config "$tmp/B" -d >"$tmp/d.out" 2>&1 &&
   [ "$(grep -c "^rnsc Announce Test" "$tmp/d.out")" -eq 2 ] && [ "$(rows "$tmp/d.out" | wc -l)" -eq 1 ] &&
   { [ "$REFV" = 1.5.4 ] || grep -q "  rnsc [0-9.]*  " "$tmp/d.out"; }; then
  ok "the reference's rnstatus -d on B lists both (rnsd A's and rnsc C's) alike"
else bad "rnstatus -d on B does not list both alike" "$tmp/d.out"; fi

kill "$C_PID" 2>/dev/null
end=$((SECONDS + 20)); while kill -0 "$C_PID" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.2; done
wait "$C_PID" 2>/dev/null; crc=$?
if [ $crc -eq 0 ] && ! grep -q "Sanitizer" "$tmp/C.log"; then ok "daemon C stopped cleanly (exit 0, no sanitizer report)"
else bad "daemon C: exit $crc at SIGTERM or a sanitizer report" "$tmp/C.log"; fi

echo "# $pass passed, $fail failed"
[ $fail -eq 0 ]
