#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The raw wire driver of scenario 6 (`rnsc bench driver --mode raw`) through a relay that
# damages one frame on request (tests/live/tamper_relay.py): its accounting must name what
# happened. A clean relay: every frame carried intact and proved. One payload byte flipped:
# one corrupt and one lost frame. A frame sent twice: a duplicate. A frame held behind the
# next: a reordered frame. A dropped frame: one lost. Only direction a->b is damaged.
set -u
. "$(dirname "$0")/../common/lib.sh"
S=${RNSC_SRCDIR:?RNSC_SRCDIR must point at the source tree}
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -15 "$f" | sed 's/^/     /'; done; }
tmp=$(mktemp -d)
cleanup() { [ -n "${rpid:-}" ] && kill "$rpid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

free_ports() {
  "$PY" -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])'
}

# run_case TAMPER: the driver through the relay; its result line into $tmp/TAMPER.result
run_case() {
  local t=$1 pa pb line
  read -r pa pb < <(free_ports)
  rm -f "$tmp/arm"
  "$PY" "$S/tests/live/tamper_relay.py" "$pa" "$pb" "$t" "$tmp/arm" >"$tmp/$t.relay" 2>&1 &
  rpid=$!
  sleep 0.5
  coproc DRV { exec "$RNSC" bench driver --mode raw --a "$pa" --b "$pb" --calibrate 0.3 \
                 --setup-timeout 20 2>"$tmp/$t.err"; }
  local out=${DRV[0]} in=${DRV[1]} dpid=$DRV_PID
  : >"$tmp/$t.result"
  if read -r -t 60 line <&"$out" && [ "$line" = ready ]; then
    touch "$tmp/arm"  # damage the first timed frame from side a, not the warm-up's
    echo "start seconds=1 drain=2" >&"$in"
    if read -r -t 30 line <&"$out" && [ "$line" = done ]; then
      echo collect >&"$in"
      read -r -t 30 line <&"$out" && echo "$line" >"$tmp/$t.result"
    fi
    echo quit >&"$in"
  else
    echo "driver said: ${line:-nothing}" >"$tmp/$t.result"
  fi
  wait "$dpid" 2>/dev/null
  kill "$rpid" 2>/dev/null; wait "$rpid" 2>/dev/null; rpid=
}

# judge TAMPER PYTHON-ASSERTIONS: the result's counters as r["ab_corrupt"] etc.
judge() {
  local t=$1 desc=$2 expr=$3
  if "$PY" - "$tmp/$t.result" "$expr" >"$tmp/$t.judge" 2>&1 <<'PYEOF'
import sys
line = open(sys.argv[1]).read().split()
assert line and line[0] == "result", line
r = {k: float(v) if "." in v else int(v) if v.isdigit() else v
     for k, v in (x.split("=", 1) for x in line[1:])}
ba_clean = r["ba_sent"] == r["ba_carried"] > 0 and not (
    r["ba_corrupt"] or r["ba_dup"] or r["ba_reordered"] or r["ba_lost"])
assert ba_clean, ("b->a must stay clean", r)
assert r["ab_sent"] > 0, r
assert eval(sys.argv[2], {}, {"r": r}), (sys.argv[2], r)
print(f"a->b sent {r['ab_sent']} carried {r['ab_carried']} corrupt {r['ab_corrupt']} "
      f"dup {r['ab_dup']} reordered {r['ab_reordered']} lost {r['ab_lost']}")
PYEOF
  then ok "$desc: $(cat "$tmp/$t.judge")"
  else bad "$desc" "$tmp/$t.judge" "$tmp/$t.result" "$tmp/$t.err" "$tmp/$t.relay"; fi
}

for t in none corrupt dup reorder drop; do run_case "$t"; done
judge none "clean relay: every frame carried and proved" \
  'r["ab_sent"] == r["ab_carried"] and r["ab_unproved"] == 0 and not (r["ab_corrupt"] or r["ab_dup"] or r["ab_reordered"] or r["ab_lost"])'
judge corrupt "one payload byte flipped: one corrupt, one lost" \
  'r["ab_corrupt"] == 1 and r["ab_lost"] == 1 and r["ab_dup"] == 0 and r["ab_reordered"] == 0'
judge dup "a frame sent twice: one duplicate, nothing lost" \
  'r["ab_dup"] == 1 and r["ab_lost"] == 0 and r["ab_corrupt"] == 0 and r["ab_sent"] == r["ab_carried"]'
judge reorder "a frame held behind the next: one reordered, nothing lost" \
  'r["ab_reordered"] == 1 and r["ab_lost"] == 0 and r["ab_corrupt"] == 0 and r["ab_dup"] == 0 and r["ab_sent"] == r["ab_carried"]'
judge drop "a dropped frame: one lost, nothing corrupt" \
  'r["ab_lost"] == 1 and r["ab_corrupt"] == 0 and r["ab_dup"] == 0 and r["ab_reordered"] == 0'
for t in none corrupt dup reorder drop; do
  if [ "$t" = none ]; then
    grep -q tampered "$tmp/$t.relay" && bad "clean relay tampered" "$tmp/$t.relay" || ok "clean relay left every frame alone"
  else
    grep -q "tampered $t" "$tmp/$t.relay" && ok "relay applied '$t' once" || bad "relay did not apply '$t'" "$tmp/$t.relay"
  fi
done

echo "bench driver: $pass passed, $fail failed"
[ "$fail" = 0 ]
