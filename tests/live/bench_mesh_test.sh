#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc bench mesh: the topology generators and description format, the command line, a
# 2-node file topology (cut and healed once; and one shaped with netem where the kernel has it), the quick
# 10-node runs (mixed, all-reference, all-rnsc on a 2x5 grid: every daemon must reach every
# destination, the three must end with the same paths, a link across the grid's diameter must
# carry a resource with equal SHA-256, half the nodes must get answers to a small path-request
# storm, and after the centre node is killed
# and restarted a probe across it must get through and the mesh reconverge) and cleanup
# after the runner is SIGKILLed.
# Needs root and iproute2: fails, never skips, without them. Numbers are not judged here.
set -u
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
S=${RNSC_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
RNSC="$B/src/cli/rnsc"
PY=${RNSC_VENV:-$B/.venv}/bin/python
export RNSC_SRCDIR="$S"
pass=0 fail=0
ok() { pass=$((pass+1)); echo "ok   $1"; }
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -25 "$f" | sed 's/^/     /'; done; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

[ "$(id -u)" = 0 ] || { echo "FAIL bench mesh needs root (network namespaces)"; exit 1; }

# ---- generators and the description format -------------------------------------------------
if "$PY" - "$S/bench/mesh" >"$tmp/topo.out" 2>&1 <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1])
import topology as T
g = T.generate("grid:3x4", "mixed")
assert len(g.nodes) == 12 and len(g.links) == 3 * 3 + 2 * 4, len(g.links)
assert [i for _, i in g.nodes][:3] == ["rnsc", "ref", "rnsc"]
assert T.generate("ring:5", "ref").hops()[0][2] == 2
assert T.generate("line:6", "rnsc").hops()[0][5] == 5
s = T.generate("star:7", "rnsc"); assert s.degree(0) == 6 and max(max(r) for r in s.hops()) == 2
r1, r2 = T.generate("random:20:5", "rnsc", seed=7), T.generate("random:20:5", "rnsc", seed=7)
assert r1.describe() == r2.describe() and len(r1.links) == 24
p = T.parse("node a rnsc\nnode b ref # c\nlink a b iface=tcp delay=5ms loss=1% rate=10mbit\n")
assert p.links[0][2] == {"iface": "tcp", "delay": "5ms", "loss": "1%", "rate": "10mbit"}
assert T.parse(p.describe()).describe() == p.describe()
for text, msg in [("node a rnsc\nnode a ref\n", "twice"), ("node a go\n", "implementation"),
                  ("node a rnsc\nnode b rnsc\n", "not connected"),
                  ("node a rnsc\nnode b rnsc\nlink a c\n", "undeclared"),
                  ("node a rnsc\nnode b rnsc\nlink a b delay=fast\n", "bad delay"),
                  ("node a rnsc\nnode b rnsc\nlink a b mtu=5\n", "unknown option"),
                  ("node a rnsc\nnode b rnsc\nlink a a\n", "itself"),
                  ("hello\n", "cannot read")]:
    try:
        T.parse(text, "t"); raise SystemExit(f"accepted: {text!r}")
    except T.TopologyError as e:
        assert msg in str(e), (msg, str(e))
for spec in ("grid:3", "cube:4", "line:1", "line:x"):
    try:
        T.generate(spec); raise SystemExit(f"accepted {spec}")
    except T.TopologyError:
        pass
print("generators ok")
PYEOF
then ok "topology generators and description format"; else bad "topology module" "$tmp/topo.out"; fi

# ---- the mixed-vs-reference equivalence criterion (report.py), on made-up tables ------------------
if "$PY" - "$S/bench/mesh" >"$tmp/eq.out" 2>&1 <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1])
import topology as T, report as R
g = T.generate("ring:6", "ref")
desc = g.describe()
hops = g.hops()
def tab(extra=()):
    t = {str(i): {f"{j}.0": hops[i][j] + 1 for j in range(6)} for i in range(6)}
    for i, j, d in extra:
        t[str(i)][f"{j}.0"] += d
    return t
