#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shared instance, live with the pinned reference (real processes, bounded waits,
# a unique instance name and kernel-chosen ports so parallel runs never meet):
#
#   reference program R (rnsclocal.b) --TCP--> rnsc daemon A (shared instance @rns/<inst>)
#                                                 ^ reference program C (rnsclocal.a), attached
#                                                 ^ hostile local peer H (garbage, oversize)
#
# Checked: C attaches to rnsc's shared instance (is_connected_to_shared_instance), C and R
# learn each other's paths through A, send packets both ways and get every proof, and
# open a link each way; H's garbage and oversized frames are counted as drops on its
# connection while A keeps working.
set -u
. "$(dirname "$0")/../common/lib.sh"

command -v curl >/dev/null || { echo "FAIL curl is not installed"; exit 1; }
for tool in rnsd rnstatus; do
  if [ ! -x "$VENV/bin/$tool" ]; then
    echo "FAIL the reference's $tool is not in $VENV/bin (make venv)"; exit 1
  fi
done
[ -x "$RNSC" ] || { echo "FAIL $RNSC is not built"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-local-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap "for p in \"\${pids[@]}\"; do kill \$p 2>/dev/null; done; echo kept $tmp" EXIT

read -r P1 P2 P3 P4 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(4)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
inst="rnsclocal$$x$RANDOM"

wait_for() { # wait_for SECONDS COMMAND...: polls every 0.2 s
  local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done
  return 1
}
alive() { kill -0 "$1" 2>/dev/null; }

mkdir -p "$tmp/A" "$tmp/C" "$tmp/R"
cat >"$tmp/A/config" <<EOF
[reticulum]
  share_instance = yes
  instance_name = $inst
  enable_transport = yes
  respond_to_probes = yes
[logging]
  loglevel = 5
[interfaces]
  [[Remote Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P1
EOF
printf '[reticulum]\n  share_instance = yes\n  instance_name = %s\n[logging]\n  loglevel = 4\n' "$inst" >"$tmp/C/config"
cat >"$tmp/R/config" <<EOF
[reticulum]
  share_instance = no
[logging]
  loglevel = 4
[interfaces]
  [[To A]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P1
EOF

"$RNSC" daemon --config "$tmp/A" --http 0 >"$tmp/A.log" 2>&1 & DA=$!; pids+=($DA)
if wait_for 15 grep -qs "started the shared instance interface" "$tmp/A.log"; then
  ok "rnsc daemon started as the shared instance @rns/$inst"
else
  bad "rnsc daemon did not become the shared instance" "$tmp/A.log"; exit 1
fi

# ---- hostile local peer: garbage and an oversized frame, then it stays connected --------
"$PY" - "$inst" >"$tmp/H.log" 2>&1 <<'EOF' & PH=$!; pids+=($PH)
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("\0rns/" + sys.argv[1])
s.sendall(bytes(range(1, 126)) * 40)                  # no flags: garbage
s.sendall(b"\x7e" + b"\x01" * 300000 + b"\x7e")         # beyond HW_MTU + IFAC
s.sendall(b"\x7e" + b"\x02" * 5 + b"\x7e")              # runt
print("sent", flush=True)
time.sleep(900)  # until cleanup: the shutdown check below needs it still connected
EOF
wait_for 10 grep -qs sent "$tmp/H.log" || bad "hostile peer could not connect" "$tmp/H.log"

# ---- a reference program attached to rnsc's shared instance talks to a remote one --------
# C shares A's transport identity (as programs sharing a config folder do), so its RPC
# calls (next hop, first hop timeout, destination data) are authenticated and answered.
mkdir -p "$tmp/C/storage"; cp "$tmp/A/storage/transport_identity" "$tmp/C/storage/"
timeout 60 "$PY" "$S/tests/live/local_ref_peer.py" b "$tmp/R" "$tmp/a.hash" "$tmp/b.hash" 45 --link \
  >"$tmp/R.out" 2>&1 & PR=$!; pids+=($PR)
timeout 60 "$PY" "$S/tests/live/local_ref_peer.py" a "$tmp/C" "$tmp/b.hash" "$tmp/a.hash" 45 \
  --expect-shared --link >"$tmp/C.out" 2>&1 & PC=$!; pids+=($PC)
wait $PC; rc_c=$?; wait $PR; rc_r=$?
if [ $rc_c = 0 ] && grep -Eqs "a shared=1 sent=3 proved=3 received=3 link=1" "$tmp/C.out" && grep -qs "received=3" "$tmp/R.out"; then
  ok "reference program attached to rnsc's shared instance: $(tail -1 "$tmp/C.out")"
else
  bad "attached reference program (exit $rc_c)" "$tmp/C.out" "$tmp/A.log"
fi
if [ $rc_r = 0 ] && grep -Eqs "b shared=0 sent=3 proved=3 received=3 link=1" "$tmp/R.out" && grep -qs "received=3" "$tmp/C.out"; then
  ok "remote reference program reached the attached one through rnsc: $(tail -1 "$tmp/R.out")"
else
  bad "remote reference program (exit $rc_r)" "$tmp/R.out"
fi

# ---- the RPC: reference rnstatus and rnsc status read rnsc's shared instance alike ---------
wait_for 10 grep -qs "status endpoint on" "$tmp/A.log"
HPORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/status.*/\1/p' "$tmp/A.log" | head -1)
same_but_uptime() { # same_but_uptime A B: identical apart from the "Uptime is" line (and
  # the port of each tool's own connection to a TCP shared instance)
  # and announce / path request frequencies and traffic rates (a one-second window each),
  # which move between the two calls, as do the announce counts of the shared instance's
  # listener: it keeps what each tool's own connection was sent, as the reference's does
  # (tests/live/stats_interop_test.sh checks the counts against rnsd's)
  norm() { grep -v "Uptime is" "$1" | sed 's/LocalInterface\[[0-9]*\]/LocalInterface[port]/' |
    sed -E 's/[0-9.]+ [kmM]?Hz/F Hz/g; s/[0-9.]+ [kKMGT]?bps/R bps/g' |
    sed -E 's/[0-9]+↓ [0-9]+↑ total/N↓ N↑ total/; s/ +/ /g'; }
  diff <(norm "$1") <(norm "$2") >"$tmp/diff" 2>&1
}
# both_status DIR ARGS...: rnstatus and rnsc status on DIR print the same; counters move
# when traffic passes between the two calls, so up to three tries
both_status() {
  local dir=$1; shift
  for try in 1 2 3; do
    timeout 30 "$VENV/bin/rnstatus" --config "$dir" "$@" >"$tmp/ref.out" 2>&1; rr=$?
    timeout 30 "$RNSC" status --config "$dir" "$@" >"$tmp/rnsc.out" 2>&1; rc=$?
    [ $rr = 0 ] && [ $rc = 0 ] && same_but_uptime "$tmp/ref.out" "$tmp/rnsc.out" && return 0
    sleep 1
  done
  return 1
}
for args in "-a" "-A -P -t -l" "-s rx -r" "-t -p" "-s traffic" "Remote"; do
  if both_status "$tmp/A" $args && grep -qs "Shared Instance\[rns/$inst\]\|Remote Server" "$tmp/rnsc.out"; then
    ok "rnstatus $args and rnsc status $args print the same for rnsc's shared instance"
  else
    bad "rnstatus $args ($rr) vs rnsc status $args ($rc) on rnsc's shared instance" "$tmp/diff" "$tmp/ref.out" "$tmp/rnsc.out"
  fi
done
# -m/-I: both tools clear the screen ("\033[H\033[2J") before each frame, one frame per -I
# seconds; the first complete frame of each must match the single status above (a frame
# is cut where the next clear begins; under load a tool may draw one frame less: >= 2 each)
timeout 5 "$VENV/bin/rnstatus" --config "$tmp/A" -m -I 1 >"$tmp/mref.raw" 2>&1
timeout 5 "$RNSC" status --config "$tmp/A" -m -I 1 >"$tmp/mcli.raw" 2>&1
"$PY" - "$tmp/mref.raw" "$tmp/mcli.raw" "$tmp/mref" "$tmp/mcli" >"$tmp/mon.out" 2>&1 <<'EOF'
import re, sys
for src, dst in ((sys.argv[1], sys.argv[3]), (sys.argv[2], sys.argv[4])):
    frames = open(src, encoding="utf-8", errors="replace").read().split("\033[H\033[2J")[1:]
    assert len(frames) >= 3, (src, len(frames))  # at least two complete frames
    # byte totals move between the two runs (each tool's own connection adds to them)
    open(dst, "w").write(re.sub(r"([\u2191\u2193])[0-9.]+ [KMGTP]?B\b", r"\1N B", frames[1]))
    print(src.rsplit("/", 1)[1], len(frames), "frames")
EOF
if [ $? = 0 ] && same_but_uptime "$tmp/mref" "$tmp/mcli" && grep -qs "Shared Instance\[rns/$inst\]" "$tmp/mcli"; then
  ok "rnstatus -m -I 1 and rnsc status -m -I 1 draw the same frames ($(tr '\n' ' ' <"$tmp/mon.out"))"
else bad "status -m -I 1" "$tmp/mon.out" "$tmp/diff"; fi
timeout 30 "$VENV/bin/rnstatus" --config "$tmp/A" -j >"$tmp/ref.json" 2>&1
timeout 30 "$RNSC" status --config "$tmp/A" -j >"$tmp/rnsc.json" 2>&1
curl -s --max-time 10 -o "$tmp/http.json" "http://127.0.0.1:$HPORT/status"
if "$PY" - "$tmp/ref.json" "$tmp/rnsc.json" "$tmp/http.json" >"$tmp/json.out" 2>&1 <<'EOF'
import json, sys
ref, cli, http = (json.load(open(f)) for f in sys.argv[1:4])
def shape(v):  # keys and value types, recursively (values move between the calls)
    if isinstance(v, dict): return {k: shape(x) for k, x in v.items()}
    if isinstance(v, list): return [shape(x) for x in v]
    if v is None: return None
    t = type(v).__name__  # a rate is 0 until traffic is sampled, then a float (both sides)
    return "number" if t in ("int", "float") else t
def same(a, b, what):  # the same keys and types; interfaces matched by name (a status
    # tool is itself attached while it asks, so it sees one more local client than curl)
    ia = {i["name"]: shape(i) for i in a["interfaces"]}
    ib = {i["name"]: shape(i) for i in b["interfaces"]}
    common = set(ia) & set(ib)
    assert len(common) >= 2 and all(ia[n] == ib[n] for n in common), what
    strip = lambda d: {k: shape(v) for k, v in d.items() if k != "interfaces"}
    assert strip(a) == strip(b), what
same(ref, cli, "rnstatus -j and rnsc status -j differ")
same(cli, http, "rnsc status -j and GET /status differ")
for k in ("transport_id", "probe_responder"):
    assert ref[k] == cli[k] == http[k] and len(ref[k]) == 32, k
names = lambda d: sorted(i["name"] for i in d["interfaces"])
assert names(ref) == names(cli), (names(ref), names(cli))
assert any(n.startswith("Shared Instance[rns/") for n in names(http))
print("same document:", len(cli), "keys,", len(cli["interfaces"]), "interfaces")
EOF
then ok "rnstatus -j, rnsc status -j and GET /status serve one document ($(tail -1 "$tmp/json.out"))"
else bad "status JSON documents differ" "$tmp/json.out"; fi

# the RPC key: a wrong one is refused both ways and counted
"$PY" - "$inst" >"$tmp/wrongkey.out" 2>&1 <<'EOF'
import multiprocessing.connection as m, sys
try:
    m.Client("\0rns/%s/rpc" % sys.argv[1], family="AF_UNIX", authkey=b"\x01" * 32)
    print("accepted")
except m.AuthenticationError as e:
    print("refused:", e)
EOF
if grep -qs "^refused" "$tmp/wrongkey.out"; then ok "a Python client with the wrong RPC key is refused ($(cat "$tmp/wrongkey.out"))"
else bad "wrong key Python client" "$tmp/wrongkey.out"; fi
mkdir -p "$tmp/K/storage"
cp "$tmp/A/storage/transport_identity" "$tmp/K/storage/"
printf '[reticulum]\n  share_instance = yes\n  instance_name = %s\n  rpc_key = %s\n' "$inst" "$(printf 'ab%.0s' $(seq 32))" >"$tmp/K/config"
timeout 30 "$RNSC" status --config "$tmp/K" >"$tmp/K.out" 2>&1; rc=$?
if [ $rc = 2 ] && grep -qs "Could not get RNS status" "$tmp/K.out"; then ok "rnsc status with a wrong rpc_key: refused, exit 2"
else bad "rnsc status with a wrong rpc_key (exit $rc)" "$tmp/K.out"; fi
mkdir -p "$tmp/N"; printf '[reticulum]\n  share_instance = yes\n  instance_name = %snone\n' "$inst" >"$tmp/N/config"
timeout 30 "$RNSC" status --config "$tmp/N" >"$tmp/N.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -qs "No shared RNS instance available" "$tmp/N.out"; then ok "rnsc status without a shared instance: exit 1 as rnstatus"
else bad "rnsc status without a shared instance (exit $rc)" "$tmp/N.out"; fi
# hostile RPC peers: garbage, an oversized frame, half a frame then silence
"$PY" - "$inst" >"$tmp/rpch.out" 2>&1 <<'EOF'
import socket, struct, sys, time
addr = "\0rns/%s/rpc" % sys.argv[1]
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(addr); s.settimeout(5); return s
def closed(s):
    try:
        while True:
            d = s.recv(4096)
            if not d: return True
    except OSError:
        return True
s = conn(); s.recv(64); s.sendall(b"\xff" * 64)                 # a negative length
print("garbage closed:", closed(s)); s.close()
s = conn(); s.recv(64); s.sendall(struct.pack("!i", 0x7fffffff) + b"x" * 100)
print("oversize closed:", closed(s)); s.close()
s = conn(); s.recv(64); s.sendall(struct.pack("!i", 16) + b"abc")  # half, then nothing
time.sleep(0.5); s.close()
EOF
timeout 30 "$RNSC" status --config "$tmp/A" -j >"$tmp/after.json" 2>&1
if grep -qs "garbage closed: True" "$tmp/rpch.out" && grep -qs "oversize closed: True" "$tmp/rpch.out" && \
   "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1]))["rnsc"]["rpc"]; assert r["refused"] >= 2 and r["dropped"] >= 3 and r["served"] >= 8, r; print(r)' "$tmp/after.json" >"$tmp/rpcst.out" 2>&1; then
  ok "hostile RPC peers closed and counted, the RPC still serves: $(cat "$tmp/rpcst.out")"
else bad "hostile RPC peers" "$tmp/rpch.out" "$tmp/rpcst.out" "$tmp/after.json"; fi

# ---- rnsc's own tools and the reference's rnprobe attached to rnsc's shared instance ------
PA=$(sed -n 's/.*probe requests on <\([0-9a-f]*\)>.*/\1/p' "$tmp/A.log" | head -1)
timeout 40 "$RNSC" probe --config "$tmp/A" -t 15 rnstransport.probe "$PA" >"$tmp/probeA.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -qs "Valid reply from <$PA>" "$tmp/probeA.out"; then
  ok "rnsc probe attached to rnsc's shared instance gets its probe responder's proof"
else bad "rnsc probe attached to rnsc (exit $rc, <$PA>)" "$tmp/probeA.out"; fi
timeout 40 "$VENV/bin/rnprobe" --config "$tmp/A" -t 15 rnstransport.probe "$PA" >"$tmp/rnprobeA.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -qs "Valid reply from <$PA>" "$tmp/rnprobeA.out"; then
  ok "the reference's rnprobe attached to rnsc's shared instance gets the proof"
else bad "rnprobe attached to rnsc (exit $rc)" "$tmp/rnprobeA.out"; fi

# ---- rnprobe's and rnpath's flags beside rnsc probe / rnsc path, both attached to rnsc's
# shared instance: stdout with spinner frames, log lines and round-trip times taken out must
# match line for line, and rnsc's exit code must be the one given. Where the reference's own
# code is lost, rnsc keeps the one it means: rnprobe/rnpath print a bad hash's message and
# then exit() with 0 (the issue asks for non-zero: rnsc exits 1), and rnprobe's exit(3) for
# a probe over the MTU races the reference's exit handlers (0 or 3 from run to run).
cat >"$tmp/norm.py" <<'EOF'
import re, sys
t = open(sys.argv[1], encoding="utf-8", errors="replace").read()
t = re.sub(r"\x08\x08.? ?", "\n", t)  # spinner frames and their erasures
t = re.sub(r"requested +", "requested\n", t)  # a known path: no spinner frame after it
t = re.sub(r"Round-trip time is [0-9.]+ (milli)?seconds", "Round-trip time is T", t)
t = re.sub(r"\[20[0-9-]+ [0-9:]+\][^\n]*", "", t)  # log lines
print("\n".join(l.strip() for l in t.replace("\r", "\n").split("\n") if l.strip()))
EOF
while IFS='|' read -r tool want args; do
  args=${args//@PA@/$PA}
  case $tool in probe) reft=rnprobe;; path) reft=rnpath;; esac
  timeout 60 "$VENV/bin/$reft" --config "$tmp/A" $args >"$tmp/fref.raw" 2>&1; rr=$?
  timeout 60 "$RNSC" $tool --config "$tmp/A" $args >"$tmp/fcli.raw" 2>&1; rc=$?
  "$PY" "$tmp/norm.py" "$tmp/fref.raw" >"$tmp/fref.out"; "$PY" "$tmp/norm.py" "$tmp/fcli.raw" >"$tmp/fcli.out"
  if [ $rc = "$want" ] && [ -s "$tmp/fref.out" ] && diff "$tmp/fref.out" "$tmp/fcli.out" >"$tmp/fdiff"; then
    ok "$reft $args and rnsc $tool print the same (rnsc exit $rc, reference $rr)"
  else
    bad "$reft $args vs rnsc $tool: rnsc exit $rc (want $want), reference $rr" "$tmp/fdiff" "$tmp/fcli.raw"
  fi
done <<'CASES'
probe|0|-s 32 -n 3 -w 0.2 -t 15 rnstransport.probe @PA@
probe|0|-s 399 -t 15 rnstransport.probe @PA@
probe|0|-v -t 15 rnstransport.probe @PA@
probe|0|--size 0 --probes 2 --timeout 15 --wait 0.1 rnstransport.probe @PA@
probe|3|-s 400 -t 15 rnstransport.probe @PA@
probe|1|-t 5 rnstransport.probe zz@PA@
probe|1|-t 5 rnstransport.probe 0011223344556677889900112233445g
probe|1|-t 2 rnstransport.probe 00112233445566778899aabbccddeeff
path|0|-D
path|0|-t -m 0
path|0|-t -m 3
path|1|-d zz
path|1|-w 2 00112233445566778899aabbccddeeff
CASES

# ---- a shared instance on TCP (shared_instance_type = tcp) -------------------------------
mkdir -p "$tmp/T"
cat >"$tmp/T/config" <<EOF
[reticulum]
  share_instance = yes
  shared_instance_type = tcp
  shared_instance_port = $P3
  instance_control_port = $P4
  enable_transport = yes
  respond_to_probes = yes
[logging]
  loglevel = 5
EOF
"$RNSC" daemon --config "$tmp/T" >"$tmp/T.log" 2>&1 & DT=$!; pids+=($DT)
wait_for 15 grep -qs "respond to probe requests on <" "$tmp/T.log"
PT=$(sed -n 's/.*probe requests on <\([0-9a-f]*\)>.*/\1/p' "$tmp/T.log" | head -1)
if both_status "$tmp/T" -a && grep -qs "Shared Instance\[$P3\]" "$tmp/rnsc.out"; then
  ok "shared instance on TCP 127.0.0.1:$P3 (RPC on $P4): rnstatus and rnsc status agree"
else bad "TCP shared instance status ($rr/$rc)" "$tmp/diff" "$tmp/rnsc.out" "$tmp/T.log"; fi
timeout 40 "$RNSC" probe --config "$tmp/T" -t 15 rnstransport.probe "$PT" >"$tmp/probeT.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -qs "Valid reply from <$PT>" "$tmp/probeT.out"; then
  ok "rnsc probe attached over TCP gets the proof"
else bad "rnsc probe attached over TCP (exit $rc)" "$tmp/probeT.out"; fi
kill -TERM $DT; wait_for 10 sh -c "! kill -0 $DT 2>/dev/null"

# share_instance = no: both tools show a standalone instance of their own
mkdir -p "$tmp/S"
printf '[reticulum]\n  share_instance = no\n[interfaces]\n  [[Alone]]\n    type = UDPInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n    forward_ip = 127.0.0.1\n    forward_port = %s\n' "$P4" "$P3" >"$tmp/S/config"
if both_status "$tmp/S" -a && grep -qs "UDPInterface\[Alone/127.0.0.1:$P4\]" "$tmp/rnsc.out"; then
  ok "share_instance = no: rnsc status and rnstatus show the same standalone instance"
else bad "standalone status" "$tmp/diff" "$tmp/rnsc.out"; fi

# ---- rnsc programs attached to a reference rnsd shared instance -------------------------
inst2="${inst}r"
mkdir -p "$tmp/D" "$tmp/E"
cat >"$tmp/D/config" <<EOF
[reticulum]
  share_instance = yes
  instance_name = $inst2
  enable_transport = yes
  respond_to_probes = yes
[logging]
  loglevel = 4
[interfaces]
  [[To rnsc]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P2
EOF
cat >"$tmp/E/config" <<EOF
[reticulum]
  share_instance = no
  enable_transport = yes
  respond_to_probes = yes
[logging]
  loglevel = 5
[interfaces]
  [[To rnsd]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P2
  [[To rnsc]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P1
EOF
"$VENV/bin/rnsd" --config "$tmp/D" >"$tmp/D.log" 2>&1 & DD=$!; pids+=($DD)
rpc_up() { "$PY" -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect("\0rns/%s/rpc" % sys.argv[1])' "$1" 2>/dev/null; }
wait_for 30 rpc_up "$inst2" || bad "reference rnsd did not start its shared instance" "$tmp/D.log"
"$RNSC" daemon --config "$tmp/E" >"$tmp/E.log" 2>&1 & DE=$!; pids+=($DE)
wait_for 20 grep -qs "respond to probe requests on <" "$tmp/E.log"
PE=$(sed -n 's/.*probe requests on <\([0-9a-f]*\)>.*/\1/p' "$tmp/E.log" | head -1)
e_in() { timeout 20 "$VENV/bin/rnstatus" --config "$tmp/D" >"$tmp/e_in.out" 2>&1 && grep -qs "Clients   : 1" "$tmp/e_in.out"; }
wait_for 20 e_in || bad "rnsc daemon E did not connect to rnsd" "$tmp/e_in.out" "$tmp/E.log"
for args in "-a" "-A -P -t -l"; do
  if both_status "$tmp/D" $args && grep -qs "Shared Instance\[rns/$inst2\]" "$tmp/rnsc.out"; then
    ok "rnsc status $args reads the reference rnsd as rnstatus does"
  else
    bad "rnsc status $args ($rc) vs rnstatus ($rr) on the reference rnsd" "$tmp/diff" "$tmp/rnsc.out"
  fi
done
# The two documents are taken one after the other; a spawned interface that comes or goes
# in between (a client of rnsd under load) changes the list, so up to three pairs are taken.
jd_same() {
  timeout 30 "$VENV/bin/rnstatus" --config "$tmp/D" -j >"$tmp/refd.json" 2>&1
  timeout 30 "$RNSC" status --config "$tmp/D" -j >"$tmp/rnscd.json" 2>&1
  "$PY" -c '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert set(a) == set(b), ("keys", sorted(set(a) ^ set(b)))
assert a["transport_id"] == b["transport_id"], "transport_id"
na, nb = [i["name"] for i in a["interfaces"]], [i["name"] for i in b["interfaces"]]
assert na == nb, ("interfaces", na, nb)' "$tmp/refd.json" "$tmp/rnscd.json" 2>"$tmp/jd.out"
}
if jd_same || { sleep 1; jd_same; } || { sleep 2; jd_same; }; then
  ok "rnsc status -j on the reference rnsd: the document rnstatus -j prints"
else bad "rnsc status -j on rnsd" "$tmp/jd.out"; fi
timeout 40 "$RNSC" probe --config "$tmp/D" -t 20 rnstransport.probe "$PE" >"$tmp/probe.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -qs "Valid reply from <$PE>" "$tmp/probe.out"; then
  ok "rnsc probe attached to the reference rnsd reaches rnsc daemon E through it"
else bad "rnsc probe attached to rnsd (exit $rc, E probe <$PE>)" "$tmp/probe.out" "$tmp/D.log"; fi
rnpath_a() { timeout 20 "$VENV/bin/rnpath" --config "$tmp/A" -t >"$tmp/rnpathA.out" 2>&1 && grep -qs "<$PE> is 1 hop  away via" "$tmp/rnpathA.out"; }
if wait_for 30 rnpath_a; then
  ok "the reference's rnpath -t reads rnsc's path table over the RPC: $(grep "<$PE>" "$tmp/rnpathA.out")"
else bad "rnpath -t on rnsc" "$tmp/rnpathA.out"; fi
# the interface is named by its str(), "TCPInterface[NAME/HOST:PORT]", as rnsd's RPC names it
if grep -Eqs "<$PE> is 1 hop  away via <[0-9a-f]+> on [A-Za-z]+Interface\[.+\] expires" "$tmp/rnpathA.out"; then
  ok "rnsc's RPC path table names the interface as the reference does"
else bad "rnsc's RPC path table: interface not named by its str()" "$tmp/rnpathA.out"; fi
# rnprobe -v asks the shared instance for the next hop and its interface (next_hop,
# next_hop_if_name): rnprobe and rnsc probe attached to rnsc print the same via/on line
timeout 60 "$VENV/bin/rnprobe" --config "$tmp/A" -v -t 20 rnstransport.probe "$PE" >"$tmp/vref.raw" 2>&1
timeout 60 "$RNSC" probe --config "$tmp/A" -v -t 20 rnstransport.probe "$PE" >"$tmp/vcli.raw" 2>&1; rc=$?
"$PY" "$tmp/norm.py" "$tmp/vref.raw" >"$tmp/vref.out"; "$PY" "$tmp/norm.py" "$tmp/vcli.raw" >"$tmp/vcli.out"
if [ $rc = 0 ] && grep -Eqs "via <[0-9a-f]+> on [A-Za-z]+Interface\[" "$tmp/vref.out" && diff "$tmp/vref.out" "$tmp/vcli.out" >"$tmp/vdiff"; then
  ok "rnprobe -v and rnsc probe -v through rnsc's instance: $(grep via "$tmp/vcli.out")"
else bad "probe -v through rnsc's instance (rnsc exit $rc)" "$tmp/vdiff" "$tmp/vref.out" "$tmp/vcli.raw"; fi
timeout 40 "$RNSC" path --config "$tmp/D" -t >"$tmp/path.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -qs "<$PE> is 1 hop  away" "$tmp/path.out"; then
  ok "rnsc path -t attached to the reference rnsd lists its path table"
else bad "rnsc path -t attached to rnsd (exit $rc)" "$tmp/path.out"; fi

# dropping paths over the RPC: rnsc path -x / -d on rnsc's instance, on rnsd's, and the
# reference's rnpath -d on rnsc's
timeout 30 "$RNSC" path --config "$tmp/A" -x "$PE" >"$tmp/dropx.out" 2>&1; rc=$?
gone_a() { timeout 20 "$VENV/bin/rnpath" --config "$tmp/A" -t >"$tmp/rnpathA2.out" 2>&1 && ! grep -qs "<$PE>" "$tmp/rnpathA2.out"; }
if [ $rc = 0 ] && grep -qs "Dropped all paths via <$PE>" "$tmp/dropx.out" && wait_for 20 gone_a; then
  ok "rnsc path -x drops the paths via a transport instance on rnsc's shared instance"
else bad "rnsc path -x on rnsc (exit $rc)" "$tmp/dropx.out" "$tmp/rnpathA2.out"; fi
timeout 30 "$VENV/bin/rnpath" --config "$tmp/A" -d "$PE" >"$tmp/dropd.out" 2>&1; rc=$?
if grep -qs "Unable to drop path to <$PE>. Does it exist?" "$tmp/dropd.out"; then
  ok "rnpath -d on rnsc's shared instance: no such path"
else bad "rnpath -d on rnsc (exit $rc)" "$tmp/dropd.out"; fi
timeout 30 "$RNSC" path --config "$tmp/D" -d "$PE" >"$tmp/dropd2.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -qs "Dropped path to <$PE>" "$tmp/dropd2.out"; then
  ok "rnsc path -d drops a path on the reference rnsd"
else bad "rnsc path -d on rnsd (exit $rc)" "$tmp/dropd2.out"; fi

# an rnsc daemon started while rnsd is the shared instance attaches to it, as a second rnsd
# would, and is counted among the programs rnsd serves
mkdir -p "$tmp/F"
printf '[reticulum]\n  share_instance = yes\n  instance_name = %s\n[logging]\n  loglevel = 5\n[interfaces]\n  [[Not opened]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n' "$inst2" "$P1" >"$tmp/F/config"
"$RNSC" daemon --config "$tmp/F" >"$tmp/F.log" 2>&1 & DF=$!; pids+=($DF)
serving1() { timeout 20 "$VENV/bin/rnstatus" --config "$tmp/D" >"$tmp/Fst.out" 2>&1 && grep -qs "Serving   : 1 program$" "$tmp/Fst.out"; }
if wait_for 15 grep -qs "connected to the locally available Reticulum instance" "$tmp/F.log" && \
   wait_for 20 serving1 && ! grep -qs "Not opened" "$tmp/F.log"; then
  ok "rnsc daemon attaches to the reference rnsd's shared instance (rnstatus: Serving 1 program)"
else bad "rnsc daemon attached to rnsd" "$tmp/F.log" "$tmp/Fst.out"; fi
kill -TERM $DF; wait_for 10 sh -c "! kill -0 $DF 2>/dev/null" && ok "attached rnsc daemon stops cleanly" || bad "attached daemon did not stop" "$tmp/F.log"

# ---- a connection flood on the local socket: beyond 128 programs, refused and counted ------
"$PY" - "$inst" >"$tmp/flood.out" 2>&1 <<'EOF' &
import socket, sys, time
socks = []
for i in range(160):
    s = socket.socket(socket.AF_UNIX); s.connect("\0rns/" + sys.argv[1]); socks.append(s)
print("connected", len(socks), flush=True)
time.sleep(6)
EOF
FL=$!; pids+=($FL)
wait_for 10 grep -qs connected "$tmp/flood.out"
sleep 1
timeout 30 "$RNSC" status --config "$tmp/A" -j >"$tmp/flood.json" 2>&1
if "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
(si,) = [i for i in d["interfaces"] if i["name"].startswith("Shared Instance[")]
assert si["clients"] <= 128 and si["rnsc_drops"]["refused"] >= 30, (si["clients"], si["rnsc_drops"])
print("clients", si["clients"], "refused", si["rnsc_drops"]["refused"])' "$tmp/flood.json" >"$tmp/flood.chk" 2>&1; then
  ok "connection flood on the local socket: at most 128 programs, the rest refused and counted ($(cat "$tmp/flood.chk"))"
else bad "local connection flood" "$tmp/flood.chk" "$tmp/flood.out"; fi
kill $FL 2>/dev/null; wait $FL 2>/dev/null

# ---- shutdown: the hostile connection's drops were counted, the daemon is still alive -----
if alive $DA; then ok "rnsc daemon survived the hostile local peer"; else bad "rnsc daemon died" "$tmp/A.log"; fi
kill -TERM $DA; wait_for 10 sh -c "! kill -0 $DA 2>/dev/null"
line=$(grep "stats: 0@rns/$inst" "$tmp/A.log" | tail -1)
if echo "$line" | grep -Eq "runt [1-9][0-9]* oversize [1-9][0-9]* garbage [1-9][0-9]* bytes"; then
  ok "hostile local peer: runt, oversized and garbage input counted ($line)"
else
  bad "hostile local peer drops not counted: '$line'" "$tmp/A.log"
fi

echo "local interop: $pass passed, $fail failed"
[ $fail = 0 ]
