#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Remote management (enable_remote_management, remote_management_allowed) of an rnsc daemon,
# asked by the reference's own rnstatus -R and rnpath -R (rns 1.5.4), as real processes on
# 127.0.0.1. Topology:
#
#   rnsc daemon (D: remote management on, allows identity M, TCPServer :P1)
#      ^ TCP
#   rnsd (R: a reference shared instance, TCPClient to :P1)
#      ^ rnstatus --config R -R <D's transport identity> -i M   (and rnpath -R ... -W)
#
# Checked: the remote answer printed by rnstatus is the status of D itself (rnstatus
# --config D over the RPC, field by field, rates and times left out); rnpath -R shows D's
# path table as rnpath -t on D does; an identity that is not allowed is refused as by the
# reference (the request times out: "Likely authentication failure"); a bad hash and an
# unreachable instance fail with rnstatus's messages within the timeout.
set -u
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
RNSC="$B/src/cli/rnsc"
VENV=${RNSC_VENV:-$B/.venv}
PY=$VENV/bin/python
pass=0 fail=0
ok() { pass=$((pass+1)); echo "ok   $1"; }
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -25 "$f" | sed 's/^/     /'; done; }
for tool in rnsd rnstatus rnpath rnid; do
  if [ ! -x "$VENV/bin/$tool" ]; then echo "FAIL the reference's $tool is not in $VENV/bin (make venv)"; exit 1; fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-rmgmt-test.XXXXXX")
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

