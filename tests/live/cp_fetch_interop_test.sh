#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc cp -f / -F against the reference's rncp, live over TCP on loopback, all four pairings:
#   rnsc cp -f -> rncp -l -F,  rncp -f -> rnsc cp -l -F,  rnsc -> rnsc,  rncp -> rncp.
# Each listener allows its two fetchers (-a) and jails fetches to a folder (-j). Checked per
# pairing: a small file (2 KiB, random), a text file (300 kB: bz2-compressed on the way) and a
# random 1.2 MB file (2 segments) fetched by name into a save folder (-s), exit status 0, the
# "fetched from" line, size and SHA-256 equal; a file given by its absolute path under the
# jail; a missing file ("was not found on the remote", rc 0, as rncp); a path outside the jail
# ("was not allowed by the remote", rc 0: REQ_FETCH_NOT_ALLOWED). And an identity a listener
# does not allow gets nothing (rncp's listener tears its link down at identify; rnsc's does
# too): the fetcher reports an unknown error or a failed transfer and no file appears.
# Every wait is bounded; a reference that cannot start fails the test.
set -u
. "$(dirname "$0")/../common/lib.sh"
RNCP=("$PY" -m RNS.Utilities.rncp)

if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL the reference (RNS) does not import with $PY (make venv)"; exit 1
fi
[ -x "$RNSC" ] || { echo "FAIL $RNSC is not built"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-cpf-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT

read -r P1 P2 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

wait_for() { local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }

config() { # config DIR server|client PORT
mkdir -p "$1"
if [ "$2" = server ]; then iface="type = TCPServerInterface
    listen_ip = 127.0.0.1
    listen_port = $3"
else iface="type = TCPClientInterface
    target_host = 127.0.0.1
    target_port = $3"; fi
cat >"$1/config" <<EOT
[reticulum]
  enable_transport = no
  share_instance = no
[logging]
  loglevel = 4
[interfaces]
  [[Link]]
    enabled = yes
    $iface
EOT
}
# L1: rnsc cp -l -F (port P1), fetched from by F1 (rncp) and F3 (rnsc);
# L2: rncp -l -F (port P2), fetched from by F2 (rnsc) and F4 (rncp). X1 / X2: not allowed.
config "$tmp/L1" server "$P1"; config "$tmp/L2" server "$P2"
config "$tmp/F1" client "$P1"; config "$tmp/F3" client "$P1"; config "$tmp/X1" client "$P1"
config "$tmp/F2" client "$P2"; config "$tmp/F4" client "$P2"; config "$tmp/X2" client "$P2"
mkdir -p "$tmp/jail1" "$tmp/jail2" "$tmp/out"

idof() { sed -n 's/^Identity *: <\(.*\)>.*/\1/p'; }
dstof() { sed -n 's/^Listening on : <\(.*\)>.*/\1/p'; }
ID_F1=$("${RNCP[@]}" --config "$tmp/F1" -p 2>/dev/null | idof)
ID_F2=$("$RNSC" cp --config "$tmp/F2" -p 2>/dev/null | idof)
ID_F3=$("$RNSC" cp --config "$tmp/F3" -p 2>/dev/null | idof)
ID_F4=$("${RNCP[@]}" --config "$tmp/F4" -p 2>/dev/null | idof)
D_L1=$("$RNSC" cp --config "$tmp/L1" -p 2>/dev/null | dstof)
D_L2=$("${RNCP[@]}" --config "$tmp/L2" -p 2>/dev/null | dstof)
if [ ${#ID_F1} = 32 ] && [ ${#ID_F2} = 32 ] && [ ${#ID_F3} = 32 ] && [ ${#ID_F4} = 32 ] &&
   [ ${#D_L1} = 32 ] && [ ${#D_L2} = 32 ]; then
  ok "identities and listener destinations read (<$D_L1> rnsc, <$D_L2> reference)"
else
  bad "could not read identities/destinations"; exit 1
fi

head -c 2048 /dev/urandom >"$tmp/files_small.bin"
"$PY" -c '
import sys, random
r = random.Random(9)
words = ["fetch", "jail", "request", "response", "resource", "segment", "proof"]
with open(sys.argv[1], "w") as f:
    n = 0
    while n < 300000:
        line = " ".join(r.choice(words) for _ in range(10)) + "\n"
        f.write(line); n += len(line)' "$tmp/files_text.txt"
head -c 1200000 /dev/urandom >"$tmp/files_big.bin"
FILES="small.bin text.txt big.bin"
for j in jail1 jail2; do for f in $FILES; do cp "$tmp/files_$f" "$tmp/$j/$f"; done; done
echo "secret" >"$tmp/secret.txt"

# -vv: the refusal fallback below reads the listener's VERBOSE (5) lines; like rncp, rnsc cp logs at 3 + v - q.
"$RNSC" cp --config "$tmp/L1" -l -F -a "$ID_F1" -a "$ID_F3" -j "$tmp/jail1" -vv >"$tmp/L1.log" 2>&1 &
pids+=($!)
"${RNCP[@]}" --config "$tmp/L2" -l -F -a "$ID_F2" -a "$ID_F4" -j "$tmp/jail2" -v >"$tmp/L2.log" 2>&1 &
pids+=($!)
if wait_for 20 port_open "$P1" && wait_for 30 port_open "$P2"; then ok "both fetch listeners up"
else bad "a listener did not start" "$tmp/L1.log" "$tmp/L2.log"; exit 1; fi
sleep 1

pair() { # pair TAG KIND CONFIG DEST LISTENER_LOG
  local tag=$1 kind=$2 cfg=$3 dest=$4 llog=$5 out="$tmp/out/$1"
  local -a cmd
  if [ "$kind" = rnsc ]; then cmd=("$RNSC" cp --config "$cfg"); else cmd=("${RNCP[@]}" --config "$cfg"); fi
  mkdir -p "$out"
  for f in $FILES; do fetch_one "$f" "$f"; done
  local jail; jail=$([ "$dest" = "$D_L1" ] && echo "$tmp/jail1" || echo "$tmp/jail2")
  rm -f "$out/small.bin"
  fetch_one "$jail/small.bin" small.bin " (by its absolute path under the jail)"
  refusal "$tag" nosuchfile "the file nosuchfile was not found on the remote" \
    "Client-requested file not found: .*/nosuchfile" "missing file: not found"
  refusal "$tag" ../secret.txt "fetching the file ../secret.txt was not allowed by the remote" \
    "Disallowing fetch request for .*/secret.txt" "outside the jail: not allowed"
  [ ! -f "$out/secret.txt" ] || bad "$tag: secret.txt was served from outside the jail"
}
# fetch_one ARG NAME [WHAT]: fetches ARG, expects files_NAME saved as NAME. A reference
# fetcher can hang on its own send/register race (see refusal below): it gets 3 attempts of
# 30 s, and the retries are reported.
fetch_one() {
  local arg=$1 f=$2 what=${3:-} t0=$SECONDS log k rc note=""
  for k in 1 2 3; do
    log="$tmp/$tag-$f$([ -n "$what" ] && echo -abs)-$k.log"
    (cd "$tmp" && timeout $([ "$kind" = rnsc ] && echo 120 || echo 30) "${cmd[@]}" -f -S -w 20 -s "$out" "$arg" "$dest" >"$log" 2>&1); rc=$?
    [ $rc = 0 ] || [ "$kind" = rnsc ] && break
    note=" (the reference fetcher hung $k time(s) and was run again)"
  done
  if [ $rc = 0 ] && grep -q "$arg fetched from <$dest>" "$log" && [ -f "$out/$f" ] &&
     [ "$(sha256sum <"$out/$f")" = "$(sha256sum <"$tmp/files_$f")" ]; then
    ok "$tag: $f$what fetched in $((SECONDS - t0)) s, $(stat -c %s "$out/$f") bytes, SHA-256 equal$note"
  else bad "$tag: $f$what (rc=$rc)" "$log" "$llog"; fi
}
# refusal TAG FILE FETCHER_LINE LISTENER_LINE WHAT: the answer comes as one RESPONSE packet
# right away. The reference registers a request as pending only after sending it, so a
# reference fetcher drops an answer that arrives within its send path (its own race, see
# tests/live/req_ref_peer.py; on loopback it hits most immediate answers) and then waits forever:
# for a reference fetcher that is retried up to 3 times (15 s each) and, should it never
# print, the listener's own log line must show the refusal was made (reported as the race).
refusal() {
  local tag=$1 f=$2 want=$3 lwant=$4 what=$5 k rc log
  for k in 1 2 3; do
    log="$tmp/$tag-$f-$k.log"; log=${log//..\//up_}
    (cd "$tmp" && timeout $([ "$kind" = rnsc ] && echo 60 || echo 15) "${cmd[@]}" -f -S -w 20 -s "$out" "$f" "$dest" >"$log" 2>&1); rc=$?
    if [ $rc = 0 ] && grep -q "$want" "$log"; then
      ok "$tag: $what, rc=0$([ $k -gt 1 ] && echo " (attempt $k: the reference fetcher hung before)")"; return
    fi
    [ "$kind" = rnsc ] && break
  done
  if [ "$kind" = ref ] && [ $rc = 124 ] && grep -q "$lwant" "$llog"; then
    ok "$tag: $what: the listener refused; the reference fetcher dropped the immediate answer 3 times (its send/register race)"
  else bad "$tag: $what (rc=$rc)" "$log" "$llog"; fi
}
pair rnsc-to-ref rnsc "$tmp/F2" "$D_L2" "$tmp/L2.log"
pair ref-to-rnsc ref "$tmp/F1" "$D_L1" "$tmp/L1.log"
pair rnsc-to-rnsc rnsc "$tmp/F3" "$D_L1" "$tmp/L1.log"
pair ref-to-ref ref "$tmp/F4" "$D_L2" "$tmp/L2.log"

# identities the listeners do not allow
mkdir -p "$tmp/out/x1" "$tmp/out/x2"
(cd "$tmp" && timeout 25 "${RNCP[@]}" --config "$tmp/X1" -f -S -w 20 -s "$tmp/out/x1" small.bin "$D_L1" >"$tmp/X1.log" 2>&1); rc=$?
! grep -q "fetched from" "$tmp/X1.log" && [ ! -f "$tmp/out/x1/small.bin" ] &&
  ok "rnsc cp -l -F gives an unknown rncp fetcher nothing (rc=$rc: $(grep -v '^$' "$tmp/X1.log" | tail -1))" ||
  bad "rnsc cp -l -F served an unknown fetcher (rc=$rc)" "$tmp/X1.log" "$tmp/L1.log"
(cd "$tmp" && timeout 90 "$RNSC" cp --config "$tmp/X2" -f -S -w 20 -s "$tmp/out/x2" small.bin "$D_L2" >"$tmp/X2.log" 2>&1); rc=$?
[ $rc = 0 ] && grep -q "unknown error" "$tmp/X2.log" && [ ! -f "$tmp/out/x2/small.bin" ] &&
  ok "rncp -l -F gives an unknown rnsc cp fetcher nothing: unknown error, rc=0" ||
  bad "rncp -l -F and an unknown rnsc fetcher (rc=$rc)" "$tmp/X2.log" "$tmp/L2.log"
out=$("$RNSC" cp --config "$tmp/F3" -f -s "$tmp/nodir" small.bin "$D_L1" 2>&1); rc=$?
[ $rc = 3 ] && grep -q "Output directory not found" <<<"$out" && ok "fetch into a missing save folder: rc=3" ||
  bad "fetch into a missing save folder: rc=$rc $out"

echo "# $pass passed, $fail failed"
[ $fail = 0 ]
