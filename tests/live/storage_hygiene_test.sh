#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Storage hygiene (issue 29 item 4), proven against the reference on the same inputs:
#  1. known destinations cleaned: the same known_destinations file, path set, ratchet files
#     and clock go through the reference's Identity.clean_known_destinations and rnsc's
#     (tests/live/store_tool clean); kept entries, their last_used, and the ratchet files left
#     must agree, and each side loads the other's result.
#  2. announce cache cleaned: the same cache/announces folder and path table through
#     Transport.clean_announce_cache and rnsc's; the files left must agree.
#  3. kill -9 during writes: tests/live/store_tool churn rewrites known_destinations and
#     packet_hashlist.raw after every change; it is killed at random moments 30 times and
#     after every kill both rnsc's loader and the reference's load what is on disk.
#  4. last_used and retain through a shared instance: a reference program attached to
#     rnsc daemon (then to rnsd, the same steps) recalls one destination and retains two; the
#     instance's known_destinations written at shutdown must say so in the same way.
#  5. the daemon killed -9 at random moments of its shutdown writes (a 20000-entry table):
#     what is on disk loads whole in rnsc and in the reference, every time.
#  6. tunnels: rnsc's storage/tunnels (and cached announces) restored by the reference's own
#     Transport.start and saved back alike; rnsc restores the reference's; a tunnel whose
#     announces are gone from the cache is left out, as the reference leaves it.
set -u
. "$(dirname "$0")/../common/lib.sh"
TOOL="$B/tests/live/store_tool"
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -20 "$f" | sed 's/^/     /'; done; }
[ -x "$PY" ] || { echo "FAIL no python in $VENV (make venv)"; exit 1; }
[ -x "$RNSC" ] && [ -x "$TOOL" ] || { echo "FAIL $RNSC or $TOOL is not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-hygiene.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; sleep 0.2; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"; }
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
NOW=1764000000

# ---- 1. known destinations cleaned -----------------------------------------------------
mkdir -p "$tmp/k_ref/ratchets" "$tmp/k_rnsc/ratchets"
"$PY" - "$tmp" "$NOW" >"$tmp/gen.out" 2>&1 <<'PYEOF'
import os, sys, itertools
sys.path.insert(0, os.path.dirname(os.path.dirname(__import__("RNS").__file__)))
import RNS.vendor.umsgpack as mp
tmp, now = sys.argv[1], float(sys.argv[2])
kd, paths, n = {}, [], 0
day = 86400.0
# every combination of: a path or not, last_used, time since the last announce
uses = [0, -1, now - 100.5, now - 8 * day, now - 9 * day, -5, 0.0]
ages = [60, 1000, 30 * day]
for has_path, lu, age in itertools.product([True, False], uses, ages):
    n += 1
    h = os.urandom(16)
    kd[h] = [now - age + 0.25, os.urandom(32), os.urandom(64), (b"app%d" % n) if n % 2 else None, lu]
    if has_path: paths.append(h)
for age in ages:  # four-element records of older files: last_used taken as 0
    h = os.urandom(16)
    kd[h] = [now - age, os.urandom(32), os.urandom(64), None]
    paths.append(h) if age == 60 else None
blob = mp.packb(kd)
for side in ("k_ref", "k_rnsc"):
    open(os.path.join(tmp, side, "known_destinations"), "wb").write(blob)
    for h in kd:
        open(os.path.join(tmp, side, "ratchets", h.hex()), "wb").write(b"r")
open(os.path.join(tmp, "paths"), "w").write("".join(h.hex() + "\n" for h in paths))
print(len(kd), "entries,", len(paths), "with a path")
PYEOF
[ $? = 0 ] || { bad "generating the inputs" "$tmp/gen.out"; exit 1; }
"$PY" - "$tmp/k_ref" "$NOW" "$tmp/paths" >"$tmp/kref.out" 2>&1 <<'PYEOF'
import sys, time
import RNS
storage, now, pathfile = sys.argv[1], float(sys.argv[2]), sys.argv[3]
time.time = lambda: now  # the same clock as rnsc's run
class Owner: is_connected_to_shared_instance = False
RNS.loglevel = RNS.LOG_CRITICAL
RNS.Reticulum.storagepath = storage
RNS.Transport.owner = Owner()
RNS.Transport.path_table = {bytes.fromhex(l.strip()): None for l in open(pathfile) if l.strip()}
RNS.Identity.load_known_destinations()
before = len(RNS.Identity.known_destinations)
RNS.Identity.clean_known_destinations()
print("removed", before - len(RNS.Identity.known_destinations), "kept", len(RNS.Identity.known_destinations))
PYEOF
[ $? = 0 ] || bad "the reference's clean_known_destinations" "$tmp/kref.out"
"$TOOL" clean "$tmp/k_rnsc" "${NOW}000" "$tmp/paths" >"$tmp/krnsc.out" 2>&1 || bad "store_tool clean" "$tmp/krnsc.out"
"$PY" - "$tmp/k_ref" "$tmp/k_rnsc" >"$tmp/kcmp.out" 2>&1 <<'PYEOF'
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(__import__("RNS").__file__)))
import RNS.vendor.umsgpack as mp
a, b = [mp.unpackb(open(os.path.join(d, "known_destinations"), "rb").read()) for d in sys.argv[1:3]]
bad = []
if set(a) != set(b):
    bad.append("kept sets differ: only ref %d, only rnsc %d" % (len(set(a) - set(b)), len(set(b) - set(a))))
