#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A config whose interfaces cannot all start: a serial port that does not exist, a pipe
# command that does not exist, a TCP port already in use and a network device that does
# not exist, an RNodeInterface on an absent port, an I2PInterface and a WeaveInterface
# (types no plugin of rnsc serves), beside a working TCP server that carries refused
# options and a typo; [reticulum] has a typo too.
# rnsc daemon logs one clear error per failed or skipped interface (naming section and
# option), one warning per refused or unknown option, and keeps running with the others: a probe through the working interface is answered. With
# panic_on_interface_error = yes the first failure stops it (exit 3), as the reference does.
set -u
. "$(dirname "$0")/../common/lib.sh"
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -20 "$f" | sed 's/^/     /'; done; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-iface-errors.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; sleep 0.2; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }

# A port held busy by a listener for the whole test, and a free one.
"$PY" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
f = socket.socket(); f.bind(("127.0.0.1", 0)); free = f.getsockname()[1]; f.close()
print(s.getsockname()[1], free, flush=True)
time.sleep(120)' >"$tmp/ports" &
pids+=($!)
wait_for 10 test -s "$tmp/ports" || { echo "FAIL could not reserve ports"; exit 1; }
read -r BUSY FREE <"$tmp/ports"

mkdir -p "$tmp/A" "$tmp/C"
cat >"$tmp/A/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = no
  respond_to_probes = yes
  frobnicate = 3
[logging]
  loglevel = 4
