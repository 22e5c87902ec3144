#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Tunnels (Transport.synthesize_tunnel / handle_tunnel), live against the pinned reference,
# over TCP on 127.0.0.1 with ports picked at runtime:
#  A. restoring paths. A reference program (tests' peer below, a TCPClientInterface, its
#     transport identity kept in its config folder: a routing node, see client_cfg) connects to a transport node S, which
#     learns the path to the program's destination through the tunnel the client
#     synthesized on connect. The program exits: S drops the path with the gone interface.
#     The program comes back without announcing: the same tunnel on the new connection
#     brings the path back into S's table (rnpath -t over S's shared instance). S is an
#     rnsc daemon, and rnsd as the baseline that shows the procedure itself is right.
#  B. synthesizing. An rnsc daemon's TCPClientInterface connects to a reference TCP server
#     (peer below): the reference files exactly one tunnel whose id is SHA-256(rnsc's
#     transport public key | SHA-256("TCPInterface[<name>/127.0.0.1:<port>]")), i.e. the
#     signature checked and the bytes as the reference builds them; after the daemon
#     restarts, the same id shows up again on the new connection.
# Every wait is bounded; processes are cleaned up; a reference that cannot start fails.
set -u
. "$(dirname "$0")/../common/lib.sh"
export PYTHONUNBUFFERED=1
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -20 "$f" | sed 's/^/     /'; done; }

for tool in rnsd rnpath; do
  [ -x "$VENV/bin/$tool" ] || { echo "FAIL the reference's $tool is not in $VENV/bin (make venv)"; exit 1; }
done
[ -x "$RNSC" ] || { echo "FAIL $RNSC is not built"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-tunnel-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT

wait_for() { local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.3; done; return 1; }
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }
read -r PS PR PB < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

cat >"$tmp/peer.py" <<'EOT'
import os, sys, time
import RNS
mode, cfg, hold = sys.argv[1], sys.argv[2], float(sys.argv[3])
RNS.Reticulum(configdir=cfg, loglevel=2)
if mode in ("announce", "quiet"):
    # a program behind a TCP client; its destination's identity is kept next to its config
    idf = os.path.join(cfg, "app_identity")
    ident = RNS.Identity.from_file(idf) if os.path.isfile(idf) else RNS.Identity()
    ident.to_file(idf)
    d = RNS.Destination(ident, RNS.Destination.IN, RNS.Destination.SINGLE, "rnsctest", "tunnel")
    print("dest", d.hash.hex(), flush=True)
    if mode == "announce":
        time.sleep(1)
        d.announce()
    print("ready", flush=True)
    time.sleep(hold)
else:
    # a reference TCP server: every tunnel and the interface object it is on, as they change
    end, seen = time.time() + hold, set()
    print("ready", flush=True)
    while time.time() < end:
        for tid, e in list(RNS.Transport.tunnels.items()):
            key = (tid, id(e[1]) if e[1] is not None else 0)
            if key not in seen:
                seen.add(key)
                print("tunnel", tid.hex(), key[1], len(e[2]), flush=True)
        time.sleep(0.1)
os._exit(0)
EOT

# Clients route (enable_transport): the reference gives a node that does not a new
# transport identity on every start, and with it a new tunnel id, so nothing is restored.
client_cfg() { # client_cfg DIR PORT NAME
  mkdir -p "$1"
  printf '[reticulum]\n  enable_transport = yes\n  share_instance = no\n[logging]\n  loglevel = 4\n[interfaces]\n  [[%s]]\n    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %s\n' "$3" "$2" >"$1/config"
}
server_cfg() { # server_cfg DIR PORT SHARE(yes|no)
  mkdir -p "$1"
  printf '[reticulum]\n  enable_transport = yes\n  share_instance = %s\n  instance_name = rnsctnl%s%s\n[logging]\n  loglevel = 6\n[interfaces]\n  [[Tunnel Server]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n' "$3" "$$" "$2" "$2" >"$1/config"
}

