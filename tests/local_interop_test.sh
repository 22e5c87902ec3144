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
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
S=${RNSC_SRCDIR:-$B}
RNSC="$B/src/cli/rnsc"
VENV=${RNSC_VENV:-$B/.venv}
PY=$VENV/bin/python
pass=0 fail=0
ok() { pass=$((pass+1)); echo "ok   $1"; }
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -25 "$f" | sed 's/^/     /'; done; }

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

read -r P1 P2 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
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

"$RNSC" daemon --config "$tmp/A" >"$tmp/A.log" 2>&1 & DA=$!; pids+=($DA)
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
time.sleep(120)
EOF
wait_for 10 grep -qs sent "$tmp/H.log" || bad "hostile peer could not connect" "$tmp/H.log"

# ---- a reference program attached to rnsc's shared instance talks to a remote one --------
timeout 60 "$PY" "$S/tests/local_ref_peer.py" b "$tmp/R" "$tmp/a.hash" "$tmp/b.hash" 45 --link \
  >"$tmp/R.out" 2>&1 & PR=$!; pids+=($PR)
timeout 60 "$PY" "$S/tests/local_ref_peer.py" a "$tmp/C" "$tmp/b.hash" "$tmp/a.hash" 45 \
  --expect-shared --link >"$tmp/C.out" 2>&1 & PC=$!; pids+=($PC)
wait $PC; rc_c=$?; wait $PR; rc_r=$?
if [ $rc_c = 0 ] && grep -qs "a shared=1 sent=3 proved=3 received=3 link=1" "$tmp/C.out"; then
  ok "reference program attached to rnsc's shared instance: 3 sent and proved, 3 received, link up"
else
  bad "attached reference program (exit $rc_c)" "$tmp/C.out" "$tmp/A.log"
fi
if [ $rc_r = 0 ] && grep -qs "b shared=0 sent=3 proved=3 received=3 link=1" "$tmp/R.out"; then
  ok "remote reference program reached the attached one through rnsc: proved both ways, link up"
else
  bad "remote reference program (exit $rc_r)" "$tmp/R.out"
fi

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
