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
# Checked per pairing: the link establishes, both ends report MTU 2048 and MDU 1967, and N
# packets of MDU, MDU-1 and MDU-2 bytes are delivered, proved and echoed back byte-exact
# (tests/link_node_peer and tests/link_ref_peer.py with PEER_MDU=1). All four pairings
# through the rnsc node; through rnsd all four too (the rnsc endpoints being the point, the
# reference pair the baseline). Pairings on one node run concurrently, every wait bounded.
set -u
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
S=${RNSC_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
RNSC="$B/src/cli/rnsc"
VENV=${RNSC_VENV:-$B/.venv}
PY=$VENV/bin/python
PEER="$S/tests/link_ref_peer.py"
NPEER="$B/tests/link_node_peer"
[ -x "$NPEER" ] || { echo "FAIL $NPEER is not built"; exit 1; }
N=${CLAMP_N:-6}
BITRATE=1500000 # the reference's tier: >= 1 Mbit/s and < 2 Mbit/s gives HW_MTU 2048
WANT_MTU=2048
WANT_MDU=1967
pass=0 fail=0
ok() { pass=$((pass+1)); echo "ok   $1"; }
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -25 "$f" | sed 's/^/     /'; done; }

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

run_pair() { # run_pair NODE CLIENT SERVER PA PB: prints ok/FAIL lines only
  local node=$1 ck=$2 sk=$3 pa=$4 pb=$5 tag="$2-to-$3-via-$1"
  local sd="$tmp/S_$tag" cd="$tmp/C_$tag"
  client_config "$sd" "$pb"; client_config "$cd" "$pa"
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
  if [ "$cmtu" = $WANT_MTU ] && [ "$smtu" = $WANT_MTU ] && [ "$cmdu" = $WANT_MDU ] &&
     [ "$smdu" = $WANT_MDU ]; then
    ok "$tag: both ends run the link clamped to MTU $cmtu, MDU $cmdu"
  else
    bad "$tag: link MTU/MDU initiator '$cmtu'/'$cmdu' responder '$smtu'/'$smdu', want $WANT_MTU/$WANT_MDU" "$cd.out" "$sd.out"
  fi
}

run_node() { # run_node rnsc|ref PAIRS...
  local node=$1; shift
  local pa pb; read -r pa pb < <(free_ports)
  local dir="$tmp/N_$node"
  mkdir -p "$dir"
  # Initiator side: a plain TCP server (10 Mbit/s guess, HW_MTU 16384). Responder side: the
  # configured bitrate makes HW_MTU 2048 on it and on every connection it spawns.
  printf '[reticulum]\n  enable_transport = yes\n  share_instance = no\n  respond_to_probes = no\n[logging]\n  loglevel = %s\n[interfaces]\n  [[Initiator side]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n  [[Narrow side]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n    bitrate = %s\n' \
    "$([ "$node" = rnsc ] && echo 6 || echo 7)" "$pa" "$pb" "$BITRATE" >"$dir/config"
  if [ "$node" = rnsc ]; then "$RNSC" daemon --config "$dir" >"$dir.log" 2>&1 &
  else "$VENV/bin/rnsd" --config "$dir" >"$dir.log" 2>&1 & fi
  local np=$!; pids+=("$np")
  if wait_for 30 port_open "$pa" && wait_for 10 port_open "$pb"; then
    ok "$node transport node listens on $pa (HW_MTU 16384) and $pb (bitrate $BITRATE)"
  else
    bad "the $node transport node did not start" "$dir.log"; kill "$np" 2>/dev/null; return
  fi
  local rp=() pair
  for pair in "$@"; do
    run_pair "$node" ${pair/:/ } "$pa" "$pb" >"$tmp/res_${node}_${pair/:/_}" 2>&1 &
    rp+=($!); pids+=($!)
  done
  for p in "${rp[@]}"; do wait "$p"; done
  for pair in "$@"; do
    local f="$tmp/res_${node}_${pair/:/_}"
    cat "$f"
    pass=$((pass + $(grep -c '^ok ' "$f"))); fail=$((fail + $(grep -c '^FAIL ' "$f")))
  done
  if alive "$np"; then ok "$node transport node still running"
  else bad "the $node transport node died" "$dir.log"; fi
  kill "$np" 2>/dev/null
  wait_for 10 eval '! alive '"$np" || kill -9 "$np" 2>/dev/null
}

t0=$SECONDS
rnsc_pairs=${CLAMP_RNSC_PAIRS:-rnsc:rnsc ref:rnsc rnsc:ref ref:ref} # CLIENT:SERVER
ref_pairs=${CLAMP_REF_PAIRS:-ref:ref rnsc:rnsc ref:rnsc rnsc:ref}
run_node rnsc $rnsc_pairs
run_node ref $ref_pairs
echo "# $pass passed, $fail failed in $((SECONDS - t0)) s"
[ $fail = 0 ]
