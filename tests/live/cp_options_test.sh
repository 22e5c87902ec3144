#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc cp's options against the reference's rncp, each compared with what rncp does in the same
# run (tests/live/cp_interop_test.sh covers send/listen, -a, -S, -C, -s, -p; the fetch options are in
# tests/live/cp_fetch_interop_test.sh). Across the wire, on loopback TCP:
#   -n   rnsc cp -> rncp -l -n and rncp -> rnsc cp -l -n from identities never allowed (-a)
#   -i   identity files made by one tool (missing file: created) read by the other: same hashes
#        from -p; listeners on those files are reached at the hash the other tool prints, and
#        senders using them are reported by the listener ("from <identity>") under that hash
#   -O   both listeners with name collisions: without -O the file lands as NAME.2 next to NAME
#        and NAME.1 (rncp's counter), with -O NAME is replaced and NAME.1 left alone; the same
#        for rnsc cp -f (fetching from rncp -l -F) into a save folder
#   -b   a reference observer counts announces: -b 1 repeats them, no -b announces only once
#   -v/-vv/-q  the same log lines appear (or not) in both tools' output at each level
#   -P, progress  under a pseudo-terminal (script(1)) both tools draw rncp's progress lines
#        (percent, sizes, rate, "at physical layer" with -P) and the completion line; with -S
#        neither does; rnsc cp without a terminal prints step lines only (rncp draws its
#        progress lines into a pipe too: a deliberate difference, reported in the output)
# Locally: an unusable -i file (exit 2 and rncp's message, listen and send), -w against an
# unknown destination with a refused and with a connected interface (rncp waits
# max(-w, medium path timeout), from its start): rc 1, "Path not found", the same wait
# (within 1.5 s: rncp's is timed from its "Path ... requested" line, after its startup).
# Every wait is bounded; processes are cleaned up; a reference that cannot start fails.
set -u
. "$(dirname "$0")/../common/lib.sh"
RNCP=("$PY" -m RNS.Utilities.rncp)
export PYTHONUNBUFFERED=1
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -15 "$f" | sed 's/^/     /'; done; }
check() { local tag=$1; shift; if "$@"; then ok "$tag"; else bad "$tag"; fi; }

