#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Library completeness live with the reference (issue 29 item 5), over TCP on 127.0.0.1:
#  1. rnsc serves SINGLE rnsclt.app (PROVE_APP, default app data), GROUP rnsclt.group and
#     PLAIN rnsclt.plain; the reference (tests/live/dest_ref_peer.py) sees the default app data in
#     rnsc's path response, gets a proof only for the packet rnsc's callback accepts, reaches
#     the GROUP destination with the same Token key and the PLAIN one, and after "bye" (rnsc
#     deregisters rnsclt.app) its packets are not delivered and its path requests unanswered.
#  2. The reference serves GROUP and PLAIN; rnsc sends to both (same hashes on both sides).
set -u
. "$(dirname "$0")/../common/lib.sh"
RPEER="$S/tests/live/dest_ref_peer.py"
NPEER="$B/tests/live/dest_node_peer"
[ -x "$NPEER" ] || { echo "FAIL $NPEER is not built"; exit 1; }
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -20 "$f" | sed 's/^/     /'; done; }
if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL the reference (RNS) does not import with $PY (make venv)"; exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-dest-test.XXXXXX")
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
KEY=$("$PY" -c 'import os; print(os.urandom(64).hex())')
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
has() { grep -qx -- "$1" "$2"; }

# ---- 1: rnsc serves, the reference sends ----
conf "$tmp/N1" server "$PA"; conf "$tmp/R1" client "$PA"
"$NPEER" serve "$tmp/N1" "$KEY" 120 >"$tmp/n1.log" 2>&1 &
spid=$!; pids+=("$spid")
if ! wait_for 20 grep -q '^dest plain ' "$tmp/n1.log" || ! wait_for 15 port_open "$PA"; then
  bad "1: rnsc did not start" "$tmp/n1.log"; exit 1
fi
APP=$(sed -n 's/^dest app //p' "$tmp/n1.log")
timeout 90 "$PY" "$RPEER" send "$tmp/R1" "$KEY" "$APP" >"$tmp/r1.log" 2>&1
sleep 0.5
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
if has "app_data=dflt-rnsc" "$tmp/r1.log"; then ok "1 rnsc's path response carries its default app data"
else bad "1 default app data in the path response" "$tmp/r1.log"; fi
if has "proof prove-1=yes" "$tmp/r1.log" && has "proof skip-1=no" "$tmp/r1.log" &&
   has "rx app prove-1" "$tmp/n1.log" && has "rx app skip-1" "$tmp/n1.log"; then
  ok "1 PROVE_APP: both delivered, only the packet rnsc's callback accepted was proved"
else bad "1 PROVE_APP" "$tmp/r1.log" "$tmp/n1.log"; fi
if [ "$(sed -n 's/^dest group //p' "$tmp/r1.log")" = "$(sed -n 's/^dest group //p' "$tmp/n1.log")" ] &&
   [ "$(sed -n 's/^dest plain //p' "$tmp/r1.log")" = "$(sed -n 's/^dest plain //p' "$tmp/n1.log")" ] &&
   has "rx group g-ref" "$tmp/n1.log" && has "rx plain p-ref" "$tmp/n1.log"; then
  ok "1 GROUP (same Token key) and PLAIN packets from the reference delivered by rnsc"
else bad "1 GROUP/PLAIN from the reference" "$tmp/r1.log" "$tmp/n1.log"; fi
if has "removed app" "$tmp/n1.log" && ! grep -q "^rx app after-bye" "$tmp/n1.log" &&
   has "path after removal=no" "$tmp/r1.log"; then
  ok "1 deregistered: later packets not delivered, path requests not answered"
else bad "1 deregistration" "$tmp/r1.log" "$tmp/n1.log"; fi

# ---- 2: the reference serves, rnsc sends ----
conf "$tmp/R2" server "$PB"; conf "$tmp/N2" client "$PB"
"$PY" "$RPEER" serve "$tmp/R2" "$KEY" 60 >"$tmp/r2.log" 2>&1 &
spid=$!; pids+=("$spid")
if ! wait_for 20 grep -q '^dest plain ' "$tmp/r2.log" || ! wait_for 15 port_open "$PB"; then
  bad "2: the reference did not start" "$tmp/r2.log"; exit 1
fi
timeout 60 "$NPEER" send "$tmp/N2" "$KEY" >"$tmp/n2.log" 2>&1
wait_for 10 grep -q '^rx plain p-rnsc' "$tmp/r2.log"
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
if [ "$(sed -n 's/^dest group //p' "$tmp/r2.log")" = "$(sed -n 's/^dest group //p' "$tmp/n2.log")" ] &&
   has "rx group g-rnsc" "$tmp/r2.log" && has "rx plain p-rnsc" "$tmp/r2.log"; then
  ok "2 rnsc's GROUP (Token) and PLAIN packets delivered by the reference"
else bad "2 GROUP/PLAIN from rnsc" "$tmp/n2.log" "$tmp/r2.log"; fi
echo "dest interop: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -eq 5 ]
