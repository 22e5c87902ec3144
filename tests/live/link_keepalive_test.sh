#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Link keepalive, stale detection, timeout teardown and close reasons, live against the
# reference, directly over TCP on 127.0.0.1 (the responder's TCPServerInterface), for the
# initiator -> responder pairings ref->ref (the baseline), ref->rnsc, rnsc->ref, rnsc->rnsc, all
# run at once. Peers: tests/live/link_ref_peer.py and tests/live/link_node_peer with PEER_HOLD (see them).
#  idle:   the established link is held idle for 15 s (longer than stale_time, 2 x keepalive
#          = 10 s on loopback, would allow without keepalives): the initiator sent and got
#          keepalives (its packets out/in during the hold are keepalives only), the responder
#          answered them, neither end ever saw its link STALE; then the initiator closes and
#          the responder reports reason INITIATOR_CLOSED.
#  freeze: the responder is frozen (SIGSTOP) 7 s after the link is up (after the first
#          keepalive exchange, so the last inbound packet is a keepalive reply): the initiator marks the
#          link STALE and then closes it with reason TIMEOUT. The reference's watchdog
#          (Link.__watchdog_job) checks "now >= last_inbound + stale_time" only when it wakes,
#          and while ACTIVE it wakes at most every keepalive, so STALE comes between
#          stale_time and stale_time + keepalive after the last inbound packet; the STALE
#          state then lasts min(rtt * KEEPALIVE_TIMEOUT_FACTOR + STALE_GRACE,
#          WATCHDOG_MAX_SLEEP) = 5 s before the TIMEOUT teardown. Checked with the values the
#          initiator itself reports (keepalive, stale_time, rtt), within 0.3 s early / 1 s late:
#          the peers see STALE and inbound packets by polling every 20 ms (a late look at STALE
#          shortens the STALE->TIMEOUT interval as measured) and the CI machine is loaded.
# Every wait is bounded, ports are picked at runtime, frozen processes are continued and killed.
set -u
. "$(dirname "$0")/../common/lib.sh"
PEER="$S/tests/live/link_ref_peer.py"
NPEER="$B/tests/live/link_node_peer"
[ -x "$NPEER" ] || { echo "FAIL $NPEER is not built"; exit 1; }
IDLE=15