if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL the reference (RNS) does not import with $PY (make venv)"; exit 1
fi
[ -x "$RNSC" ] || { echo "FAIL $RNSC is not built"; exit 1; }
command -v script >/dev/null || { echo "FAIL script(1) (bsdutils) is needed for the terminal checks"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-cpo-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT

# PA..PD: listeners; PO: the announce observer; PX: bound to nothing (a refused TCP client)
read -r PA PB PC PD PO PX < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(6)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

wait_for() { local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }

config() { # config DIR none|server PORT|client PORT...
local d=$1 kind=$2; shift 2
mkdir -p "$d"
{ printf '[reticulum]\n  enable_transport = no\n  share_instance = no\n[logging]\n  loglevel = 4\n[interfaces]\n'
  local k=0
  for p in "$@"; do k=$((k+1))
    if [ "$kind" = server ]; then
      printf '  [[L%s]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n' $k "$p"
    else
      printf '  [[L%s]]\n    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %s\n' $k "$p"
    fi
  done; } >"$d/config"
}
add_client() { printf '  [[Obs]]\n    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %s\n' "$2" >>"$1/config"; }
idof() { sed -n 's/^Identity *: <\(.*\)>.*/\1/p'; }
dstof() { sed -n 's/^Listening on : <\(.*\)>.*/\1/p'; }
has() { grep -aq -- "$1" "$2" && echo yes || echo no; }

# ---- -i: identity files made by one tool, read by the other; -vv / default log lines -------
# Every process below gets a config directory of its own: the reference creates its storage
# folders with a check-then-makedirs (Reticulum.__init__) and its transport identity with a
# check-then-write, so two first starts on one folder at once can crash one of them.
cfg() { config "$tmp/P_$1" none; echo "$tmp/P_$1"; }
mkdir -p "$tmp/sv"
# creation (the file is missing): rnsc makes idL1 and idS1, rncp idL2 and idS2
"$RNSC" cp --config "$(cfg mkL1)" -p -vv -s "$tmp/sv" -i "$tmp/idL1" >"$tmp/mkL1.log" 2>&1; rc1=$?
"$RNSC" cp --config "$(cfg mkS1)" -p -i "$tmp/idS1" >"$tmp/mkS1.log" 2>&1; rc3=$?
"${RNCP[@]}" --config "$(cfg mkL2)" -p -vv -s "$tmp/sv" -i "$tmp/idL2" >"$tmp/mkL2.log" 2>&1 & m2=$!
"${RNCP[@]}" --config "$(cfg mkS2)" -p -i "$tmp/idS2" >"$tmp/mkS2.log" 2>&1; rc4=$?
wait $m2; rc2=$?
# unusable identity files (empty; 65 bytes: the reference needs 64), listen (-p) and send
: >"$tmp/bad_empty"; head -c 65 /dev/urandom >"$tmp/bad_65"; echo hello >"$tmp/hello.txt"
"${RNCP[@]}" --config "$(cfg br1)" -p -i "$tmp/bad_empty" >"$tmp/badr1.log" 2>&1 & b1=$!
"${RNCP[@]}" --config "$(cfg br2)" -S -i "$tmp/bad_65" "$tmp/hello.txt" 00112233445566778899aabbccddeeff >"$tmp/badr2.log" 2>&1 & b2=$!
"${RNCP[@]}" --config "$(cfg br3)" -p -qqq -i "$tmp/bad_65" >"$tmp/badr3.log" 2>&1 & b3=$!
"$RNSC" cp --config "$(cfg bn1)" -p -i "$tmp/bad_empty" >"$tmp/badn1.log" 2>&1; bn1=$?
"$RNSC" cp --config "$(cfg bn2)" -S -i "$tmp/bad_65" "$tmp/hello.txt" 00112233445566778899aabbccddeeff >"$tmp/badn2.log" 2>&1; bn2=$?
"$RNSC" cp --config "$(cfg bn3)" -p -qqq -i "$tmp/bad_65" >"$tmp/badn3.log" 2>&1; bn3=$?
# the other tool reads each file
"${RNCP[@]}" --config "$(cfg rdL1)" -p -i "$tmp/idL1" >"$tmp/rdL1.log" 2>&1 & r1=$!
"${RNCP[@]}" --config "$(cfg rdS1)" -p -i "$tmp/idS1" >"$tmp/rdS1.log" 2>&1 & r3=$!
"$RNSC" cp --config "$(cfg rdL2)" -p -i "$tmp/idL2" >"$tmp/rdL2.log" 2>&1
"$RNSC" cp --config "$(cfg rdS2)" -p -i "$tmp/idS2" >"$tmp/rdS2.log" 2>&1
wait $r1 $r3; wait $b1; br1=$?; wait $b2; br2=$?; wait $b3; br3=$?

[ $rc1$rc2$rc3$rc4 = 0000 ] && [ -s "$tmp/idL1" ] && [ -s "$tmp/idL2" ] && [ -s "$tmp/idS1" ] && [ -s "$tmp/idS2" ] &&
  ok "-i with a missing file: both tools create it ($(stat -c %s "$tmp/idL1") / $(stat -c %s "$tmp/idL2") bytes) and exit 0" ||
  bad "-i missing file: rc $rc1$rc2$rc3$rc4" "$tmp/mkL1.log" "$tmp/mkL2.log"
for f in L1 S1 L2 S2; do
  a=$(idof <"$tmp/mk$f.log")/$(dstof <"$tmp/mk$f.log"); b=$(idof <"$tmp/rd$f.log")/$(dstof <"$tmp/rd$f.log")
  [ ${#a} = 65 ] && [ "$a" = "$b" ] && ok "-i id$f: made by $([ ${f#?} = 1 ] && echo rnsc || echo rncp), read by the other: identity/destination $a" ||
    bad "-i id$f: '$a' vs '$b'" "$tmp/mk$f.log" "$tmp/rd$f.log"
done
ID_L1=$(idof <"$tmp/mkL1.log"); D_L1=$(dstof <"$tmp/mkL1.log")
ID_L2=$(idof <"$tmp/mkL2.log"); D_L2=$(dstof <"$tmp/mkL2.log")
ID_S1=$(idof <"$tmp/mkS1.log"); ID_S2=$(idof <"$tmp/mkS2.log")
for m in "No valid saved identity found, creating new" "Saving received files in"; do
  [ "$(has "$m" "$tmp/mkL1.log")$(has "$m" "$tmp/mkS1.log")" = "$(has "$m" "$tmp/mkL2.log")$(has "$m" "$tmp/mkS2.log")" ] &&
  [ "$(has "$m" "$tmp/mkL1.log")$(has "$m" "$tmp/mkS1.log")" = yesno ] &&
    ok "log level: '$m' at -vv, not by default, in both tools" ||
    bad "log level: '$m' (-vv/default) rnsc $(has "$m" "$tmp/mkL1.log")/$(has "$m" "$tmp/mkS1.log"), rncp $(has "$m" "$tmp/mkL2.log")/$(has "$m" "$tmp/mkS2.log")"
done
msg="Could not load identity for rncp"
for k in 1 2; do
  eval "rr=\$br$k nn=\$bn$k"
  what=$([ $k = 1 ] && echo "empty -i file, -p" || echo "65-byte -i file, sending")
  [ "$rr" = 2 ] && [ "$nn" = 2 ] && [ "$(has "$msg" "$tmp/badr$k.log")" = yes ] && [ "$(has "$msg" "$tmp/badn$k.log")" = yes ] &&
    ok "$what: rc 2 and '$msg...' from both" || bad "$what: rncp rc=$rr, rnsc rc=$nn" "$tmp/badr$k.log" "$tmp/badn$k.log"
done
[ "$br3" = 2 ] && [ "$bn3" = 2 ] && [ "$(has "$msg" "$tmp/badr3.log")" = no ] && [ "$(has "$msg" "$tmp/badn3.log")" = no ] &&
  ok "-qqq: the identity error is not logged by either (rc 2 both)" || bad "-qqq: rncp rc=$br3, rnsc rc=$bn3" "$tmp/badr3.log" "$tmp/badn3.log"

# ---- listeners: A rnsc, B rncp (-n -v -b 1, identity files of the other tool);
#      C rnsc, D rncp (-n -O -q, their own identities); A and B also serve fetches (-F) -------------------------------------
# ---- -b: a reference observer (a TCP server each listener also connects to: accepted
# connections get their interface settings before any traffic, which a reference TCP client
# does not guarantee) logs every rncp.receive announce with its arrival time ----------------
config "$tmp/OBS" server "$PO"
cat >"$tmp/observe.py" <<'EOT'
import os, signal, sys, time
import RNS
class Handler:
    aspect_filter = "rncp.receive"
    def received_announce(self, destination_hash, announced_identity, app_data):
        print("%.3f %s" % (time.time(), destination_hash.hex()), flush=True)
RNS.Reticulum(configdir=sys.argv[1], loglevel=2)
RNS.Transport.register_announce_handler(Handler())
signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
print("ready", flush=True)
time.sleep(float(sys.argv[2]))
os._exit(0)
EOT
timeout 120 "$PY" "$tmp/observe.py" "$tmp/OBS" 110 >"$tmp/obs.out" 2>&1 & obs=$!; pids+=($obs)
wait_for 30 grep -qs ready "$tmp/obs.out" || bad "the announce observer did not start" "$tmp/obs.out"

config "$tmp/LA" server "$PA"; config "$tmp/LB" server "$PB"
config "$tmp/LC" server "$PC"; config "$tmp/LD" server "$PD"
for d in LA LB LC LD; do add_client "$tmp/$d" "$PO"; done
"${RNCP[@]}" --config "$tmp/LD" -p >"$tmp/pD.log" 2>&1 & pdp=$!
D_C=$("$RNSC" cp --config "$tmp/LC" -p 2>/dev/null | dstof)
wait $pdp; D_D=$(dstof <"$tmp/pD.log")
mkdir -p "$tmp/inA" "$tmp/inB" "$tmp/inC" "$tmp/inD" "$tmp/files"
for d in inA inB inC inD; do echo "old $d" >"$tmp/$d/same.txt"; echo "old1 $d" >"$tmp/$d/same.txt.1"; done
"$RNSC" cp --config "$tmp/LA" -l -n -F -v -b 1 -i "$tmp/idL2" -s "$tmp/inA" >"$tmp/LA.log" 2>&1 & pids+=($!)
"${RNCP[@]}" --config "$tmp/LB" -l -n -F -v -b 1 -i "$tmp/idL1" -s "$tmp/inB" >"$tmp/LB.log" 2>&1 & pids+=($!)
"$RNSC" cp --config "$tmp/LC" -l -n -O -q -s "$tmp/inC" >"$tmp/LC.log" 2>&1 & pids+=($!)
"${RNCP[@]}" --config "$tmp/LD" -l -n -O -q -s "$tmp/inD" >"$tmp/LD.log" 2>&1 & pids+=($!)
if wait_for 20 port_open "$PA" && wait_for 30 port_open "$PB" && wait_for 20 port_open "$PC" && wait_for 30 port_open "$PD"; then
  ok "four listeners up (rnsc <$D_L2> and <$D_C>, rncp <$D_L1> and <$D_D>)"
else bad "a listener did not start" "$tmp/LA.log" "$tmp/LB.log" "$tmp/LC.log" "$tmp/LD.log"; exit 1; fi
sleep 1
T0=$EPOCHREALTIME # the -b window: 6 s from here

# ---- -w, in parallel: an unknown destination over a refused and over a connected interface.
# rncp's wait is timed from its "Path ... requested" line (its startup excluded), rnsc cp's
# from its start (its interface wait is inside -w, as rncp's connect is inside its startup).
stamp() { while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done; }
UNK=00112233445566778899aabbccddeeff
config "$tmp/WRd" client "$PX"; config "$tmp/WNd" client "$PX"
config "$tmp/WRl" client "$PC"; config "$tmp/WNl" client "$PC"
wtest() { # wtest TAG TOOL CONFIG W
  local t0=$EPOCHREALTIME
  if [ "$2" = rncp ]; then timeout 40 "${RNCP[@]}" --config "$3" -S -w "$4" "$tmp/hello.txt" $UNK 2>&1
  else timeout 40 "$RNSC" cp --config "$3" -S -w "$4" "$tmp/hello.txt" $UNK 2>&1; fi | stamp >"$tmp/w_$1.log"
  echo "rc ${PIPESTATUS[0]} start $t0" >>"$tmp/w_$1.log"
}
wtest rd rncp "$tmp/WRd" 2 & w1=$!
wtest nd rnsc "$tmp/WNd" 2 & w2=$!
wtest rl rncp "$tmp/WRl" 1 & w3=$!
wtest nl rnsc "$tmp/WNl" 1 & w4=$!

# ---- transfers -------------------------------------------------------------------------------
# long enough (several tenths of a second on loopback) for progress lines between 0 and 100 %
head -c 16000000 /dev/urandom >"$tmp/files/big.bin"
head -c 20000 /dev/urandom >"$tmp/files/same.txt"
head -c 20000 /dev/urandom >"$tmp/files/small.bin"
config "$tmp/SB" client "$PB"; config "$tmp/SD" client "$PD"   # rnsc senders
config "$tmp/SA" client "$PA"; config "$tmp/SC" client "$PC"   # rncp senders
same_file() { [ -f "$2" ] && cmp -s "$1" "$2"; }
saved() { grep -aqs "Saved received file to $1" "$2"; }
(cd "$tmp" && timeout 60 "$RNSC" cp --config "$tmp/SB" -S -w 20 -i "$tmp/idS2" "$tmp/files/same.txt" "$D_L1" >"$tmp/t1.log" 2>&1); t1=$?
(cd "$tmp" && timeout 60 "${RNCP[@]}" --config "$tmp/SA" -S -w 20 -i "$tmp/idS1" "$tmp/files/same.txt" "$D_L2" >"$tmp/t2.log" 2>&1); t2=$?
(cd "$tmp" && timeout 60 "$RNSC" cp --config "$tmp/SD" -w 20 "$tmp/files/same.txt" "$D_D" >"$tmp/t3.log" 2>&1); t3=$?
(cd "$tmp" && timeout 60 "${RNCP[@]}" --config "$tmp/SC" -w 20 "$tmp/files/same.txt" "$D_C" >"$tmp/t4.log" 2>&1); t4=$?
# under a terminal: -P (progress with physical rates), then -S
(cd "$tmp" && timeout 60 script -qec "'$RNSC' cp --config '$tmp/SD' -P -C '$tmp/files/big.bin' $D_D" /dev/null </dev/null >"$tmp/t5.log" 2>&1); t5=$?
(cd "$tmp" && timeout 60 script -qec "'$PY' -m RNS.Utilities.rncp --config '$tmp/SC' -P -C '$tmp/files/big.bin' $D_C" /dev/null </dev/null >"$tmp/t6.log" 2>&1); t6=$?
(cd "$tmp" && timeout 60 script -qec "'$RNSC' cp --config '$tmp/SB' -S -i '$tmp/idS2' '$tmp/files/small.bin' $D_L1" /dev/null </dev/null >"$tmp/t7.log" 2>&1); t7=$?
(cd "$tmp" && timeout 60 script -qec "'$PY' -m RNS.Utilities.rncp --config '$tmp/SA' -S -i '$tmp/idS1' '$tmp/files/small.bin' $D_L2" /dev/null </dev/null >"$tmp/t8.log" 2>&1); t8=$?

# -O when fetching: rnsc cp -f from rncp -l -F into a folder that already holds the name:
# without -O NAME.1, with -O NAME replaced, as rncp's fetch() saves. (rncp -f is not run here:
# the reference's fetcher can hang for good whichever tool listens, ~1 in 10 with -S, when
# its request overtakes its own link RTT packet and the listener drops it, its request receipt
# having no timeout in that state; tests/live/cp_fetch_interop_test.sh runs rncp -f.)
echo "fetched content" >"$tmp/files/fetchme.txt"
mkdir -p "$tmp/outN"; echo old >"$tmp/outN/fetchme.txt"
for k in 0 1; do o=$([ $k = 1 ] && echo -O)
  (cd "$tmp" && timeout 60 "$RNSC" cp --config "$tmp/SB" -f $o -S -w 20 -s "$tmp/outN" "$tmp/files/fetchme.txt" "$D_L1" >"$tmp/fN$k.log" 2>&1); eval "fN$k=\$?"
done
same_file "$tmp/files/fetchme.txt" "$tmp/outN/fetchme.txt" && same_file "$tmp/files/fetchme.txt" "$tmp/outN/fetchme.txt.1" &&
[ ! -e "$tmp/outN/fetchme.txt.2" ] && [ "$fN0$fN1" = 00 ] &&
  ok "fetch, rnsc cp -f from rncp -l -F: without -O saved as fetchme.txt.1, with -O fetchme.txt replaced" ||
  bad "fetch -O (rc $fN0$fN1): $(ls "$tmp/outN" | tr '\n' ' ')" "$tmp/fN0.log" "$tmp/fN1.log"

# -n and -i across the wire
for k in 1 2 3 4 5 6 7 8; do
  eval "rc=\$t$k"; dest=$(case $k in 1|7) echo $D_L1;; 2|8) echo $D_L2;; 3|5) echo $D_D;; *) echo $D_C;; esac)
  grep -aq "copied to <$dest>" "$tmp/t$k.log" && [ "$rc" = 0 ] || bad "transfer $k to <$dest>: rc=$rc" "$tmp/t$k.log"
