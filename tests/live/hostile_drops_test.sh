#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every dropped announce is counted (issue 28, finding 4): the reference's RNS floods 3000
# announces of new destinations back to back into rnsc daemon A over TCP. Nearly all are
# held or dropped by ingress control; each must land in a counter (valid, invalid, held,
# ingress-dropped, rate-blocked, queue-dropped, duplicate/filtered, malformed, blackholed)
# served alike over RPC (rnsc status -j), /status and /metrics. Legitimate traffic over
# TCP and the shared instance gets through during the flood; /status answers after it.
set -u
. "${RNSC_SRCDIR:-$(dirname "$0")/../..}/tests/common/hostile_common.sh"
N=3000
start_a
rss0=$(rss_kb $DA)
mkdir -p "$tmp/F"
sed 's/share_instance = no/share_instance = no\n  enable_transport = no/' "$tmp/R/config" >"$tmp/F/config"
"$PY" - "$tmp/F" "$N" >"$tmp/F.log" 2>&1 <<'PYEOF' & FP=$!; pids+=($FP)
import RNS, sys, time
RNS.Reticulum(sys.argv[1], loglevel=2)
end = time.time() + 15
while not any(i.online for i in RNS.Transport.interfaces) and time.time() < end:
    time.sleep(0.1)
ds = [RNS.Destination(RNS.Identity(), RNS.Destination.IN, RNS.Destination.SINGLE, "rnschostile", "d%d" % i)
      for i in range(int(sys.argv[2]))]
ps = [d.announce(send=False) for d in ds]
for p in ps: p.send()
print("announced", len(ps), flush=True)
time.sleep(60)
PYEOF
wait_for 60 grep -qs "^announced" "$tmp/F.log" || { bad "the reference flooder did not announce" "$tmp/F.log"; exit 1; }
probe_tcp "during the announce flood"
probe_shared "during the announce flood"
sleep 1
status_within 2 && ok "/status answers after the flood" || bad "/status after the announce flood" "$tmp/A.log"
cp "$tmp/status.json" "$tmp/http.json"
curl -s --max-time 5 "http://127.0.0.1:$HPORT/metrics" >"$tmp/metrics.txt"
timeout 30 "$RNSC" status --config "$tmp/A" -j >"$tmp/rpc.json" 2>"$tmp/rpc.err" || bad "rnsc status -j" "$tmp/rpc.err"
"$PY" - "$N" "$tmp/http.json" "$tmp/rpc.json" "$tmp/metrics.txt" <<'PYEOF' >"$tmp/acct.out" 2>&1 && ok "all $N announces accounted for: $(tail -1 "$tmp/acct.out")" || bad "announce accounting" "$tmp/acct.out"
import json, sys
n = int(sys.argv[1])
http = json.load(open(sys.argv[2]))["rnsc"]["transport"]
rpc = json.load(open(sys.argv[3]))["rnsc"]["transport"]
prom = {}
for l in open(sys.argv[4]):
    if l.startswith("rnsc_transport_") and " " in l:
        k, v = l.split()
        prom[k[len("rnsc_transport_"):-len("_total")]] = int(v)
reasons = ["announces_valid", "announces_invalid", "announces_held", "announces_ingress_dropped",
           "announces_blackholed", "malformed", "filtered"]
for src, d in (("rpc", rpc), ("metrics", prom)):
    for k in reasons + ["announces_rate_blocked", "announces_queue_dropped", "duplicates"]:
        assert k in d, (src, k)
        # the documents were taken a moment apart: counters only grow
        assert d[k] >= http[k] if src == "rpc" else True, (src, k, d[k], http[k])
acc = sum(http[k] for k in reasons)
assert acc >= n, ("unaccounted", n - acc, {k: http[k] for k in reasons}, http["rx"])
assert http["announces_held"] + http["announces_ingress_dropped"] > 0, http
print(" ".join("%s=%d" % (k, http[k]) for k in ["rx"] + reasons + ["announces_rate_blocked", "announces_queue_dropped"]))
PYEOF
kill $FP 2>/dev/null; wait $FP 2>/dev/null
echo "RSS kB: before $rss0, after the flood $(rss_kb $DA)"
finish
