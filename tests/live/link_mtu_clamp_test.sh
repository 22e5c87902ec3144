#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Link MTU clamping on a real path (issue 5: "links through one or more transport nodes,
# including MTU clamping on the way"), live against the reference. The path is
#   initiator --TCP--> transport node --TCP (bitrate = 1500000)--> responder
# where the transport node is an `rnsc daemon` (enable_transport) and then the reference's
# rnsd. Both read an interface's `bitrate` option (when >= 5) and autoconfigure HW_MTU from
# it (the reference's Interface.optimise_mtu tiers): the initiator's side keeps the TCP
# guess of 10 Mbit/s, so HW_MTU 16384, while the responder's side, a TCPServerInterface
# with bitrate = 1500000, gets HW_MTU 2048, and its spawned connections inherit it. The
# initiator signals 16384 in its link request; the node forwarding it clamps the signalled
# MTU to min(next-hop HW_MTU, previous-hop HW_MTU) = 2048 (Transport.py, LINKREQUEST
# forwarding), the responder (HW_MTU 16384 on its own TCP client) keeps 2048 and proves it,
# so both ends must run the link at MTU 2048, MDU 1967 (Link.update_mdu: floor((2048 - 1 -
# 19 - 48) / 16) * 16 - 1). Through rnsd the reference-only pairing (reference to reference)
# is the baseline that gives these values; every pairing must match it.
# Second path, the other branch of the same rule: the responder's hop is a UDPInterface
# (one per pairing, its own ports), which neither autoconfigures nor fixes its MTU, so the
# node strips the MTU signalling from the forwarded link request and the link falls back to
# Reticulum.MTU: MTU 500, MDU 431 at both ends.
# Checked per pairing: the link establishes, both ends report the expected MTU and MDU, and
# N packets of MDU, MDU-1 and MDU-2 bytes are delivered, proved and echoed back byte-exact
# (tests/live/link_node_peer and tests/live/link_ref_peer.py with PEER_MDU=1); per node, its log
# shows one clamp (tcp) or one stripped signalling (udp) per link request (rnsd at
# LOG_PATHING, rnsc at debug). All four pairings through the rnsc node and through rnsd
# (there the reference pair is the baseline). Pairings on one node run concurrently, every
# wait is bounded. Measured: 17-18 s on the shared 2-core machine.
set -u
. "$(dirname "$0")/../common/lib.sh"
PEER="$S/tests/live/link_ref_peer.py"
NPEER="$B/tests/live/link_node_peer"
[ -x "$NPEER" ] || { echo "FAIL $NPEER is not built"; exit 1; }
N=${CLAMP_N:-6}
BITRATE=1500000 # the reference's tier: >= 1 Mbit/s and < 2 Mbit/s gives HW_MTU 2048
WANT_MTU=2048
WANT_MDU=1967

if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL the reference (RNS) does not import with $PY (make venv)"; exit 1
fi
[ -x "$VENV/bin/rnsd" ] || { echo "FAIL the reference's rnsd is not in $VENV/bin"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-mtu-clamp.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.3
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT

wait_for() { # wait_for SECONDS COMMAND...: polls every 0.2 s
  local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done
  return 1
}
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }
alive() { kill -0 "$1" 2>/dev/null; }
free_ports() {
  "$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])'
}
peer_cmd() { if [ "$1" = ref ]; then echo "$PY $PEER"; else echo "$NPEER"; fi; }
client_config() { # client_config DIR PORT: a TCP client of the node (default bitrate)
  mkdir -p "$1"
  printf '[reticulum]\n  enable_transport = no\n  share_instance = no\n[logging]\n  loglevel = 3\n[interfaces]\n  [[To node]]\n    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %s\n' "$2" >"$1/config"
}

udp_config() { # udp_config DIR LISTEN_PORT FORWARD_PORT: the responder on a UDP hop
  mkdir -p "$1"
  printf '[reticulum]\n  enable_transport = no\n  share_instance = no\n[logging]\n  loglevel = 3\n[interfaces]\n  [[UDP to node]]\n    type = UDPInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n    forward_ip = 127.0.0.1\n    forward_port = %s\n' "$2" "$3" >"$1/config"
}