for h in set(a) & set(b):
    ea, eb = a[h], b[h]
    if len(eb) != 5: bad.append("%s: rnsc wrote %d fields" % (h.hex(), len(eb)))
    lua = ea[4] if len(ea) > 4 else 0
    if lua != eb[4] or (type(lua) is int) != (type(eb[4]) is int):
        bad.append("%s last_used %r vs %r" % (h.hex(), lua, eb[4]))
    if abs(ea[0] - eb[0]) > 0.001 or ea[1:4] != eb[1:4]:
        bad.append("%s record differs" % h.hex())
ra, rb = [set(os.listdir(os.path.join(d, "ratchets"))) for d in sys.argv[1:3]]
if ra != rb: bad.append("ratchet files left differ: %d vs %d" % (len(ra), len(rb)))
print("\n".join(bad) if bad else "kept %d of the same entries, %d ratchet files, last_used alike" % (len(a), len(ra)))
sys.exit(1 if bad else 0)
PYEOF
if [ $? = 0 ]; then ok "known destinations cleaned as the reference cleans them ($(cat "$tmp/kref.out"); $(cat "$tmp/kcmp.out"))"
else bad "known destinations cleaned differently" "$tmp/kcmp.out" "$tmp/kref.out" "$tmp/krnsc.out"; fi
# cross-load: rnsc loads the reference's result, the reference loads rnsc's
"$TOOL" load "$tmp/k_ref" >"$tmp/xl1.out" 2>&1 && grep -q "^known $(sed -n 's/.*kept \([0-9]*\).*/\1/p' "$tmp/kref.out") " "$tmp/xl1.out" \
  && ok "rnsc loads the reference's cleaned file: $(cat "$tmp/xl1.out")" || bad "rnsc loading the reference's file" "$tmp/xl1.out"
"$PY" - "$tmp/k_rnsc" >"$tmp/xl2.out" 2>&1 <<'PYEOF'
import sys, RNS
RNS.loglevel = RNS.LOG_CRITICAL
RNS.Reticulum.storagepath = sys.argv[1]
RNS.Identity.load_known_destinations()
n = len(RNS.Identity.known_destinations)
assert n > 0 and all(len(e) == 5 for e in RNS.Identity.known_destinations.values())
print("known", n)
PYEOF
[ $? = 0 ] && ok "the reference loads rnsc's cleaned file: $(cat "$tmp/xl2.out")" || bad "the reference loading rnsc's file" "$tmp/xl2.out"

# ---- 2. announce cache cleaned ---------------------------------------------------------
# Names that are not hex stop the reference's clean_announce_cache with an exception
# (target_hash unbound, rns 1.5.4) before it reaches the rest, so they go only into rnsc's
# folder: rnsc removes them, as the reference's "except: remove = True" means to.
mkdir -p "$tmp/c_ref/cache/announces" "$tmp/c_rnsc/cache/announces"
"$PY" - "$tmp" >"$tmp/cgen.out" 2>&1 <<'PYEOF'
import os, sys
tmp = sys.argv[1]
paths, names = [], []
for i in range(12):
    d, ph = os.urandom(16), os.urandom(32)
    if i < 6: paths.append((d, ph))           # announces of live paths: kept
    names.append(ph.hex())                   # the others: removed
names += ["00" * 31, paths[0][1].hex().upper()]
for side in ("c_ref", "c_rnsc"):
    base = os.path.join(tmp, side, "cache", "announces")
    for nm in names: open(os.path.join(base, nm), "wb").write(b"x")
    os.mkdir(os.path.join(base, "a_directory"))
