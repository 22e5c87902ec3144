#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real statistics: the reference's rnsd and rnsc daemon (both transport nodes answering
# probes, one TCPServerInterface each, shared instance on) carry the same traffic: one
# reference instance with a TCP client interface to each sends every frame to both
# (tests/live/stats_traffic.py: PLAIN packets at a steady rate, announces, path requests). The
# reference's own rnstatus -j reads both while the traffic runs and after it stops.
# Checked: per-interface and node-wide rates (rxs) and totals (rxb, txb, announce and
# path request bytes) are non-zero and agree with rnsd's within timing noise.
set -u
. "$(dirname "$0")/../common/lib.sh"
S=${RNSC_SRCDIR:?RNSC_SRCDIR must point at the source tree}
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -20 "$f" | sed 's/^/     /'; done; }
for tool in rnsd rnstatus; do
  [ -x "$VENV/bin/$tool" ] || { echo "FAIL the reference's $tool is not in $VENV/bin"; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-stats.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; sleep 0.2; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
port_open() { "$PY" -c 'import socket,sys; s=socket.socket(); s.settimeout(0.5); sys.exit(s.connect_ex(("127.0.0.1", int(sys.argv[1]))))' "$1"; }

read -r P1 P2 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
inst="rnscstats$$x$RANDOM"
mkdir -p "$tmp/R" "$tmp/S" "$tmp/T"
for side in R S; do
  port=$P1; [ $side = S ] && port=$P2
  printf '%s\n' "[reticulum]" "  share_instance = yes" "  instance_name = $inst$side" \
    "  enable_transport = yes" "  respond_to_probes = yes" "[logging]" "  loglevel = 3" \
    "[interfaces]" "  [[Srv]]" "    type = TCPServerInterface" "    enabled = yes" \
    "    listen_ip = 127.0.0.1" "    listen_port = $port" "    passphrase = rnsc stats" >"$tmp/$side/config"
done
printf '%s\n' "[reticulum]" "  share_instance = no" "[logging]" "  loglevel = 2" "[interfaces]" \
  "  [[To rnsd]]" "    type = TCPClientInterface" "    enabled = yes" "    target_host = 127.0.0.1" \
  "    target_port = $P1" "    passphrase = rnsc stats" "  [[To rnsc]]" "    type = TCPClientInterface" "    enabled = yes" \
  "    target_host = 127.0.0.1" "    target_port = $P2" "    passphrase = rnsc stats" >"$tmp/T/config"

"$VENV/bin/rnsd" --config "$tmp/R" >"$tmp/rnsd.log" 2>&1 &
pids+=($!)
"$RNSC" daemon --config "$tmp/S" >"$tmp/rnsc.log" 2>&1 &
pids+=($!)
if wait_for 30 port_open "$P1" && wait_for 10 port_open "$P2" && [ -f "$tmp/R/storage/transport_identity" ] \
   && [ -f "$tmp/S/storage/transport_identity" ]; then ok "rnsd and rnsc daemon started"
else bad "daemons did not start" "$tmp/rnsd.log" "$tmp/rnsc.log"; exit 1; fi
probe() { "$RNSC" id -i "$1/storage/transport_identity" -H rnstransport.probe | sed -n 's/.*destination for this Identity is <\([0-9a-f]*\)>.*/\1/p'; }
PR=$(probe "$tmp/R") PS=$(probe "$tmp/S")

# rnstatus -j of both daemons at (nearly) the same moment, into r$1.json and s$1.json
read_both() {
  timeout 20 "$VENV/bin/rnstatus" --config "$tmp/R" -j >"$tmp/r$1.json" 2>"$tmp/r$1.err" &
  local a=$!
  timeout 20 "$VENV/bin/rnstatus" --config "$tmp/S" -j >"$tmp/s$1.json" 2>"$tmp/s$1.err" &
  local b=$!
  wait $a; wait $b
}
# 9 s of traffic at 25 packets/s; both daemons are read twice while it runs, and after.
"$PY" "$S/tests/live/stats_traffic.py" "$tmp/T" 9 25 "$PR" "$PS" >"$tmp/traffic.out" 2>&1 &
TPID=$!
pids+=($TPID)
sleep 4
read_both 1
sleep 0.5
read_both 2
wait $TPID
grep -qs "^sent" "$tmp/traffic.out" && ok "traffic: $(tail -1 "$tmp/traffic.out") packets to each daemon" \
  || bad "the traffic generator failed" "$tmp/traffic.out"
sleep 2.5
read_both 3

"$PY" - "$tmp" <<'PYEOF'
import json, sys
tmp = sys.argv[1]
fails = 0
def load(n):
    # rnstatus, attached to a shared instance that forwards announces to it, may log the
    # reference's own LocalClientInterface error on stdout before the document
    try:
        return json.loads([l for l in open(f"{tmp}/{n}.json") if l.startswith("{")][-1])
    except Exception as e:
        print(f"FAIL rnstatus -j output {n}: {e}: {open(f'{tmp}/{n}.json').read()[:300]} {open(f'{tmp}/{n}.err').read()[-300:]}")
        sys.exit(1)
def srv(doc):
    for i in doc["interfaces"]:
        if i["short_name"] == "Srv" and "parent_interface_name" not in i:
            return i
    print("FAIL no Srv interface in " + repr([i["short_name"] for i in doc["interfaces"]]))
    sys.exit(1)
def report(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    fails += 0 if ok else 1
def agree(a, b, lo, hi):
    return a > 0 and b > 0 and lo <= b / a <= hi
good = pps = False
for k in (1, 2):
    r, s = load(f"r{k}"), load(f"s{k}")
    ri, si = srv(r), srv(s)
    print(f"     sample {k}: Srv rxs rnsd {ri['rxs']:.0f} rnsc {si['rxs']:.0f} b/s, txs rnsd "
          f"{ri['txs']:.0f} rnsc {si['txs']:.0f}; node rxs rnsd {r['rxs']:.0f} rnsc {s['rxs']:.0f}, "
          f"rxpps rnsd {r['rxpps']} rnsc {s['rxpps']}")
    good = good or (agree(ri["rxs"], si["rxs"], 0.6, 1.6) and agree(r["rxs"], s["rxs"], 0.6, 1.6))
    pps = pps or agree(r["rxpps"], s["rxpps"], 0.5, 2.0)
report(good, "interface and node rx rates (rxs) non-zero and within 40 % of rnsd's while traffic runs")
report(pps, "node packet rate (rxpps) non-zero and within a factor 2 of rnsd's while traffic runs")
r, s = load("r3"), load("s3")
ri, si = srv(r), srv(s)
for key, lo, hi in (("rxb", 0.98, 1.02), ("txb", 0.5, 2.0), ("arxb", 0.9, 1.1), ("prxb", 0.9, 1.1)):
    report(agree(ri[key], si[key], lo, hi), f"Srv {key}: rnsd {ri[key]} rnsc {si[key]}")
for key, lo, hi in (("rxb", 0.95, 1.05), ("txb", 0.5, 2.0)):
    report(agree(r[key], s[key], lo, hi), f"node {key}: rnsd {r[key]} rnsc {s[key]}")
report(si["rxs"] < 0.1 * max(1, srv(load("s1"))["rxs"]) and ri["rxs"] < 0.1 * max(1, srv(load("r1"))["rxs"]),
       f"rates fall when the traffic stops: Srv rxs rnsd {ri['rxs']} rnsc {si['rxs']}")
for key in ("rxpps", "txpps"):
    report(isinstance(s.get(key), int) and isinstance(r.get(key), int), f"node {key} an int on both (rnsd {r.get(key)}, rnsc {s.get(key)})")
report(si["ifac_signature"] is not None and si["ifac_signature"] == ri["ifac_signature"]
       and si["ifac_size"] == ri["ifac_size"] and si["ifac_netname"] == ri["ifac_netname"],
       f"same passphrase: the same ifac_signature ({str(si['ifac_signature'])[:16]}...), ifac_size {si['ifac_size']}")
report(si["ifac_violations"] == ri["ifac_violations"], f"ifac_violations: rnsd {ri['ifac_violations']} rnsc {si['ifac_violations']}")
sys.exit(1 if fails else 0)
PYEOF
[ $? = 0 ] && ok "rnstatus -j figures of rnsc agree with rnsd's" || bad "statistics disagree" "$tmp/rnsc.log"

echo "stats_interop_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