if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL the reference (RNS) does not import with $PY (make venv)"; exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-keepalive-test.XXXXXX") || { echo "FAIL mktemp"; exit 1; }
pids=()
cleanup() {
  # the cases' own subshells, then every peer they started (pid files, read now)
  for f in "$tmp"/*.pid; do [ -f "$f" ] && pids+=("$(cat "$f")"); done
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
  sleep 0.3
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT

PAIRS=${KEEPALIVE_PAIRS:-"ref:ref ref:rnsc rnsc:ref rnsc:rnsc"} # override to debug one pairing
read -r -a PORTS < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(8)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

wait_for() { # wait_for SECONDS COMMAND...: polls every 0.2 s
  local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done
  return 1
}
alive() { [ -r "/proc/$1/stat" ] && ! grep -q ') Z' "/proc/$1/stat" 2>/dev/null; } # not a zombie
peer_cmd() { if [ "$1" = ref ]; then echo "$PY $PEER"; else echo "$NPEER"; fi; }
config() { # config DIR server|client PORT
  mkdir -p "$1"
  local iface
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
  [[Direct]]
    enabled = yes
    $iface
EOT
}

# run_case INITIATOR RESPONDER idle|freeze PORT: writes $tmp/<tag>.{c,s}.{out,err}, and
# $tmp/<tag>.rc (client exit status) when done
run_case() {
  local ck=$1 sk=$2 mode=$3 port=$4 tag="$1-to-$2-$3"
  local sd="$tmp/$tag.s" cd="$tmp/$tag.c"
  config "$sd" server "$port"; config "$cd" client "$port"
  PEER_HOLD=1 $(peer_cmd "$sk") serve "$sd" 0 70 >"$sd.out" 2>"$sd.err" &
  local sp=$!
  echo "$sp" >"$tmp/$tag.s.pid"
  dest_line() { grep -qs '^dest ' "$sd.out"; }
  if ! wait_for 30 dest_line; then echo 90 >"$tmp/$tag.rc"; return; fi
  local dest; dest=$(sed -n 's/^dest //p' "$sd.out" | head -1)
  local hold=$IDLE; [ "$mode" = freeze ] && hold=45
  PEER_HOLD=$hold timeout 70 $(peer_cmd "$ck") connect "$cd" "$dest" 0 60 >"$cd.out" 2>"$cd.err" &
  local cp=$!
  echo "$cp" >"$tmp/$tag.c.pid"
  if [ "$mode" = freeze ]; then
    up_line() { grep -qs '^client link up' "$cd.out"; }
    if wait_for 40 up_line; then sleep 7; kill -STOP "$sp"; echo frozen >"$tmp/$tag.frozen"; fi
  fi
  wait "$cp"; local rc=$?; rm -f "$cd.pid"
  if [ "$mode" = freeze ]; then kill -CONT "$sp" 2>/dev/null; kill "$sp" 2>/dev/null; fi
  srv_done() { ! alive "$sp"; }
  wait_for 10 srv_done || kill -9 "$sp" 2>/dev/null
  wait "$sp" 2>/dev/null; rm -f "$sd.pid"
  echo "$rc" >"$tmp/$tag.rc"
}

n=0
for pair in $PAIRS; do
  for mode in idle freeze; do
    run_case "${pair%%:*}" "${pair##*:}" "$mode" "${PORTS[$n]}" &
    pids+=("$!"); n=$((n+1))
  done
done
all_done() { for p in $PAIRS; do for m in idle freeze; do
  [ -f "$tmp/${p%%:*}-to-${p##*:}-$m.rc" ] || return 1; done; done; }
wait_for 90 all_done || echo "# not every case finished in 90 s"

field() { sed -n "s/.*[ ]$2=\([^ ]*\).*/\1/p" <<<"$1"; } # field LINE NAME
in_range() { "$PY" -c 'import sys; v, lo, hi = map(float, sys.argv[1:]); sys.exit(0 if lo <= v <= hi else 1)' "$@"; }
calc() { "$PY" -c "print('%.3f' % ($1))"; }

for pair in $PAIRS; do
  ck=${pair%%:*} sk=${pair##*:}
  # idle
  tag="$ck-to-$sk-idle"; c="$tmp/$tag.c.out"; s="$tmp/$tag.s.out"
  rc=$(cat "$tmp/$tag.rc" 2>/dev/null || echo none)
  h=$(grep '^client hold' "$c" 2>/dev/null | tail -1)
  sc=$(grep '^server closed' "$s" 2>/dev/null | tail -1)
  up=$(grep '^client link up' "$c" 2>/dev/null | tail -1)
  if [ "$rc" = 0 ] && [ -n "$h" ] && [ "$(field "$h" stale)" = 0 ] &&
     [ "$(field "$h" tx)" -ge 2 ] && [ "$(field "$h" rx)" -ge 1 ]; then
    ok "$tag: link up ${IDLE} s idle, not stale: initiator keepalives out/in $(field "$h" tx)/$(field "$h" rx) (keepalive $(field "$up" keepalive) s, stale_time $(field "$up" stale_time) s)"
  else
    bad "$tag: idle link (rc=$rc): '$h'" "$c" "$tmp/$tag.c.err" "$s" "$tmp/$tag.s.err"
  fi
  # the responder: answered keepalives (tx), got them and the LINKCLOSE (rx), never stale,
  # and the close carried the initiator's reason. A responder answers a keepalive only when it
  # sent nothing for keepalive seconds, so one that comes a hair under 5 s after its last reply
  # goes unanswered, in the reference as in rnsc: from a reference initiator 2 of 3 answered is
  # common. An rnsc initiator waits an RTT margin longer and re-sends an unanswered one a
  # quarter keepalive later (src/lib/link.c keepalive_due), so its link never goes STALE (above).
  if [ -n "$sc" ] && [ "$(field "$sc" reason)" = INITIATOR_CLOSED ] &&
     [ "$(field "$sc" stale)" = 0 ] && [ "$(field "$sc" tx)" -ge 1 ] &&
     [ "$(field "$sc" rx)" -ge 3 ]; then
    ok "$tag: responder answered keepalives (out/in $(field "$sc" tx)/$(field "$sc" rx), LINKCLOSE included), never stale, closed with INITIATOR_CLOSED"
  else
    bad "$tag: responder '$sc'" "$s" "$tmp/$tag.s.err"
  fi
  # freeze
  tag="$ck-to-$sk-freeze"; c="$tmp/$tag.c.out"
  up=$(grep '^client link up' "$c" 2>/dev/null | tail -1)
  st=$(grep '^client stale' "$c" 2>/dev/null | tail -1)
  cl=$(grep '^client closed' "$c" 2>/dev/null | tail -1)
  if [ ! -f "$tmp/$tag.frozen" ] || [ -z "$up" ]; then
    bad "$tag: the link did not come up, or the responder was not frozen" "$c" "$tmp/$tag.c.err" "$tmp/$tag.s.out" "$tmp/$tag.s.err"
    continue
  fi
  ka=$(field "$up" keepalive) stt=$(field "$up" stale_time) rtt=$(field "$up" rtt)
  if [ -z "$st" ] || [ -z "$cl" ] || [ "$(field "$cl" reason)" != TIMEOUT ]; then
    bad "$tag: expected STALE then closed with TIMEOUT: '$st' '$cl'" "$c" "$tmp/$tag.c.err"
    continue
  fi
  li=$(field "$st" last_inbound) ts=$(field "$st" t) tc=$(field "$cl" t)
  d_stale=$(calc "$ts - $li") d_close=$(calc "$tc - $ts")
  grace=$(calc "min($rtt * 4 + 5, 5)")
  if in_range "$d_stale" "$(calc "$stt - 0.3")" "$(calc "$stt + $ka + 1")" &&
     in_range "$d_close" "$(calc "$grace - 0.3")" "$(calc "$grace + 1")"; then
    ok "$tag: STALE $d_stale s after the last inbound packet (formula: $stt..$(calc "$stt + $ka") s), closed with TIMEOUT $d_close s later (formula: $grace s)"
  else
    bad "$tag: STALE after $d_stale s (want $stt..$(calc "$stt + $ka")), TIMEOUT $d_close s later (want $grace)" "$c"
  fi
done
echo "# $pass passed, $fail failed"
[ $fail = 0 ]
