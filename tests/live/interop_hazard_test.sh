#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Timing hazards of the reference that rnsc must survive, each made certain with
# tests/live/hazard_ref_wrap.py (which also logs that the hazard really happened), live over TCP
# on loopback. Named cases:
#   adv-before-register   the reference sends a resource advertisement before it registers
#                         the resource: rnsc's first part request is dropped and must be asked
#                         again after its timeout (rncp -> rnsc cp -l, and the response
#                         resource of a fetch: rnsc cp -f from rncp -l -F). The file arrives
#                         byte-exact and at least one early request was dropped.
#   slow-segment          the reference prepares the next segment late and polls for it when
#                         the fast rnsc receiver's proof comes first (3 segments, rncp -> rnsc
#                         cp -l): byte-exact, and the poll happened.
#   unproved-receipts     the reference server delivers and echoes all 40 link packets of an
#                         rnsc client but withholds the proofs of the last 5: rnsc times those
#                         receipts out (counted: proved=35 timeouts=5), closes cleanly (exit 0,
#                         no crash) and the server accounts all 40 packets and their bytes.
#   link-iface-binding    two TCP interfaces between rnsc and the reference: every link packet
#                         (DATA and PROOF) rnsc sends arrives on one interface only, the one
#                         the link was established over, with rnsc as initiator and responder.
# Every wait is bounded; a reference that cannot start fails the test.
set -u
. "$(dirname "$0")/../common/lib.sh"
WRAP="$S/tests/live/hazard_ref_wrap.py"
LPEER="$S/tests/live/link_ref_peer.py"
NPEER="$B/tests/live/link_node_peer"
RNCP=("$PY" -m RNS.Utilities.rncp)
WRNCP=("$PY" "$WRAP" -m RNS.Utilities.rncp)

