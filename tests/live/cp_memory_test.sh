#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Memory of large resource transfers is bounded, independent of the size: `rnsc cp` sends
# files to `rnsc cp -l` over TCP on loopback (no shared instance) and the peak resident set
# of both processes (ru_maxrss from wait4, tests/common/rss_run.py) is measured for
#   16 MiB of random bytes, uncompressed (-C): 16 segments,
#   128 MiB of random bytes, uncompressed (-C): 129 segments,
#   16 MiB of text, auto-compressed (bz2 per segment, the reference's rules),
# a fresh listener for each. Checked: every received file equal to the sent one (size and
# SHA-256); every peak below RSS_MAX_KIB (default 40 MiB); the 128 MiB transfer's peaks at
# most RSS_SLACK_KIB (default 4 MiB) above the 16 MiB transfer's, on both sides.
#
# The bound. (1) The resource (include/rnsc/resource.h): the data streams from the file (pread,
# segment by segment, through the resource's read callback) and to the file (write, after
# each segment's hash is checked), so a transfer holds one segment at a time: sender about
# 3.1 MiB at its peak (the encrypted segment, its map hashes, transiently the plaintext and
# the bz2 output), receiver at most 2 x the advertised transfer size + 4 MiB (the parts,
# transiently the decrypted and the decompressed segment; about 6 MiB for a 1 MiB segment,
# 10 MiB for the largest advertisement accepted). (2) The node's packet hashlist (duplicate
# filter; src/lib/transport_map.h): the receiving end remembers the hash of every packet it
# takes in, resource parts included, as the reference's Transport does, 33 bytes a slot, up
# to Transport.hashlist_maxsize (1,000,000: it rotates at 500,000 entries), so at most about
# 45-50 MiB however long the transfer. (3) The process's own baseline (node, plugins,
# OpenSSL, libbz2): about 15 MiB. So a sender peaks at about 20 MiB and a receiver at about
# 75 MiB at most, whatever the file's size; below 2^19 packets (e.g. 8 GiB at the TCP link
# MTU of 16384, 230 MiB at a 500-byte link MTU) the receiver stays near 20 MiB.
#
# Measured (2-core machine shared with other jobs, plain -O2 build, 2026-11-30; KiB peak RSS):
#   16 MiB -C:            sender 18168, listener 16912, 1 s
#   128 MiB -C:           sender 18140, listener 17828, 2 s (5.7 s under load)
#   16 MiB text:          sender 22544, listener 20552, 4-7 s (bz2 on both sides)
#   1 GiB -C (RSS_BIG_MIB=1024, by hand): sender 18524, listener 22632, 21 s; SHA-256 equal.
#     (~66,000 parts at link MTU 16384: the hashlist's share shows, so the 4 MiB slack
#     check against the 16 MiB transfer is for the default 128 MiB, not for 1 GiB.)
#   link MTU 500 (sender with link_mtu_discovery = no, RSS_LOWMTU_MIB, by hand):
#     256 MiB: sender 19032, listener 73768, 22 s (~580,000 parts: one hashlist rotation)
#     640 MiB: sender 20096, listener 73680, 38 s (~1.45 million parts: the same plateau)
#   the reference's rncp sending to rnsc cp -l (-C, by hand): 24 MiB listener 17092,
#     128 MiB listener 17920 in 25 s (rncp itself peaked at 66660 and 75300).
# RSS_BIG_MIB overrides the large size; RSS_LOWMTU_MIB=<n> adds an n MiB transfer on a
# 500-byte link MTU whose listener must stay below RSS_LOWMTU_MAX_KIB (default 96 MiB): the
# hashlist's plateau (about 40 s for 256 MiB, so not in the default run).
#
# In a sanitizer build (ASan keeps freed blocks in quarantine, up to 256 MiB, so RSS grows
# with the bytes allocated, not with what is live) the transfers and their content are
# checked and the figures printed, but the RSS bounds are not asserted (said in the output).
set -u
. "$(dirname "$0")/../common/lib.sh"
RSS_RUN=("$PY" "$S/tests/common/rss_run.py")
MAX=${RSS_MAX_KIB:-40960} SLACK=${RSS_SLACK_KIB:-4096} BIG=${RSS_BIG_MIB:-128}
LOWMTU=${RSS_LOWMTU_MIB:-0} LOWMAX=${RSS_LOWMTU_MAX_KIB:-98304}
[ -x "$RNSC" ] || { echo "FAIL $RNSC is not built"; exit 1; }
"$PY" -c 'import os; os.wait4' 2>/dev/null || { echo "FAIL no Python with os.wait4 at $PY"; exit 1; }
asan=""
grep -q -- '-fsanitize=address' "$B/Makefile" 2>/dev/null && asan=1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-cpmem-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }
alive() { kill -0 "$1" 2>/dev/null; }

P=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
config() { # config DIR INTERFACE-LINES
  mkdir -p "$1"
  printf '[reticulum]\n  enable_transport = no\n  share_instance = no\n[logging]\n  loglevel = 3\n[interfaces]\n  [[Link]]\n    enabled = yes\n%s\n' "$2" >"$1/config"
}
config "$tmp/L" "    type = TCPServerInterface
    listen_ip = 127.0.0.1
    listen_port = $P"
config "$tmp/S" "    type = TCPClientInterface
    target_host = 127.0.0.1
    target_port = $P"
config "$tmp/S500" "    type = TCPClientInterface
    target_host = 127.0.0.1
    target_port = $P"
