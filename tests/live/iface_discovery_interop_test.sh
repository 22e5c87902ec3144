#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Interface discovery (Discovery.py) between the reference and an rnsc daemon, as real
# processes on 127.0.0.1 (RNSC_VENV picks the reference: rns 1.5.4, or 1.5.7 through
# tests/live/ref157_iface_discovery_test.sh). Topology:
#
#   rnsd A (discoverable TCPServerInterface :P1, discovery_stamp_value 8, latitude/longitude/
#           height, discovery_name; its announcer's job interval shortened to 12 s by
#           tests/live/iface_discovery_ref_rnsd.py, everything else as shipped)
#      ^ TCP                      ^ TCP
#   rnsc daemon D               rnsd B        (both discover_interfaces = yes,
#                                              required_discovery_value = 8)
#
# Checked: D stores the discovered interface under the same file name as B; rnsc status -d,
# -D and -j on D print what the reference's rnstatus -d, -D and -j print on B (the times
# "Discovered"/"Last Heard" and the JSON's received/discovered/last_heard/heard_count left
# out); the reference's rnstatus -d/-D/-j against D (reading D's store) print what rnsc
# status prints; a daemon requiring value 40 stores nothing (the stamp is refused).
# rnsc announcing its own discoverable interface is tests/live/iface_announce_interop_test.sh;
# this test is the receiving direction.
set -u
. "$(dirname "$0")/../common/lib.sh"
for tool in rnsd rnstatus; do
  if [ ! -x "$VENV/bin/$tool" ]; then echo "FAIL the reference's $tool is not in $VENV/bin (make venv)"; exit 1; fi
done
"$PY" -c 'import LXMF' 2>/dev/null || { echo "FAIL LXMF is not in $VENV (interop/requirements*.txt; make venv)"; exit 1; }
REFV=$("$PY" -c 'import RNS; print(RNS.__version__)')
echo "reference: rns $REFV, lxmf $("$PY" -c 'import LXMF; print(LXMF.__version__)' 2>/dev/null || echo '?')"
# rnsc writes and prints rns 1.5.4's records and tables. rns 1.5.7 adds two record fields
# (impl_name, version: the announcer's TRANSPORT_IMPL/TRANSPORT_VERS), a "Running" column
# and a "Stack" line, and hides entries without them unless --show-unknown. Under 1.5.7 those
# two fields and the Stack line are left out of the comparisons, said aloud below, and the
# -d table (a different layout) is compared reference against reference.
NEW=0; [ "$REFV" != 1.5.4 ] && NEW=1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-idisc-test.XXXXXX")
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
instA="rnscidA$$" instB="rnscidB$$" instD="rnscidD$$" instH="rnscidH$$"
mkdir -p "$tmp/A" "$tmp/B" "$tmp/D" "$tmp/H"
cat >"$tmp/A/config" <<EOF
[reticulum]
  enable_transport = Yes
  share_instance = Yes
  instance_name = $instA
[logging]
  loglevel = 6