done
[ "$t1$t2$t3$t4$t5$t6$t7$t8" = 00000000 ] && ok "-n: 8 transfers from never-allowed identities accepted both ways (rnsc -> rncp -l -n, rncp -> rnsc cp -l -n)"
[ "$t1" = 0 ] && ok "-i: rncp -l -i idL1 (made by rnsc) reached at <$D_L1> as rnsc cp -p -i idL1 printed"
[ "$t2" = 0 ] && ok "-i: rnsc cp -l -i idL2 (made by rncp) reached at <$D_L2> as rncp -p -i idL2 printed"
wait_for 10 saved "$tmp/inB/same.txt.2" "$tmp/LB.log"; wait_for 10 saved "$tmp/inA/same.txt.2" "$tmp/LA.log"
wait_for 10 saved "$tmp/inA/small.bin" "$tmp/LA.log"; wait_for 10 saved "$tmp/inB/small.bin" "$tmp/LB.log"
grep -aqE "Starting resource transfer <[0-9a-f]{64}> from <$ID_S2>" "$tmp/LB.log" &&
  ok "-i: rncp -l reports the rnsc sender as <$ID_S2>, the identity of idS2 (made by rncp)" || bad "-i: rncp -l did not see <$ID_S2>" "$tmp/LB.log"