if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL the reference (RNS) does not import with $PY (make venv)"; exit 1
fi
[ -x "$RNSC" ] && [ -x "$NPEER" ] || { echo "FAIL $RNSC or $NPEER is not built"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-hazard-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
read -r P1 P2 P3 P4 P5 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(5)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
wait_for() { local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }
alive() { kill -0 "$1" 2>/dev/null; }
saved() { grep -qs "Saved received file to $1" "$2"; }
sha() { sha256sum <"$1" | cut -d' ' -f1; }
same_file() { [ -f "$2" ] && [ "$(stat -c %s "$1")" = "$(stat -c %s "$2")" ] && [ "$(sha "$1")" = "$(sha "$2")" ]; }
count() { local c; c=$(grep -c "^$1" "$2" 2>/dev/null); echo "${c:-0}"; }

# config DIR IFACE_LINES...: one config folder; each IFACE is server:PORT or client:PORT
config() {
  local d=$1; shift; mkdir -p "$d"
  { printf '[reticulum]\n  enable_transport = no\n  share_instance = no\n[logging]\n  loglevel = 4\n[interfaces]\n'
    local k=0 i
    for i in "$@"; do k=$((k+1))
      if [ "${i%%:*}" = server ]; then
        printf '  [[If%d]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n' $k "${i#*:}"
      else
        printf '  [[If%d]]\n    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %s\n' $k "${i#*:}"
      fi
    done; } >"$d/config"
}
idof() { sed -n 's/^Identity *: <\(.*\)>.*/\1/p'; }
dstof() { sed -n 's/^Listening on : <\(.*\)>.*/\1/p'; }

# ---- rnsc cp -l receiving from wrapped rncp senders; a wrapped rncp -l -F serving fetches
config "$tmp/L" server:"$P1"; config "$tmp/SA" client:"$P1"; config "$tmp/SB" client:"$P1"
config "$tmp/LF" server:"$P2"; config "$tmp/F" client:"$P2"
ID_SA=$("${RNCP[@]}" --config "$tmp/SA" -p 2>/dev/null | idof)
ID_SB=$("${RNCP[@]}" --config "$tmp/SB" -p 2>/dev/null | idof)
ID_F=$("$RNSC" cp --config "$tmp/F" -p 2>/dev/null | idof)
D_L=$("$RNSC" cp --config "$tmp/L" -p 2>/dev/null | dstof)
D_LF=$("${RNCP[@]}" --config "$tmp/LF" -p 2>/dev/null | dstof)
if [ ${#ID_SA} != 32 ] || [ ${#ID_SB} != 32 ] || [ ${#ID_F} != 32 ] || [ ${#D_L} != 32 ] || [ ${#D_LF} != 32 ]; then
  echo "FAIL could not read identities ('$ID_SA' '$ID_SB' '$ID_F' '$D_L' '$D_LF')"; exit 1
fi
mkdir -p "$tmp/in" "$tmp/jail" "$tmp/fout" "$tmp/files"
"$RNSC" cp --config "$tmp/L" -l -a "$ID_SA" -a "$ID_SB" -s "$tmp/in" -v >"$tmp/L.log" 2>&1 &
pids+=($!)
HAZARD=adv_before_register HAZARD_LOG="$tmp/hz_fetch.log" \
  "${WRNCP[@]}" --config "$tmp/LF" -l -F -a "$ID_F" -j "$tmp/jail" >"$tmp/LF.log" 2>&1 &
pids+=($!)
if wait_for 20 port_open "$P1" && wait_for 30 port_open "$P2"; then :; else
  bad "a listener did not start" "$tmp/L.log" "$tmp/LF.log"; echo "# $pass passed, $fail failed"; exit 1; fi
head -c 600000 /dev/urandom >"$tmp/files/adv.bin"
head -c 2500000 /dev/urandom >"$tmp/files/seg3.bin"
head -c 400000 /dev/urandom >"$tmp/jail/fetch.bin"

# adv-before-register: rncp -> rnsc cp -l
t0=$SECONDS
(cd "$tmp" && HAZARD=adv_before_register HAZARD_LOG="$tmp/hz_adv.log" timeout 120 \
  "${WRNCP[@]}" --config "$tmp/SA" -S -w 30 "$tmp/files/adv.bin" "$D_L" >"$tmp/SA.log" 2>&1); rc=$?
wait_for 10 saved "$tmp/in/adv.bin" "$tmp/L.log"
early=$(count early_request "$tmp/hz_adv.log")
if [ $rc = 0 ] && same_file "$tmp/files/adv.bin" "$tmp/in/adv.bin" && [ "$early" -ge 1 ]; then
  ok "adv-before-register: rncp -> rnsc cp -l, 600000 bytes SHA-256 equal in $((SECONDS - t0)) s, $early early part request(s) dropped by the reference and asked again"
else bad "adv-before-register: rncp -> rnsc cp -l (rc=$rc, early requests: $early)" "$tmp/SA.log" "$tmp/L.log"; fi

# adv-before-register: the response resource of a fetch (rnsc cp -f <- rncp -l -F)
t0=$SECONDS
(cd "$tmp" && timeout 120 "$RNSC" cp --config "$tmp/F" -f -S -w 30 -s "$tmp/fout" fetch.bin "$D_LF" >"$tmp/F.log" 2>&1); rc=$?
early=$(count early_request "$tmp/hz_fetch.log")
if [ $rc = 0 ] && same_file "$tmp/jail/fetch.bin" "$tmp/fout/fetch.bin" && [ "$early" -ge 1 ]; then
  ok "adv-before-register: rnsc cp -f <- rncp -l -F, 400000 bytes SHA-256 equal in $((SECONDS - t0)) s, $early early part request(s) dropped and asked again"
else bad "adv-before-register: fetch (rc=$rc, early requests: $early)" "$tmp/F.log" "$tmp/LF.log"; fi

# slow-segment: 3 segments, the reference late with each next one
t0=$SECONDS
(cd "$tmp" && HAZARD=slow_segment HAZARD_LOG="$tmp/hz_seg.log" timeout 150 \
  "${WRNCP[@]}" --config "$tmp/SB" -S -w 30 "$tmp/files/seg3.bin" "$D_L" >"$tmp/SB.log" 2>&1); rc=$?
wait_for 10 saved "$tmp/in/seg3.bin" "$tmp/L.log"
polls=$(count poll_wait "$tmp/hz_seg.log")
if [ $rc = 0 ] && same_file "$tmp/files/seg3.bin" "$tmp/in/seg3.bin" && [ "$polls" -ge 1 ] &&
   grep -q "received 2500000 bytes in 3 segments" "$tmp/L.log" &&
   ! grep -q "manually preparing now" "$tmp/SB.log"; then
  ok "slow-segment: rncp -> rnsc cp -l, 3 segments, 2500000 bytes SHA-256 equal in $((SECONDS - t0)) s, the reference polled for its next segment $polls time(s)"
else bad "slow-segment: (rc=$rc, polls: $polls)" "$tmp/SB.log" "$tmp/L.log"; fi

# ---- unproved-receipts: rnsc link client, reference server withholding the last 5 proofs
N=40 K=5
config "$tmp/US" server:"$P3"; config "$tmp/UC" client:"$P3"
HAZARD=withhold_proofs HAZARD_K=$K HAZARD_N=$N HAZARD_LOG="$tmp/hz_rcpt.log" \
  "$PY" "$WRAP" "$LPEER" serve "$tmp/US" $N 90 >"$tmp/US.out" 2>"$tmp/US.err" &
sp=$!; pids+=($sp)
dest_line() { grep -qs '^dest ' "$tmp/US.out"; }
if wait_for 30 dest_line; then
  dest=$(sed -n 's/^dest //p' "$tmp/US.out")
  PEER_EXPECT_TIMEOUTS=$K timeout 90 "$NPEER" connect "$tmp/UC" "$dest" $N 80 >"$tmp/UC.out" 2>"$tmp/UC.err"; rc=$?
  line=$(grep '^client ' "$tmp/UC.out")
  srv_done() { ! alive "$sp"; }
  wait_for 20 srv_done; wait "$sp" 2>/dev/null; src=$?
  sline=$(grep '^server rx' "$tmp/US.out")
  cb=$(sed -n 's/.* bytes=\([0-9]*\) .*/\1/p' <<<"$line"); sb=$(sed -n 's/.* bytes=\([0-9]*\)$/\1/p' <<<"$sline")
  withheld=$(count withheld "$tmp/hz_rcpt.log")
  if [ $rc = 0 ] && grep -q "sent=$N .* proved=$((N - K)) echoed=$N .* timeouts=$K" <<<"$line" &&
     [ $src = 0 ] && [ "$sline" = "server rx=$N bytes=$cb" ] && [ "$withheld" = $K ]; then
    ok "unproved-receipts: $K withheld proofs timed out at rnsc ($line); the server got all: $sline"
  else bad "unproved-receipts: client rc=$rc '$line', server rc=$src '$sline' (bytes $cb/$sb), withheld $withheld" "$tmp/UC.out" "$tmp/UC.err" "$tmp/US.err"; fi
else bad "unproved-receipts: the reference server did not start" "$tmp/US.out" "$tmp/US.err"; fi

# ---- link-iface-binding: two TCP interfaces between the same two peers
ifaces_used() { sed -n 's/^link //p' "$1" | sort | uniq -c; }
n_ifaces() { sed -n 's/^link //p' "$1" | sort -u | wc -l; }
# rnsc initiator: reference server on P4 and P5, rnsc client on both
config "$tmp/BS" server:"$P4" server:"$P5"; config "$tmp/BC" client:"$P4" client:"$P5"
HAZARD=count_link_ifaces HAZARD_LOG="$tmp/hz_bind1.log" "$PY" "$WRAP" "$LPEER" serve "$tmp/BS" 20 90 >"$tmp/BS.out" 2>"$tmp/BS.err" &
sp=$!; pids+=($sp)
bs_line() { grep -qs '^dest ' "$tmp/BS.out"; }
if wait_for 30 bs_line && wait_for 20 port_open "$P5"; then
  dest=$(sed -n 's/^dest //p' "$tmp/BS.out")
  timeout 90 "$NPEER" connect "$tmp/BC" "$dest" 20 80 >"$tmp/BC.out" 2>"$tmp/BC.err"; rc=$?
  bsd() { ! alive "$sp"; }; wait_for 20 bsd
  n=$(sed -n 's/^link //p' "$tmp/hz_bind1.log" 2>/dev/null | wc -l)
  if [ $rc = 0 ] && [ "$(n_ifaces "$tmp/hz_bind1.log")" = 1 ] && [ "$n" -ge 20 ]; then
    ok "link-iface-binding: rnsc initiator, all $n link packets on one of two interfaces"
  else bad "link-iface-binding: rnsc initiator (rc=$rc), link packets by interface: $(ifaces_used "$tmp/hz_bind1.log" | tr '\n' ' ')" "$tmp/BC.out" "$tmp/BC.err" "$tmp/BS.err"; fi
else bad "link-iface-binding: the reference server did not start" "$tmp/BS.out" "$tmp/BS.err"; fi
# rnsc responder: rnsc server on two ports, reference client on both
read -r P6 P7 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
config "$tmp/RS" server:"$P6" server:"$P7"; config "$tmp/RC" client:"$P6" client:"$P7"
"$NPEER" serve "$tmp/RS" 20 90 >"$tmp/RS.out" 2>"$tmp/RS.err" &
sp=$!; pids+=($sp)
rs_line() { grep -qs '^dest ' "$tmp/RS.out"; }
if wait_for 30 rs_line && wait_for 20 port_open "$P7"; then
  dest=$(sed -n 's/^dest //p' "$tmp/RS.out")
  HAZARD=count_link_ifaces HAZARD_LOG="$tmp/hz_bind2.log" timeout 90 "$PY" "$WRAP" "$LPEER" connect "$tmp/RC" "$dest" 20 80 >"$tmp/RC.out" 2>"$tmp/RC.err"; rc=$?
  rsd() { ! alive "$sp"; }; wait_for 20 rsd
  n=$(sed -n 's/^link //p' "$tmp/hz_bind2.log" 2>/dev/null | wc -l)
  if [ $rc = 0 ] && [ "$(n_ifaces "$tmp/hz_bind2.log")" = 1 ] && [ "$n" -ge 20 ]; then
    ok "link-iface-binding: rnsc responder, all $n link packets on one of two interfaces"
  else bad "link-iface-binding: rnsc responder (rc=$rc), link packets by interface: $(ifaces_used "$tmp/hz_bind2.log" | tr '\n' ' ')" "$tmp/RC.out" "$tmp/RC.err" "$tmp/RS.err"; fi
else bad "link-iface-binding: the rnsc server did not start" "$tmp/RS.out" "$tmp/RS.err"; fi

echo "# $pass passed, $fail failed"
[ $fail = 0 ]
