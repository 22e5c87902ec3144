#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a kill -9 loses (issue 28, finding 6): known destinations and the path table were
# written only every 5 minutes and at shutdown. Now they are written (atomically, at most
# once per 15 s) soon after they change: a reference program attached to A's shared
# instance announces destinations, both tables are on disk within 25 s, A is killed with
# SIGKILL and the restarted A knows them (their paths came over a connection that is gone
# after the restart, so they are skipped on load, as the reference skips them).
set -u
. "${RNSC_SRCDIR:-$(dirname "$0")/../..}/tests/common/hostile_common.sh"
N=6
A_EXTRA_IFACE="    ingress_control = no" # a program's announces, not a flood, are the subject here
start_a
"$PY" - "$tmp/R" "$N" "$tmp/hashes" >"$tmp/P.log" 2>&1 <<'PYEOF' & PP=$!; pids+=($PP)
import RNS, sys, time
RNS.Reticulum(sys.argv[1], loglevel=2)
end = time.time() + 15
while not any(i.online for i in RNS.Transport.interfaces) and time.time() < end:
    time.sleep(0.1)
ds = [RNS.Destination(RNS.Identity(), RNS.Destination.IN, RNS.Destination.SINGLE, "rnschostile", "s%d" % i)
      for i in range(int(sys.argv[2]))]
for d in ds:
    d.announce(); time.sleep(0.1)
open(sys.argv[3], "w").write("\n".join(d.hash.hex() for d in ds) + "\n")
print("announced", len(ds), flush=True)
time.sleep(60)
PYEOF
wait_for 30 grep -qs "^announced" "$tmp/P.log" || { bad "the reference program did not announce" "$tmp/P.log"; exit 1; }
t0=$SECONDS
# written soon after the change: poll the files (at most 25 s)
on_disk() { "$PY" - "$tmp/A/storage" "$tmp/hashes" <<'PYEOF'
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(__import__("RNS").__file__)))
import RNS.vendor.umsgpack as mp
st, want = sys.argv[1], set(open(sys.argv[2]).read().split())
known = mp.unpackb(open(os.path.join(st, "known_destinations"), "rb").read())
paths = mp.unpackb(open(os.path.join(st, "destination_table"), "rb").read())
k = {h.hex() for h in known} & want
p = {e[0].hex() for e in paths} & want
print("known", len(k), "paths", len(p))
sys.exit(0 if len(k) == len(want) and len(p) == len(want) else 1)
PYEOF
}
if wait_for 25 on_disk >"$tmp/disk.out" 2>&1; then
  ok "known destinations and paths on disk $((SECONDS - t0)) s after the announces: $(tail -1 "$tmp/disk.out")"
else bad "not on disk within 25 s" "$tmp/disk.out" "$tmp/A.log"; fi
kill -9 $DA; wait $DA 2>/dev/null
kill $PP; wait $PP 2>/dev/null
"$RNSC" daemon --config "$tmp/A" --http 0 >"$tmp/A2.log" 2>&1 & DA=$!; pids+=($DA)
wait_for 20 grep -qs "status endpoint on" "$tmp/A2.log" || { bad "A did not restart" "$tmp/A2.log"; exit 1; }
HPORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/status.*/\1/p' "$tmp/A2.log" | head -1)
status_within 2 && "$PY" - "$tmp/status.json" "$N" <<'PYEOF' >"$tmp/re.out" 2>&1 && ok "after kill -9 and a restart A still knows them: $(cat "$tmp/re.out")" || bad "restarted A forgot" "$tmp/re.out" "$tmp/A2.log"
import json, sys
r = json.load(open(sys.argv[1]))["rnsc"]
n = int(sys.argv[2])
assert r["known_destinations"] >= n, r
print("known_destinations", r["known_destinations"])
PYEOF
ls "$tmp/A/storage" | grep -E '\.tmp|~$' && bad "temporary files left in storage" || ok "no temporary files left in storage"
finish