[interfaces]
  [[Disc Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P1
    discoverable = yes
    discovery_name = rnsc  Test  Backbone
    reachable_on = 127.0.0.1
    discovery_stamp_value = 8
    latitude = 52.52
    longitude = 13.405
    height = 34.5
EOF
client_cfg() { # client_cfg DIR INSTANCE REQUIRED
  cat >"$1/config" <<EOF
[reticulum]
  enable_transport = No
  share_instance = Yes
  instance_name = $2
  discover_interfaces = yes
  required_discovery_value = $3
[logging]
  loglevel = 7
[interfaces]
  [[To A]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P1
EOF
}
client_cfg "$tmp/B" "$instB" 8
client_cfg "$tmp/D" "$instD" 8
client_cfg "$tmp/H" "$instH" 40

wait_for() { # wait_for SECONDS COMMAND...
  local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.3; done
  return 1
}
has_sock() { grep -q "@rns/$1" /proc/net/unix 2>/dev/null; }
stored() { [ -n "$(ls "$1/storage/discovery/interfaces" 2>/dev/null)" ]; }

"$PY" "$S/tests/live/iface_discovery_ref_rnsd.py" --config "$tmp/A" >"$tmp/A.log" 2>&1 &
pids+=($!)
wait_for 30 has_sock "$instA" || { bad "rnsd A did not start" "$tmp/A.log"; exit 1; }
"$RNSC" daemon --config "$tmp/D" >"$tmp/D.log" 2>&1 &
D_PID=$!
pids+=($D_PID)
"$RNSC" daemon --config "$tmp/H" >"$tmp/H.log" 2>&1 &
pids+=($!)
"$VENV/bin/rnsd" --config "$tmp/B" >"$tmp/B.log" 2>&1 &
pids+=($!)
wait_for 30 has_sock "$instD" || { bad "rnsc daemon D did not start" "$tmp/D.log"; exit 1; }
wait_for 30 has_sock "$instH" || { bad "rnsc daemon H did not start" "$tmp/H.log"; exit 1; }
wait_for 30 has_sock "$instB" || { bad "rnsd B did not start" "$tmp/B.log"; exit 1; }

# A announces every 5 minutes at the soonest (announce_interval's floor): the first one,
# 12 s after start-up, must reach all three, so all three must be connected before it is
# sent (a machine too loaded for that fails here, loudly, naming the cause). The stamp at
# value 8 takes the reference well under a second; 90 s covers a loaded machine.
spawned() { [ "$(grep -c "Spawned new TCPClient Interface" "$tmp/A.log")" -ge 3 ]; }
wait_for 60 spawned || { bad "the three clients did not connect to A" "$tmp/A.log"; exit 1; }
sent_line=$(grep -n "Sending interface discovery announce" "$tmp/A.log" | head -1 | cut -d: -f1)
if [ -n "$sent_line" ] && [ "$(head -n "$sent_line" "$tmp/A.log" | grep -c "Spawned new TCPClient Interface")" -lt 3 ]; then
  bad "A announced before all three clients connected (machine too loaded for the 12 s start-up window)" "$tmp/A.log"; exit 1
fi
if wait_for 90 stored "$tmp/B"; then ok "the reference (rnsd B) stored A's discovered interface"
else bad "rnsd B stored nothing (the baseline of this test)" "$tmp/A.log" "$tmp/B.log"; exit 1; fi
if wait_for 30 stored "$tmp/D"; then ok "rnsc daemon D stored A's discovered interface"
else bad "rnsc daemon D stored nothing" "$tmp/D.log"; exit 1; fi
fb=$(ls "$tmp/B/storage/discovery/interfaces") fd=$(ls "$tmp/D/storage/discovery/interfaces")
if [ "$fb" = "$fd" ]; then ok "the same record file name (discovery hash $fd)"
else bad "record names differ: reference $fb, rnsc $fd"; fi

# The records themselves, as the reference's umsgpack reads them (times and count left out).
if "$PY" - "$tmp/B/storage/discovery/interfaces/$fb" "$tmp/D/storage/discovery/interfaces/$fd" >"$tmp/rec.txt" 2>&1 <<'PYEOF'
import sys
import RNS
import RNS.vendor.umsgpack as mp
recs = [mp.unpackb(open(p, "rb").read()) for p in sys.argv[1:3]]
for r in recs:
    for k in ("received", "discovered", "last_heard", "heard_count"):
        assert isinstance(r.pop(k), (int, float)), k
ref, ours = recs
if RNS.__version__ != "1.5.4":
    print("rns", RNS.__version__, "record extras left out:", ref.pop("impl_name"), ref.pop("version"))
if list(ref) != list(ours): print("key order differs:", list(ref), list(ours)); sys.exit(1)
for k in ref:
    if ref[k] != ours[k] or type(ref[k]) != type(ours[k]):
        print("field", k, "differs:", repr(ref[k]), repr(ours[k])); sys.exit(1)
print("fields:", ", ".join(ref))
PYEOF
then ok "record fields equal the reference's, in its key order ($(tail -1 "$tmp/rec.txt"))"
else bad "record differs from the reference's" "$tmp/rec.txt"; fi

# H requires value 40: the same announce reaches it and is refused for its stamp (reason 3,
# RNSC_DISC_STAMP), nothing stored.
h_refused() { grep -q "ignored an interface discovery announce (reason 3)" "$tmp/H.log"; }
if wait_for 30 h_refused && ! stored "$tmp/H"; then
  ok "a stamp below required_discovery_value 40 is refused and not stored"
else bad "daemon H (required_discovery_value 40): not refused for its stamp" "$tmp/H.log"; fi

strip_times() { grep -v -e '^Discovered   :' -e '^Last Heard   :' -e '^Stack        :'; }
json_cmp() { # json_cmp REF_FILE OURS_FILE
  "$PY" - "$1" "$2" <<'PYEOF'
import json, sys
docs = []
for p in sys.argv[1:3]:
    lines = [l for l in open(p).read().split("\n") if l.strip()]
    d = json.loads(lines[-1])
    for i in d:
        for k in ("received", "discovered", "last_heard", "heard_count"): i.pop(k)
        for k in ("impl_name", "version"): i.pop(k, None)  # rns 1.5.7's extras
    docs.append(json.dumps(d))
if docs[0] != docs[1]: print(docs[0]); print(docs[1])
sys.exit(0 if docs[0] == docs[1] else 1)
PYEOF
}
run_cmp() { # run_cmp LABEL REF_CMD... -- OURS_CMD...  (output compared through $FILTER)
  local label=$1; shift
  local ref=() ours=()
  while [ "$1" != -- ]; do ref+=("$1"); shift; done; shift
  ours=("$@")
  timeout 60 "${ref[@]}" >"$tmp/ref.out" 2>"$tmp/ref.err"; local rr=$?
  timeout 60 "${ours[@]}" >"$tmp/ours.out" 2>"$tmp/ours.err"; local ro=$?
  if [ $rr -ne 0 ] || [ $ro -ne 0 ]; then
    bad "$label: exit $rr (reference) / $ro (rnsc)" "$tmp/ref.out" "$tmp/ref.err" "$tmp/ours.out" "$tmp/ours.err"; return
  fi
  if [ "$FILTER" = json ]; then
    if json_cmp "$tmp/ref.out" "$tmp/ours.out" >"$tmp/diff.txt"; then ok "$label"
    else bad "$label: JSON differs" "$tmp/diff.txt"; fi
    return
  fi
  if diff <($FILTER <"$tmp/ref.out") <($FILTER <"$tmp/ours.out") >"$tmp/diff.txt"; then
    ok "$label ($(wc -l <"$tmp/ours.out") lines)"
  else bad "$label: output differs" "$tmp/diff.txt"; fi
}
RS="$VENV/bin/rnstatus"
if [ $NEW -eq 1 ]; then
  echo "rns $REFV: rnstatus runs with --show-unknown (rnsc's 1.5.4 records carry no stack version);"
  echo "         its -d table layout is not rnsc's, so that table is compared reference on B against reference on D"
  running_unknown() { sed 's/RNS [0-9.]*  */Unknown          /'; } # 16 wide + 1
  FILTER=running_unknown run_cmp "rns $REFV rnstatus -d on rnsc daemon D lists what it lists on rnsd B (Running column aside)" \
    "$RS" --config "$tmp/B" -d --show-unknown -- "$RS" --config "$tmp/D" -d --show-unknown
  RS_D=("$RS" --show-unknown)
  FILTER=strip_times run_cmp "rnsc status -D on D prints the reference's rnstatus -D on B" \
    "${RS_D[@]}" --config "$tmp/B" -D -- "$RNSC" status --config "$tmp/D" -D
  FILTER=json run_cmp "rnsc status -d -j on D prints the reference's rnstatus -d -j on B" \
    "$RS" --config "$tmp/B" -d -j -- "$RNSC" status --config "$tmp/D" -d -j
  FILTER=strip_times run_cmp "the reference's rnstatus -D against rnsc daemon D prints rnsc status -D" \
    "${RS_D[@]}" --config "$tmp/D" -D -- "$RNSC" status --config "$tmp/D" -D
  FILTER=json run_cmp "the reference's rnstatus -d -j against rnsc daemon D prints rnsc status -d -j" \
    "$RS" --config "$tmp/D" -d -j -- "$RNSC" status --config "$tmp/D" -d -j
  # rns 1.5.7's --show-stale/--show-unknown: its -j ignores them, and rnsc (which lists
  # every entry, as 1.5.4) accepts both and prints what it prints without them.
  FILTER=json run_cmp "rnsc status -d -j --show-stale --show-unknown prints rnstatus $REFV's with them" \
    "$RS" --config "$tmp/B" -d -j --show-stale --show-unknown -- \
    "$RNSC" status --config "$tmp/D" -d -j --show-stale --show-unknown
  FILTER=strip_times run_cmp "rnsc status -D --show-unknown prints rnstatus $REFV's -D --show-unknown" \
    "$RS" --config "$tmp/B" -D --show-unknown -- "$RNSC" status --config "$tmp/D" -D --show-unknown
  FILTER=cat run_cmp "rnsc status -d --show-stale --show-unknown prints rnsc status -d" \
    "$RNSC" status --config "$tmp/D" -d -- "$RNSC" status --config "$tmp/D" -d --show-stale --show-unknown
else
FILTER=cat run_cmp "rnsc status -d on D prints the reference's rnstatus -d on B" \
  "$RS" --config "$tmp/B" -d -- "$RNSC" status --config "$tmp/D" -d
FILTER=strip_times run_cmp "rnsc status -D on D prints the reference's rnstatus -D on B" \
  "$RS" --config "$tmp/B" -D -- "$RNSC" status --config "$tmp/D" -D
FILTER=json run_cmp "rnsc status -d -j on D prints the reference's rnstatus -d -j on B" \
  "$RS" --config "$tmp/B" -d -j -- "$RNSC" status --config "$tmp/D" -d -j
FILTER=cat run_cmp "the reference's rnstatus -d against rnsc daemon D prints rnsc status -d" \
  "$RS" --config "$tmp/D" -d -- "$RNSC" status --config "$tmp/D" -d
FILTER=strip_times run_cmp "the reference's rnstatus -D against rnsc daemon D prints rnsc status -D" \
  "$RS" --config "$tmp/D" -D -- "$RNSC" status --config "$tmp/D" -D
FILTER=json run_cmp "the reference's rnstatus -d -j against rnsc daemon D prints rnsc status -d -j" \
  "$RS" --config "$tmp/D" -d -j -- "$RNSC" status --config "$tmp/D" -d -j
FILTER=cat run_cmp "a name filter (-d Backbone) as the reference's" \
  "$RS" --config "$tmp/B" -d Backbone -- "$RNSC" status --config "$tmp/D" -d Backbone
fi
# Without a shared instance to attach to, both say so and exit 1.
mkdir -p "$tmp/N"
printf '[reticulum]\n  share_instance = Yes\n  instance_name = rnscidN%s\n[interfaces]\n' $$ >"$tmp/N/config"
timeout 60 "$RNSC" status --config "$tmp/N" -d >"$tmp/n.out" 2>&1; rn=$?
if [ $rn -eq 1 ] && grep -q "^No shared RNS instance available to get status from" "$tmp/n.out"; then
  ok "no shared instance: rnsc status -d says so and exits 1 (as rnstatus)"
else bad "no shared instance: exit $rn" "$tmp/n.out"; fi
if grep -q "stored a discovered interface" "$tmp/D.log"; then ok "D logged the discovery"
else bad "D did not log the discovery" "$tmp/D.log"; fi

# D stops cleanly on SIGTERM, and (in a sanitizer build) with nothing reported.
kill "$D_PID" 2>/dev/null
end=$((SECONDS + 20)); while kill -0 "$D_PID" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.2; done
wait "$D_PID" 2>/dev/null; drc=$?
if [ $drc -eq 0 ] && ! grep -q "Sanitizer" "$tmp/D.log"; then ok "daemon D stopped cleanly (exit 0, no sanitizer report)"
else bad "daemon D: exit $drc at SIGTERM or a sanitizer report" "$tmp/D.log"; fi

echo "# $pass passed, $fail failed"
[ $fail -eq 0 ]