for nm in ["junk", ".%s.tmp.1" % paths[1][1].hex()]:
    open(os.path.join(tmp, "c_rnsc", "cache", "announces", nm), "wb").write(b"x")
open(os.path.join(tmp, "cpaths"), "w").write("".join("%s %s\n" % (d.hex(), ph.hex()) for d, ph in paths))
PYEOF
"$PY" - "$tmp/c_ref" "$tmp/cpaths" >"$tmp/cref.out" 2>&1 <<'PYEOF'
import os, sys, RNS
st, pf = sys.argv[1], sys.argv[2]
RNS.loglevel = RNS.LOG_CRITICAL
RNS.Reticulum.cachepath = os.path.join(st, "cache")
RNS.Transport.path_table = {}
for l in open(pf):
    d, ph = l.split()
    RNS.Transport.path_table[bytes.fromhex(d)] = [0, None, 1, 0, [], None, bytes.fromhex(ph)]
RNS.Transport.tunnels = {}
RNS.Transport.clean_announce_cache()  # uncaught here: an exception fails the check
print(len(os.listdir(os.path.join(st, "cache", "announces"))), "left")
PYEOF
[ $? = 0 ] || bad "the reference's clean_announce_cache" "$tmp/cref.out"
"$TOOL" cache "$tmp/c_rnsc" "$tmp/cpaths" >"$tmp/crnsc.out" 2>&1 || bad "store_tool cache" "$tmp/crnsc.out"
if diff <(ls -a "$tmp/c_ref/cache/announces") <(ls -a "$tmp/c_rnsc/cache/announces") >"$tmp/cdiff.out"; then
  ok "announce cache cleaned as the reference cleans it (rnsc $(cat "$tmp/crnsc.out") incl. 2 non-hex names, reference: $(cat "$tmp/cref.out"))"
else bad "announce caches differ after cleaning (< reference, > rnsc)" "$tmp/cdiff.out"; fi

# ---- 3. kill -9 during writes ------------------------------------------------------------
mkdir -p "$tmp/churn"
KILLS=${KILLS:-30}
lastn=0 kfail=0
for i in $(seq 1 "$KILLS"); do
  "$TOOL" churn "$tmp/churn" >"$tmp/churn.out" 2>&1 & CP=$!
  # a random moment 20..420 ms into the writing (which starts once the first write is done:
  # a sanitizer build takes a while to get there), both files rewritten after every change
  wait_for 20 grep -qs "^churn" "$tmp/churn.out" || { kfail=1; bad "kill $i: churn did not start" "$tmp/churn.out"; break; }
  sleep "0.$(printf '%03d' $((20 + RANDOM % 400)))"
  kill -9 $CP; wait $CP 2>/dev/null
  if ! "$TOOL" load "$tmp/churn" >"$tmp/cl.out" 2>&1; then kfail=1; bad "kill $i: rnsc cannot load what the killed writer left" "$tmp/cl.out"; break; fi
  n=$(sed -n 's/^known \([0-9]*\) .*/\1/p' "$tmp/cl.out")
  [ "${n:-0}" -ge "$lastn" ] || { kfail=1; bad "kill $i: $n entries after $lastn (a write went back)"; break; }
  lastn=$n
  cp -r "$tmp/churn" "$tmp/snap.$i"
