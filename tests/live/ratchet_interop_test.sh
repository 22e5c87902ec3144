#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Ratchets live with the reference (issue 29 item 3), over TCP on 127.0.0.1, each peer with its
# own config folder and no shared instance. Peers: tests/live/ratchet_node_peer (an rnsc node) and
# tests/live/ratchet_ref_peer.py (the pinned RNS), same commands and output lines.
#  A. A reference destination with ratchets enforced; rnsc sends to it.
#     A1 rnsc learns the ratchet from a path response and encrypts to it (the reference names
#        the ratchet that decrypted the packet: the one rnsc reports having used);
#     A2 rnsc restarts and, without any announce, still encrypts to the stored ratchet
#        (storage/ratchets/<hex>, which the reference's own Identity.get_ratchet also reads);
#     A3 the reference restarts (reloads its ratchet file) and still takes that ratchet;
#     A4 its next path response rotates: rnsc learns and uses the new ratchet; rnsc reads the
#        reference's ratchet file (signature checked): two ratchets, the new one first.
#  B. An rnsc destination with ratchets enforced; the reference sends to it.
#     B1 the reference learns rnsc's ratchet, rnsc decrypts with it; the reference's
#        Destination._reload_ratchets reads rnsc's ratchet file; rnsc reads the reference's
#        stored remote ratchet file;
#     B2 rnsc restarts (reloads its file), the reference (a new process: restarted too) sends
#        with its stored ratchet and rnsc decrypts with it;
#     B3 rotation at rnsc's next path response, observed by both sides and in the file;
#     B4 enforcement: a packet encrypted to the identity key is refused (no proof, no rx).
# A reference that cannot start fails the test; every wait is bounded, and generous enough for
# a loaded 2-core machine: a send has 60 s (90 s when it must first learn a path) for its path
# and its proof, a proof is waited for until that budget ends (not a fixed few seconds), and
# the receiving side's log line is waited for 30 s (b4, whose proof must never come, has 20 s:
# over the receipt timeout of the path it knows). Nothing is retried: each check still
# needs the one packet delivered, decrypted with the expected ratchet, and proved.
set -u
. "$(dirname "$0")/../common/lib.sh"
RPEER="$S/tests/live/ratchet_ref_peer.py"
NPEER="$B/tests/live/ratchet_node_peer"
[ -x "$NPEER" ] || { echo "FAIL $NPEER is not built"; exit 1; }
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -20 "$f" | sed 's/^/     /'; done; }
if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL the reference (RNS) does not import with $PY (make venv)"; exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-ratchet-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
read -r PA PB < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
conf() { # conf DIR server|client PORT
  mkdir -p "$1"
  if [ "$2" = server ]; then
    iface="type = TCPServerInterface
    listen_ip = 127.0.0.1
    listen_port = $3"
  else
    iface="type = TCPClientInterface
    target_host = 127.0.0.1
    target_port = $3"
  fi
  cat >"$1/config" <<EOT
[reticulum]
  enable_transport = no
  share_instance = no
[logging]
  loglevel = 3
[interfaces]
  [[Link]]
    enabled = yes
    $iface
EOT
}
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" "$2" | tail -1; }
start_serve() { # start_serve ref|node LOG DIR ID RFILE PORT
  local who=$1 log=$2; shift 2
  if [ "$who" = ref ]; then
    ENFORCE=1 "$PY" "$RPEER" serve "$1" "$2" "$3" 300 >"$log" 2>&1 &
  else
    ENFORCE=1 "$NPEER" serve "$1" "$2" "$3" 300 >"$log" 2>&1 &
  fi
  spid=$!
  pids+=("$spid")
  wait_for 30 grep -q '^dest ' "$log" && wait_for 15 port_open "$4"
}
stop_serve() { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }
rx_ratchet() { # rx_ratchet LOG TEXT: the ratchet id the server reported for TEXT
  wait_for 30 grep -q "^rx $2 " "$1" && sed -n "s/^rx $2 ratchet=//p" "$1" | tail -1
}