def run(label, impls, t):
    return {"label": label, "impls": impls, "nodes": 6, "links": 6, "description": desc,
            "tables": t, "non_shortest_entries": 0}
ref, mixed, rnsc = {"ref": 6, "rnsc": 0}, {"ref": 3, "rnsc": 3}, {"ref": 0, "rnsc": 6}
# the reference differs from itself in 2 entries (a detour of +2 in each run)
out = {"runs": [run("ref-1", ref, tab([(0, 3, 2)])), run("ref-2", ref, tab([(1, 4, 2)])),
                run("mixed", mixed, tab([(2, 5, 2), (3, 0, 2)])),
                run("rnsc", rnsc, tab([(0, 2, 3)]))]}
R.compare(out)
m = out["mixed_vs_reference"]
row = m["runs"][0]
assert m["pass"] is True and row["same_entry_set"] and row["out_of_bounds"] == 0, m
assert row["reference_max_excess"] == 2 and row["reference_pair_differing"] == 2, row
assert row["differing_vs_reference"] == {"ref-1": 3, "ref-2": 3} and row["allowed_differing"] == 7, row
assert row["strict"] is False
r = out["rnsc_vs_reference"]["runs"][0]   # +3 is beyond anything the reference did
assert r["out_of_bounds"] == 1 and r["pass"] is False and out["rnsc_vs_reference"]["pass"] is False, r
# a missing entry fails (1); with one reference run the verdict is not given
t = tab(); del t["4"]["1.0"]
out = {"runs": [run("ref", ref, tab()), run("mixed", mixed, t)]}
R.compare(out)
row = out["mixed_vs_reference"]["runs"][0]
assert not row["same_entry_set"] and row["pass"] is False and out["mixed_vs_reference"]["pass"] is False, row
assert out["mixed_vs_reference"]["compared"] == 1
out = {"runs": [run("ref", ref, tab([(0, 3, 2)])), run("mixed", mixed, tab([(0, 3, 2)])),
                run("rnsc", rnsc, tab([(1, 4, 1)]))]}
R.compare(out)  # one reference run: identical passes, a difference within bounds is not judged
assert out["mixed_vs_reference"]["pass"] is True and out["rnsc_vs_reference"]["pass"] is None, out
print("equivalence criterion ok")
PYEOF
then ok "equivalence criterion (same destinations, hop bounds from the reference's detours, spread of two reference runs)"
else bad "equivalence criterion" "$tmp/eq.out"; fi

if "$PY" - "$S/bench/mesh" >"$tmp/st.out" 2>&1 <<'PYEOF'
import os, sys
sys.path.insert(0, sys.argv[1])
import RNS
import storm as S
assert S.PR_DEST == RNS.Destination.hash(None, "rnstransport", "path", "request")
dest = bytes(range(0x70, 0x80))  # contains 0x7d and 0x7e: escaped by HDLC
f = S.path_request(dest)
p = RNS.Packet(None, f)
assert p.unpack() and p.packet_type == RNS.Packet.DATA and p.header_type == RNS.Packet.HEADER_1
assert p.transport_type == RNS.Transport.BROADCAST and p.destination_type == RNS.Destination.PLAIN
assert p.destination_hash == S.PR_DEST and p.data[:16] == dest and len(p.data) == 32 and p.hops == 0
w = S.hdlc(f)
assert w[0] == w[-1] == 0x7E and 0x7E not in w[1:-1] and S.unhdlc(w[1:-1]) == f
assert S.parse(f) == (S.PKT_DATA, S.PR_DEST)
h2 = bytes([0x51, 3]) + os.urandom(16) + dest + b"\x0b" + os.urandom(40)  # HEADER_2 announce
assert S.parse(h2) == (S.PKT_ANNOUNCE, dest) and S.parse(b"\x01" * 10) is None
print("storm frames ok")
PYEOF
then ok "storm driver frames: a path request as the reference parses it, HDLC, announce parsing"
else bad "storm driver frames" "$tmp/st.out"; fi

