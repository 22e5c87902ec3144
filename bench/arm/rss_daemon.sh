#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Peak RSS of `rnsc daemon` with one TCPServerInterface and one RNodeInterface, the RNode being
# tests/common/rnode_sim.py on a pty, for bench/results/arm/ (issue 23 item 6):
#
#   bench/arm/rss_daemon.sh BUILD_DIR LABEL [WRAPPER ...]
#
# BUILD_DIR holds src/cli/rnsc (any architecture); WRAPPER runs it (qemu-aarch64, qemu-arm;
# nothing natively). The reference's rnsd ($RNSC_VENV, native) connects to the TCP interface so
# both interfaces carry traffic: its announces, the daemon's announces out of the radio. The
# daemon runs DURATION seconds (default 40) after its RNode is online, then gets SIGTERM.
# Under qemu-user the figure is the qemu process's ru_maxrss (emulator + translated code +
# guest); the same wrapper running `rnsc plugins` (which loads every plugin and exits) is
# printed beside it as that overhead's baseline. One line of JSON on stdout.
set -u
B=${1:?usage: rss_daemon.sh BUILD_DIR LABEL [WRAPPER ...]}
LABEL=${2:?label}
shift 2
WRAP=("$@")
S=$(cd "$(dirname "$0")/../.." && pwd)
VENV=${RNSC_VENV:-/work/main/.venv}
DURATION=${DURATION:-40}
RNSC="$B/src/cli/rnsc"
[ -x "$RNSC" ] || { echo "FAIL $RNSC is not built" >&2; exit 1; }
[ -x "$VENV/bin/rnsd" ] || { echo "FAIL no rnsd in $VENV" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-arm-rss.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.3
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
read -r PT A1 A2 < <(python3 -c '
import socket
t = socket.socket(); t.bind(("127.0.0.1", 0))
u = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
for x in u: x.bind(("127.0.0.1", 0))
print(t.getsockname()[1], *[x.getsockname()[1] for x in u])')
mkdir -p "$tmp/D" "$tmp/R"
cat >"$tmp/D/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = no
  respond_to_probes = yes
[logging]
  loglevel = 5
[interfaces]
  [[TCP]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $PT
  [[LoRa]]
    type = RNodeInterface
    enabled = yes
    port = $tmp/rnode
    frequency = 867200000
    bandwidth = 125000
    txpower = 7
    spreadingfactor = 8
    codingrate = 5
    flow_control = yes
EOF
cat >"$tmp/R/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = no
  respond_to_probes = yes
[logging]
  loglevel = 4
[interfaces]
  [[TCP]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $PT
EOF
python3 "$S/tests/common/rnode_sim.py" --link "$tmp/rnode" --air "$A1" --peer "$A2" \
  --lifetime $((DURATION + 200)) >"$tmp/sim.log" 2>&1 & pids+=($!)
wait_for 15 grep -qs READY "$tmp/sim.log" || { echo "FAIL the simulated RNode did not start" >&2; cat "$tmp/sim.log" >&2; exit 1; }
t0=$SECONDS
python3 "$S/tests/common/rss_run.py" "$tmp/rss" "${WRAP[@]}" "$RNSC" daemon --config "$tmp/D" -vv \
  >"$tmp/daemon.log" 2>&1 & D=$!; pids+=($D)
if ! wait_for 120 grep -qs "LoRa is now online" "$tmp/daemon.log"; then
  echo "FAIL the daemon's RNodeInterface did not come online" >&2; tail -30 "$tmp/daemon.log" >&2; exit 1
fi
up=$((SECONDS - t0))
"$VENV/bin/rnsd" --config "$tmp/R" >"$tmp/rnsd.log" 2>&1 & pids+=($!)
sleep "$DURATION"
kill -0 "$D" 2>/dev/null || { echo "FAIL the daemon exited early" >&2; tail -30 "$tmp/daemon.log" >&2; exit 1; }
kill -TERM "$D"
wait_for 30 test -s "$tmp/rss" || { echo "FAIL the daemon did not stop on SIGTERM" >&2; exit 1; }
tx=$(grep -c '^TX' "$tmp/sim.log")
# both interfaces were used: rnsd's announce arrived over TCP, the daemon transmitted on air
grep -qs "is 1 hop via Client on TCP" "$tmp/daemon.log" ||
  { echo "FAIL no path learned from rnsd over the TCP interface" >&2; tail -30 "$tmp/daemon.log" >&2; exit 1; }
[ "$tx" -ge 1 ] || { echo "FAIL the daemon sent nothing over the RNode" >&2; exit 1; }
python3 "$S/tests/common/rss_run.py" "$tmp/base" "${WRAP[@]}" "$RNSC" plugins >/dev/null 2>&1
printf '{"label":"%s","arch":"%s","wrapper":"%s","daemon_peak_rss_kib":%s,"plugins_cmd_peak_rss_kib":%s,"seconds_to_rnode_online":%d,"run_seconds":%d,"radio_tx_frames":%d}\n' \
  "$LABEL" "$(file -b "$RNSC" | cut -d, -f2 | sed 's/^ *//')" "${WRAP[*]}" "$(cat "$tmp/rss")" \
  "$(cat "$tmp/base" 2>/dev/null || echo null)" "$up" "$DURATION" "$tx"
[ -n "${KEEP:-}" ] && echo "kept $tmp" >&2
exit 0