# ---- A: reference destination, rnsc sender --------------------------------------------------
conf "$tmp/RA" server "$PA"; conf "$tmp/NA" client "$PA"
if ! start_serve ref "$tmp/ra.log" "$tmp/RA" "$tmp/ida" "$tmp/rfa" "$PA"; then
  bad "A: the reference destination did not start" "$tmp/ra.log"; exit 1
fi
DA=$(sed -n 's/^dest //p' "$tmp/ra.log")
"$NPEER" send "$tmp/NA" "$DA" a1 90 learn >"$tmp/a1.log" 2>&1
X1=$(field ratchet "$tmp/a1.log"); R=$(rx_ratchet "$tmp/ra.log" a1)
if [ -n "$X1" ] && [ "$X1" != none ] && [ "$R" = "$X1" ] && grep -q proved=yes "$tmp/a1.log"; then
  ok "A1 rnsc encrypts to the reference's ratchet $X1 (enforced, proved)"
else bad "A1 rnsc used '$X1', the reference decrypted with '$R'" "$tmp/a1.log" "$tmp/ra.log"; fi
F="$tmp/NA/storage/ratchets/$DA"
"$PY" "$RPEER" readremote "$tmp/NA/storage" "$DA" >"$tmp/a2r.log" 2>&1
if [ -f "$F" ] && [ "$(field ratchet "$tmp/a2r.log")" = "$X1" ]; then
  ok "A2 rnsc's storage/ratchets/<hex> is read by the reference's Identity.get_ratchet"
else bad "A2 remote ratchet file $F" "$tmp/a2r.log"; fi
"$NPEER" send "$tmp/NA" "$DA" a2 60 >"$tmp/a2.log" 2>&1
R=$(rx_ratchet "$tmp/ra.log" a2)
if [ "$(field ratchet "$tmp/a2.log")" = "$X1" ] && [ "$R" = "$X1" ] && grep -q proved=yes "$tmp/a2.log"; then
  ok "A2 rnsc restarted, no announce: still encrypts to $X1 (reloaded from storage)"
else bad "A2 after the restart rnsc used '$(field ratchet "$tmp/a2.log")', reference saw '$R'" "$tmp/a2.log" "$tmp/ra.log"; fi
stop_serve
if ! start_serve ref "$tmp/ra2.log" "$tmp/RA" "$tmp/ida" "$tmp/rfa" "$PA"; then
  bad "A3: the reference did not restart" "$tmp/ra2.log"; exit 1
fi
"$NPEER" send "$tmp/NA" "$DA" a3 60 >"$tmp/a3.log" 2>&1
R=$(rx_ratchet "$tmp/ra2.log" a3)
if [ "$R" = "$X1" ] && grep -q proved=yes "$tmp/a3.log"; then
  ok "A3 the reference restarted (ratchet file reloaded) and takes $X1 from rnsc"
else bad "A3 reference saw '$R'" "$tmp/a3.log" "$tmp/ra2.log"; fi
"$NPEER" send "$tmp/NA" "$DA" a4 90 learn >"$tmp/a4.log" 2>&1
X2=$(field ratchet "$tmp/a4.log"); R=$(rx_ratchet "$tmp/ra2.log" a4)
if [ -n "$X2" ] && [ "$X2" != none ] && [ "$X2" != "$X1" ] && [ "$R" = "$X2" ]; then
  ok "A4 rotation: the reference's next path response carries $X2, rnsc uses it"
else bad "A4 rotation: rnsc used '$X2' (was $X1), reference saw '$R'" "$tmp/a4.log" "$tmp/ra2.log"; fi
"$NPEER" readfile "$tmp/ida" "$tmp/rfa" >"$tmp/a4f.log" 2>&1
if grep -q "^file n=2 head=$X2\$" "$tmp/a4f.log"; then
  ok "A4 rnsc reads the reference's ratchet file: 2 ratchets, $X2 first, signature valid"
else bad "A4 rnsc reading the reference's ratchet file" "$tmp/a4f.log"; fi
stop_serve

# ---- B: rnsc destination, reference sender --------------------------------------------------
conf "$tmp/NB" server "$PB"; conf "$tmp/RB" client "$PB"
if ! start_serve node "$tmp/nb.log" "$tmp/NB" "$tmp/idb" "$tmp/rfb" "$PB"; then
  bad "B: the rnsc destination did not start" "$tmp/nb.log"; exit 1