grep -aqE "Starting resource transfer <[0-9a-f]{64}> from <$ID_S1>" "$tmp/LA.log" &&
  ok "-i: rnsc cp -l reports the rncp sender as <$ID_S1>, the identity of idS1 (made by rnsc)" || bad "-i: rnsc cp -l did not see <$ID_S1>" "$tmp/LA.log"

RC='Incoming resource <[0-9a-f]{64}/[0-9a-f]{32}> completed'
grep -aqE "$RC" "$tmp/LA.log" && grep -aqE "$RC" "$tmp/LB.log" &&
  ok "-v: both listeners name a completed resource as <resource hash/link id>" || bad "-v: '$RC' not in both logs" "$tmp/LA.log" "$tmp/LB.log"

# -O and the collision counter, in both listeners
for d in inA inB; do
  same_file "$tmp/files/same.txt" "$tmp/$d/same.txt.2" && [ "$(cat "$tmp/$d/same.txt")" = "old $d" ] &&
  [ "$(cat "$tmp/$d/same.txt.1")" = "old1 $d" ] && [ ! -e "$tmp/$d/same.txt.3" ] &&
    ok "no -O, $([ $d = inA ] && echo "rnsc cp -l" || echo "rncp -l"): same.txt and same.txt.1 exist -> saved as same.txt.2, both kept" ||
    bad "no -O in $d: $(ls "$tmp/$d" | tr '\n' ' ')" "$tmp/LA.log" "$tmp/LB.log"
