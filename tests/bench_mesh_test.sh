#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc bench mesh: the topology generators and description format, the command line, a
# 2-node file topology (cut and healed once; and one shaped with netem where the kernel has it), the quick
# 10-node runs (mixed, all-reference, all-rnsc on a 2x5 grid: every daemon must reach every
# destination, the three must end with the same paths, a link across the grid's diameter must
# carry a resource with equal SHA-256, and after the centre node is killed
# and restarted a probe across it must get through and the mesh reconverge) and cleanup
# after the runner is SIGKILLed.
# Needs root and iproute2: fails, never skips, without them. Numbers are not judged here.
set -u
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
S=${RNSC_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
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
timeout 600 "$RNSC" bench mesh --quick --json "$tmp/q.json" --report "$tmp/rep" >"$tmp/q.out" 2>&1; rc=$?
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
assert d["tables_agree"] and len(d["table_comparisons"]) == 3, d["table_comparisons"]
assert all(c["differing_paths"] == 0 for c in d["table_comparisons"])
assert d["mixed_vs_reference"]["compared"] == 1, d.get("mixed_vs_reference")
print(", ".join(f"{k} {r['convergence_s']} s" for k, r in sorted(runs.items())))
PYEOF
then ok "quick 10-node grid, mixed/reference/rnsc converge to the same tables: $(cat "$tmp/q.check")"
else bad "quick runs (exit $rc)" "$tmp/q.out" "$tmp/q.check"; fi
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