# ---- command line ----------------------------------------------------------------------------
"$RNSC" bench mesh --help >"$tmp/help" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q "network namespaces" "$tmp/help" && grep -q -- "--quick" "$tmp/help"; then ok "help"
else bad "help (exit $rc)" "$tmp/help"; fi
"$RNSC" bench mesh --topology cube:3 >"$tmp/bad" 2>&1; rc=$?
if [ $rc = 2 ] && grep -q "unknown topology kind 'cube'" "$tmp/bad"; then ok "bad topology refused (exit 2)"
else bad "bad topology (exit $rc)" "$tmp/bad"; fi
printf 'node a rnsc\nnode b rnsc\nlink a b loss=lots\n' >"$tmp/bad.topo"
"$RNSC" bench mesh --file "$tmp/bad.topo" >"$tmp/bad2" 2>&1; rc=$?
if [ $rc = 2 ] && grep -q "bad.topo:3: link a-b: bad loss 'lots'" "$tmp/bad2"; then ok "bad description names file and line (exit 2)"
else bad "bad description (exit $rc)" "$tmp/bad2"; fi

# ---- a 2-node file topology, and the same shaped with netem -------------------------------------
printf 'node left rnsc\nnode right ref\nlink left right\n' >"$tmp/two.topo"
timeout 180 "$RNSC" bench mesh --file "$tmp/two.topo" --destinations 3 --timeout 60 --window 3 --no-recovery --partition 6 \
  --json "$tmp/two.json" >"$tmp/two.out" 2>&1; rc=$?
if [ $rc = 0 ] && "$PY" - "$tmp/two.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1])); r = d["runs"][0]
assert r["ok"] and r["converged"] and r["nodes"] == 2 and r["non_shortest_entries"] == 0, r
assert [p["table_entries"] for p in r["per_node"]] == [6, 6], r["per_node"]
assert [p["table_source"] for p in r["per_node"]] [1] == "rpc"
pt = r["partition"]
assert pt["ok"] and pt["cut_links"] == 1 and not pt["probe_during_cut"] and pt["probe_s"] > 0, pt
PYEOF
then ok "2-node file topology (rnsc - reference) converges: $(grep -o 'converged in [0-9.]* s' "$tmp/two.out"), and heals after a 6 s partition"
else bad "2-node file topology (exit $rc)" "$tmp/two.out"; fi
# netem: used when the kernel has it; otherwise the run must fail saying so (exit 1).
printf 'node left rnsc\nnode right rnsc\nlink left right delay=20ms loss=0%%\n' >"$tmp/shaped.topo"
timeout 120 "$RNSC" bench mesh --file "$tmp/shaped.topo" --destinations 1 --timeout 30 --window 2 --no-recovery \
  >"$tmp/shaped.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q "converged in" "$tmp/shaped.out"; then ok "netem-shaped link converges"
elif [ $rc = 1 ] && grep -q "tc netem is not available in this kernel" "$tmp/shaped.out"; then
  ok "netem missing from this kernel: the run fails and says so"
else bad "netem-shaped link (exit $rc)" "$tmp/shaped.out"; fi