sed -i 's/^  share_instance = no$/&\n  link_mtu_discovery = no/' "$tmp/S500/config"
DEST=$("$RNSC" cp --config "$tmp/L" -p 2>/dev/null | sed -n 's/^Listening on : <\(.*\)>.*/\1/p')
[ ${#DEST} = 32 ] || { echo "FAIL could not read the listener's destination"; exit 1; }

mkdir -p "$tmp/files"
head -c $((16 * 1048576)) /dev/urandom >"$tmp/files/random16.bin"
head -c $((BIG * 1048576)) /dev/urandom >"$tmp/files/random$BIG.bin"
"$PY" -c '
import sys, random
r = random.Random(5)
words = ["resource", "segment", "reticulum", "link", "proof", "hashmap", "window", "part"]
with open(sys.argv[1], "w") as f:
    n = 0
    while n < 16 * 1048576:
        line = " ".join(r.choice(words) for _ in range(12)) + "\n"
        f.write(line); n += len(line)' "$tmp/files/text16.txt"

declare -A SRSS LRSS
transfer() { # transfer TAG FILE [cp options]: one listener, one sender; records both peaks
  local tag=$1 file=$2; shift 2
  local in="$tmp/in_$tag"; mkdir -p "$in"
  "${RSS_RUN[@]}" "$tmp/L_$tag.rss" "$RNSC" cp --config "$tmp/L" -l -n -S -b 0 -s "$in" \
    >"$tmp/L_$tag.log" 2>&1 &
  local lp=$!; pids+=("$lp")
  if ! wait_for 20 port_open "$P"; then bad "$tag: the listener did not start" "$tmp/L_$tag.log"; return; fi
  local t0=$SECONDS
  local sdir="$tmp/S"; [ "$tag" = lowmtu ] && sdir="$tmp/S500"
  timeout 600 "${RSS_RUN[@]}" "$tmp/S_$tag.rss" "$RNSC" cp --config "$sdir" -S -w 30 "$@" \
    "$file" "$DEST" >"$tmp/S_$tag.log" 2>&1
  local rc=$? el=$((SECONDS - t0))
  local got="$in/$(basename "$file")"
  saved() { grep -qs "Saved received file" "$tmp/L_$tag.log"; }
  wait_for 10 saved
  kill -INT "$lp" 2>/dev/null
  gone() { ! alive "$lp"; }
  wait_for 15 gone || kill -9 "$lp" 2>/dev/null
  wait "$lp" 2>/dev/null
  SRSS[$tag]=$(cat "$tmp/S_$tag.rss" 2>/dev/null || echo 0)
  LRSS[$tag]=$(cat "$tmp/L_$tag.rss" 2>/dev/null || echo 0)
  if [ $rc = 0 ] && [ -f "$got" ] && [ "$(stat -c %s "$file")" = "$(stat -c %s "$got")" ] &&
     [ "$(sha256sum <"$file")" = "$(sha256sum <"$got")" ]; then
    ok "$tag: $(stat -c %s "$file") bytes in ${el}s, SHA-256 equal; peak RSS sender ${SRSS[$tag]} KiB, listener ${LRSS[$tag]} KiB"
  else bad "$tag: transfer (rc=$rc)" "$tmp/S_$tag.log" "$tmp/L_$tag.log"; fi
  rm -f "$got"
}
transfer small "$tmp/files/random16.bin" -C
transfer big "$tmp/files/random$BIG.bin" -C
transfer text "$tmp/files/text16.txt"
if [ "$LOWMTU" != 0 ]; then
  head -c $((LOWMTU * 1048576)) /dev/urandom >"$tmp/files/random_lowmtu.bin"
  transfer lowmtu "$tmp/files/random_lowmtu.bin" -C
  rm -f "$tmp/files/random_lowmtu.bin"
fi

if [ -n "$asan" ]; then
  ok "sanitizer build: RSS bounds not asserted (ASan quarantine); figures above"
else
  for tag in small big text; do
    for side in sender listener; do
      if [ $side = sender ]; then v=${SRSS[$tag]:-0}; else v=${LRSS[$tag]:-0}; fi
      if [ "$v" -gt 0 ] && [ "$v" -le "$MAX" ]; then ok "$tag: $side peak RSS $v KiB <= $MAX KiB"
      else bad "$tag: $side peak RSS $v KiB, bound $MAX KiB"; fi
    done
  done
  if [ "$LOWMTU" != 0 ]; then
    v=${LRSS[lowmtu]:-0} w=${SRSS[lowmtu]:-0}
    if [ "$v" -gt 0 ] && [ "$v" -le "$LOWMAX" ] && [ "$w" -gt 0 ] && [ "$w" -le "$MAX" ]; then
      ok "lowmtu: $LOWMTU MiB at link MTU 500: listener $v KiB <= $LOWMAX KiB, sender $w KiB <= $MAX KiB"
    else bad "lowmtu: listener $v KiB (bound $LOWMAX), sender $w KiB (bound $MAX)"; fi
  fi
  for side in sender listener; do
    if [ $side = sender ]; then a=${SRSS[small]:-0} b=${SRSS[big]:-0}; else a=${LRSS[small]:-0} b=${LRSS[big]:-0}; fi
    if [ "$a" -gt 0 ] && [ "$b" -gt 0 ] && [ "$b" -le $((a + SLACK)) ]; then
      ok "$side: ${BIG} MiB transfer $b KiB vs 16 MiB transfer $a KiB: within $SLACK KiB (independent of size)"
    else bad "$side: ${BIG} MiB transfer $b KiB vs 16 MiB transfer $a KiB: more than $SLACK KiB apart"; fi
  done
fi
echo "# $pass passed, $fail failed"
[ $fail = 0 ]
