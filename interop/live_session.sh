#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A live session between rnsc and the pinned reference on 127.0.0.1, narrated: the
# reference's rnsd and `rnsc daemon` connect over TCP, each announces its probe
# destination, each learns the other's path, the reference's rnprobe probes rnsc and
# `rnsc probe` probes the reference. Run by `./run.sh main` (and usable by hand:
# RNSC_BUILDDIR=build RNSC_VENV=.venv interop/live_session.sh). Exit 0 only if every step
# happened; every wait is bounded; logs are kept in $RNSC_SESSION_DIR (default a temp dir
# printed at the end).
set -u
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
RNSC="$B/src/cli/rnsc"
VENV=${RNSC_VENV:-$B/.venv}
PY=$VENV/bin/python
for tool in rnsd rnprobe rnpath; do
  [ -x "$VENV/bin/$tool" ] || { echo "session: the reference's $tool is not in $VENV/bin (make venv)"; exit 3; }
done
dir=${RNSC_SESSION_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/rnsc-session.XXXXXX")}
mkdir -p "$dir/ref" "$dir/rnsc" "$dir/refclient" "$dir/rnscclient"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
steps=0 failed=0
step() { steps=$((steps+1)); printf '  [%s] %s\n' "$1" "$2"; [ "$1" = ok ] || failed=$((failed+1)); }
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }

read -r P1 P2 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
inst="rnscsession$$"
cat >"$dir/ref/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = yes
  instance_name = $inst
  respond_to_probes = yes
[logging]
  loglevel = 4
[interfaces]
  [[Reference TCP Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P1
EOF
cat >"$dir/rnsc/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = no
  respond_to_probes = yes
[logging]
  loglevel = 4
[interfaces]
  [[To Reference]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P1
  [[rnsc TCP Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P2
EOF
for c in refclient:$P2 rnscclient:$P1; do
  cat >"$dir/${c%%:*}/config" <<EOF
[reticulum]
  share_instance = no
[logging]
  loglevel = 3
[interfaces]
  [[Client]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = ${c##*:}
EOF
done

echo "live session: reference rnsd (RNS $("$PY" -c 'import RNS; print(RNS.__version__)' 2>/dev/null)) <-> rnsc daemon over TCP on 127.0.0.1"
"$VENV/bin/rnsd" --config "$dir/ref" >"$dir/rnsd.log" 2>&1 &
pids+=($!)
if wait_for 30 port_open "$P1"; then step ok "reference rnsd listening on :$P1"
else step FAIL "reference rnsd did not start (see $dir/rnsd.log)"; exit 1; fi
"$RNSC" daemon --config "$dir/rnsc" -vv >"$dir/rnsc.log" 2>&1 &
pids+=($!)
if wait_for 20 port_open "$P2"; then step ok "rnsc daemon connected to it and listening on :$P2"
else step FAIL "rnsc daemon did not start (see $dir/rnsc.log)"; exit 1; fi

REF_PROBE=$("$RNSC" id -i "$dir/ref/storage/transport_identity" -H rnstransport.probe | sed -n 's/.*<\([0-9a-f]*\)>.*/\1/p')
RNSC_PROBE=$("$RNSC" id -i "$dir/rnsc/storage/transport_identity" -H rnstransport.probe | sed -n 's/.*<\([0-9a-f]*\)>.*/\1/p')
echo "  probe destinations: reference <$REF_PROBE>, rnsc <$RNSC_PROBE>"
echo "  (both announce them 15 s after start, as the reference does)"
if wait_for 60 grep -qs "path to <$REF_PROBE> is 1 hop" "$dir/rnsc.log"; then
  step ok "rnsc received the reference's announce: $(grep -m1 "path to <$REF_PROBE>" "$dir/rnsc.log" | sed 's/^.*\(path to\)/\1/')"
else step FAIL "rnsc never learned a path to the reference's probe destination"; fi
ref_has() { timeout 20 "$VENV/bin/rnpath" --config "$dir/ref" -t >"$dir/rnpath.out" 2>&1 && grep -qs "<$RNSC_PROBE>" "$dir/rnpath.out"; }
if wait_for 60 ref_has; then step ok "the reference's path table (rnpath -t): $(grep "<$RNSC_PROBE>" "$dir/rnpath.out" | tr -s ' ')"
else step FAIL "the reference never learned a path to rnsc's probe destination"; fi

timeout 60 "$VENV/bin/rnprobe" --config "$dir/refclient" rnstransport.probe "$RNSC_PROBE" -t 15 -n 3 >"$dir/rnprobe.out" 2>&1; rc=$?
if [ $rc = 0 ]; then step ok "reference rnprobe -> rnsc: $(grep -c 'Valid reply' "$dir/rnprobe.out") replies; $(grep -m1 'packet loss' "$dir/rnprobe.out")"
else step FAIL "reference rnprobe -> rnsc failed (exit $rc): $(tail -1 "$dir/rnprobe.out")"; fi
timeout 60 "$RNSC" probe --config "$dir/rnscclient" rnstransport.probe "$REF_PROBE" -t 15 -n 3 >"$dir/probe.out" 2>&1; rc=$?
if [ $rc = 0 ]; then step ok "rnsc probe -> reference: $(grep -c 'Valid reply' "$dir/probe.out") replies; $(grep -m1 'packet loss' "$dir/probe.out")"
else step FAIL "rnsc probe -> reference failed (exit $rc): $(tail -1 "$dir/probe.out")"; fi
timeout 60 "$RNSC" probe --config "$dir/rnscclient" rnstransport.probe "$RNSC_PROBE" -t 15 >"$dir/probe2.out" 2>&1; rc=$?
if [ $rc = 0 ]; then step ok "rnsc probe -> rnsc daemon through the reference: $(grep -m1 'Valid reply' "$dir/probe2.out" | sed 's/^.*\(Round-trip\)/\1/')"
else step FAIL "rnsc probe through the reference failed (exit $rc)"; fi

echo "live session: $((steps-failed))/$steps steps succeeded; logs in $dir"
[ "$failed" -eq 0 ]