done
for d in inC inD; do
  wait_for 10 same_file "$tmp/files/same.txt" "$tmp/$d/same.txt"
  same_file "$tmp/files/same.txt" "$tmp/$d/same.txt" && [ "$(cat "$tmp/$d/same.txt.1")" = "old1 $d" ] &&
  [ ! -e "$tmp/$d/same.txt.2" ] &&
    ok "-O, $([ $d = inC ] && echo "rnsc cp -l" || echo "rncp -l"): same.txt replaced, same.txt.1 untouched, no same.txt.2" ||
    bad "-O in $d: $(ls "$tmp/$d" | tr '\n' ' ')" "$tmp/LC.log" "$tmp/LD.log"
done
wait_for 10 same_file "$tmp/files/big.bin" "$tmp/inC/big.bin"; wait_for 10 same_file "$tmp/files/big.bin" "$tmp/inD/big.bin"
same_file "$tmp/files/big.bin" "$tmp/inC/big.bin" && same_file "$tmp/files/big.bin" "$tmp/inD/big.bin" &&
  ok "16 MB file (-C) received by both -O listeners from the terminal senders" || bad "big.bin missing" "$tmp/LC.log" "$tmp/LD.log"

# log levels of the listeners: -v (A, B) and -q (C, D), the same lines in both tools
for m in "rncp listening on" "Starting resource transfer" "Incoming resource" "Saved received file to" \
         "Incoming link established" "Authenticated sender" "No allowed identities" \
         "Allowing unauthenticated fetch requests"; do
  v=$(has "$m" "$tmp/LA.log")/$(has "$m" "$tmp/LB.log"); q=$(has "$m" "$tmp/LC.log")/$(has "$m" "$tmp/LD.log")
  [ "${v%/*}" = "${v#*/}" ] && [ "${q%/*}" = "${q#*/}" ] &&
    ok "log level: '$m' -v: ${v%/*}, -q: ${q%/*} in both tools" ||
    bad "log level: '$m' -v rnsc/rncp $v, -q rnsc/rncp $q" "$tmp/LA.log" "$tmp/LB.log"