read -r P1 < <("$PY" -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
instD="rnscrmD$$" instR="rnscrmR$$"
"$VENV/bin/rnid" -g "$tmp/M.rid" >/dev/null && "$VENV/bin/rnid" -g "$tmp/N.rid" >/dev/null || { echo "FAIL rnid -g"; exit 1; }
M_HASH=$("$VENV/bin/rnid" -i "$tmp/M.rid" -p | sed -n 's/^Identity Hash : <\(.*\)>$/\1/p')

mkdir -p "$tmp/D" "$tmp/R"
cat >"$tmp/D/config" <<EOF
[reticulum]
  enable_transport = Yes
  share_instance = Yes
  instance_name = $instD
  enable_remote_management = yes
  remote_management_allowed = $M_HASH
[logging]
  loglevel = 6
[interfaces]
  [[TCP Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P1
EOF
cat >"$tmp/R/config" <<EOF
[reticulum]
  enable_transport = No
  share_instance = Yes
  instance_name = $instR
[logging]
  loglevel = 4
[interfaces]
  [[To D]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P1
EOF

wait_for() { # wait_for SECONDS COMMAND...
  local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done
  return 1
}
has_sock() { grep -q "@rns/$1" /proc/net/unix 2>/dev/null; }

"$RNSC" daemon --config "$tmp/D" >"$tmp/D.log" 2>&1 &
pids+=($!)
wait_for 15 has_sock "$instD" || { bad "rnsc daemon did not start" "$tmp/D.log"; exit 1; }
"$VENV/bin/rnsd" --config "$tmp/R" >"$tmp/R.log" 2>&1 &
pids+=($!)
wait_for 30 has_sock "$instR" || { bad "rnsd did not start" "$tmp/R.log"; exit 1; }
if grep -q "enabled remote management on <rnstransport.remote.management:" "$tmp/D.log"; then
  ok "daemon enables remote management"; else bad "no remote management" "$tmp/D.log"; fi
D_ID=$("$RNSC" id -i "$tmp/D/storage/transport_identity" -p | sed -n 's/^Identity Hash : <\(.*\)>$/\1/p')
# one announce through R, so that D's path and rate tables are not empty
timeout 30 "$VENV/bin/rnid" --config "$tmp/R" -i "$tmp/N.rid" -a app.rmtest >"$tmp/announce.txt" 2>&1
APP_DEST=$(sed -n 's/^Announcing app.rmtest destination <\([0-9a-f]*\)>.*/\1/p' "$tmp/announce.txt")
has_path() { timeout 10 "$VENV/bin/rnpath" --config "$tmp/D" -t 2>/dev/null | grep -q "$APP_DEST"; }
wait_for 10 has_path || bad "the announce did not reach D" "$tmp/announce.txt"

# Field by field: the interfaces of D and every field rnstatus prints for them, leaving out
# traffic (counters move between two queries), rates and times, and the local client the
# local rnstatus itself adds (a LocalInterface block and the "Serving" count).
norm() { tr '\r' '\n' | sed -e '/Path to .* requested/d; /Establishing link/d; /Sending request/d' \
  -e '/^ *Traffic/d; /^ *[↑↓]/d; /Serving *:/d; /Uptime is/d' -e 's/[0-9.]* [KMGT]\?bps/RATE/g' |
  awk '/^ LocalInterface\[/ {skip=1; next} /^ [A-Za-z]/ {skip=0} !skip' | sed '/^ *$/d'; }
rs() { timeout 40 "$VENV/bin/rnstatus" "$@" 2>&1; }
rp() { timeout 40 "$VENV/bin/rnpath" "$@" 2>&1; }

rs --config "$tmp/D" -a >"$tmp/local.txt"; lrc=$?
rs --config "$tmp/R" -R "$D_ID" -i "$tmp/M.rid" -w 15 -a >"$tmp/remote.txt"; rrc=$?
norm <"$tmp/local.txt" >"$tmp/local.n"; norm <"$tmp/remote.txt" >"$tmp/remote.n"
if [ "$lrc" = 0 ] && [ "$rrc" = 0 ] && grep -q "TCP Server" "$tmp/remote.n" &&
   diff "$tmp/local.n" "$tmp/remote.n" >"$tmp/diff"; then
  ok "rnstatus -R against rnsc: the daemon's own status"
else bad "rnstatus -R: local $lrc remote $rrc" "$tmp/diff" "$tmp/remote.txt" "$tmp/D.log"; fi

rs --config "$tmp/R" -R "$D_ID" -i "$tmp/M.rid" -w 15 -l >"$tmp/remote_l.txt"; rrc=$?
if [ "$rrc" = 0 ] && grep -q "TCP Server" "$tmp/remote_l.txt"; then ok "rnstatus -R -l (link count)"
else bad "rnstatus -R -l: $rrc" "$tmp/remote_l.txt"; fi

rs --config "$tmp/R" -R "$D_ID" -i "$tmp/M.rid" -w 15 -j >"$tmp/remote.json"; rrc=$?
rs --config "$tmp/D" -j >"$tmp/local.json"
if [ "$rrc" = 0 ] && "$PY" - "$tmp/local.json" "$tmp/remote.json" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
keep = {"name", "short_name", "hash", "type", "mtu", "bitrate", "status", "mode", "ifac_signature",
        "ifac_size", "ifac_netname", "announce_rate_target", "announce_rate_penalty",
        "announce_rate_grace", "parent_interface_name", "parent_interface_hash", "gravity",
        "autoconnect_source", "announces_to_internal"}
def strip(d):
    ifs = [{k: v for k, v in i.items() if k in keep} for i in d["interfaces"]
           if i["type"] != "LocalClientInterface"]
    top = {k: d.get(k) for k in ("transport_id", "network_id", "probe_responder")}
    return ifs, top
sa, sb = strip(a), strip(b)
if sa != sb:
    print("local:", sa); print("remote:", sb); sys.exit(1)
EOF
then ok "rnstatus -R -j: the same JSON document as locally"; else bad "rnstatus -R -j" "$tmp/remote.json"; fi

# The reference answers nothing to an identity off the list, and its rnstatus then waits
# for a response that never comes (against rnsd as well): no status within 8 s.
timeout 8 "$VENV/bin/rnstatus" --config "$tmp/R" -R "$D_ID" -i "$tmp/N.rid" -w 6 >"$tmp/refused.txt" 2>&1; nrc=$?
if grep -q "Sending request" "$tmp/refused.txt" && ! grep -q "TCP Server" "$tmp/refused.txt" &&
   grep -q "request for /status not allowed" "$tmp/D.log"; then
  ok "identity not on the allow-list is refused (exit $nrc)"
else bad "refusal: exit $nrc" "$tmp/refused.txt"; fi

rp --config "$tmp/D" -t >"$tmp/ptl.txt"
rp --config "$tmp/R" -R "$D_ID" -i "$tmp/M.rid" -W 15 -t >"$tmp/ptr.txt"; prc=$?
pn() { tr '\r' '\n' | sed -e 's/expires .*//; s/last heard.*//' -e '/requested/d; /Establishing/d; /Sending/d' | sed '/^ *$/d'; }
if [ "$prc" = 0 ] && diff <(pn <"$tmp/ptl.txt") <(pn <"$tmp/ptr.txt") >"$tmp/pdiff"; then
  ok "rnpath -R -t against rnsc: the daemon's own path table"
else bad "rnpath -R -t: exit $prc" "$tmp/pdiff" "$tmp/ptr.txt"; fi
rp --config "$tmp/R" -R "$D_ID" -i "$tmp/M.rid" -W 15 -r >"$tmp/prr.txt"; prc=$?
rp --config "$tmp/D" -r >"$tmp/prl.txt"
if [ "$prc" = 0 ] && diff <(pn <"$tmp/prl.txt" | sed 's/last heard.*//') <(pn <"$tmp/prr.txt" | sed 's/last heard.*//') >"$tmp/pdiff"; then
  ok "rnpath -R -r (rates) against rnsc"
else bad "rnpath -R -r: exit $prc" "$tmp/pdiff" "$tmp/prr.txt"; fi
timeout 8 "$VENV/bin/rnpath" --config "$tmp/R" -R "$D_ID" -i "$tmp/N.rid" -W 6 -t >"$tmp/prefused.txt" 2>&1; nrc=$?
if grep -q "Sending request" "$tmp/prefused.txt" && ! grep -q "hop" "$tmp/prefused.txt"; then ok "rnpath -R refused for an identity not allowed (exit $nrc)"
else bad "rnpath refusal: exit $nrc" "$tmp/prefused.txt"; fi

start=$SECONDS
rs --config "$tmp/R" -R 00112233445566778899aabbccddeeff -i "$tmp/M.rid" -w 3 >"$tmp/unreach.txt"; urc=$?
if [ "$urc" != 0 ] && grep -q "Path request timed out" "$tmp/unreach.txt" && [ $((SECONDS - start)) -lt 15 ]; then
  ok "unreachable instance: timed out (exit $urc)"; else bad "unreachable: exit $urc" "$tmp/unreach.txt"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
