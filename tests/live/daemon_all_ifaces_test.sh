#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One config naming every interface type rnsc has a plugin for — TCP server and client,
# UDP, Backbone, Pipe (`cat` as the far end), Serial and KISS (pseudo-terminals this test
# holds open), AutoInterface, TLS and WebSocket servers — starts cleanly: no error logged,
# and the status endpoint lists every interface with its type and plugin.
set -u
. "$(dirname "$0")/../common/lib.sh"
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -20 "$f" | sed 's/^/     /'; done; }
command -v curl >/dev/null || { echo "FAIL curl is not installed"; exit 1; }
command -v openssl >/dev/null || { echo "FAIL openssl is not installed"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-all-ifaces.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; sleep 0.2; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }

# Two pseudo-terminals held open for the serial interfaces, and free ports.
"$PY" - "$tmp" <<'EOF' >"$tmp/pty.out" 2>&1 &
import os, socket, sys, time
d = sys.argv[1]
names = []
for tag in ("serial", "kiss"):
    m, s = os.openpty()
    os.symlink(os.ttyname(s), os.path.join(d, tag))
    names.append((m, s))
ports = []
for kind in (socket.SOCK_STREAM, socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_DGRAM,
             socket.SOCK_STREAM, socket.SOCK_STREAM, socket.SOCK_STREAM):
    x = socket.socket(socket.AF_INET, kind); x.bind(("127.0.0.1", 0))
    ports.append(x.getsockname()[1]); x.close()
open(os.path.join(d, "ports"), "w").write(" ".join(map(str, ports)) + "\n")
time.sleep(300)
EOF
pids+=($!)
wait_for 10 test -s "$tmp/ports" || { bad "could not open pseudo-terminals" "$tmp/pty.out"; exit 1; }
read -r PT PC PU1 PU2 PB PTLS PWS <"$tmp/ports"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/key.pem" -out "$tmp/cert.pem" >/dev/null 2>&1 \
  || { bad "openssl could not make a certificate"; exit 1; }

mkdir -p "$tmp/A"
cat >"$tmp/A/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = no
  respond_to_probes = yes
[logging]
  loglevel = 4
[interfaces]
  [[TCP Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $PT
  [[TCP Client]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $PT
  [[UDP]]
    type = UDPInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $PU1
    forward_ip = 127.0.0.1
    forward_port = $PU2
  [[Backbone]]
    type = BackboneInterface
    enabled = yes
    listen_on = 127.0.0.1
    port = $PB
  [[Pipe]]
    type = PipeInterface
    enabled = yes
    command = cat
    respawn_delay = 5
  [[Serial]]
    type = SerialInterface
    enabled = yes
    port = $tmp/serial
    speed = 115200
  [[KISS]]
    type = KISSInterface
    enabled = yes
    port = $tmp/kiss
    speed = 9600
    flow_control = false
  [[Auto]]
    type = AutoInterface
    enabled = yes
    group_id = rnsc-all-ifaces-$$
  [[TLS]]
    type = TLSServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $PTLS
    certificate = $tmp/cert.pem
    private_key = $tmp/key.pem
  [[WebSocket]]
    type = WebSocketServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $PWS
EOF

"$RNSC" daemon --config "$tmp/A" --http 0 >"$tmp/d.log" 2>&1 &
DPID=$!; pids+=($DPID)
if wait_for 20 grep -qs "status endpoint on" "$tmp/d.log"; then ok "daemon started with every interface type"
else bad "daemon did not start" "$tmp/d.log"; exit 1; fi
sleep 2
if grep -qs "\[Error\]\|\[Critical\]" "$tmp/d.log"; then bad "errors logged at start" "$tmp/d.log"
else ok "no error logged"; fi
PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/status.*/\1/p' "$tmp/d.log")
curl -s --max-time 10 "http://127.0.0.1:$PORT/status" >"$tmp/status.json"
"$PY" - "$tmp/status.json" <<'EOF' >"$tmp/check.out" 2>&1 && ok "status lists every interface: $(cat "$tmp/check.out")" || bad "status" "$tmp/check.out" "$tmp/status.json"
import json, sys
d = json.load(open(sys.argv[1]))
want = {"TCP Server": "TCPServerInterface", "TCP Client": "TCPClientInterface",
        "UDP": "UDPInterface", "Backbone": "BackboneInterface", "Pipe": "PipeInterface",
        "Serial": "SerialInterface", "KISS": "KISSInterface", "Auto": "AutoInterface",
        "TLS": "TLSServerInterface", "WebSocket": "WebSocketServerInterface"}
got = {i["short_name"]: i for i in d["interfaces"] if "parent_interface_name" not in i}
for name, typ in want.items():
    assert name in got, ("missing", name, sorted(got))
    assert got[name]["type"] == typ, (name, got[name]["type"])
# the ones that need no far end are up at once
for name in ("TCP Server", "UDP", "Backbone", "Pipe", "Serial", "KISS", "TLS", "WebSocket"):
    assert got[name]["status"] is True, (name, got[name]["status"])
print(len(got), "interfaces,", sum(1 for i in got.values() if i["status"] is True), "up")
EOF
kill -0 "$DPID" 2>/dev/null && ok "daemon still running" || bad "daemon died" "$tmp/d.log"
kill -TERM "$DPID"; wait "$DPID"; rc=$?
[ $rc = 0 ] && ok "clean shutdown" || bad "shutdown exit $rc" "$tmp/d.log"
echo "daemon_all_ifaces_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
