#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Live interop of `rnsc daemon` with the pinned reference's rnsd over the Backbone and UDP
# interfaces (tests/live/daemon_interop_test.sh covers TCP), real processes on 127.0.0.1. For
# each interface kind:
#   rnsd (A: transport, probes, shared instance)  <-- kind -->  rnsc daemon (B: transport, probes)
#   rnsd (A)  <-- kind -->  rnsc probe (C: its own in-process node)
# Checked: each side's probe announce lands in the other's path table (rnsc's log; the
# reference's rnpath -t over its shared instance); the reference's rnprobe reaches rnsc's
# probe destination; rnsc probe reaches the reference's, and rnsc's daemon through rnsd.
# Every wait is bounded; a reference that cannot start fails the test.
set -u
. "$(dirname "$0")/../common/lib.sh"
for tool in rnsd rnpath rnprobe; do
  [ -x "$VENV/bin/$tool" ] || { echo "FAIL the reference's $tool is not in $VENV/bin (make venv)"; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-ifaces-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
alive() { kill -0 "$1" 2>/dev/null; }
ports() { "$PY" -c '
import socket, sys
n = int(sys.argv[1]); kind = socket.SOCK_DGRAM if sys.argv[2] == "udp" else socket.SOCK_STREAM
s = [socket.socket(socket.AF_INET, kind) for _ in range(n)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])' "$@"; }
probe_hash() { "$RNSC" id -i "$1" -H rnstransport.probe | sed -n 's/.*destination for this Identity is <\([0-9a-f]*\)>.*/\1/p'; }

# iface_section KIND ROLE PORTS...: the [[...]] stanza for one end.
#   backbone: server PORT | client PORT      udp: LISTEN FORWARD
iface_section() {
  case "$1:$2" in
    backbone:server) printf '  [[Backbone]]\n    type = BackboneInterface\n    enabled = yes\n    listen_on = 127.0.0.1\n    port = %s\n' "$3" ;;
    backbone:client) printf '  [[Backbone]]\n    type = BackboneInterface\n    enabled = yes\n    remote = 127.0.0.1\n    target_port = %s\n' "$3" ;;
    udp:*) printf '  [[UDP %s]]\n    type = UDPInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n    forward_ip = 127.0.0.1\n    forward_port = %s\n' "$3" "$3" "$4" ;;
  esac
}

run_kind() { # run_kind KIND
  local kind=$1 d="$tmp/$1"
  mkdir -p "$d/A" "$d/B" "$d/C"
  local inst="rnscifaces$$$kind" a_sections b_sections c_sections
  if [ "$kind" = backbone ]; then
    local P; read -r P < <(ports 1 tcp)
    a_sections=$(iface_section backbone server "$P")
    b_sections=$(iface_section backbone client "$P")
    c_sections=$(iface_section backbone client "$P")
  else
    local P1 P2 P3 P4; read -r P1 P2 P3 P4 < <(ports 4 udp)
    a_sections=$(iface_section udp x "$P1" "$P2"; iface_section udp x "$P3" "$P4")
    b_sections=$(iface_section udp x "$P2" "$P1")
    c_sections=$(iface_section udp x "$P4" "$P3")
  fi
  printf '[reticulum]\n  enable_transport = yes\n  share_instance = yes\n  instance_name = %s\n  respond_to_probes = yes\n[logging]\n  loglevel = 4\n[interfaces]\n%s\n' "$inst" "$a_sections" >"$d/A/config"
  printf '[reticulum]\n  enable_transport = yes\n  share_instance = no\n  respond_to_probes = yes\n[logging]\n  loglevel = 4\n[interfaces]\n%s\n' "$b_sections" >"$d/B/config"
  printf '[reticulum]\n  share_instance = no\n[logging]\n  loglevel = 4\n[interfaces]\n%s\n' "$c_sections" >"$d/C/config"

  "$VENV/bin/rnsd" --config "$d/A" >"$d/rnsd.log" 2>&1 &
  pids+=($!)
  if ! wait_for 30 test -f "$d/A/storage/transport_identity"; then
    bad "$kind: reference rnsd did not start" "$d/rnsd.log"; return
  fi
  sleep 1 # its interfaces come up right after the identity is written
  "$RNSC" daemon --config "$d/B" -vv >"$d/rnsc.log" 2>&1 &
  local rpid=$!
  pids+=($rpid)
  if ! wait_for 20 grep -qs "respond to probe requests" "$d/rnsc.log"; then
    bad "$kind: rnsc daemon did not start" "$d/rnsc.log"; return
  fi
  ok "$kind: rnsd and rnsc daemon started"
  local ref_probe rnsc_probe
  ref_probe=$(probe_hash "$d/A/storage/transport_identity")
  rnsc_probe=$(probe_hash "$d/B/storage/transport_identity")

  if wait_for 45 grep -qs "path to <$ref_probe> is 1 hop" "$d/rnsc.log"; then
    ok "$kind: the reference's probe announce is in rnsc's path table"
  else bad "$kind: rnsc never learned the reference's probe destination" "$d/rnsc.log" "$d/rnsd.log"; fi
  ref_has() { timeout 20 "$VENV/bin/rnpath" --config "$d/A" -t >"$d/rnpath.out" 2>&1 && grep -qs "<$rnsc_probe> is 1 hop" "$d/rnpath.out"; }
  if wait_for 45 ref_has; then ok "$kind: rnsc's probe announce is in rnsd's path table"
  else bad "$kind: rnsd never learned rnsc's probe destination" "$d/rnpath.out" "$d/rnsd.log"; fi

  timeout 60 "$VENV/bin/rnprobe" --config "$d/A" rnstransport.probe "$rnsc_probe" -t 15 -n 2 >"$d/rnprobe.out" 2>&1; local rc=$?
  if [ $rc = 0 ] && [ "$(grep -c "Valid reply from <$rnsc_probe>" "$d/rnprobe.out")" = 2 ]; then
    ok "$kind: the reference's rnprobe gets 2 of 2 replies from rnsc"
  else bad "$kind: rnprobe -> rnsc (exit $rc)" "$d/rnprobe.out" "$d/rnsc.log"; fi
  timeout 60 "$RNSC" probe --config "$d/C" rnstransport.probe "$ref_probe" -t 15 -n 2 >"$d/probe.out" 2>&1; rc=$?
  if [ $rc = 0 ] && [ "$(grep -c "Valid reply from <$ref_probe>" "$d/probe.out")" = 2 ]; then
    ok "$kind: rnsc probe gets 2 of 2 replies from rnsd"
  else bad "$kind: rnsc probe -> rnsd (exit $rc)" "$d/probe.out" "$d/rnsd.log"; fi
  timeout 60 "$RNSC" probe --config "$d/C" rnstransport.probe "$rnsc_probe" -t 15 >"$d/probe2.out" 2>&1; rc=$?
  if [ $rc = 0 ] && grep -qs "over 2 hops" "$d/probe2.out"; then
    ok "$kind: rnsc probe reaches rnsc's daemon through rnsd (2 hops)"
  else bad "$kind: rnsc probe through rnsd (exit $rc)" "$d/probe2.out" "$d/rnsc.log"; fi
  alive "$rpid" && ok "$kind: rnsc daemon still running" || bad "$kind: rnsc daemon died" "$d/rnsc.log"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  pids=()
}

run_kind backbone
run_kind udp
echo "daemon_ifaces_interop_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
