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
. "$(dirname "$0")/../common/lib.sh"
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
  enable_remote_management = yes
  remote_management_allowed = $M_HASH
[logging]
  loglevel = 4
[interfaces]
  [[To D]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P1
EOF

mkdir -p "$tmp/E"
cat >"$tmp/E/config" <<EOF
[reticulum]
  enable_transport = No
  share_instance = Yes
  instance_name = rnscrmE$$
  enable_remote_management = yes
  remote_management_allowed = $M_HASH
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
"$VENV/bin/rnsd" --config "$tmp/E" >"$tmp/E.log" 2>&1 &
pids+=($!)
wait_for 30 has_sock "$instR" || { bad "rnsd did not start" "$tmp/R.log"; exit 1; }
wait_for 30 has_sock "rnscrmE$$" || { bad "rnsd E did not start" "$tmp/E.log"; exit 1; }
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
# The reference's rnstatus -R now and then never sees its link come up on a loaded
# machine (it then waits until killed); one more try before that counts as a failure.
rs() {
  local out rc
  out=$(timeout 25 "$VENV/bin/rnstatus" "$@" 2>&1); rc=$?
  if [ $rc = 124 ] && printf '%s' "$out" | grep -q "Establishing link" && ! printf '%s' "$out" | grep -q "Sending request"; then
    echo "(rnstatus retried: its link did not come up)" >&2
    out=$(timeout 25 "$VENV/bin/rnstatus" "$@" 2>&1); rc=$?
  fi
  printf '%s\n' "$out"; return $rc
}
rp() { timeout 40 "$VENV/bin/rnpath" "$@" 2>&1; }
# rp_remote OUT ARGS...: rnpath -R into OUT; the reference registers a request only after
# sending it and drops a response that beats it (interop/REFERENCE-QUIRKS.md), so a run that
# sent its request and then waited out its timeout is run once more, and said so
rp_remote() {
  local out=$1; shift
  rp "$@" >"$out"; local r=$?
  if [ "$r" = 124 ] && grep -q "Sending request" "$out"; then
    echo "     rnpath $*: request sent, no response (the reference's request race); once more"
    rp "$@" >"$out"; r=$?
  fi
  return $r
}

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
rp_remote "$tmp/ptr.txt" --config "$tmp/R" -R "$D_ID" -i "$tmp/M.rid" -W 15 -t; prc=$?
pn() { tr '\r' '\n' | sed -e 's/expires .*//; s/last heard.*//' -e '/requested/d; /Establishing/d; /Sending/d' | sed '/^ *$/d'; }
# (only the announced destination: more paths may arrive between the two queries)
if [ "$prc" = 0 ] && grep -q "$APP_DEST" "$tmp/ptr.txt" &&
   diff <(pn <"$tmp/ptl.txt" | grep "$APP_DEST") <(pn <"$tmp/ptr.txt" | grep "$APP_DEST") >"$tmp/pdiff"; then
  ok "rnpath -R -t against rnsc: the daemon's own path table"
else bad "rnpath -R -t: exit $prc" "$tmp/pdiff" "$tmp/ptr.txt"; fi
rp_remote "$tmp/prr.txt" --config "$tmp/R" -R "$D_ID" -i "$tmp/M.rid" -W 15 -r; prc=$?
rp --config "$tmp/D" -r >"$tmp/prl.txt"
if [ "$prc" = 0 ] && grep -q "$APP_DEST" "$tmp/prr.txt" &&
   diff <(pn <"$tmp/prl.txt" | grep "$APP_DEST") <(pn <"$tmp/prr.txt" | grep "$APP_DEST") >"$tmp/pdiff"; then
  ok "rnpath -R -r (rates) against rnsc"
else bad "rnpath -R -r: exit $prc" "$tmp/pdiff" "$tmp/prr.txt"; fi
timeout 8 "$VENV/bin/rnpath" --config "$tmp/R" -R "$D_ID" -i "$tmp/N.rid" -W 6 -t >"$tmp/prefused.txt" 2>&1; nrc=$?
if grep -q "Sending request" "$tmp/prefused.txt" && ! grep -q "hop" "$tmp/prefused.txt"; then ok "rnpath -R refused for an identity not allowed (exit $nrc)"
else bad "rnpath refusal: exit $nrc" "$tmp/prefused.txt"; fi

# rnsc status -R, against rnsc (D) and against the reference (rnsd E, a client of D),
# compared with what rnstatus -R prints for the same instance.
# E names its management destination (transport identity and hash) in its log
e_logged() { grep -q "Enabled remote management on <rnstransport.remote.management." "$tmp/E.log"; }
wait_for 20 e_logged || bad "rnsd E did not enable remote management" "$tmp/E.log"
E_ID=$(sed -n 's/.*Enabled remote management on <rnstransport.remote.management.\([0-9a-f]*\):.*/\1/p' "$tmp/E.log" | head -1)
E_MGMT=$(sed -n 's/.*Enabled remote management on <rnstransport.remote.management.[0-9a-f]*:\([0-9a-f]*\)>.*/\1/p' "$tmp/E.log" | head -1)
e_known() { timeout 10 "$VENV/bin/rnpath" --config "$tmp/D" -t 2>/dev/null | grep -q "$E_MGMT"; }
wait_for 25 e_known || bad "E's management announce did not reach D" "$tmp/E.log"
for who in D E; do
  idv=${who}_ID
  rs --config "$tmp/R" -R "${!idv}" -i "$tmp/M.rid" -w 15 -a >"$tmp/ref_$who.txt"; r1=$?
  timeout 60 "$RNSC" status --config "$tmp/R" -R "${!idv}" -i "$tmp/M.rid" -w 15 -a >"$tmp/c_$who.txt" 2>&1; c1=$?
  norm <"$tmp/ref_$who.txt" >"$tmp/ref_$who.n"; norm <"$tmp/c_$who.txt" >"$tmp/c_$who.n"
  if [ "$r1" = 0 ] && [ "$c1" = 0 ] && grep -q "Status *: Up" "$tmp/c_$who.n" &&
     diff "$tmp/ref_$who.n" "$tmp/c_$who.n" >"$tmp/diff"; then
    ok "rnsc status -R against $who: as rnstatus -R prints it"
  else bad "rnsc status -R against $who: $r1/$c1" "$tmp/diff" "$tmp/c_$who.txt"; fi
done
timeout 60 "$RNSC" status --config "$tmp/R" -R "$D_ID" -i "$tmp/M.rid" -w 15 -j >"$tmp/c.json" 2>&1; c1=$?
if [ "$c1" = 0 ] && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["transport_id"]==sys.argv[2], d["transport_id"]' "$tmp/c.json" "$D_ID"; then
  ok "rnsc status -R -j: D's document"; else bad "rnsc status -R -j: $c1" "$tmp/c.json"; fi
timeout 12 "$RNSC" status --config "$tmp/R" -R "$D_ID" -i "$tmp/N.rid" -w 4 >"$tmp/c_ref.txt" 2>&1; c1=$?
if [ "$c1" = 2 ] && grep -q "Likely authentication failure" "$tmp/c_ref.txt" && ! grep -q "Status *: Up" "$tmp/c_ref.txt"; then
  ok "rnsc status -R refused for an identity not allowed (exit 2, within the timeout)"
else bad "rnsc status refusal: $c1" "$tmp/c_ref.txt"; fi
timeout 12 "$RNSC" status --config "$tmp/R" -R "$E_ID" -i "$tmp/N.rid" -w 4 >"$tmp/c_ref2.txt" 2>&1; c1=$?
if [ "$c1" = 2 ] && grep -q "Likely authentication failure" "$tmp/c_ref2.txt"; then
  ok "rnsd refuses rnsc status -R for an identity not allowed"
else bad "rnsd refusal: $c1" "$tmp/c_ref2.txt"; fi
timeout 12 "$RNSC" status --config "$tmp/R" -R "zz${D_ID:2}" -i "$tmp/M.rid" >"$tmp/c_bad.txt" 2>&1; c1=$?
if [ "$c1" = 20 ] && grep -q "Invalid destination entered" "$tmp/c_bad.txt"; then ok "rnsc status -R non-hex hash: exit 20"
else bad "non-hex: $c1" "$tmp/c_bad.txt"; fi
# rnsc path -R -t, against rnsc (D) and rnsd (E), as rnpath -R -t prints the same table
for who in D E; do
  idv=${who}_ID
  rp_remote "$tmp/rpt_$who.txt" --config "$tmp/R" -R "${!idv}" -i "$tmp/M.rid" -W 15 -t; r1=$?
  timeout 60 "$RNSC" path --config "$tmp/R" -R "${!idv}" -i "$tmp/M.rid" -W 15 -t >"$tmp/cpt_$who.txt" 2>&1; c1=$?
  if [ "$c1" = 0 ] && grep -q "$APP_DEST" "$tmp/cpt_$who.txt" &&
     diff <(pn <"$tmp/rpt_$who.txt" | grep "$APP_DEST") <(pn <"$tmp/cpt_$who.txt" | grep "$APP_DEST") >"$tmp/pdiff"; then
    ok "rnsc path -R -t against $who: as rnpath -R -t"
  else bad "rnsc path -R -t against $who: $r1/$c1" "$tmp/pdiff" "$tmp/cpt_$who.txt" "$tmp/rpt_$who.txt"; fi
done
timeout 12 "$RNSC" path --config "$tmp/R" -R "$E_ID" -i "$tmp/N.rid" -W 4 -t >"$tmp/cpt_ref.txt" 2>&1; c1=$?
if [ "$c1" = 10 ] && grep -q "Likely authentication failure" "$tmp/cpt_ref.txt"; then
  ok "rnsc path -R refused by rnsd for an identity not allowed (exit 10)"
else bad "rnsc path refusal: $c1" "$tmp/cpt_ref.txt"; fi

# rnsc status -q -b -z on D's shared instance, as rnstatus prints the same document
rs --config "$tmp/D" -q -b -z >"$tmp/r_q.txt"; r1=$?
timeout 30 "$RNSC" status --config "$tmp/D" -q -b -z >"$tmp/c_q.txt" 2>&1; c1=$?
if [ "$r1" = 0 ] && [ "$c1" = 0 ] && grep -q "Qu. Pressure : 0.0% total, [0-9]* pkts" "$tmp/c_q.txt" &&
   diff <(norm <"$tmp/r_q.txt") <(norm <"$tmp/c_q.txt") >"$tmp/qdiff"; then
  ok "rnsc status -q -b -z: as rnstatus"; else bad "rnsc status -q -b -z: $r1/$c1" "$tmp/qdiff" "$tmp/c_q.txt"; fi

# rnsc path -r and -j (locally on D's shared instance, and remote) as rnpath prints them
jentry() { "$PY" -c '
import json, sys
t = open(sys.argv[1]).read().replace("\r", "\n").strip().split("\n")[-1]
d = json.loads(t[t.index("["):])  # after any progress text on the line
e = [x for x in d if x["hash"] == sys.argv[2]]
print(json.dumps(e, sort_keys=True))' "$1" "$APP_DEST"; }
cmp_json() { # NAME REF_FILE RNSC_FILE
  if [ -s "$3" ] && a=$(jentry "$2") && b=$(jentry "$3") && [ "$a" = "$b" ] && [ "$a" != "[]" ]; then ok "$1"
  else bad "$1" "$2" "$3"; fi
}
rp --config "$tmp/D" -t -j >"$tmp/r_tj.json"; timeout 30 "$RNSC" path --config "$tmp/D" -t -j >"$tmp/c_tj.json" 2>&1
cmp_json "rnsc path -t -j: rnpath's JSON entry" "$tmp/r_tj.json" "$tmp/c_tj.json"
rp --config "$tmp/D" -r -j >"$tmp/r_rj.json"; timeout 30 "$RNSC" path --config "$tmp/D" -r -j >"$tmp/c_rj.json" 2>&1
cmp_json "rnsc path -r -j: rnpath's JSON entry" "$tmp/r_rj.json" "$tmp/c_rj.json"
rp --config "$tmp/D" -r >"$tmp/r_r.txt"; timeout 30 "$RNSC" path --config "$tmp/D" -r >"$tmp/c_r.txt" 2>&1; c1=$?
if [ "$c1" = 0 ] && grep -q "<$APP_DEST> last heard .* ago, [0-9.]* announces/hour in the last " "$tmp/c_r.txt" &&
   diff <(grep "$APP_DEST" "$tmp/r_r.txt" | sed 's/ last heard.*//') <(grep "$APP_DEST" "$tmp/c_r.txt" | sed 's/ last heard.*//') >/dev/null; then
  ok "rnsc path -r: rnpath's lines"; else bad "rnsc path -r: $c1" "$tmp/c_r.txt" "$tmp/r_r.txt"; fi
rp_remote "$tmp/r_Rrj.json" --config "$tmp/R" -R "$D_ID" -i "$tmp/M.rid" -W 15 -r -j
timeout 60 "$RNSC" path --config "$tmp/R" -R "$D_ID" -i "$tmp/M.rid" -W 15 -r -j >"$tmp/c_Rrj.json" 2>&1
cmp_json "rnsc path -R -r -j: rnpath's JSON entry" "$tmp/r_Rrj.json" "$tmp/c_Rrj.json"
timeout 60 "$RNSC" path --config "$tmp/R" -R "$E_ID" -i "$tmp/M.rid" -W 15 -t -j >"$tmp/c_Etj.json" 2>&1
rp_remote "$tmp/r_Etj.json" --config "$tmp/R" -R "$E_ID" -i "$tmp/M.rid" -W 15 -t -j
cmp_json "rnsc path -R -t -j against rnsd: rnpath's JSON entry" "$tmp/r_Etj.json" "$tmp/c_Etj.json"

start=$SECONDS
timeout 20 "$RNSC" status --config "$tmp/R" -R 00112233445566778899aabbccddeeff -i "$tmp/M.rid" -w 3 >"$tmp/c_un.txt" 2>&1; c1=$?
if [ "$c1" = 12 ] && grep -q "Path request timed out" "$tmp/c_un.txt" && [ $((SECONDS - start)) -lt 10 ]; then
  ok "rnsc status -R unreachable: exit 12 within the timeout"; else bad "rnsc unreachable: $c1" "$tmp/c_un.txt"; fi

start=$SECONDS
rs --config "$tmp/R" -R 00112233445566778899aabbccddeeff -i "$tmp/M.rid" -w 3 >"$tmp/unreach.txt"; urc=$?
# (rnstatus means exit 12 here; attached to a shared instance its exit handlers sometimes
# turn that into 0, so only the message and the time are checked for the reference)
if [ "$urc" != 124 ] && grep -q "Path request timed out" "$tmp/unreach.txt" && [ $((SECONDS - start)) -lt 15 ]; then
  ok "unreachable instance: timed out (exit $urc)"; else bad "unreachable: exit $urc" "$tmp/unreach.txt"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
