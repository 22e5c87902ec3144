#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Requests (and Buffer streams) live between rnsc and the reference, in all four pairings,
# directly over TCP on 127.0.0.1: the server (tests/live/req_ref_peer.py on the pinned RNS, or
# tests/live/req_node_peer on an rnsc node) registers /echo (ALLOW_ALL), /allowed (ALLOW_LIST with
# the client's identity) and /denied (ALLOW_LIST of another identity); the client identifies
# itself and sends N requests to /echo, M to /allowed and D to /denied. Checked: every /echo
# and /allowed response byte-exact at the client, the server's handlers called exactly N / M
# / 0 times, every /denied request unanswered (failed at the client). With STREAM bytes
# (default 200000) the client then streams that many bytes to the server on a Buffer (stream
# 1) and the server streams as many back (stream 2): both content hashes equal end to end.
# LOSS=<percent> in the environment runs the same over datagrams with loss: rnsc peers on
# LossyInterface (plugins/iface/lossy.c: drop LOSS %, duplicate and reorder 1 %, seeded),
# reference peers on their own UDPInterface (two reference peers through
# tests/live/lossy_udp_relay.py, the same faults); requests lost on the way are asked again (they
# have no retransmission of their own), the streams ride the channel's retransmission
# (tests/live/request_loss_test.sh). The lossy interface also delays each packet by 5 ms each
# way (LOSS_LATENCY): the reference registers a link packet's receipt only after sending
# it, and an rnsc peer on bare loopback proves within ~100 us, so without latency most
# proofs would race the receipt and the reference's channel would give up on a link that
# delivered everything. Without LOSS, the client then asks /big for responses of REQ_BIG
# bytes each (default 1500 4000 200000: beyond the link MDU, so sent as resources flagged
# is_response) and sends /bigreq requests of REQ_BIGREQ bytes (default 1200 6000: sent as
# resources flagged is_request), one at a time; checked: every response byte-exact (the
# /bigreq answer is the request's SHA-256), the counts and byte sums equal at both ends.
# REQ_RELAY=rnsc|ref (not with LOSS) puts a transport node between the two peers: an
# `rnsc daemon` or the reference's rnsd (enable_transport = yes, a TCPServerInterface), both
# peers its TCP clients, so the path, the link, every request and response (the /big and
# /bigreq resources included) and the Buffer streams cross the relay; checked in addition:
# the relay learned the server's path (its log) and is still running at the end
# (tests/live/request_relay_test.sh). REQ_NONE=<k>: the client also sends k requests to /none
# (ALLOW_NONE at the server): each must fail at the client unanswered. REQ_CANCEL=<bytes>:
# two plain resources of that size from client to server, the first cancelled by the client
# once it moves (RESOURCE_ICL: the server must report it FAILED), the second by the server
# (RESOURCE_RCL: the client must report it REJECTED, as the reference does); see
# tests/live/req_node_peer.c. Every wait is bounded; a reference that cannot start fails
# the test.
set -u
. "$(dirname "$0")/../common/lib.sh"
PEER="$S/tests/live/req_ref_peer.py"
NPEER="$B/tests/live/req_node_peer"
N=${REQ_N:-30} M=${REQ_M:-5} D=${REQ_D:-3}
STREAM=${REQ_STREAM:-200000}
PAIRS=${REQ_PAIRS:-"ref:rnsc rnsc:ref rnsc:rnsc ref:ref"}
[ -x "$NPEER" ] || { echo "FAIL $NPEER is not built"; exit 1; }
RELAY=${REQ_RELAY:-}
case "$RELAY" in
  "") ;;
  rnsc|ref) [ -z "${LOSS:-}" ] || { echo "FAIL REQ_RELAY and LOSS do not combine"; exit 1; } ;;
  *) echo "FAIL REQ_RELAY must be rnsc or ref, not '$RELAY'"; exit 1 ;;
esac

if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL the reference (RNS) does not import with $PY (make venv)"; exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-req-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
alive() { kill -0 "$1" 2>/dev/null; }

