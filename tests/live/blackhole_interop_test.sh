#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Blackholed identities live with the pinned reference (rns 1.5.4), as real processes on
# 127.0.0.1 with kernel-chosen ports and private config folders. Topology:
#
#   rnsc daemon (A: shared instance, transport,   <-- TCP --  announcer.py (Z: the reference,
#     publish_blackhole, TCPServer :P1)                          a SINGLE destination whose
#     ^ rnpath / rnsc path --config A                           identity gets blackholed)
#                                                 <-- TCP --  rnsd (R: shared instance,
#                                                               publish_blackhole)
#                                                              ^ rnpath --config R
# Checked: the reference's rnpath -B/-b/-U against rnsc as shared instance (answers and
# output), rnsc path -b/-B/-U the same; announces from the blackholed identity never reach
# rnsc's path table (and do once lifted); blackholing drops an existing path; the list is
# persisted in storage/blackhole/local in the reference's msgpack (repacked byte for byte
# by the reference's umsgpack) and survives a daemon restart; rnpath -p fetches rnsc's
# published list and rnsc path -p the reference rnsd's; with blackhole_sources rnsc's
# updater takes rnsd's list, keeps it in storage/blackhole/<source> and reloads it. Every
# wait is bounded; a reference that cannot start fails the test.
set -u
. "$(dirname "$0")/../common/lib.sh"

for tool in rnsd rnpath; do
  if [ ! -x "$VENV/bin/$tool" ]; then
    echo "FAIL the reference's $tool is not in $VENV/bin (make venv)"; exit 1
  fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-blackhole-test.XXXXXX")
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

read -r P1 < <("$PY" -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
instA="rnscbhA$$" instR="rnscbhR$$"

wait_for() { # wait_for SECONDS COMMAND...: polls every 0.3 s
  local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.3; done
  return 1
}
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }
alive() { kill -0 "$1" 2>/dev/null; }
# A shared-instance client of the reference sets its interface's owner only after its reader
# has started, so a frame forwarded to it in that instant (the announcer's next announce) is
# dropped with an error line (interop/REFERENCE-QUIRKS.md); that line is not rnpath's output.
rnpath() {
  local o rc
  o=$(timeout 60 "$PY" -m RNS.Utilities.rnpath "$@" 2>&1); rc=$?
  printf '%s\n' "$o" | grep -v -E "incoming frame for LocalInterface.*no attribute 'owner'"
  return $rc
}
idhash() { "$PY" -c 'import RNS,sys; print(RNS.Identity.from_file(sys.argv[1]).hash.hex())' "$1"; }

mkdir -p "$tmp/A" "$tmp/R" "$tmp/Z"
cat >"$tmp/A/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = yes
  instance_name = $instA
  publish_blackhole = yes
[logging]
  loglevel = 5
