#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Ingress control live with the pinned reference (real processes on 127.0.0.1, kernel-chosen
# ports, a unique instance name, every wait bounded):
#
#   reference flooder F --TCP--> [Flood In] rnsc daemon A (transport, shared instance)
#                                 [Out] <--TCP-- reference observer O (counts announces)
#
# F announces N destinations at once into A's new interface. Checked: A holds most of them
# (a burst on a new interface), rebroadcasts on Out stay bounded by what it processed, the
# reference's rnstatus -A -a (and -B) and rnsc status print the same for A (held announces,
# burst, announce counters and rate settings), held announces are released over time (the
# interface's ic_* options from the config shorten the wait) and reach O.
set -u
. "$(dirname "$0")/../common/lib.sh"
for tool in rnstatus; do
  [ -x "$VENV/bin/$tool" ] || { echo "FAIL the reference's $tool is not in $VENV/bin"; exit 1; }
done
[ -x "$RNSC" ] || { echo "FAIL $RNSC is not built"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-flood-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
read -r P1 P2 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
inst="rnscflood$$x$RANDOM"
N=24
wait_for() { local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }

mkdir -p "$tmp/A" "$tmp/F" "$tmp/O"
cat >"$tmp/A/config" <<EOF
[reticulum]
  share_instance = yes
  instance_name = $inst
  enable_transport = yes
[logging]
  loglevel = 5
[interfaces]
  [[Flood In]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P1
    ic_burst_penalty = 2
    ic_burst_hold = 2
    ic_held_release_interval = 1
  [[Out]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P2
    announce_rate_target = 7200
    announce_rate_grace = 2
EOF
for d in F O; do
  port=$P1; [ $d = O ] && port=$P2
  printf '[reticulum]\n  share_instance = no\n[logging]\n  loglevel = 2\n[interfaces]\n  [[To A]]\n    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %s\n' "$port" >"$tmp/$d/config"
done

"$RNSC" daemon --config "$tmp/A" >"$tmp/A.log" 2>&1 & pids+=($!)
wait_for 15 grep -qs "started the shared instance interface" "$tmp/A.log" ||
  { bad "rnsc daemon did not start" "$tmp/A.log"; exit 1; }

# O: counts distinct announced destinations, one line per change
"$PY" - "$tmp/O" >"$tmp/O.log" 2>&1 <<'EOF' & pids+=($!)
import RNS, sys, threading, time
RNS.Reticulum(sys.argv[1])
seen = set()
lock = threading.Lock()  # the reference calls announce handlers from several threads
class H:
    aspect_filter = None
    def received_announce(self, destination_hash, announced_identity, app_data):
        with lock:
            if destination_hash not in seen:
                seen.add(destination_hash)
                sys.stdout.write("seen %d\n" % len(seen))
                sys.stdout.flush()
RNS.Transport.register_announce_handler(H())
print("ready", flush=True)
time.sleep(120)
EOF
# F: N destinations announced back to back on a fresh connection
"$PY" - "$tmp/F" "$N" >"$tmp/F.log" 2>&1 <<'EOF' & pids+=($!)
import RNS, sys, time
RNS.Reticulum(sys.argv[1])
time.sleep(2)
ds = [RNS.Destination(RNS.Identity(), RNS.Destination.IN, RNS.Destination.SINGLE, "rnscflood", "d%d" % i)
      for i in range(int(sys.argv[2]))]
# signed and packed first, sent back to back after: on a loaded machine signing between
# sends spread the flood out until too few announces came in fast enough to be held
ps = [d.announce(send=False) for d in ds]
for p in ps: p.send()
print("announced", len(ds), flush=True)
time.sleep(120)
EOF
wait_for 20 grep -qs "^announced" "$tmp/F.log" || { bad "flooder did not announce" "$tmp/F.log"; exit 1; }
sleep 1

held() { timeout 30 "$RNSC" status --config "$tmp/A" -A -a >"$tmp/s.out" 2>&1
  sed -n 's/.*Held *: \([0-9]*\) announce.*/\1/p' "$tmp/s.out" | head -1; }
H=$(held)
seen_now() { { grep "^seen" "$tmp/O.log" || echo "seen 0"; } | tail -1 | cut -d' ' -f2; }
D=$(seen_now)
if [ -n "$H" ] && [ "$H" -ge $((N / 2)) ] && grep -qs "burst for" "$tmp/s.out"; then
  ok "announce flood of $N into a new interface: $H held, burst active"
else bad "no held announces after the flood (held '$H')" "$tmp/s.out" "$tmp/A.log"; fi
if [ -n "$H" ] && [ "$D" -le $((N - H)) ]; then
  ok "rebroadcast traffic bounded: the observer learned $D of $N while $H are held"
else bad "observer learned $D with $H held" "$tmp/O.log"; fi

# the reference's rnstatus and rnsc status print the same announce fields for A
# frequencies and burst durations move between the two calls: masked
norm() { grep -v "Uptime is" "$1" | sed -E 's/[0-9.]+ [kmM]?Hz/F Hz/g; s/burst for .*/burst for T/; s/ +/ /g'; }
same=0
for try in 1 2 3 4; do
  timeout 30 "$VENV/bin/rnstatus" --config "$tmp/A" -A -a >"$tmp/ref.out" 2>&1; rr=$?
  timeout 30 "$RNSC" status --config "$tmp/A" -A -a >"$tmp/rnsc.out" 2>&1; rc=$?
  if [ $rr = 0 ] && [ $rc = 0 ] && diff <(norm "$tmp/ref.out") <(norm "$tmp/rnsc.out") >"$tmp/diff"; then same=1; break; fi
  sleep 1
done
if [ $same = 1 ] && grep -qs "Held *:" "$tmp/ref.out" && grep -qs "(t:2h/p:0s/g:2)" "$tmp/ref.out" &&
   grep -qs "burst for" "$tmp/ref.out"; then
  ok "rnstatus -A -a and rnsc status -A -a print the same (held, burst, rate target) for rnsc"
else bad "rnstatus -A vs rnsc status -A ($rr/$rc)" "$tmp/diff" "$tmp/ref.out" "$tmp/rnsc.out"; fi
# -B: only the interfaces in a burst (the flood's listener), alike in both tools
same=0
for try in 1 2 3 4; do
  timeout 30 "$VENV/bin/rnstatus" --config "$tmp/A" -B -A >"$tmp/refB.out" 2>&1; rr=$?
  timeout 30 "$RNSC" status --config "$tmp/A" -B -A >"$tmp/rnscB.out" 2>&1; rc=$?
  if [ $rr = 0 ] && [ $rc = 0 ] && diff <(norm "$tmp/refB.out") <(norm "$tmp/rnscB.out") >"$tmp/diffB"; then same=1; break; fi
  sleep 1
done
if [ $same = 1 ] && grep -qs "Flood In" "$tmp/refB.out" && ! grep -qs "\[Out/" "$tmp/refB.out"; then
  ok "rnstatus -B -A and rnsc status -B -A list the same interfaces in a burst"
else bad "rnstatus -B -A vs rnsc status -B -A ($rr/$rc)" "$tmp/diffB" "$tmp/refB.out" "$tmp/rnscB.out"; fi
timeout 30 "$VENV/bin/rnstatus" --config "$tmp/A" -j >"$tmp/ref.json" 2>&1
if "$PY" - "$tmp/ref.json" >"$tmp/j.out" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
fl = [i for i in d["interfaces"] if i["name"].startswith("TCPServerInterface[Flood In")][0]
ch = [i for i in d["interfaces"] if i["name"].startswith("TCPInterface[Client on Flood In")][0]
out = [i for i in d["interfaces"] if i["name"].startswith("TCPServerInterface[Out")][0]
# the listener counts its own and its spawned client's transmissions (the reference's
# sent_announce passes a child's count up), so the bound is checked on the client
och = [i for i in d["interfaces"] if i["name"].startswith("TCPInterface[Client on Out")][0]
assert ch["held_announces"] > 0 and ch["burst_active"] is True, ch
assert fl["burst_active"] is True and fl["arxc"] == ch["arxc"], fl
assert isinstance(fl["burst_activated"], float) and fl["burst_count"] is None, fl
assert fl["arxc"] > 0 and fl["incoming_announce_frequency"] > 0, fl
assert out["announce_rate_target"] == 7200 and out["announce_rate_grace"] == 2, out
assert out["announce_rate_penalty"] == 0 and out["burst_active"] is False, out
assert och["atxc"] <= fl["arxc"], (och["atxc"], out["atxc"], fl["arxc"])
print("held", ch["held_announces"], "arxc", fl["arxc"], "atxc on Out's client", och["atxc"])
EOF
then ok "rnstatus -j fields from rnsc: $(cat "$tmp/j.out")"
else bad "rnstatus -j fields" "$tmp/j.out" "$tmp/ref.json"; fi

# the announce rate table over the RPC, as the reference's rnpath -r reads it
timeout 30 "$VENV/bin/rnpath" --config "$tmp/A" -r -j >"$tmp/rates.json" 2>&1
if "$PY" - "$tmp/rates.json" >"$tmp/rates.out" 2>&1 <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
assert len(t) >= 2, t
for e in t:
    assert len(e["hash"]) == 32 and isinstance(e["last"], float), e
    assert e["rate_violations"] == 0 and e["blocked_until"] == 0, e
    assert len(e["timestamps"]) >= 1 and isinstance(e["timestamps"][0], float), e
print(len(t), "entries")
EOF
then ok "rnpath -r -j reads rnsc's announce rate table: $(cat "$tmp/rates.out")"
else bad "rnpath -r -j against rnsc" "$tmp/rates.out" "$tmp/rates.json"; fi

# released over time (burst over after ic_burst_hold once the rate is down; one per
# interface job run) and passed on to the observer
more_seen() { [ "$(seen_now)" -gt "$D" ]; }
if wait_for 40 more_seen; then
  H2=$(held)
  ok "held announces released and rebroadcast: observer now has $(seen_now), $H2 still held"
else bad "no held announce was released within 40 s" "$tmp/O.log" "$tmp/s.out"; fi

echo "$pass passed, $fail failed"
[ $fail = 0 ]
