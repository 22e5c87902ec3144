#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Links live through an rnsc transport node, in all four pairings: link peers on the
# reference (tests/live/link_ref_peer.py on the pinned RNS) and on an rnsc node
# (tests/live/link_node_peer), each with its own config folder and no shared instance, connect
# over TCP to `rnsc daemon` (enable_transport). The client requests a path to the server's
# destination, opens a link through the daemon (LINKREQUEST in transport, link table entry,
# LRPROOF checked and sent back, link MTU clamped) and sends 40 packets of 60..420 bytes
# with receipts, at most 16 unproved at a time; the server proves each and echoes it back.
# Then directly (the server's own TCPServerInterface, no transport node): reference client to
# rnsc server and rnsc client to reference server. Checked per pairing: sent = proved = echoed, bytes equal both ways, the server saw every
# packet and the link close, both ends agree on the link MTU. Every wait is bounded; a
# reference that cannot start fails the test.
set -u
. "$(dirname "$0")/../common/lib.sh"
PEER="$S/tests/live/link_ref_peer.py"
NPEER="$B/tests/live/link_node_peer"
[ -x "$NPEER" ] || { echo "FAIL $NPEER is not built"; exit 1; }
N=40

if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL the reference (RNS) does not import with $PY (make venv)"; exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-link-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT

read -r P1 P2 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

wait_for() { # wait_for SECONDS COMMAND...: polls every 0.2 s
  local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done
  return 1
}
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }
alive() { kill -0 "$1" 2>/dev/null; }

mkdir -p "$tmp/T"
cat >"$tmp/T/config" <<EOT
[reticulum]
  enable_transport = yes
  share_instance = no
  respond_to_probes = no
[logging]
  loglevel = 7
[interfaces]
  [[rnsc Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P1
EOT
peer_config() { # peer_config DIR [server]: a TCP client of the daemon, or a TCP server on P2
mkdir -p "$1"
if [ "${2:-}" = server ]; then
cat >"$1/config" <<EOT
[reticulum]
  enable_transport = no
  share_instance = no
[logging]
  loglevel = 3
[interfaces]
  [[Direct Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P2
EOT
return
fi
if [ "${2:-}" = direct ]; then
cat >"$1/config" <<EOT
[reticulum]
  enable_transport = no
  share_instance = no
[logging]
  loglevel = 3
[interfaces]
  [[Direct]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P2
EOT
return
fi
cat >"$1/config" <<EOT
[reticulum]
  enable_transport = no
  share_instance = no
[logging]
  loglevel = 3
[interfaces]
  [[To rnsc]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P1
EOT
}
peer_cmd() { # peer_cmd KIND: the command line of a peer
  if [ "$1" = ref ]; then echo "$PY $PEER"; else echo "$NPEER"; fi
}

"$RNSC" daemon --config "$tmp/T" >"$tmp/T.log" 2>&1 &
TP=$!; pids+=("$TP")
if wait_for 20 port_open "$P1"; then ok "rnsc daemon listens on $P1"
else bad "rnsc daemon did not start" "$tmp/T.log"; echo "# $pass passed, $fail failed"; exit 1; fi

run_pair() { # run_pair CLIENT_KIND SERVER_KIND [direct]
  local ck=$1 sk=$2 tag="$1-to-$2${3:+-$3}"
  local sd="$tmp/S_$tag" cd="$tmp/C_$tag"
  if [ -n "${3:-}" ]; then peer_config "$sd" server; peer_config "$cd" direct
  else peer_config "$sd"; peer_config "$cd"; fi
  $(peer_cmd "$sk") serve "$sd" "$N" 90 >"$sd.out" 2>"$sd.err" &
  local sp=$!; pids+=("$sp")
  dest_line() { grep -qs '^dest ' "$sd.out"; }
  if ! wait_for 30 dest_line; then
    bad "$tag: the $sk server did not start" "$sd.out" "$sd.err"; return
  fi
  local dest; dest=$(sed -n 's/^dest //p' "$sd.out" | head -1)
  rnsc_has_path() { grep -qs "path to <$dest>" "$tmp/T.log"; }
  if [ -n "${3:-}" ]; then
    wait_for 20 port_open "$P2" || bad "$tag: the $sk server does not listen on $P2" "$sd.out" "$sd.err"
  elif wait_for 20 rnsc_has_path; then ok "$tag: rnsc daemon learned the path to <$dest>"
  else bad "$tag: the server's announce did not reach the rnsc daemon" "$tmp/T.log"; fi
  timeout 80 $(peer_cmd "$ck") connect "$cd" "$dest" "$N" 60 >"$cd.out" 2>"$cd.err"; local rc=$?
  local line; line=$(grep '^client ' "$cd.out" | tail -1)
  if [ $rc = 0 ]; then ok "$tag: $line"
  else bad "$tag: link through the rnsc daemon (rc=$rc): $line" "$cd.out" "$cd.err" "$sd.out" "$sd.err"; fi
  srv_done() { ! alive "$sp"; }
  if wait_for 20 srv_done; then
    wait "$sp"; local src=$?
    local sline; sline=$(grep '^server rx' "$sd.out" | tail -1)
    local cbytes; cbytes=$(sed -n 's/.* bytes=\([0-9]*\) .*/\1/p' <<<"$line")
    if [ $src = 0 ] && [ "$sline" = "server rx=$N bytes=$cbytes" ]; then
      ok "$tag: server saw every packet and the link close: $sline"
    else
      bad "$tag: server accounting (rc=$src): $sline" "$sd.out" "$sd.err"
    fi
  else
    bad "$tag: the server did not see the link close" "$sd.out" "$sd.err"
  fi
  local smtu cmtu
  smtu=$(grep -o 'server link up mtu=[0-9]*' "$sd.out" | head -1 | sed 's/.*=//')
  cmtu=$(grep -o 'mtu=[0-9]*' <<<"$line" | sed 's/.*=//')
  if [ -n "$smtu" ] && [ "$smtu" = "$cmtu" ]; then ok "$tag: both ends run the link at MTU $smtu"
  else bad "$tag: link MTU server '$smtu' client '$cmtu'" "$sd.out"; fi
}

for pair in "ref ref" "ref rnsc" "rnsc ref" "rnsc rnsc"; do
  run_pair $pair
done
# Directly between an rnsc node and the reference (no transport node): the server listens.
run_pair ref rnsc direct
run_pair rnsc ref direct
if alive "$TP"; then ok "rnsc daemon still running"; else bad "rnsc daemon died" "$tmp/T.log"; fi
kill "$TP" 2>/dev/null
echo "# $pass passed, $fail failed"
[ $fail = 0 ]
