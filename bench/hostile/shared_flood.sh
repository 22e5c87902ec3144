#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shared-instance idle flood of issue 28 against rnsc daemon and the reference's rnsd,
# side by side (bench/results/hostile/README.md): each runs with a unique instance name and
# a probe responder; 200 connections that never speak are held for 15 s, then 100 that
# send one frame each, twice. Printed per daemon: RSS (kB) at rest, with the idle flood
# held, after 12 s of it, with the speaking flood held, 5 s after the floods; whether a
# probe through the shared instance got its proof while the idle flood was held; how many
# of the 200 connections the daemon kept open. Under a minute; 127.0.0.1 and abstract
# sockets only. Usage: bench/hostile/shared_flood.sh BUILDDIR VENV
set -u
B=${1:?build dir}; VENV=${2:?venv}
RNSC="$B/src/cli/rnsc"; PY=$VENV/bin/python
tmp=$(mktemp -d); pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null; done; sleep 0.3; for p in "${pids[@]}"; do kill -9 $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
rss() { sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$1/status"; }
cat >"$tmp/flood.py" <<'PYEOF'
import socket, sys, time
mode, n, name, hold = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
held = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\0rns/" + name)
        if mode == "speak": s.sendall(b"\x7e" + b"\x00" * 40 + b"\x7e")
        held.append(s)
    except OSError: s.close()
time.sleep(1)
alive = 0
for s in held:
    s.setblocking(False)
    try: alive += s.recv(1) != b""
    except BlockingIOError: alive += 1
    except OSError: pass
print(alive, flush=True)
time.sleep(hold)
PYEOF
run() { # run NAME CMD...: the daemon's pid in $D
  local name=$1; shift
  inst="rnschbench$$${name}"
  mkdir -p "$tmp/$name"
  printf '[reticulum]\n  share_instance = yes\n  instance_name = %s\n  enable_transport = yes\n  respond_to_probes = yes\n[logging]\n  loglevel = 4\n[interfaces]\n' "$inst" >"$tmp/$name/config"
  "$@" --config "$tmp/$name" >"$tmp/$name.log" 2>&1 & D=$!; pids+=($D)
  for _ in $(seq 100); do grep -qs "probe requests on <\|respond to probe" "$tmp/$name.log" && break; sleep 0.2; done
  sleep 2
  PA=$(sed -n 's/.*probe requests on <[^>]*\([0-9a-f]\{32\}\)>.*/\1/p' "$tmp/$name.log" | head -1)
  r0=$(rss $D)
  "$PY" "$tmp/flood.py" idle 200 "$inst" 14 >"$tmp/$name.idle" & F=$!
  sleep 2; r1=$(rss $D)
  t0=$SECONDS
  timeout 25 "$RNSC" probe --config "$tmp/$name" -t 10 rnstransport.probe "$PA" >"$tmp/$name.probe" 2>&1
  grep -qs "Valid reply" "$tmp/$name.probe" && pr="proof in $((SECONDS - t0)) s" || pr="no proof ($(tail -1 "$tmp/$name.probe"), <$PA>)"
  sleep $((12 - (SECONDS - t0) > 0 ? 12 - (SECONDS - t0) : 0)); r2=$(rss $D)
  wait $F
  for k in 1 2; do "$PY" "$tmp/flood.py" speak 100 "$inst" 1 >/dev/null; done &
  sleep 1.5; r3=$(rss $D); wait $!
  sleep 5; r4=$(rss $D)
  echo "$name: RSS rest $r0, idle flood $r1, after 12 s $r2, speaking flood $r3, 5 s after $r4 kB; probe during the idle flood: $pr; $(head -1 "$tmp/$name.idle") of 200 idle connections kept"
  kill $D; wait $D 2>/dev/null
}
export PYTHONUNBUFFERED=1 # rnsd prints its probe destination through a pipe
run rnsc "$RNSC" daemon
[ -n "${ONLY_RNSC:-}" ] || run rnsd "$VENV/bin/rnsd"