run_pair() { # run_pair NODE HOP CLIENT SERVER PA PB: prints ok/FAIL lines only
  # HOP tcp: PB is the node's narrow TCP server; udp: PB is NODEPORT:RESPONDERPORT
  local node=$1 hop=$2 ck=$3 sk=$4 pa=$5 pb=$6 tag="$3-to-$4-via-$1-$2"
  local sd="$tmp/S_$tag" cd="$tmp/C_$tag"
  local want_mtu=$WANT_MTU want_mdu=$WANT_MDU
  if [ "$hop" = udp ]; then
    udp_config "$sd" "${pb#*:}" "${pb%%:*}"; want_mtu=500; want_mdu=431
  else
    client_config "$sd" "$pb"
  fi
  client_config "$cd" "$pa"
  PEER_MDU=1 $(peer_cmd "$sk") serve "$sd" "$N" 55 >"$sd.out" 2>"$sd.err" &
  local sp=$!
  echo "$sp" >"$sd.pid"
  dest_line() { grep -qs '^dest ' "$sd.out"; }
  if ! wait_for 25 dest_line; then
    bad "$tag: the $sk responder did not start" "$sd.out" "$sd.err"; return
  fi
  local dest; dest=$(sed -n 's/^dest //p' "$sd.out" | head -1)
  PEER_MDU=1 timeout 50 $(peer_cmd "$ck") connect "$cd" "$dest" "$N" 45 >"$cd.out" 2>"$cd.err"
  local rc=$?
  local line; line=$(grep '^client sent' "$cd.out" | tail -1)
  if [ $rc = 0 ]; then ok "$tag: $line"
  else bad "$tag: link through the $node node (rc=$rc): ${line:-no result}" "$cd.out" "$cd.err" "$sd.out" "$sd.err"; fi
  srv_done() { ! alive "$sp"; }
  if wait_for 15 srv_done; then
    wait "$sp"; local src=$?
    local sline; sline=$(grep '^server rx' "$sd.out" | tail -1)
    local cbytes; cbytes=$(sed -n 's/.* bytes=\([0-9]*\) .*/\1/p' <<<"$line")
    if [ $src = 0 ] && [ "$sline" = "server rx=$N bytes=$cbytes" ]; then
      ok "$tag: responder got every MDU-sized packet and the close: $sline"
    else bad "$tag: responder accounting (rc=$src): $sline" "$sd.out" "$sd.err"; fi
  else
    bad "$tag: the responder did not see the link close" "$sd.out" "$sd.err"
  fi
  local cl smtu smdu cmtu cmdu
  cl=$(grep '^client link ' "$cd.out" | head -1)
  cmtu=$(sed -n 's/.*mtu=\([0-9]*\).*/\1/p' <<<"$cl"); cmdu=$(sed -n 's/.*mdu=\([0-9]*\).*/\1/p' <<<"$cl")
  smtu=$(grep -o 'server link up mtu=[0-9]*' "$sd.out" | head -1 | sed 's/.*=//')
  smdu=$(grep -o 'server link mdu=[0-9]*' "$sd.out" | head -1 | sed 's/.*=//')
  if [ "$cmtu" = "$want_mtu" ] && [ "$smtu" = "$want_mtu" ] && [ "$cmdu" = "$want_mdu" ] &&
     [ "$smdu" = "$want_mdu" ]; then
    ok "$tag: both ends run the link clamped to MTU $cmtu, MDU $cmdu"
  else
    bad "$tag: link MTU/MDU initiator '$cmtu'/'$cmdu' responder '$smtu'/'$smdu', want $want_mtu/$want_mdu" "$cd.out" "$sd.out"
  fi
}

