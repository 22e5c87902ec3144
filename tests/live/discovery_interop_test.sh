#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Discovery (recursive) path requests, live against the reference. The path is
#   A (reference) --TCP--> T (transport node) <--TCP-- B (reference)
# where T's interface towards A is in mode `gateway` (in Interface.DISCOVER_PATHS_FOR) and
# B owns a destination it never announces, so T cannot know it. A requests a path once:
# T, not knowing the destination, passes the request on to B with A's tag and its own
# transport id, B answers with a path response, and T answers A at once with a path
# response from itself: A gets the path, 2 hops via T. T is an `rnsc daemon`, then the
# reference's rnsd (the baseline proving the topology); the node's log must show the
# discovery. Every wait is bounded; a reference that does not start fails the test.
set -u
. "$(dirname "$0")/../common/lib.sh"
PEER="$S/tests/live/discovery_ref_peer.py"

if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL the reference (RNS) does not import with $PY (make venv)"; exit 1
fi
[ -x "$VENV/bin/rnsd" ] || { echo "FAIL the reference's rnsd is not in $VENV/bin"; exit 1; }
[ -x "$RNSC" ] || { echo "FAIL $RNSC is not built"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-discovery.XXXXXX")
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
client_config() { # client_config DIR PORT
  mkdir -p "$1"
  printf '[reticulum]\n  enable_transport = no\n  share_instance = no\n[logging]\n  loglevel = 3\n[interfaces]\n  [[To node]]\n    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %s\n' "$2" >"$1/config"
}

run_node() { # run_node rnsc|ref
  local node=$1 pa pb
  read -r pa pb < <(free_ports)
  local dir="$tmp/T_$node"
  mkdir -p "$dir"
  printf '[reticulum]\n  enable_transport = yes\n  share_instance = no\n  respond_to_probes = no\n[logging]\n  loglevel = %s\n[interfaces]\n  [[A side]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n    mode = gateway\n  [[B side]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n' \
    "$([ "$node" = rnsc ] && echo 6 || echo 7)" "$pa" "$pb" >"$dir/config"
  if [ "$node" = rnsc ]; then "$RNSC" daemon --config "$dir" >"$dir.log" 2>&1 &
  else "$VENV/bin/rnsd" --config "$dir" >"$dir.log" 2>&1 & fi
  local np=$!; pids+=("$np")
  if wait_for 30 port_open "$pa" && wait_for 10 port_open "$pb"; then
    ok "$node transport node listens on $pa (gateway, towards A) and $pb (towards B)"
  else
    bad "the $node transport node did not start" "$dir.log"; kill "$np" 2>/dev/null; return
  fi
  local bd="$tmp/B_$node" ad="$tmp/A_$node"
  client_config "$bd" "$pb"
  client_config "$ad" "$pa"
  "$PY" "$PEER" serve "$bd" 60 >"$bd.out" 2>"$bd.err" &
  local bp=$!; pids+=("$bp")
  dest_line() { grep -qs '^dest ' "$bd.out"; }
  if ! wait_for 30 dest_line; then
    bad "the reference owner B (behind the $node node) did not start" "$bd.out" "$bd.err" "$dir.log"
    kill "$bp" 2>/dev/null; kill "$np" 2>/dev/null; return
  fi
  local dest; dest=$(sed -n 's/^dest //p' "$bd.out" | head -1)
  ok "B owns $dest (never announced)"
  sleep 1 # B's connection is registered on the node
  timeout 40 "$PY" "$PEER" ask "$ad" "$dest" 25 >"$ad.out" 2>"$ad.err"
  local rc=$? line; line=$(head -1 "$ad.out")
  if [ $rc = 0 ] && grep -q '^path hops=2 via=' "$ad.out" && ! grep -q "via=$dest" "$ad.out"; then
    ok "A got the path through the $node node's recursive request: $line"
  else
    bad "A did not get the path through the $node node (rc=$rc): ${line:-nothing}" "$ad.out" "$ad.err" "$dir.log"
  fi
  local pat
  if [ "$node" = ref ]; then pat='Attempting to discover unknown path'
  else pat='discovering an unknown path on behalf of a request'; fi
  local nd; nd=$(grep -c "$pat" "$dir.log")
  if [ "$nd" -ge 1 ]; then ok "the $node node logged the discovery ($nd)"
  else bad "the $node node did not log a discovery" "$dir.log"; fi
  if alive "$np"; then ok "$node transport node still running"
  else bad "the $node transport node died" "$dir.log"; fi
  kill "$bp" "$np" 2>/dev/null
  wait_for 10 eval '! alive '"$np" || kill -9 "$np" 2>/dev/null
  wait_for 5 eval '! alive '"$bp" || kill -9 "$bp" 2>/dev/null
}

t0=$SECONDS
run_node ref
run_node rnsc
echo "# $pass passed, $fail failed in $((SECONDS - t0)) s"
[ $fail = 0 ]