done
"$PY" - "$tmp" "$KILLS" >"$tmp/snaps.out" 2>&1 <<'PYEOF'
import os, sys, RNS
tmp, k = sys.argv[1], int(sys.argv[2])
RNS.loglevel = RNS.LOG_CRITICAL
sizes = []
for i in range(1, k + 1):
    d = os.path.join(tmp, "snap.%d" % i)
    if not os.path.isdir(d): break
    RNS.Reticulum.storagepath = d
    RNS.Identity.known_destinations = {}
    RNS.Identity.load_known_destinations()
    n = len(RNS.Identity.known_destinations)
    raw = open(os.path.join(d, "packet_hashlist.raw"), "rb").read() if os.path.exists(os.path.join(d, "packet_hashlist.raw")) else b""
    assert len(raw) % 32 == 0, (i, len(raw))
    leftovers = [f for f in os.listdir(d) if ".tmp" in f]
    sizes.append((n, len(raw) // 32, len(leftovers)))
print(len(sizes), "snapshots loaded by the reference; entries", sizes[0][0], "..", sizes[-1][0],
      "; temp files a kill left (removed at the next load):", sum(s[2] for s in sizes))
sys.exit(0 if sizes and all(s[0] > 0 for s in sizes[1:]) else 1)
PYEOF
[ $? = 0 ] && [ $kfail = 0 ] && ok "$KILLS kills -9 during writes: rnsc loaded every one (last: $(cat "$tmp/cl.out")); $(cat "$tmp/snaps.out")" \
  || bad "storage after kill -9 did not load in the reference" "$tmp/snaps.out"

# ---- 4. last_used and retain through a shared instance, rnsc daemon and rnsd ---------------
read -r PORT < <("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
run_instance() { # run_instance KIND: the same steps against rnsc daemon or rnsd
  local kind=$1 d="$tmp/i_$1" inst="rnschyg$$$1$RANDOM"
  mkdir -p "$d/I" "$d/R"
  printf '[reticulum]\n  share_instance = yes\n  instance_name = %s\n  enable_transport = yes\n[logging]\n  loglevel = 4\n[interfaces]\n  [[TCP in]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n' "$inst" "$PORT" >"$d/I/config"
  printf '[reticulum]\n  share_instance = no\n[logging]\n  loglevel = 2\n[interfaces]\n  [[To I]]\n    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %s\n' "$PORT" >"$d/R/config"
  if [ "$kind" = rnsc ]; then "$RNSC" daemon --config "$d/I" --http 0 >"$d/I.log" 2>&1 & DI=$!
  else "$VENV/bin/rnsd" --config "$d/I" >"$d/I.log" 2>&1 & DI=$!; fi
  pids+=($DI)
  wait_for 30 grep -qs "@rns/$inst" /proc/net/unix || { bad "$kind: the instance did not open @rns/$inst" "$d/I.log"; return 1; }
  "$PY" - "$d/R" "$d/hashes" >"$d/R.log" 2>&1 <<'PYEOF' & DR=$!; pids+=($DR)
import RNS, sys, time
RNS.Reticulum(sys.argv[1], loglevel=2)
end = time.time() + 20
while not any(i.online for i in RNS.Transport.interfaces) and time.time() < end: time.sleep(0.1)
ids = [RNS.Identity() for _ in range(3)]
ds = [RNS.Destination(ids[i], RNS.Destination.IN, RNS.Destination.SINGLE, "rnschyg", "d%d" % i) for i in range(3)]
for d in ds: d.announce(); time.sleep(0.2)
open(sys.argv[2], "w").write(" ".join(d.hash.hex() for d in ds) + " " + ids[2].hash.hex() + "\n")
print("announced", flush=True)
time.sleep(120)
PYEOF
  wait_for 30 grep -qs "^announced" "$d/R.log" || { bad "$kind: the standalone program did not announce" "$d/R.log"; return 1; }
  # the attached program uses the instance's own config directory (its RPC key is derived
  # from the identity stored there), as programs on the same machine do
  timeout 60 "$PY" - "$d/I" "$d/hashes" >"$d/C.log" 2>&1 <<'PYEOF'
import RNS, sys, time
r = RNS.Reticulum(sys.argv[1], loglevel=2, logdest=RNS.LOG_STDOUT)
assert r.is_connected_to_shared_instance, "not attached to the shared instance"
h = [bytes.fromhex(x) for x in open(sys.argv[2]).read().split()]
end = time.time() + 30
while not all(RNS.Transport.has_path(x) for x in h[:3]) and time.time() < end:
    for x in h[:3]:
        if not RNS.Transport.has_path(x): RNS.Transport.request_path(x)
    time.sleep(1)
assert all(RNS.Transport.has_path(x) for x in h[:3]), "no paths"
assert RNS.Identity.recall(h[0]) is not None  # a use, told to the instance
print("retain", r._retain_destination_data(h[1]), "retain_identity", r._retain_identity(h[3]),
      "unknown", r._retain_destination_data(b"\0" * 16), flush=True)
PYEOF
  [ $? = 0 ] || { bad "$kind: the attached program" "$d/C.log"; return 1; }
  kill -TERM $DI; wait_for 20 bash -c "! kill -0 $DI 2>/dev/null"; wait $DI 2>/dev/null
  kill $DR 2>/dev/null
  "$PY" - "$d/I/storage/known_destinations" "$d/hashes" >"$d/classes" 2>"$d/classes.err" <<'PYEOF'
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(__import__("RNS").__file__)))
import RNS.vendor.umsgpack as mp
kd = mp.unpackb(open(sys.argv[1], "rb").read())
h = [bytes.fromhex(x) for x in open(sys.argv[2]).read().split()][:3]
def cls(v):
    if type(v) is int: return "int%d" % v
    return "recent-float" if time.time() - 300 < v <= time.time() else "float?"
print(" ".join("d%d:%s" % (i, cls(kd[x][4]) if x in kd else "absent") for i, x in enumerate(h)))
PYEOF
  echo "$(cat "$d/classes") ($(cat "$d/C.log"))"
}
out_rnsc=$(run_instance rnsc) && out_rnsd=$(run_instance rnsd)
echo "     rnsc daemon: $out_rnsc"; echo "     rnsd:        $out_rnsd"
exp="d0:recent-float d1:int-1 d2:int-1"
if [ "${out_rnsc%% (*}" = "$exp" ] && [ "${out_rnsd%% (*}" = "$exp" ] && [ "${out_rnsc#* (}" = "${out_rnsd#* (}" ]; then
  ok "a shared-instance client's recall and retains land in the instance's known_destinations as with rnsd ($exp)"
else bad "last_used / retain through the shared instance differ from rnsd (want $exp)" "$tmp/i_rnsc/I.log" "$tmp/i_rnsc/C.log" "$tmp/i_rnsd/C.log"; fi

# ---- 5. the daemon killed -9 while it writes ---------------------------------------------
# rnsc daemon starts on a storage with a large known_destinations (from part 3's churn plus
# 20000 generated entries), gets SIGTERM (it then writes every table) and SIGKILL at a random
# moment 0..150 ms later, again and again; what is on disk must load in rnsc and the reference.
mkdir -p "$tmp/D/storage"
cp "$tmp/churn/known_destinations" "$tmp/churn/packet_hashlist.raw" "$tmp/D/storage/"
"$PY" - "$tmp/D/storage/known_destinations" >"$tmp/dgen.out" 2>&1 <<'PYEOF'
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(__import__("RNS").__file__)))
import RNS.vendor.umsgpack as mp
kd = mp.unpackb(open(sys.argv[1], "rb").read())
for i in range(20000):
    kd[os.urandom(16)] = [time.time(), os.urandom(32), os.urandom(64), b"x" * (i % 40), 0 if i % 3 else time.time()]