done

# progress output: regexes of rncp's lines
PRG='Transferring file [^ ]+ [0-9]+\.[0-9]% - [0-9.]+ [KMGT]?B of [0-9.]+ [KMGT]?B - [0-9.]+ [KMGT]?bps'
PHY=' \([0-9.]+ [KMGT]?bps at physical layer\)'
DONE='Transfer complete  100\.0% - [0-9.]+ [KMGT]?B of [0-9.]+ [KMGT]?B - [0-9.]+ [KMGT]?bps'
cnt() { grep -aoE "$1" "$2" | wc -l; }
n5=$(cnt "$PRG$PHY" "$tmp/t5.log"); n6=$(cnt "$PRG$PHY" "$tmp/t6.log")
[ "$n5" -ge 1 ] && [ "$n6" -ge 1 ] && [ "$(cnt "$DONE" "$tmp/t5.log")" -ge 1 ] && [ "$(cnt "$DONE" "$tmp/t6.log")" -ge 1 ] &&
  ok "terminal, -P: progress lines with physical rates from rnsc ($n5) and rncp ($n6), then 'Transfer complete  100.0%'" ||
  bad "terminal -P: rnsc $n5, rncp $n6 progress lines" "$tmp/t5.log" "$tmp/t6.log"
echo "     rnsc: $(grep -aoE "$PRG$PHY" "$tmp/t5.log" | tail -1)"
echo "     rncp: $(grep -aoE "$PRG$PHY" "$tmp/t6.log" | tail -1)"
[ "$(cnt "$PRG" "$tmp/t7.log")$(cnt "$PRG" "$tmp/t8.log")" = 00 ] && grep -aq "Transferring file\.\.\." "$tmp/t7.log" &&
  grep -aq "Transferring file\.\.\." "$tmp/t8.log" &&
  ok "terminal, -S: no progress lines from either, 'Transferring file...' from both" ||
  bad "terminal -S: progress lines rnsc $(cnt "$PRG" "$tmp/t7.log"), rncp $(cnt "$PRG" "$tmp/t8.log")" "$tmp/t7.log" "$tmp/t8.log"