run_node() { # run_node rnsc|ref tcp|udp PAIRS...
  local node=$1 hop=$2; shift 2
  local pa pb; read -r pa pb < <(free_ports)
  local dir="$tmp/N_$node-$hop"
  mkdir -p "$dir"
  # Initiator side: a plain TCP server (10 Mbit/s guess, HW_MTU 16384). Responder side (tcp):
  # the configured bitrate makes HW_MTU 2048 on it and on every connection it spawns; (udp)
  # one UDPInterface per pairing, each with its own pair of ports.
  { printf '[reticulum]\n  enable_transport = yes\n  share_instance = no\n  respond_to_probes = no\n[logging]\n  loglevel = %s\n[interfaces]\n  [[Initiator side]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n' \
      "$([ "$node" = rnsc ] && echo 6 || echo 7)" "$pa"
    if [ "$hop" = tcp ]; then
      printf '  [[Narrow side]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n    bitrate = %s\n' "$pb" "$BITRATE"
    fi
  } >"$dir/config"
  local udp=() k=0 pair
  if [ "$hop" = udp ]; then
    read -r -a udp < <("$PY" -c '
import socket, sys
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2 * int(sys.argv[1]))]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])' $#)
    for pair in "$@"; do
      printf '  [[UDP %s]]\n    type = UDPInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n    forward_ip = 127.0.0.1\n    forward_port = %s\n' \
        "$k" "${udp[2*k]}" "${udp[2*k+1]}" >>"$dir/config"
      k=$((k+1))
    done
  fi
  if [ "$node" = rnsc ]; then "$RNSC" daemon --config "$dir" >"$dir.log" 2>&1 &
  else "$VENV/bin/rnsd" --config "$dir" >"$dir.log" 2>&1 & fi
  local np=$!; pids+=("$np")
  if wait_for 30 port_open "$pa" && { [ "$hop" = udp ] || wait_for 10 port_open "$pb"; }; then
    if [ "$hop" = tcp ]; then ok "$node transport node listens on $pa (HW_MTU 16384) and $pb (bitrate $BITRATE)"
    else ok "$node transport node listens on $pa (HW_MTU 16384) and on UDP ports ${udp[*]}"; fi
  else
    bad "the $node transport node did not start" "$dir.log"; kill "$np" 2>/dev/null; return
  fi
  local rp=()
  k=0
  for pair in "$@"; do
    local hp=$pb
    [ "$hop" = udp ] && hp="${udp[2*k]}:${udp[2*k+1]}"
    run_pair "$node" "$hop" ${pair/:/ } "$pa" "$hp" >"$tmp/res_${node}_${hop}_${pair/:/_}" 2>&1 &
    rp+=($!); pids+=($!)
    k=$((k+1))
  done
  for p in "${rp[@]}"; do wait "$p"; done
  for pair in "$@"; do
    local f="$tmp/res_${node}_${hop}_${pair/:/_}"
    cat "$f"
    pass=$((pass + $(grep -c '^ok ' "$f"))); fail=$((fail + $(grep -c '^FAIL ' "$f")))
  done
  # the node says what it did to each link request (rnsd at LOG_PATHING, rnsc at debug)
  local c s
  if [ "$node" = ref ]; then
    c=$(grep -c 'Clamping link MTU to 2.05 KB' "$dir.log")
    s=$(grep -c "doesn't support MTU autoconfiguration, disabling link MTU upgrade" "$dir.log")
  else
    c=$(grep -c 'link request: link MTU clamped from 16384 to 2048' "$dir.log")
    s=$(grep -c 'link request: no MTU autoconfiguration on the next hop, MTU signalling removed' "$dir.log")
  fi
  if { [ "$hop" = tcp ] && [ "$c" = $# ] && [ "$s" = 0 ]; } ||
     { [ "$hop" = udp ] && [ "$c" = 0 ] && [ "$s" = $# ]; }; then
    ok "the $node node logged $c clamps to 2048 and $s stripped MTU signallings for $# link requests"
  else bad "the $node node logged $c clamps and $s strips for $# link requests" "$dir.log"; fi
  if alive "$np"; then ok "$node transport node still running"
  else bad "the $node transport node died" "$dir.log"; fi
  kill "$np" 2>/dev/null
  wait_for 10 eval '! alive '"$np" || kill -9 "$np" 2>/dev/null
}

t0=$SECONDS
rnsc_pairs=${CLAMP_RNSC_PAIRS:-rnsc:rnsc ref:rnsc rnsc:ref ref:ref} # CLIENT:SERVER
ref_pairs=${CLAMP_REF_PAIRS:-ref:ref rnsc:rnsc ref:rnsc rnsc:ref}
run_node rnsc tcp $rnsc_pairs
run_node ref tcp $ref_pairs
run_node rnsc udp $rnsc_pairs
run_node ref udp $ref_pairs
echo "# $pass passed, $fail failed in $((SECONDS - t0)) s"
[ $fail = 0 ]