# ---- the quick runs ------------------------------------------------------------------------------
timeout 900 "$RNSC" bench mesh --quick --json "$tmp/q.json" --report "$tmp/rep" >"$tmp/q.out" 2>&1; rc=$?
if [ $rc = 0 ] && "$PY" - "$tmp/q.json" >"$tmp/q.check" 2>&1 <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
runs = {r["label"]: r for r in d["runs"]}
assert set(runs) == {"mixed", "ref", "rnsc"}, runs.keys()
assert runs["mixed"]["impls"] == {"rnsc": 5, "ref": 5}
for r in runs.values():
    assert r["ok"] and r["converged"] and r["nodes"] == 10 and r["links"] == 13, r.get("error")
    assert r["recovery"]["ok"] and r["recovery"]["reconverged_s"] > 0, r["recovery"]
    x = r["transfers"]
    assert len(x) == 1 and x[0]["ok"] and x[0]["sha256_equal"] and x[0]["node_hops"] == 5, x
    assert x[0]["received_size"] == 256 * 1024 and x[0]["link_s"] > 0 and x[0]["goodput_Bps"] > 0, x
    for p in r["per_node"]:
        assert p["alive"] and p["table_entries"] == 20 and p["hwm_kib"] > 0, p
        assert p["rx_bytes"] > 0 and p["tx_bytes"] > 0, p
    sm = r["storm"]  # the checkerboard (5 nodes) drops and re-requests 2 paths each
    assert sm["ok"] and len(sm["requesters"]) == 5 and sm["requests"] == 10, sm
    assert sm["paths_dropped"] == 10, sm
    assert sm["answered"] >= 8 and sm["total_ptxc"] >= 10 and sm["total_atxc"] >= 8, sm
    assert all(p["ptxc"] > 0 for p in sm["per_node"] if p["requester"]), sm["per_node"]
assert d["tables_agree"] and len(d["table_comparisons"]) == 3, d["table_comparisons"]
assert all(c["differing_paths"] == 0 for c in d["table_comparisons"])
assert d["mixed_vs_reference"]["compared"] == 1, d.get("mixed_vs_reference")
print(", ".join(f"{k} {r['convergence_s']} s" for k, r in sorted(runs.items())) + "; storm answered "
      + ", ".join(f"{k} {r['storm']['answered']}/10 (max {r['storm']['answer_max_s']} s)" for k, r in sorted(runs.items())))
PYEOF
then ok "quick 10-node grid, mixed/reference/rnsc converge to the same tables: $(cat "$tmp/q.check")"
else
  # The tail of the report is per-node tables; name the failing step first.
  { grep -E 'FAILED|did NOT|failed:|timed out|died|\*\*no\*\*' "$tmp/q.out"
    grep -E 'storm: [0-9]+/[0-9]+ answered|recovery after' "$tmp/q.out"; } >"$tmp/q.why" 2>/dev/null
  bad "quick runs (exit $rc)" "$tmp/q.why" "$tmp/q.out" "$tmp/q.check"
fi
for f in mesh.md mesh.json mesh-convergence.svg mesh-rss.svg mesh-traffic.svg; do
  [ -s "$tmp/rep/$f" ] || { bad "report file $f missing"; continue; }
done
grep -q "^| mixed | grid:2x5 mixed | 5/5 | 13 | 20 | yes |" "$tmp/rep/mesh.md" && ok "report written" || bad "report table" "$tmp/rep/mesh.md"

# ---- the runner killed: namespaces and daemons go with it ----------------------------------
# (its own --workdir, so runs by others on the machine are not counted)
mkdir -p "$tmp/killwd"
"$RNSC" bench mesh --topology line:3 --mix rnsc --timeout 60 --window 60 --workdir "$tmp/killwd" >"$tmp/kill.out" 2>&1 &
RP=$!
for _ in $(seq 1 80); do grep -q "announcing" "$tmp/kill.out" && break; sleep 0.25; done
nsb=$(ip netns list | grep -c "^rm${RP}x0-" || true)
kill -9 "$RP"; wait "$RP" 2>/dev/null
gone=0
for _ in $(seq 1 40); do
  if [ "$(ip netns list | grep -c "^rm${RP}x0-")" = 0 ]; then gone=1; break; fi; sleep 0.25
done
left=$(pgrep -f "$tmp/killwd/" | wc -l)
if [ "$nsb" = 3 ] && [ $gone = 1 ] && [ "$left" = 0 ]; then ok "SIGKILLed runner: its 3 namespaces and daemons are gone"
else bad "cleanup after SIGKILL (namespaces before $nsb, gone $gone, processes left $left)" "$tmp/kill.out"; fi

echo "bench mesh: $pass passed, $fail failed"
[ $fail = 0 ]