[interfaces]
  [[Good TCP]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $FREE
    outgoing = no
    bootstrap_only = yes
    frobnicate = 3
  [[Missing Serial]]
    type = SerialInterface
    enabled = yes
    port = /dev/rnsc-no-such-tty-$$
    speed = 9600
  [[Missing Command]]
    type = PipeInterface
    enabled = yes
    command = /nonexistent/rnsc-no-such-program --flag
  [[Busy Port]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $BUSY
  [[Missing Device]]
    type = UDPInterface
    enabled = yes
    device = rnscnodev$$
    port = $FREE
  [[My RNode]]
    type = RNodeInterface
    enabled = yes
    port = /dev/rnsc-no-such-rnode-$$
    frequency = 867200000
    bandwidth = 125000
    txpower = 7
    spreadingfactor = 8
    codingrate = 5
  [[My I2P]]
    type = I2PInterface
    enabled = yes
    connectable = yes
  [[My Weave]]
    type = WeaveInterface
    enabled = yes
    port = /dev/rnsc-no-such-weave-$$
EOF
cat >"$tmp/C/config" <<EOF
[reticulum]
  share_instance = no
[logging]
  loglevel = 3
[interfaces]
  [[Client]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $FREE
EOF

"$RNSC" daemon --config "$tmp/A" >"$tmp/daemon.log" 2>&1 &
DPID=$!
pids+=($DPID)
if wait_for 20 grep -qs "started rnsc daemon" "$tmp/daemon.log"; then ok "daemon started despite six failed or skipped interfaces and an RNode without its port"
else bad "daemon did not start" "$tmp/daemon.log"; exit 1; fi
for what in 'Missing Serial\]\] option "port"' 'Missing Command\]\] option "command"' 'Busy Port\]\] .*listen_port' 'Missing Device\]\] option "device"'; do
  n=$(grep -c "\[Error\].*$what" "$tmp/daemon.log")
  if [ "$n" = 1 ]; then ok "one error: $(grep "\[Error\].*$what" "$tmp/daemon.log" | sed 's/^.*\[Error\] //')"
  else bad "expected exactly one error matching '$what', saw $n" "$tmp/daemon.log"; fi
done
# The rnode plugin serves RNodeInterface: an absent port is logged as the reference logs it
# and retried in the background (no failure at start, as RNodeInterface.__init__ does not raise).
for what in 'My RNode: Could not open serial port for interface RNodeInterface\[My RNode\]: cannot open serial port /dev/rnsc-no-such-rnode' \
            'My RNode: Reticulum will attempt to bring up this interface periodically'; do
  n=$(grep -c "\[Error\].*$what" "$tmp/daemon.log")
  if [ "$n" = 1 ]; then ok "logged: $(grep "\[Error\].*$what" "$tmp/daemon.log" | sed 's/^.*\[Error\] //')"
  else bad "expected exactly one error matching '$what', saw $n" "$tmp/daemon.log"; fi
done
for what in 'My I2P\]\] option "type": no loaded interface plugin serves type "I2PInterface"; interface skipped, the others keep running (rnsc has no I2PInterface: it needs an I2P router.s SAM bridge' \
            'My Weave\]\] option "type": no loaded interface plugin serves type "WeaveInterface"; interface skipped, the others keep running (rnsc has no WeaveInterface: there is no Weave device, nor a simulator'; do
  n=$(grep -c "\[Error\].*$what" "$tmp/daemon.log")
  if [ "$n" = 1 ]; then ok "skipped: $(grep "\[Error\].*$what" "$tmp/daemon.log" | sed 's/^.*\[Error\] //')"
  else bad "expected exactly one error matching '$what', saw $n" "$tmp/daemon.log"; fi
done
for what in '\[reticulum\] option "frobnicate" (line [0-9]*): no version of the reference reads' \
            'Good TCP\]\] option "frobnicate" (line [0-9]*): no version of the reference reads' \
            'Good TCP\]\] option "outgoing" (line [0-9]*): refused: ' \
            'Good TCP\]\] option "bootstrap_only" (line [0-9]*): refused: '; do
  n=$(grep -c "\[Warning\].*$what" "$tmp/daemon.log")
  if [ "$n" = 1 ]; then ok "warned: $(grep "\[Warning\].*$what" "$tmp/daemon.log" | sed 's/^.*\[Warning\] //')"
  else bad "expected exactly one warning matching '$what', saw $n" "$tmp/daemon.log"; fi
done
wait_for 10 grep -qs "respond to probe requests" "$tmp/daemon.log" || bad "no probe destination" "$tmp/daemon.log"
grep -qs "6 interfaces could not be started" "$tmp/daemon.log" && ok "failed interfaces counted" \
  || bad "no count of failed interfaces" "$tmp/daemon.log"

PROBE=$("$RNSC" id -i "$tmp/A/storage/transport_identity" -H rnstransport.probe | sed -n 's/.*destination for this Identity is <\([0-9a-f]*\)>.*/\1/p')
timeout 60 "$RNSC" probe --config "$tmp/C" rnstransport.probe "$PROBE" -t 15 >"$tmp/probe.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -qs "Valid reply from <$PROBE>" "$tmp/probe.out"; then
  ok "the working interface carries a probe and its reply"
else bad "probe through the working interface (exit $rc)" "$tmp/probe.out" "$tmp/daemon.log"; fi
kill -0 "$DPID" 2>/dev/null && ok "daemon still running" || bad "daemon died" "$tmp/daemon.log"
kill -TERM "$DPID"; wait "$DPID" 2>/dev/null

sed -i 's/^  share_instance = no$/  share_instance = no\n  panic_on_interface_error = yes/' "$tmp/A/config"
timeout 20 "$RNSC" daemon --config "$tmp/A" >"$tmp/panic.log" 2>&1; rc=$?
if [ $rc = 3 ] && grep -qs "Missing Serial" "$tmp/panic.log" && ! grep -qs "Missing Command" "$tmp/panic.log"; then
  ok "panic_on_interface_error = yes: the first failure stops the daemon (exit 3)"
else bad "panic_on_interface_error (exit $rc)" "$tmp/panic.log"; fi

# --service logs to the config folder's logfile; [logging] logtimestamps = no drops the
# timestamps and loglevel 8 (the reference's LOG_EXTREME) is accepted.
mkdir -p "$tmp/L"
printf '[reticulum]\n  share_instance = no\n[logging]\n  loglevel = 8\n  logtimestamps = no\n' >"$tmp/L/config"
"$RNSC" daemon --config "$tmp/L" -s >"$tmp/service.out" 2>&1 &
SPID=$!
pids+=($SPID)
wait_for 10 grep -qs "started rnsc daemon" "$tmp/L/logfile"
kill -TERM "$SPID"; wait "$SPID" 2>/dev/null
if grep -qs '^\[Notice\] daemon: started rnsc daemon' "$tmp/L/logfile" && ! grep -qs '^\[20' "$tmp/L/logfile" \
   && grep -qs '^\[Debug\]\|^\[Verbose\]' "$tmp/L/logfile" && [ ! -s "$tmp/service.out" ]; then
  ok "--service: logfile lines without timestamps at loglevel 8 ($(wc -l <"$tmp/L/logfile") lines)"
else bad "--service logfile with logtimestamps = no" "$tmp/L/logfile" "$tmp/service.out"; fi

echo "daemon_iface_errors_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