# the client's identity, and its hash for the server's allow list
WHO=$("$PY" -c 'import sys, RNS; i = RNS.Identity(); i.to_file(sys.argv[1]); print(i.hash.hex())' "$tmp/client_id")
[ ${#WHO} = 32 ] || { echo "FAIL could not make the client identity"; exit 1; }

# The interface section of a peer: TCP (server listens, client connects) or, with LOSS set,
# datagrams: LossyInterface on an rnsc peer (drop LOSS %, duplicate and reorder 1 %, seeded),
# the reference's own UDPInterface on a reference peer, ports crossed.
iface() { # iface KIND ROLE PORT OTHER_PORT
  local kind=$1 role=$2 port=$3 other=$4
  if [ -n "$RELAY" ]; then # both ends are TCP clients of the transport node
    printf '  [[Relay]]\n    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %s\n' "$RELAY_PORT"
  elif [ -n "${LOSS:-}" ] && [ "$kind" = rnsc ]; then
    printf '  [[Lossy]]\n    type = LossyInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n    forward_ip = 127.0.0.1\n    forward_port = %s\n    drop = %s\n    duplicate = %s\n    reorder = %s\n    seed = %s\n    latency_ms = %s\n    apply = %s\n' "$port" "$other" "$LOSS" "${LOSS_DUP:-1}" "${LOSS_REORDER:-1}" "${LOSS_SEED:-7}$([ "$role" = server ] && echo 1 || echo 2)" "${LOSS_LATENCY:-5}" "${LOSS_APPLY:-both}"
  elif [ -n "${LOSS:-}" ]; then
    printf '  [[UDP]]\n    type = UDPInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n    forward_ip = 127.0.0.1\n    forward_port = %s\n' "$port" "$other"
  elif [ "$role" = server ]; then
    printf '  [[Direct Server]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n' "$port"
  else
    printf '  [[Direct]]\n    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %s\n' "$other"
  fi
}
config() { # config DIR KIND ROLE PORT OTHER_PORT
  mkdir -p "$1"
  { printf '[reticulum]\n  enable_transport = no\n  share_instance = no\n[logging]\n  loglevel = 3\n[interfaces]\n'
    iface "$2" "$3" "$4" "$5"; } >"$1/config"
}
peer_cmd() { if [ "$1" = ref ]; then echo "$PY $PEER"; else echo "$NPEER"; fi; }
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }
RELAY_PID=""
if [ -n "$RELAY" ]; then # the transport node, one for every pairing
  RELAY_PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$tmp/R"
  printf '[reticulum]\n  enable_transport = yes\n  share_instance = no\n  respond_to_probes = no\n[logging]\n  loglevel = %s\n[interfaces]\n  [[Relay Server]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n' \
    "$([ "$RELAY" = rnsc ] && echo 6 || echo 7)" "$RELAY_PORT" >"$tmp/R/config"
  if [ "$RELAY" = rnsc ]; then "$B/src/cli/rnsc" daemon --config "$tmp/R" >"$tmp/R.log" 2>&1 &
  else "$VENV/bin/rnsd" --config "$tmp/R" >"$tmp/R.log" 2>&1 & fi
  RELAY_PID=$!; pids+=("$RELAY_PID")
  if wait_for 30 port_open "$RELAY_PORT"; then ok "$RELAY transport node listens on $RELAY_PORT"
  else bad "the $RELAY transport node did not start" "$tmp/R.log"; echo "# $pass passed, $fail failed"; exit 1; fi
fi
run_pair() { # run_pair CLIENT SERVER
  local ck=$1 sk=$2 tag="$1-to-$2${LOSS:+-loss$LOSS}${RELAY:+-via-$RELAY}"
  local port cport
  read -r port cport < <("$PY" -c '
import socket
while True:  # two UDP ports, the first also free for TCP (the server listens there)
    s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
    for x in s: x.bind(("127.0.0.1", 0))
    try:
        t = socket.socket(); t.bind(("127.0.0.1", s[0].getsockname()[1])); t.close()
    except OSError:
        continue
    print(*[x.getsockname()[1] for x in s])
    break')
  local sd="$tmp/S_$tag" cd="$tmp/C_$tag" relay=""
  # Two rnsc ends: each LossyInterface suffers on transmit only, so every packet is hit
  # once, as between an rnsc end and a reference end (else twice: about 10 % loss).
  local LOSS_APPLY=both; [ "$ck" = rnsc ] && [ "$sk" = rnsc ] && LOSS_APPLY=tx
  if [ -n "${LOSS:-}" ] && [ "$sk" = ref ] && [ "$ck" = ref ]; then
    # two reference ends: the faults come from a relay between their UDPInterfaces
    local ra rb
    read -r ra rb < <("$PY" -c '
import socket
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
    config "$sd" "$sk" server "$port" "$rb"; config "$cd" "$ck" client "$cport" "$ra"
    "$PY" "$S/tests/live/lossy_udp_relay.py" "$ra" "$cport" "$rb" "$port" "$LOSS" "${LOSS_DUP:-1}" \
      "${LOSS_REORDER:-1}" "${LOSS_SEED:-7}3" "${LOSS_LATENCY:-5}" $((${REQ_TIMEOUT:-150} + 30)) >"$tmp/relay_$tag.out" 2>&1 &
    relay=$!; pids+=("$relay")
  else
    config "$sd" "$sk" server "$port" "$cport"; config "$cd" "$ck" client "$cport" "$port"
  fi
  local sarg=""; [ "$STREAM" != 0 ] && sarg=$STREAM
  $(peer_cmd "$sk") serve "$sd" "$WHO" "$N" "$M" "${REQ_TIMEOUT:-150}" $sarg >"$sd.out" 2>"$sd.err" &
  local sp=$!; pids+=("$sp")
  dest_line() { grep -qs '^dest ' "$sd.out"; }
  if ! wait_for 30 dest_line; then bad "$tag: the $sk server did not start" "$sd.out" "$sd.err"; return; fi
  local dest; dest=$(sed -n 's/^dest //p' "$sd.out" | head -1)
  if [ -n "$RELAY" ]; then # rnsc at debug, rnsd at LOG_PATHING log the path they learn
    relay_has_path() { grep -qs -e "path to <$dest>" -e "Destination <$dest> is now" "$tmp/R.log"; }
    if wait_for 20 relay_has_path; then ok "$tag: the $RELAY transport node learned the path to <$dest>"
    else bad "$tag: the server's announce did not reach the $RELAY transport node" "$tmp/R.log"; fi
  fi
  local t0=$SECONDS
  timeout "${REQ_TIMEOUT:-150}" $(peer_cmd "$ck") request "$cd" "$dest" "$tmp/client_id" "$N" "$M" "$D" $((${REQ_TIMEOUT:-150} - 10)) $sarg >"$cd.out" 2>"$cd.err"
  local rc=$?
  local line; line="$(grep '^client echo' "$cd.out" | tail -1) ($((SECONDS - t0)) s)"
  if [ $rc = 0 ]; then ok "$tag: $line"; else bad "$tag: client (rc=$rc): $line" "$cd.out" "$cd.err" "$sd.out" "$sd.err"; fi
  srv_done() { ! alive "$sp"; }
  if wait_for 20 srv_done; then
    wait "$sp"; local src=$?
    local sline; sline=$(grep '^server echo' "$sd.out" | tail -1)
    local secho; secho=$(sed -n 's/^server echo=\([0-9]*\) .*/\1/p' <<<"$sline")
    if [ -n "${LOSS:-}" ] && [ $src = 0 ] && [ -n "$secho" ] && [ "$secho" -ge "$N" ] &&
       grep -q " allowed=$M denied=0 " <<<"$sline"; then
      ok "$tag: server handlers: $sline (some answers lost and asked again)"
    elif [ $src = 0 ] && [ "$sline" = "server echo=$N allowed=$M denied=0 $(grep -o 'bytes=[0-9]*' <<<"$sline")" ]; then
      ok "$tag: server handlers called exactly: $sline"
    else bad "$tag: server accounting (rc=$src): $sline" "$sd.out" "$sd.err"; fi
    local cb sb; cb=$(grep -o ' bytes=[0-9]*' <<<"$line"); sb=$(grep -o ' bytes=[0-9]*' <<<"$sline")
    if [ -z "${LOSS:-}" ] && [ "$ck" = rnsc ] && [ "$cb" != "$sb" ]; then bad "$tag: echoed bytes differ: client$cb server$sb"; fi
  else
    bad "$tag: the server did not see the link close" "$sd.out" "$sd.err"
  fi
  if [ -n "$relay" ]; then
    kill "$relay" 2>/dev/null; wait "$relay" 2>/dev/null
    if grep -q 'dropped=[1-9]' "$tmp/relay_$tag.out"; then
      ok "$tag: the relay dropped packets: $(tr '\n' ' ' <"$tmp/relay_$tag.out")"
    else bad "$tag: no loss injected by the relay" "$tmp/relay_$tag.out"; fi
  fi
  if [ -n "${REQ_BIG:-}${REQ_BIGREQ:-}" ]; then
    local want cbig sbig; want=$(big_expect)
    cbig=$(sed -n 's/^client \(big=.*\)/\1/p' "$cd.out"); sbig=$(sed -n 's/^server \(big=.*\)/\1/p' "$sd.out")
    if [ "$cbig" = "$want bigbad=0" ] && [ "$sbig" = "$want" ]; then
      ok "$tag: requests and responses beyond the MDU (resources): $want, byte-exact"
    else bad "$tag: large requests/responses: client '$cbig' server '$sbig' want '$want'" "$cd.err" "$sd.err"; fi
  fi
  if [ "${REQ_NONE:-0}" != 0 ]; then # ALLOW_NONE: failed at the client (the handler's calls count as denied)
    local cn; cn=$(grep '^client none=' "$cd.out")
    if [ "$cn" = "client none=$REQ_NONE none_failed=$REQ_NONE" ]; then
      ok "$tag: ALLOW_NONE: $REQ_NONE requests to /none unanswered, failed at the client"
    else bad "$tag: ALLOW_NONE: '$cn' want 'client none=$REQ_NONE none_failed=$REQ_NONE'" "$cd.err" "$sd.err"; fi
  fi
  if [ "${REQ_CANCEL:-0}" != 0 ]; then
    local cc sc; cc=$(grep '^client cancel' "$cd.out"); sc=$(grep '^server cancel' "$sd.out")
    if [ "$cc" = "client cancel icl=1 rcl=1" ] && [ "$sc" = "server cancel icl=1 rcl=1" ]; then
      ok "$tag: resources of $REQ_CANCEL bytes: cancelled by the sender -> FAILED at the receiver, cancelled by the receiver -> REJECTED at the sender"
    else bad "$tag: cancellation: '$cc' / '$sc'" "$cd.err" "$sd.err"; fi
  fi
  if [ "$STREAM" != 0 ]; then
    local cs ss; cs=$(grep '^client stream' "$cd.out"); ss=$(grep '^server stream' "$sd.out")
    local c_rx c_sha c_tx c_txsha s_rx s_sha s_tx s_txsha
    read -r c_rx c_sha c_tx c_txsha < <(sed 's/.*rx=\([0-9]*\) sha=\([0-9a-f]*\) tx=\([0-9]*\) txsha=\([0-9a-f]*\)/\1 \2 \3 \4/' <<<"$cs")
    read -r s_rx s_sha s_tx s_txsha < <(sed 's/.*rx=\([0-9]*\) sha=\([0-9a-f]*\) tx=\([0-9]*\) txsha=\([0-9a-f]*\)/\1 \2 \3 \4/' <<<"$ss")
    if [ -n "$c_sha" ] && [ "$c_tx" = "$STREAM" ] && [ "$s_rx" = "$STREAM" ] && [ "$s_sha" = "$c_txsha" ] &&
       [ "$s_tx" = "$STREAM" ] && [ "$c_rx" = "$STREAM" ] && [ "$c_sha" = "$s_txsha" ]; then
      ok "$tag: buffer streams both ways, $STREAM bytes each, content hashes equal"
    else
      bad "$tag: buffer streams: client '$cs' server '$ss'" "$cd.err" "$sd.err"
    fi
  fi
}
[ -n "${LOSS:-}" ] && export REQ_LOSS=1
if [ -z "${LOSS:-}" ]; then
  export REQ_BIG=${REQ_BIG-"1500 4000 200000"} REQ_BIGREQ=${REQ_BIGREQ-"1200 6000"}
fi
big_expect() { # the accounting both ends must print for REQ_BIG / REQ_BIGREQ
  local nb=0 sb=0 nr=0 sr=0 x
  for x in ${REQ_BIG:-}; do nb=$((nb+1)); sb=$((sb+x)); done
  for x in ${REQ_BIGREQ:-}; do nr=$((nr+1)); sr=$((sr+x)); done
  echo "big=$nb bigbytes=$sb bigreq=$nr bigreqbytes=$sr"
}
for pr in $PAIRS; do run_pair "${pr%%:*}" "${pr##*:}"; done
if [ -n "$RELAY_PID" ]; then
  if alive "$RELAY_PID"; then ok "the $RELAY transport node still running"
  else bad "the $RELAY transport node died" "$tmp/R.log"; fi
  kill "$RELAY_PID" 2>/dev/null # its own orderly stop (rnsd persists its tables), bounded
  relay_gone() { ! alive "$RELAY_PID"; }
  wait_for 10 relay_gone
  kill -9 "$RELAY_PID" 2>/dev/null; wait "$RELAY_PID" 2>/dev/null
fi
if [ -n "${LOSS:-}" ] && [[ " $PAIRS" == *rnsc* ]]; then # the loss really happened: the plugin's counts at close
  if grep -qh 'LossyInterface\[.*tx [0-9]*/-[1-9]' "$tmp"/*.err 2>/dev/null; then
    ok "the lossy interface dropped packets: $(grep -h 'LossyInterface\[' "$tmp"/*.err | sed 's/.*LossyInterface/LossyInterface/' | head -2 | tr '\n' ' ')"
  else bad "no loss was injected (no LossyInterface counts in the logs)" "$tmp"/*.err; fi
fi
echo "# $pass passed, $fail failed"
[ $fail = 0 ]
