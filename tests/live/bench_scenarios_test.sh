#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc bench (the scenario runner): command line, the Python generators against the golden
# values of tests/unit/bench_gen_test.c, and quick single-packet, link, request/response and
# resource runs in all four pairings (rnsc and the reference as initiator and responder),
# and the relay runs, whose accounting must hold exactly.
set -u
. "$(dirname "$0")/../common/lib.sh"
S=${RNSC_SRCDIR:?RNSC_SRCDIR must point at the source tree}
check() { # check NAME EXPECTED_STATUS COMMAND...
  local name=$1 want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  if [ "$got" = "$want" ]; then pass=$((pass+1)); echo "ok   $name"
  else fail=$((fail+1)); echo "FAIL $name: exit $got, want $want"; sed 's/^/     /' "$tmp/err" | tail -12; fi
}
expect_grep() { # expect_grep NAME PATTERN FILE
  if grep -q -- "$2" "$3"; then pass=$((pass+1)); echo "ok   $1"
  else fail=$((fail+1)); echo "FAIL $1: '$2' not in $3"; head -20 "$3" | sed 's/^/     /'; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

check "help" 0 "$RNSC" bench --help
expect_grep "help names the pairings" "ref-rnsc" "$tmp/out"
check "unknown pairing" 2 "$RNSC" bench --pairing ref-nobody
check "unknown scenario" 2 "$RNSC" bench --scenario teleport
check "bad samples" 2 "$RNSC" bench --samples 0
check "unknown relay" 2 "$RNSC" bench --relay nobody
check "driver: bad mode is a usage error" 2 "$RNSC" bench driver --mode teleport --a 1 --b 2
check "driver: missing ports are a usage error" 2 "$RNSC" bench driver --mode raw
check "plugins list the scenario plugins" 0 "$RNSC" plugins
for sc in single link request resource-segment resource-stream resource-segment-matched \
    resource-stream-matched raw-transport transported-resource; do
  expect_grep "scenario plugin $sc is listed" "^$sc  *scenario  *[0-9]" "$tmp/out"
done
check "missing venv is a setup error" 3 env RNSC_VENV="$tmp/none" "$RNSC" bench --quick

check "python generators match the golden values" 0 "$PY" -c '
import sys
sys.path.insert(0, sys.argv[1])
import bench_gen as g
s = g.Sizes(16, 300)
assert [s.next() for _ in range(8)] == [84, 208, 175, 156, 212, 233, 190, 250]
p = g.Payload()
got = p.take(5) + p.take(27)
assert got.hex() == "ad4df30bae771bdc76606e02b9eef064366190e591ce077b74cc8d360c055f30", got.hex()
# the bulk generator of the resource scenarios is the same stream, whatever the chunking
whole = g.Payload().take(100003)
assert g.payload_prefix(100003) == whole
assert b"".join(g.payload_chunks(100003, chunk=4096)) == whole
' "$S/bench/participants"

check "quick single-packet run, all four pairings" 0 "$RNSC" bench --quick --scenario single \
  --report "$tmp/rep"
check "report JSON: every pairing conformant, exact accounting" 0 "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
cells = d["cells"]
pairs = {(c["initiator"], c["responder"]) for c in cells}
assert pairs == {("rnsc", "rnsc"), ("rnsc", "reference"), ("reference", "rnsc"),
                 ("reference", "reference")}, pairs
for c in cells:
    assert c["scenario"] == "single"
    assert c["conformant"] is True, c
    (s,) = c["samples"]
    assert s["ok"] and s["sent"] == s["proved"] == s["delivered"] > 0
    assert s["timeouts"] == 0 and s["unproved"] == 0
    assert c["rate"]["median"] > 0 and c["rate"]["unit"] == "packets/s"
    assert c["rss_kib"]["initiator"] > 0 and c["rss_kib"]["responder"] > 0
env = d["environment"]  # the build and the crypto providers are part of every report
assert env["commit"] and env["cflags"] and env["crypto"]["ed25519"] and env["crypto"]["aes256-cbc"], env
' "$tmp/rep/scenarios.json"
check "quick link run, all four pairings" 0 "$RNSC" bench --quick --scenario link \
  --report "$tmp/replink"
check "link report: every pairing conformant, sent = delivered, bytes equal" 0 "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
cells = d["cells"]
assert len(cells) == 4, cells
for c in cells:
    assert c["scenario"] == "link"
    assert c["conformant"] is True, c
    (s,) = c["samples"]
    assert s["ok"] and s["sent"] == s["delivered"] > 0, s
    assert s["proved"] + s["timeouts"] + s["unproved"] == s["sent"], s
    if c["initiator"] == "rnsc":  # rnsc never misses a proof it was sent
        assert s["proved"] == s["sent"], s
    assert c["link_mtu"] > 500, c  # the negotiated link MTU is reported per row
' "$tmp/replink/scenarios.json"
check "quick request/response run (scenario 3), all four pairings" 0 "$RNSC" bench --quick \
  --scenario request --report "$tmp/repreq"
check "request report: sent = delivered = served, bytes equal, every response a resource" 0 "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
cells = d["cells"]
pairs = {(c["initiator"], c["responder"]) for c in cells}
assert pairs == {(i, r) for i in ("rnsc", "reference") for r in ("rnsc", "reference")}, pairs
for c in cells:
    assert c["scenario"] == "request" and c["conformant"] is True, c
    assert c["interface_policy"].startswith("TCP"), c
    assert c["link_mtu"] == 500, c  # link MTU discovery off: the fixed 500-byte link MTU
    assert c["rate"]["unit"] == "requests/s" and c["rate"]["median"] > 0, c
    (s,) = c["samples"]
    assert s["ok"] and s["sent"] == s["delivered"] == s["served"] == \
        s["requests_received"] > 0, s
    assert s["via_resource"] == s["delivered"], s  # every response travelled as a resource
    assert s["failed"] == s["corrupt"] == s["malformed"] == s["unproved"] == 0, s
    assert s["request_bytes_sent"] == s["request_bytes_received"] > 0, s
    assert s["response_bytes_served"] == s["bytes"] >= 1024 * s["delivered"], s
    assert s["links"] == 4, s
' "$tmp/repreq/scenarios.json"
expect_grep "request markdown: the scenario's section" "## 3. request/response" "$tmp/repreq/scenarios.md"
expect_grep "request svg" "<svg" "$tmp/repreq/scenarios-request.svg"
check "quick resource runs: scenarios 4, 5 and their matched variants (8), all pairings" 0 \
  "$RNSC" bench --quick --report "$tmp/repres" \
  --scenario resource-segment,resource-stream,resource-segment-matched,resource-stream-matched
check "resource report: every pairing conformant, sent = completed = ACKed, bytes equal" 0 "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["settings"]["quick"] is True, d["settings"]
cells = d["cells"]
got = {(c["scenario"], c["initiator"], c["responder"]) for c in cells}
names = ("resource-segment", "resource-stream", "resource-segment-matched",
         "resource-stream-matched")
assert got == {(s, i, r) for s in names
               for i in ("rnsc", "reference") for r in ("rnsc", "reference")}, got
for c in cells:
    assert c["conformant"] is True, c
    matched = c["scenario"].endswith("-matched")
    assert c["interface_policy"].startswith("TCP" if matched else "Backbone"), c
    if matched:  # both sides at the reference TCP tier: 10 Mbit/s -> HW_MTU 16384
        assert c["link_mtu"] == 16384, c
    assert c["rate"]["unit"] == "resources/s" and c["rate"]["median"] > 0, c
    assert c["link_mtu"] > 500, c
    (s,) = c["samples"]
    assert s["ok"] and s["sent"] == s["completed"] == s["acked"] == s["received"] == \
        s["acks_sent"] >= 1, s
    assert s["corrupt"] == 0 and s["unproved"] == 0, s
    assert s["bytes"] == s["sent"] * s["resource_size"], s
    # --quick runs the stated smaller stream: 4 maximum-efficient segments
    want = 1048575 if c["scenario"].startswith("resource-segment") else 4 * 1048575
    assert s["resource_size"] == want, s
    assert s["goodput_mib_s"] > 0, s
' "$tmp/repres/scenarios.json"
check "quick relay runs: raw transport and transported resource, both relays" 0 "$RNSC" bench \
  --quick --scenario raw-transport,transported-resource --report "$tmp/reprelay"
check "relay report: each relay conformant, per-direction accounting exact" 0 "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
cells = d["cells"]
got = {(c["scenario"], c["relay"]) for c in cells}
assert got == {(s, r) for s in ("raw-transport", "transported-resource")
               for r in ("rnsc", "reference")}, got
for c in cells:
    assert "initiator" not in c and c["driver"] == "rnsc", c
    assert c["conformant"] is True, c
    assert c["interface_policy"].startswith("Backbone"), c
    assert c["rate"]["median"] > 0 and c["rate"]["unit"] == "frames/s"
    assert c["rss_kib"]["relay"] > 0 and c["rss_kib"]["driver"] > 0, c
    (s,) = c["samples"]
    assert s["ok"], s
    for k in ("ab", "ba"):
        x = s[k]
        assert x["sent"] == x["carried"] > 0, x
        assert x["dup"] == x["corrupt"] == x["reordered"] == x["lost"] == 0, x
    assert s["capacity"] >= 1.25 * s["rate"], s
    if c["scenario"] == "raw-transport":
        assert s["ab"]["unproved"] == s["ba"]["unproved"] == 0, s
        assert s["proved"] == s["delivered"] == s["sent"], s
    else:
        assert c["link_mtu"] > 500 and s["link_mtu"] == c["link_mtu"], c
' "$tmp/reprelay/scenarios.json"
expect_grep "relay markdown: relay rows" "| relay rnsc | Backbone" "$tmp/reprelay/scenarios.md"
expect_grep "relay markdown: link MTU column" "link MTU" "$tmp/reprelay/scenarios.md"
expect_grep "relay svg per scenario" "relay reference" "$tmp/reprelay/scenarios-raw-transport.svg"
expect_grep "relay svg per scenario (7)" "<svg" "$tmp/reprelay/scenarios-transported-resource.svg"
check "participant: bad role is a usage error" 2 "$RNSC" bench participant --role boss --scenario single --config "$tmp"
expect_grep "markdown at-a-glance table" "At a glance" "$tmp/rep/scenarios.md"
expect_grep "svg chart" "<svg" "$tmp/rep/scenarios.svg"

# Interface and crypto dimensions (issue 25): the reference paired with rnsc over every
# interface both have, under the nettle backend; websocket (rnsc only) reported not run.
check "unknown interface is a usage error" 2 "$RNSC" bench --iface carrier-pigeon
check "unknown crypto backend is a usage error" 2 "$RNSC" bench --crypto "nettle;enigma"
# The matrix in its conformance-only smoke mode: every interface x every backend once.
check "matrix help" 0 "$RNSC" bench matrix --help
check "matrix: --quick and --smoke together is a usage error" 2 "$RNSC" bench matrix --quick --smoke
check "matrix smoke: every interface x crypto order conformant" 0 \
  "$RNSC" bench matrix --smoke --report "$tmp/smoke"
expect_grep "an incomplete order is completed aloud" "running it as 'sodium,openssl'" "$tmp/err"
check "matrix smoke report: each combination ran once, or says why not" 0 "$PY" -c '
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
ran = {}
for c in cells:
    assert c["scenario"] == "single", c
    if "not_run" in c:
        assert c["samples"] == [] and c["not_run"], c
        continue
    assert c["conformant"] is True, c
    (s,) = c["samples"]
    assert s["ok"] and s["sent"] == s["proved"] == s["delivered"] > 0, s
    key = (c["interface"], c["crypto"])
    assert key not in ran, key
    ran[key] = (c["initiator"], c["responder"])
ifaces = {"backbone", "tcp", "udp", "local", "pipe", "tls", "websocket"}
orders = {"openssl", "nettle", "sodium,openssl"}
carriers = {"auto", "serial", "kiss"}  # namespaces, ptys: under the first order only
assert set(ran) == {(i, o) for i in ifaces for o in orders} | {(i, "openssl") for i in carriers}, sorted(ran)
for (i, o), pr in ran.items():  # the reference wherever it has the interface
    assert pr == (("rnsc", "rnsc") if i in ("tls", "websocket") else ("rnsc", "reference")), (i, pr)
# the radio is in the report, each cell with why
nr = [c for c in cells if c["interface"] == "rnode"]
assert len(nr) == 2 * len(orders), len(nr)
assert all(c["samples"] == [] and "radio" in c["not_run"] for c in nr), nr
' "$tmp/smoke/scenarios.json"
expect_grep "matrix markdown: baseline is backbone, openssl" "| backbone, openssl | n/r | [0-9]* (1.00×) |" "$tmp/smoke/matrix.md"
expect_grep "matrix markdown: best combination per column" "Best combination per column" "$tmp/smoke/matrix.md"
expect_grep "matrix heat map" "rate relative to the baseline row (backbone, openssl)" "$tmp/smoke/matrix.svg"

echo "bench_scenarios_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
