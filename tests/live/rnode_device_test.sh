#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc's RNodeInterface against simulated RNodes (tests/common/rnode_sim.py) that misbehave, all
# in one rnsc daemon so that one interface's trouble is seen not to stop the others:
#   Good   a sound device (flow control, station identification every 1 s): comes online;
#          a memory-low error report is logged and it stays online; a TX-failure report
#          and an ESP32 reset take it offline and it reconnects; a runt, an oversized data
#          frame and a short report are counted as drops; its identification goes out
#   Old    firmware 1.40: refused with the reference's message, retried
#   Skew   reports the frequency 500 Hz off: "Frequency mismatch", port closed, retried
#   Mute   a pty that answers nothing: "Could not detect device", retried
#   Late   no device at start: logged, retried, online once its simulator appears
# The channel alone: a frame's airtime by the LoRa formula, a collision, a lossy receiver.
# Then configurations the reference refuses (frequency, TX power, bandwidth, SF, CR, airtime
# limit, callsign length, no port) and the ble:// / tcp:// ports rnsc does not serve are
# refused by rnsc with messages naming the option. Every wait is bounded.
set -u
. "$(dirname "$0")/../common/lib.sh"
[ -x "$PY" ] || { echo "FAIL no python in $VENV (make venv)"; exit 1; }
[ -x "$RNSC" ] || { echo "FAIL $RNSC is not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-rnode-dev.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.3
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
alive() { kill -0 "$1" 2>/dev/null; }
ctl() { "$PY" -c 'import socket,sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(sys.argv[2].encode(), sys.argv[1])' "$1" "$2"; }
has() { grep -qs -- "$1" "$tmp/rnsc.log"; }
read -r P1 P2 P3 P4 P5 < <("$PY" -c '
import socket
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(5)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

stanza() { # stanza NAME PORT EXTRA
  printf '  [[%s]]\n    type = RNodeInterface\n    enabled = yes\n    port = %s\n    frequency = 915000000\n    bandwidth = 500000\n    txpower = 10\n    spreadingfactor = 7\n    codingrate = 8\n    reconnect_wait = 0.5\n%b' "$1" "$2" "$3"
}
sim() { # sim NAME PORT ARGS...
  local n=$1 p=$2; shift 2
  "$PY" "$S/tests/common/rnode_sim.py" --link "$tmp/$n" --air "$p" --control "$tmp/ctl_$n" --lifetime 120 "$@" \
    >"$tmp/sim_$n.log" 2>&1 & pids+=($!)
}
mkdir -p "$tmp/D"
{
  printf '[reticulum]\n  enable_transport = no\n  share_instance = yes\n  instance_name = rnscrnodedev%s\n[logging]\n  loglevel = 7\n[interfaces]\n' "$$"
  stanza Good "$tmp/Good" '    flow_control = yes\n    id_callsign = N0CALL-1\n    id_interval = 1\n    bitrate = 1200\n'
  stanza Old "$tmp/Old" ''
  stanza Skew "$tmp/Skew" ''
  stanza Mute "$tmp/Mute" ''
  stanza Late "$tmp/Late" ''
} >"$tmp/D/config"
sim Good "$P1" --platform 0x80 --stats-interval 30 # reports at radio-on only: no frame splits the partial one below
sim Old "$P2" --fw-minor 40
sim Skew "$P3" --freq-skew 500
sim Mute "$P4" --mute
for n in Good Old Skew Mute; do
  wait_for 10 grep -qs READY "$tmp/sim_$n.log" || { bad "simulator $n did not start" "$tmp/sim_$n.log"; exit 1; }
done
"$RNSC" daemon --config "$tmp/D" -vvvv >"$tmp/rnsc.log" 2>&1 & RD=$!; pids+=($RD)
if wait_for 15 has "Good is now online"; then ok "Good: online next to three failing RNodes and a missing one"
else bad "Good did not come online" "$tmp/rnsc.log" "$tmp/sim_Good.log"; exit 1; fi
wait_for 10 has "Reticulum will attempt to bring up this interface periodically" &&
  has "Could not open serial port for interface RNodeInterface\[Late\]" &&
  ok "Late: the missing port is logged and retried" || bad "Late: no error for the missing port" "$tmp/rnsc.log"
wait_for 10 has "The firmware version of the connected RNode is 1.40" &&
  ok "Old: firmware 1.40 refused: $(grep -m1 -o "The firmware version.*" "$tmp/rnsc.log" | cut -c1-110)" || bad "Old: old firmware not refused" "$tmp/rnsc.log"
wait_for 10 has "Frequency mismatch" && has "RNodeInterface\[Skew\]: Aborting RNode startup" &&
  ok "Skew: a frequency reported 500 Hz off is a mismatch; the port is closed and retried" || bad "Skew: no mismatch" "$tmp/rnsc.log"
wait_for 10 has "RNodeInterface\[Mute\]: Could not detect device" &&
  ok "Mute: a port that does not answer DETECT is closed and retried" || bad "Mute: not reported" "$tmp/rnsc.log"
sim Late "$P5"
if wait_for 15 has "Late is now online"; then ok "Late: online once its device appeared"
else bad "Late did not come online" "$tmp/rnsc.log" "$tmp/sim_Late.log"; fi
wait_for 5 sh -c "[ \$(grep -c 'Could not detect device' '$tmp/rnsc.log') -ge 2 ]" &&
  ok "Mute: retried (detection failed again)" || bad "Mute: not retried" "$tmp/rnsc.log"

# Good: traffic through the shared instance (a path request goes out on every interface),
# then the identification after id_interval.
timeout 10 "$RNSC" probe --config "$tmp/D" rnstransport.probe 0123456789abcdef0123456789abcdef -t 2 >"$tmp/probe.out" 2>&1
if wait_for 10 has "RNodeInterface\[Good\] is transmitting beacon data: N0CALL-1" &&
   wait_for 5 grep -qs "^TX 8 bytes" "$tmp/sim_Good.log"; then
  ok "Good: station identification N0CALL-1 sent as an 8-byte data frame after traffic"
else bad "Good: no identification" "$tmp/rnsc.log" "$tmp/sim_Good.log"; fi
status() { timeout 10 "$RNSC" status --config "$tmp/D" >"$tmp/status.out" 2>&1; }
ctl "$tmp/ctl_Good" "raw c0000102c0"
ctl "$tmp/ctl_Good" "raw c000$(printf '%01200d' 0 | tr 0 a)c0"
ctl "$tmp/ctl_Good" "raw c02501c0"
# Reports a firmware sends on request or now and then: RX/TX counters, RANDOM, RADIO_LOCK, a
# channel report with interference, a display read (nothing for the host), a temperature
# out of range; then half a data frame, completed after the 100 ms partial-frame timeout.
ctl "$tmp/ctl_Good" "raw c02100000102c0c02200000009c0c04011c0c00701c0c025000100020003000480507aa0c0c0660000c0c02901c0"
ctl "$tmp/ctl_Good" "raw c00600c0"
ctl "$tmp/ctl_Good" "raw c0000102030405"
sleep 0.3
ctl "$tmp/ctl_Good" "raw 060708c0"
wait_for 5 has "RNodeInterface\[Good\] Radio detected interference at -35 dBm" &&
  ok "Good: a channel report with interference is logged as the reference logs it" || bad "Good: interference not logged" "$tmp/rnsc.log"
wait_for 5 has "RNodeInterface\[Good\] Radio reporting state is offline" &&
  ok "Good: a radio-off report is logged" || bad "Good: radio-off report not logged" "$tmp/rnsc.log"
wait_for 5 has "RNodeInterface\[Good\] device read timeout" &&
  ok "Good: a partial frame is forgotten after 100 ms without input" || bad "Good: no read timeout" "$tmp/rnsc.log"
sleep 0.5
ctl "$tmp/ctl_Good" "error 5"
wait_for 5 has "RNodeInterface\[Good\] hardware error (code 05): Memory exhausted" && sleep 0.3 && ! has "serial port error occurred on RNodeInterface\[Good\]" &&
  ok "Good: memory-low report logged, the interface stays online" || bad "Good: memory-low report" "$tmp/rnsc.log"
if status && grep -A12 "RNodeInterface\[Good\]" "$tmp/status.out" | grep -q "Status *: Up"; then
  ok "Good: rnsc status shows it up"
else bad "Good: status" "$tmp/status.out"; fi
ctl "$tmp/ctl_Good" "error 2"
wait_for 5 has "A serial port error occurred on RNodeInterface\[Good\] (hardware TX error (code 02))" &&
  ok "Good: a TX-failure report takes it offline (the reference raises there)" || bad "Good: TX failure" "$tmp/rnsc.log"
wait_for 10 has "Reconnected port for RNodeInterface\[Good\]" &&
  ok "Good: reconnected after the TX failure" || bad "Good: no reconnect" "$tmp/rnsc.log"
sleep 0.5
ctl "$tmp/ctl_Good" "raw c055f8c0"
wait_for 5 has "Detected reset while device was online" &&
  ok "Good: an ESP32 reset while online re-initialises the device" || bad "Good: reset not handled" "$tmp/rnsc.log"
wait_for 10 sh -c "[ \$(grep -c 'Reconnected port for RNodeInterface\[Good\]' '$tmp/rnsc.log') -ge 2 ]" &&
  ok "Good: reconnected after the reset" || bad "Good: no second reconnect" "$tmp/rnsc.log"
alive "$RD" && ok "daemon still running" || bad "daemon died" "$tmp/rnsc.log"
kill "$RD"; wait "$RD" 2>/dev/null
if grep -qs "runt [1-9]" "$tmp/rnsc.log" && grep -Eqs "oversize [1-9]" "$tmp/rnsc.log"; then
  ok "Good: the runt and the oversized frame were counted as drops"
else bad "drops not counted" "$tmp/rnsc.log"; fi
grep -q "CMD 41 00" "$tmp/sim_Good.log" && tail -3 "$tmp/sim_Good.log" | grep -q "HOST LEFT" &&
  ok "Good: detached on shutdown (ESP32: framebuffer off, radio off, leave)" || bad "Good: no detach" "$tmp/sim_Good.log"

# ---- the simulated channel itself: airtime, collisions, loss -------------------------------
# Three simulators X, Y (no carrier sense) and Z on one channel, driven straight through
# their ptys: X alone sends 100 bytes (SF7, 500 kHz, CR 4:5: 94 + 4.25 preamble and 158
# payload symbols of 0.256 ms by the LoRa formula, 65.6 ms), Z receives it; X and Y send at
# once: Z hears a collision; with --loss 1 on W nothing is received.
read -r Q1 Q2 Q3 Q4 < <("$PY" -c '
import socket
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(4)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
sim X "$Q1" --peer "$Q2" --peer "$Q3" --peer "$Q4" --no-csma
sim Y "$Q2" --peer "$Q1" --peer "$Q3" --peer "$Q4" --no-csma
sim Z "$Q3" --peer "$Q1" --peer "$Q2"
sim W "$Q4" --loss 1.0
for n in X Y Z W; do wait_for 10 grep -qs READY "$tmp/sim_$n.log" || bad "simulator $n did not start" "$tmp/sim_$n.log"; done
"$PY" - "$tmp" >"$tmp/air.out" 2>&1 <<'EOF'
import os, struct, sys, termios, time, tty
tmp = sys.argv[1]
def kiss(cmd, p):
    p = bytes(p).replace(b"\xdb", b"\xdb\xdd").replace(b"\xc0", b"\xdb\xdc")
    return b"\xc0" + bytes([cmd]) + p + b"\xc0"
fds = {}
for n in "XYZW":
    fd = os.open(os.path.join(tmp, n), os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)
    fds[n] = fd
    os.write(fd, kiss(1, struct.pack("!I", 868000000)) + kiss(2, struct.pack("!I", 500000)) +
             kiss(4, [7]) + kiss(5, [5]) + kiss(6, [1]))
time.sleep(0.5)
os.write(fds["X"], kiss(0, bytes(range(100))))
time.sleep(0.5)
os.write(fds["X"], kiss(0, b"x" * 400))
os.write(fds["Y"], kiss(0, b"y" * 400))
time.sleep(0.8)
for fd in fds.values():
    os.close(fd)
print("done")
EOF
sleep 0.3
if grep -qs "^TX 100 bytes 65.6 ms" "$tmp/sim_X.log" && grep -qs "^RX 100 bytes" "$tmp/sim_Z.log"; then
  ok "channel: 100 bytes at SF7/500 kHz/CR 4:5 take 65.6 ms on air and are received"
else bad "channel: airtime or reception wrong" "$tmp/sim_X.log" "$tmp/sim_Z.log" "$tmp/air.out"; fi
if grep -qs "^COLLISION 400 bytes" "$tmp/sim_Z.log" && ! grep -qs "^RX 400 bytes" "$tmp/sim_Z.log"; then
  ok "channel: two simultaneous transmissions collide at the third radio"
else bad "channel: no collision" "$tmp/sim_Z.log"; fi
if grep -qs "^LOST 100 bytes" "$tmp/sim_W.log" && ! grep -qs "^RX" "$tmp/sim_W.log"; then
  ok "channel: --loss 1 drops every reception"
else bad "channel: loss not applied" "$tmp/sim_W.log"; fi

# ---- configurations refused ----------------------------------------------------------------
refuse() { # refuse TAG EXPECTED-MESSAGE STANZA-EXTRA [PORT]
  local d="$tmp/bad_$1"
  mkdir -p "$d"
  { printf '[reticulum]\n  share_instance = no\n[interfaces]\n'
    printf '  [[Bad]]\n    type = RNodeInterface\n    enabled = yes\n%b' "$3"; } >"$d/config"
  timeout 10 "$RNSC" daemon --config "$d" >"$d/log" 2>&1 &
  local p=$!
  wait_for 8 grep -qs -- "$2" "$d/log" && ok "refused: $1 ($(grep -m1 -o -- "$2.*" "$d/log" | cut -c1-90))" ||
    bad "not refused: $1" "$d/log"
  kill "$p" 2>/dev/null; wait "$p" 2>/dev/null
}
base='    port = /dev/null\n    frequency = 868000000\n    bandwidth = 125000\n    txpower = 7\n    spreadingfactor = 8\n    codingrate = 5\n'
refuse frequency "Invalid frequency configured for RNodeInterface\[Bad\]" "${base/868000000/100000000}"
refuse txpower "Invalid TX power configured" "${base/txpower = 7/txpower = 38}"
refuse bandwidth "Invalid bandwidth configured" "${base/125000/7000}"
refuse spreadingfactor "Invalid spreading factor configured" "${base/spreadingfactor = 8/spreadingfactor = 13}"
refuse codingrate "Invalid coding rate configured" "${base/codingrate = 5/codingrate = 4}"
refuse airtime "Invalid short-term airtime limit configured" "${base}    airtime_limit_short = 101\n"
refuse callsign "exceeds the max length of 32 bytes" "${base}    id_interval = 600\n    id_callsign = $(printf 'C%.0s' $(seq 33))\n"
refuse noport "No port specified for RNode interface" "${base/port = \/dev\/null/}"
refuse ble "not supported by rnsc" "${base/\/dev\/null/ble://RNode 3B87}"
refuse tcp "not supported by rnsc" "${base/\/dev\/null/tcp://127.0.0.1:4242}"
refuse "frequency type" "\[\[Bad\]\] frequency" "${base/868000000/abc}"
refuse "flow_control type" "\[\[Bad\]\] flow_control" "${base}    flow_control = maybe\n"
refuse "airtime type" "\[\[Bad\]\] airtime_limit_long" "${base}    airtime_limit_long = lots\n"
refuse "reconnect_wait" "option \"reconnect_wait\": must be between" "${base}    reconnect_wait = 0\n"
refuse "long port" "option \"port\": path too long" "${base/\/dev\/null/\/$(printf 'p%.0s' $(seq 600))}"
echo "rnode_device_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