[ "$(cnt "$PRG" "$tmp/t1.log")$(cnt "$PRG" "$tmp/t3.log")$(cnt "physical layer" "$tmp/t3.log")" = 000 ] &&
  ! grep -aq $'\e' "$tmp/t3.log" && grep -aq "Transferring file\.\.\." "$tmp/t3.log" &&
  ok "no terminal: rnsc cp prints step lines only, with and without -S (rncp without -S: $(cnt "$PRG" "$tmp/t4.log") progress lines to a pipe)" ||
  bad "no terminal: rnsc progress lines $(cnt "$PRG" "$tmp/t3.log")" "$tmp/t3.log"

# -w
wait $w1 $w2 $w3 $w4
wtime() { # seconds from START (rnsc) or from the "requested" line (rncp) to "Path not found"
  local f="$tmp/w_$1.log" from to
  to=$(sed -n 's/^\([0-9.]*\) Path not found$/\1/p' "$f" | head -1)
  if [ "$2" = req ]; then from=$(sed -n 's/^\([0-9.]*\) .*Path to .* requested$/\1/p' "$f" | head -1)
  else from=$(sed -n 's/^rc .* start //p' "$f"); fi
  [ -n "$to" ] && [ -n "$from" ] && "$PY" -c "print('%.2f' % ($to - $from))" || echo x
}
for s in d l; do
  r=$(wtime r$s req); n=$(wtime n$s start)
  rcr=$(sed -n 's/^rc \([0-9]*\) .*/\1/p' "$tmp/w_r$s.log"); rcn=$(sed -n 's/^rc \([0-9]*\) .*/\1/p' "$tmp/w_n$s.log")
  what=$([ $s = d ] && echo "-w 2, refused interface" || echo "-w 1, connected interface")
  if [ "$r" != x ] && [ "$n" != x ] && [ "$rcr$rcn" = 11 ] &&
     "$PY" -c "import sys; sys.exit(0 if abs($r - $n) <= 1.5 else 1)"; then
    ok "$what: 'Path not found', rc 1 from both; rncp waited $r s, rnsc cp $n s"
  else bad "$what: rncp rc=$rcr ${r} s, rnsc rc=$rcn ${n} s" "$tmp/w_r$s.log" "$tmp/w_n$s.log"; fi
done

# -b
wait_for 10 "$PY" -c "import time, sys; sys.exit(0 if time.time() > $T0 + 6.5 else 1)"
inwin() { awk -v h="$1" -v t="$T0" '$2 == h && $1 >= t && $1 < t + 6 { n++ } END { print n + 0 }' "$tmp/obs.out"; }
ca=$(inwin "$D_L2"); cb=$(inwin "$D_L1"); cc=$(inwin "$D_C"); cdd=$(inwin "$D_D")
[ "${ca:-0}" -ge 3 ] && [ "${cb:-0}" -ge 3 ] && [ $(( ${ca:-0} - ${cb:-0} )) -le 2 ] && [ $(( ${cb:-0} - ${ca:-0} )) -le 2 ] &&
[ "${cc:-0}" -le 1 ] && [ "${cdd:-0}" -le 1 ] &&
  ok "-b 1: the reference observer saw ${ca:-0} announces from rnsc cp -l and ${cb:-0} from rncp -l in 6 s; without -b ${cc:-0} and ${cdd:-0}" ||
  bad "-b: announces rnsc ${ca:-0} / rncp ${cb:-0} (-b 1), rnsc ${cc:-0} / rncp ${cdd:-0} (none)" "$tmp/obs.out"

echo "# $pass passed, $fail failed"
[ $fail = 0 ]