fi
DB=$(sed -n 's/^dest //p' "$tmp/nb.log")
"$PY" "$RPEER" send "$tmp/RB" "$DB" b1 90 learn >"$tmp/b1.log" 2>&1
Y1=$(field ratchet "$tmp/b1.log"); R=$(rx_ratchet "$tmp/nb.log" b1)
if [ -n "$Y1" ] && [ "$Y1" != none ] && [ "$R" = "$Y1" ] && grep -q proved=yes "$tmp/b1.log"; then
  ok "B1 the reference encrypts to rnsc's ratchet $Y1, rnsc decrypts with it (enforced, proved)"
else bad "B1 reference used '$Y1', rnsc decrypted with '$R'" "$tmp/b1.log" "$tmp/nb.log"; fi
"$PY" "$RPEER" readfile "$tmp/idb" "$tmp/rfb" >"$tmp/b1f.log" 2>&1
"$NPEER" readremote "$tmp/RB/storage/ratchets/$DB" >"$tmp/b1r.log" 2>&1
if grep -q "^file n=1 head=$Y1\$" "$tmp/b1f.log" && grep -q "^remote ratchet=$Y1\$" "$tmp/b1r.log"; then
  ok "B1 the reference's loader reads rnsc's ratchet file; rnsc reads the reference's remote ratchet file"
else bad "B1 file cross-reads" "$tmp/b1f.log" "$tmp/b1r.log"; fi
stop_serve
if ! start_serve node "$tmp/nb2.log" "$tmp/NB" "$tmp/idb" "$tmp/rfb" "$PB"; then
  bad "B2: rnsc did not restart" "$tmp/nb2.log"; exit 1
fi
"$PY" "$RPEER" send "$tmp/RB" "$DB" b2 60 >"$tmp/b2.log" 2>&1
R=$(rx_ratchet "$tmp/nb2.log" b2)
if [ "$(field ratchet "$tmp/b2.log")" = "$Y1" ] && [ "$R" = "$Y1" ] && grep -q proved=yes "$tmp/b2.log"; then
  ok "B2 rnsc restarted (file reloaded), the restarted reference's stored $Y1 still decrypts"
else bad "B2 reference used '$(field ratchet "$tmp/b2.log")', rnsc saw '$R'" "$tmp/b2.log" "$tmp/nb2.log"; fi
"$PY" "$RPEER" send "$tmp/RB" "$DB" b3 90 learn >"$tmp/b3.log" 2>&1
Y2=$(field ratchet "$tmp/b3.log"); R=$(rx_ratchet "$tmp/nb2.log" b3)
"$PY" "$RPEER" readfile "$tmp/idb" "$tmp/rfb" >"$tmp/b3f.log" 2>&1
if [ -n "$Y2" ] && [ "$Y2" != none ] && [ "$Y2" != "$Y1" ] && [ "$R" = "$Y2" ] &&
   grep -q "^file n=2 head=$Y2\$" "$tmp/b3f.log"; then
  ok "B3 rotation at rnsc's path response: $Y2 announced, used, first in the file (2 kept)"
else bad "B3 rotation: reference used '$Y2' (was $Y1), rnsc saw '$R'" "$tmp/b3.log" "$tmp/nb2.log" "$tmp/b3f.log"; fi
NO_RATCHET=1 "$PY" "$RPEER" send "$tmp/RB" "$DB" b4 20 >"$tmp/b4.log" 2>&1
stop_serve
# the packet arrived and was refused: counted in decrypt_failed (b2 and b3 delivered before it)
if grep -q "sent ratchet=none proved=no" "$tmp/b4.log" && ! grep -q "^rx b4 " "$tmp/nb2.log" &&
   grep -q "^stats delivered=2 decrypt_failed=1\$" "$tmp/nb2.log"; then
  ok "B4 enforcement: a packet to rnsc's identity key arrives and is refused (no proof, not delivered)"
else bad "B4 enforcement" "$tmp/b4.log" "$tmp/nb2.log"; fi
echo "ratchet interop: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -eq 11 ]