[interfaces]
  [[rnsc Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P1
EOF
cat >"$tmp/R/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = yes
  instance_name = $instR
  publish_blackhole = yes
[logging]
  loglevel = 4
[interfaces]
  [[To rnsc]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P1
EOF
cat >"$tmp/Z/config" <<EOF
[reticulum]
  share_instance = no
[logging]
  loglevel = 3
[interfaces]
  [[To rnsc]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P1
EOF
# The announcer: one SINGLE destination, announced every second while it runs.
cat >"$tmp/announcer.py" <<'EOF'
import RNS, sys, time, os
cfg, out = sys.argv[1], sys.argv[2]
r = RNS.Reticulum(configdir=cfg)
ip = os.path.join(cfg, "announcer_identity")
idn = RNS.Identity.from_file(ip) if os.path.isfile(ip) else RNS.Identity()
idn.to_file(ip)
d = RNS.Destination(idn, RNS.Destination.IN, RNS.Destination.SINGLE, "rnscbh", "node")
with open(out + ".tmp", "w") as f: f.write(f"{idn.hash.hex()} {d.hash.hex()}\n")
os.rename(out + ".tmp", out)
end = time.time() + 600
while time.time() < end:
    d.announce()
    time.sleep(1.0)
EOF

start_a() {
  "$RNSC" daemon --config "$tmp/A" >>"$tmp/rnsc.log" 2>&1 &
  A=$!; pids+=("$A")
  wait_for 20 port_open "$P1" || { bad "rnsc daemon listens on :$P1" "$tmp/rnsc.log"; exit 1; }
  # the RPC is up once the reference's tool gets an answer
  wait_for 20 sh -c "timeout 20 '$PY' -m RNS.Utilities.rnpath --config '$tmp/A' -b 2>&1 | grep -q -e 'No blackholed' -e blackholed" ||
    { bad "rnsc daemon answers the reference's RPC" "$tmp/rnsc.log"; exit 1; }
}
start_a
TA=$(idhash "$tmp/A/storage/transport_identity")
ok "rnsc daemon up as shared instance (transport $TA)"

"$PY" "$tmp/announcer.py" "$tmp/Z" "$tmp/ids" >"$tmp/announcer.log" 2>&1 &
pids+=($!)
wait_for 30 test -s "$tmp/ids" || { bad "the reference announcer starts" "$tmp/announcer.log"; exit 1; }
read -r ID DEST <"$tmp/ids"
has_path() { "$RNSC" path --config "$tmp/A" -t "$DEST" 2>&1 | grep -q "^<$DEST> is"; }
no_path() { ! has_path; }

# --- the reference's rnpath against rnsc --------------------------------------------------
out=$(rnpath --config "$tmp/A" -b)
[ "$out" = "No blackholed identity data available" ] && ok "rnpath -b: empty list" || bad "rnpath -b empty: $out"
# blackholed before its first announce arrived: it never enters the path table
out=$(rnpath --config "$tmp/A" -B "$ID" --reason "interop test")
[ "$out" = "Blackholed identity $ID" ] && ok "rnpath -B blackholes on rnsc" || bad "rnpath -B: $out" "$tmp/rnsc.log"
out=$(rnpath --config "$tmp/A" -B "$ID")
[ "$out" = "Identity $ID already blackholed" ] && ok "rnpath -B again: already blackholed" || bad "rnpath -B again: $out"
out=$(rnpath --config "$tmp/A" -B 00ff)
echo "$out" | grep -q "Could not blackhole identity: Hash length is invalid" && ok "rnpath -B bad hash" || bad "rnpath -B bad hash: $out"
ref_list=$(rnpath --config "$tmp/A" -b)
echo "$ref_list" | grep -q "^<$ID> blackholed indefinitely (interop test)" &&
  ok "rnpath -b lists it: $ref_list" || bad "rnpath -b: $ref_list"
rnsc_list=$("$RNSC" path --config "$tmp/A" -b)
[ "$rnsc_list" = "$ref_list" ] && ok "rnsc path -b prints the same line" || bad "rnsc path -b: '$rnsc_list' vs '$ref_list'"
out=$("$RNSC" path --config "$tmp/A" -b "$ID")
[ "$out" = "$ref_list" ] && ok "rnsc path -b HASH filters" || bad "rnsc path -b HASH: $out"
out=$("$RNSC" path --config "$tmp/A" -b 0000000000000000dead)
[ -z "$out" ] && ok "rnsc path -b with a filter matching nothing prints nothing" || bad "rnsc path -b filter: $out"

# announces keep coming (one a second); none may create a path while blackholed
sleep 6
no_path && ok "announces of the blackholed identity never reach rnsc's path table" ||
  bad "a blackholed identity's announce made a path" "$tmp/rnsc.log"
"$RNSC" status --config "$tmp/A" --json >"$tmp/status.json" 2>&1
n_bh=$("$PY" -c 'import json,sys
d=json.load(open(sys.argv[1]))
def find(o):
    if isinstance(o, dict):
        if "announces_blackholed" in o: return o["announces_blackholed"]
        for v in o.values():
            r = find(v)
            if r is not None: return r
    return None
print(find(d))' "$tmp/status.json" 2>/dev/null)
case "$n_bh" in ''|None|0) bad "dropped announces are counted (announces_blackholed=$n_bh)" "$tmp/status.json" ;;
  *) ok "dropped announces counted: announces_blackholed=$n_bh" ;; esac

# the persisted file: the reference's umsgpack reads it and writes the same bytes
"$PY" - "$tmp/A/storage/blackhole/local" "$ID" "$TA" >"$tmp/file.out" 2>&1 <<'EOF'
import sys, RNS.vendor.umsgpack as u
b = open(sys.argv[1], "rb").read()
d = u.unpackb(b)
e = d[bytes.fromhex(sys.argv[2])]
assert e == {"source": bytes.fromhex(sys.argv[3]), "until": None, "reason": "interop test"}, e
assert u.packb(d) == b, "repacked bytes differ"
print("ok")
EOF
[ "$(cat "$tmp/file.out")" = ok ] && ok "storage/blackhole/local in the reference's layout, byte for byte" ||
  bad "storage/blackhole/local" "$tmp/file.out"

out=$(rnpath --config "$tmp/A" -U "$ID")
[ "$out" = "Lifted blackhole for identity $ID" ] && ok "rnpath -U lifts it" || bad "rnpath -U: $out"
out=$(rnpath --config "$tmp/A" -U "$ID")
[ "$out" = "Identity $ID not blackholed" ] && ok "rnpath -U again: not blackholed" || bad "rnpath -U again: $out"
wait_for 20 has_path && ok "once lifted, the next announce makes a path" || bad "no path after unblackholing" "$tmp/rnsc.log"

# --- rnsc path -B / -U, and a blackhole dropping a known path -------------------------------
out=$("$RNSC" path --config "$tmp/A" -B "$ID" --duration 1 --reason "rnsc cli")
[ "$out" = "Blackholed identity $ID" ] && ok "rnsc path -B --duration --reason" || bad "rnsc path -B: $out"
no_path && ok "blackholing drops the identity's existing path" || bad "path kept after blackholing" "$tmp/rnsc.log"
out=$(rnpath --config "$tmp/A" -b)
echo "$out" | grep -q "^<$ID> blackholed for 59m and [0-9.]*s (rnsc cli)" && ok "rnpath -b shows the duration: $out" || bad "rnpath -b duration: $out"
sleep 3
no_path && ok "still no path while blackholed" || bad "path while blackholed (2)"

# --- persistence across a restart ------------------------------------------------------------
kill "$A"; wait_for 10 sh -c "! kill -0 $A 2>/dev/null" || bad "rnsc daemon stops on SIGTERM"
start_a
out=$(rnpath --config "$tmp/A" -b)
echo "$out" | grep -q "^<$ID> blackholed for 5[89]m and [0-9.]*s (rnsc cli)" && ok "the blackhole survives a restart: $out" ||
  bad "after restart: $out" "$tmp/rnsc.log"
sleep 4
no_path && ok "after the restart its announces are still dropped" || bad "path after restart" "$tmp/rnsc.log"
out=$("$RNSC" path --config "$tmp/A" -U "$ID")
[ "$out" = "Lifted blackhole for identity $ID" ] && ok "rnsc path -U" || bad "rnsc path -U: $out"
out=$("$RNSC" path --config "$tmp/A" -U "$ID")
[ "$out" = "Identity $ID not blackholed" ] && ok "rnsc path -U again" || bad "rnsc path -U again: $out"
wait_for 20 has_path && ok "path back after rnsc path -U" || bad "no path after rnsc path -U"

# --- published lists: rnpath -p from rnsc, rnsc path -p from rnsd ----------------------------
X=00112233445566778899aabbccddeeff
"$RNSC" path --config "$tmp/A" -B "$ID" --reason "published" >/dev/null
"$VENV/bin/rnsd" --config "$tmp/R" >"$tmp/rnsd.log" 2>&1 &
R=$!; pids+=("$R")
# up as the shared instance (a tool started earlier would become an instance of its own)
wait_for 60 grep -q "Started rnsd version [0-9.]*$" "$tmp/rnsd.log" ||
  { bad "the reference rnsd starts" "$tmp/rnsd.log"; exit 1; }
TR=$(idhash "$tmp/R/storage/transport_identity")
out=$(rnpath --config "$tmp/R" -B "$X" --reason "from rnsd")
[ "$out" = "Blackholed identity $X" ] && ok "rnsd has its own entry" || bad "rnpath -B on rnsd: $out"
out=$(rnpath --config "$tmp/R" -p "$TA" -W 20 | tr '\r' '\n' | grep "blackholed")
echo "$out" | grep -q "^<$ID> blackholed indefinitely (published) by <$TA>" &&
  ok "rnpath -p fetches rnsc's published list: $out" || bad "rnpath -p from rnsc: $out" "$tmp/rnsc.log" "$tmp/rnsd.log"
out=$("$RNSC" path --config "$tmp/A" -p "$TR" -w 20)
echo "$out" | grep -q "^<$X> blackholed indefinitely (from rnsd) by <$TR>" &&
  ok "rnsc path -p fetches rnsd's published list: $out" || bad "rnsc path -p from rnsd: $out" "$tmp/rnsc.log" "$tmp/rnsd.log"
out=$("$RNSC" path --config "$tmp/A" -p "$TR" nomatch -w 20)
[ -z "$out" ] && ok "rnsc path -p with a filter matching nothing" || bad "rnsc path -p filter: $out"

# --- the updater: rnsc fetches rnsd's list as a configured blackhole source ------------------
kill "$A"; wait_for 10 sh -c "! kill -0 $A 2>/dev/null" || bad "rnsc daemon stops on SIGTERM (2)"
Y=$("$PY" -c 'import os; print(os.urandom(16).hex())')  # a source nobody publishes for
W=$("$PY" -c 'import os; print(os.urandom(16).hex())')  # a source that is not configured
Q=$("$PY" -c 'import os; print(os.urandom(16).hex())')
printf 'not msgpack' >"$tmp/A/storage/blackhole/$Y"
"$PY" -c 'import sys, RNS.vendor.umsgpack as u
open(sys.argv[1], "wb").write(u.packb({bytes.fromhex(sys.argv[2]): {"source": bytes.fromhex(sys.argv[3]), "until": None, "reason": "disabled"}}))' \
  "$tmp/A/storage/blackhole/$W" "$Q" "$W"
sed -i "s/^  publish_blackhole = yes/  publish_blackhole = yes\n  blackhole_sources = $Y, $TR/" "$tmp/A/config"
start_a
out=$("$RNSC" path --config "$tmp/A" -b "$Q")
[ -z "$out" ] && ok "a list from a source not configured is skipped" || bad "disabled source loaded: $out"
grep -q "could not load blackholed identities from .*$Y" "$tmp/rnsc.log" && ok "a corrupt source list is logged and ignored" ||
  bad "corrupt source list not reported" "$tmp/rnsc.log"
out=$("$RNSC" path --config "$tmp/A" -p "$Y" -w 2); rc=$?
[ "$rc" = 12 ] && [ "$out" = "Path request timed out" ] && ok "rnsc path -p to an unknown instance: path request timed out (12)" ||
  bad "rnsc path -p unknown: rc $rc: $out"
out=$("$RNSC" path --config "$tmp/A" -p 1234); rc=$?
[ "$rc" = 20 ] && ok "rnsc path -p bad hash: 20" || bad "rnsc path -p bad hash: rc $rc: $out"
# BlackholeUpdater: first run 20 s after the start, then every 60 s
src_listed() { "$RNSC" path --config "$tmp/A" -b "$X" 2>&1 | grep -q "^<$X> blackholed indefinitely (from rnsd) by <$TR>"; }
wait_for 90 src_listed && ok "the updater took rnsd's entry from blackhole_sources" ||
  bad "updater: $("$RNSC" path --config "$tmp/A" -b 2>&1)" "$tmp/rnsc.log"
[ -s "$tmp/A/storage/blackhole/$TR" ] && ok "the source's list kept in storage/blackhole/$TR" || bad "no storage/blackhole/$TR"
kill "$A"; wait_for 10 sh -c "! kill -0 $A 2>/dev/null" || bad "rnsc daemon stops on SIGTERM (3)"
start_a
src_listed && ok "the source's list is reloaded at start" || bad "source list not reloaded" "$tmp/rnsc.log"

alive "$A" && ok "rnsc daemon still running" || bad "rnsc daemon died" "$tmp/rnsc.log"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