open(sys.argv[1], "wb").write(mp.packb(kd))
print(len(kd))
PYEOF
DN=$(cat "$tmp/dgen.out")
read -r DPORT < <("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf '[reticulum]\n  share_instance = no\n  enable_transport = yes\n[logging]\n  loglevel = 4\n[interfaces]\n  [[TCP in]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n' "$DPORT" >"$tmp/D/config"
DKILLS=${DKILLS:-8} dfail=0 dsaved=0
for i in $(seq 1 "$DKILLS"); do
  "$RNSC" daemon --config "$tmp/D" --http 0 >"$tmp/D.log" 2>&1 & DD=$!
  wait_for 30 grep -qs "status endpoint on" "$tmp/D.log" || { dfail=1; bad "kill $i: the daemon did not start" "$tmp/D.log"; break; }
  kill -TERM $DD; sleep "0.$(printf '%03d' $((RANDOM % 150)))"; kill -9 $DD 2>/dev/null; wait $DD 2>/dev/null
  grep -qs "saved\|shutting down" "$tmp/D.log" && dsaved=$((dsaved + 1))
  "$TOOL" load "$tmp/D/storage" >"$tmp/dl.out" 2>&1 && grep -q "^known $DN " "$tmp/dl.out" \
    || { dfail=1; bad "kill $i: rnsc did not load all $DN known destinations after the kill" "$tmp/dl.out" "$tmp/D.log"; break; }
  "$PY" - "$tmp/D/storage" "$DN" >"$tmp/dr.out" 2>&1 <<'PYEOF' || { dfail=1; bad "kill $i: the reference could not load the daemon's storage" "$tmp/dr.out"; break; }
import os, sys, RNS
RNS.loglevel = RNS.LOG_CRITICAL
RNS.Reticulum.storagepath = sys.argv[1]
RNS.Identity.load_known_destinations()
assert len(RNS.Identity.known_destinations) == int(sys.argv[2]), len(RNS.Identity.known_destinations)
assert os.path.getsize(os.path.join(sys.argv[1], "packet_hashlist.raw")) % 32 == 0
PYEOF
done
[ $dfail = 0 ] && ok "rnsc daemon killed -9 $DKILLS times at random moments of its shutdown writes ($dsaved logged the shutdown first): all $DN known destinations load in rnsc and the reference every time"

# ---- 6. tunnels persisted: rnsc writes, the reference's Transport.start loads and saves, rnsc
# loads that ---------------------------------------------------------------------------------
mkdir -p "$tmp/T/storage"
printf '[reticulum]\n  share_instance = no\n  enable_transport = yes\n[logging]\n  loglevel = 2\n[interfaces]\n' >"$tmp/T/config"
if "$TOOL" tunnels-make "$tmp/T/storage" >"$tmp/tm.out" 2>&1; then
  "$PY" - "$tmp/T/storage/tunnels" >"$tmp/t_rnsc.json" 2>&1 <<'PYEOF'
import os, sys, json
sys.path.insert(0, os.path.dirname(os.path.dirname(__import__("RNS").__file__)))
import RNS.vendor.umsgpack as mp
t = mp.unpackb(open(sys.argv[1], "rb").read())
print(json.dumps(sorted([[e[0].hex(), e[1], round(e[3], 3), sorted([[p[0].hex(), round(p[1], 3), p[2].hex(), p[3], round(p[4], 3), sorted(b.hex() for b in p[5]), p[6], p[7].hex()] for p in e[2]])] for e in t])))
PYEOF
  cp "$tmp/T/storage/tunnels" "$tmp/tunnels.rnsc"
  timeout 60 "$PY" - "$tmp/T" >"$tmp/t_ref.out" 2>&1 <<'PYEOF'
import os, sys, json, RNS
RNS.Reticulum(sys.argv[1], loglevel=2)  # Transport.start loads storage/tunnels with the cache
t = RNS.Transport.tunnels
print("tunnels", len(t), "paths", sum(len(e[2]) for e in t.values()))
os.unlink(os.path.join(RNS.Reticulum.storagepath, "tunnels"))
RNS.Transport.save_tunnel_table()
PYEOF
  "$PY" - "$tmp/T/storage/tunnels" >"$tmp/t_ref.json" 2>&1 <<'PYEOF'
import os, sys, json
sys.path.insert(0, os.path.dirname(os.path.dirname(__import__("RNS").__file__)))
import RNS.vendor.umsgpack as mp
t = mp.unpackb(open(sys.argv[1], "rb").read())
print(json.dumps(sorted([[e[0].hex(), e[1], round(e[3], 3), sorted([[p[0].hex(), round(p[1], 3), p[2].hex(), p[3], round(p[4], 3), sorted(b.hex() for b in p[5]), p[6], p[7].hex()] for p in e[2]])] for e in t])))
PYEOF
  if grep -q "^tunnels 2 paths 4" "$tmp/t_ref.out" && cmp -s "$tmp/t_rnsc.json" "$tmp/t_ref.json"; then
    ok "the reference's Transport.start restores rnsc's storage/tunnels ($(grep ^tunnels "$tmp/t_ref.out")) and saves it back field for field alike"
  else bad "the reference did not restore rnsc's tunnels alike" "$tmp/t_ref.out" "$tmp/t_rnsc.json" "$tmp/t_ref.json"; fi
  "$TOOL" tunnels-load "$tmp/T/storage" >"$tmp/tl.out" 2>&1 && grep -q "^tunnels 2 paths 4" "$tmp/tl.out" \
    && ok "rnsc restores the tunnels the reference saved: $(cat "$tmp/tl.out")" || bad "rnsc loading the reference's tunnels" "$tmp/tl.out"
  # a tunnel whose only announce is gone from the cache is left out, as the reference leaves it
  one=$("$PY" -c 'import sys,os; sys.path.insert(0, os.path.dirname(os.path.dirname(__import__("RNS").__file__))); import RNS.vendor.umsgpack as mp; t=mp.unpackb(open(sys.argv[1],"rb").read()); print([e for e in t if len(e[2])==1][0][2][0][7].hex())' "$tmp/T/storage/tunnels")
  rm -f "$tmp/T/storage/cache/announces/$one"
  "$TOOL" tunnels-load "$tmp/T/storage" >"$tmp/tl2.out" 2>&1 && grep -q "^tunnels 1 paths 3" "$tmp/tl2.out" \
    && ok "a tunnel without any cached announce is not restored: $(cat "$tmp/tl2.out")" || bad "tunnel without announce" "$tmp/tl2.out"
else bad "store_tool tunnels-make" "$tmp/tm.out"; fi

echo "$(basename "$0" .sh): $pass passed, $fail failed"
[ "$fail" -eq 0 ]