# ---- A: restoring paths, rnsc daemon and rnsd as the node ------------------------------------
for who in rnsc ref; do
  port=$([ $who = rnsc ] && echo $PS || echo $PR)
  S="$tmp/S_$who" P="$tmp/P_$who"
  server_cfg "$S" "$port" yes; client_cfg "$P" "$port" "Tunnel Client"
  if [ $who = rnsc ]; then "$RNSC" daemon --config "$S" >"$S/out" 2>&1 & else "$VENV/bin/rnsd" --config "$S" >"$S/out" 2>&1 & fi
  spid=$!; pids+=($spid)
  if ! wait_for 30 port_open "$port"; then bad "$who node: TCP server on $port did not open" "$S/out"; continue; fi
  table_has() { timeout 20 "$VENV/bin/rnpath" --config "$S" -t >"$S/table" 2>&1 && grep -qs "<$1> is 1 hop" "$S/table"; }
  timeout 60 "$PY" "$tmp/peer.py" announce "$P" 4 >"$P/run1" 2>&1; rc=$?
  D=$(sed -n 's/^dest //p' "$P/run1")
  if [ $rc != 0 ] || [ -z "$D" ]; then bad "$who: the reference program did not run (rc $rc)" "$P/run1"; continue; fi
  # the program has gone: the path through its interface is culled with it
  if wait_for 5 table_has "$D"; then seen=yes; else seen=no; fi
  wait_for 25 eval '! table_has "$D"'; gone=$?
  "$PY" "$tmp/peer.py" quiet "$P" 10 >"$P/run2" 2>&1 & qpid=$!; pids+=($qpid)
  if [ $gone = 0 ] && wait_for 12 table_has "$D"; then
    ok "$who node: path to <$D> learnt through the tunnel (listed after the announce: $seen), dropped when the client left, restored when the same tunnel came back without an announce"
  else
    bad "$who node: path to <$D> not restored (dropped: $([ $gone = 0 ] && echo yes || echo no))" "$S/table" "$S/out" "$P/run2"
  fi
  if [ $who = rnsc ]; then
    grep -qE "tunnel endpoint reappeared on interface [0-9]+: 1 paths restored, 0 dropped" "$S/out" &&
      ok "rnsc node: its log shows the tunnel come back and its one path restored" ||
      bad "rnsc node: no tunnel restoration in its log" "$S/out"
  fi
  kill $qpid 2>/dev/null; wait $qpid 2>/dev/null
  kill -0 $spid 2>/dev/null && ok "$who node still running" || bad "$who node died" "$S/out"
  kill $spid 2>/dev/null; wait $spid 2>/dev/null
done

# ---- B: an rnsc client's synthesis, checked by the reference ---------------------------------
R="$tmp/R" C="$tmp/C"
server_cfg "$R" "$PB" no
timeout 120 "$PY" "$tmp/peer.py" server "$R" 100 >"$R/peer.out" 2>&1 & rpid=$!; pids+=($rpid)
if ! wait_for 30 grep -qs ready "$R/peer.out" || ! wait_for 10 port_open "$PB"; then
  bad "the reference TCP server did not start" "$R/peer.out"; echo "# $pass passed, $((fail)) failed"; exit 1
fi
client_cfg "$C" "$PB" "Tunnel Client"
sed -i 's/loglevel = 4/loglevel = 6/' "$C/config"
"$RNSC" daemon --config "$C" >"$C/out1" 2>&1 & cpid=$!; pids+=($cpid)
wait_for 20 test -s "$C/storage/transport_identity"
want=$("$PY" -c '
import sys, RNS
i = RNS.Identity.from_file(sys.argv[1])
ih = RNS.Identity.full_hash(("TCPInterface[Tunnel Client/127.0.0.1:%s]" % sys.argv[2]).encode())
print(RNS.Identity.full_hash(i.get_public_key() + ih).hex())' "$C/storage/transport_identity" "$PB" 2>"$C/want.err")
n_want() { [ "$(grep -c "^tunnel $want " "$R/peer.out")" -ge "$1" ]; }
if [ -n "$want" ] && wait_for 15 n_want 1 && [ "$(grep -c '^tunnel ' "$R/peer.out")" = 1 ]; then
  ok "rnsc client's tunnel accepted by the reference under the id it computes itself: $want"
else
  bad "reference did not file the rnsc client's tunnel (want '$want')" "$R/peer.out" "$C/out1" "$C/want.err"
fi
kill $cpid 2>/dev/null; wait $cpid 2>/dev/null
"$RNSC" daemon --config "$C" >"$C/out2" 2>&1 & cpid=$!; pids+=($cpid)
if wait_for 20 n_want 2; then
  ok "after the rnsc daemon restarted, the same tunnel id came back on the new connection"
else
  bad "the rnsc client's tunnel did not reappear" "$R/peer.out" "$C/out2"
fi
kill $cpid 2>/dev/null; wait $cpid 2>/dev/null
kill -0 $rpid 2>/dev/null && ok "reference server still running" || bad "reference server died" "$R/peer.out"

echo "# $pass passed, $fail failed"
[ $fail = 0 ]
