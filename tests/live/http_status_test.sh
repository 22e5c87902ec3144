#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The daemon's HTTP status endpoint with real HTTP clients (curl; Python sockets for what
# curl will not send): GET /status is JSON matching the node (its interface, counters),
# GET /metrics is Prometheus text, anything else is a 4xx; garbage, oversized headers, a
# body, half a request then silence and a connection flood never take the daemon down;
# HTTPS with a certificate made here, verified by curl against it. Bounded waits.
set -u
. "$(dirname "$0")/../common/lib.sh"
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -20 "$f" | sed 's/^/     /'; done; }
for tool in curl openssl; do command -v $tool >/dev/null || { echo "FAIL $tool is not installed"; exit 1; }; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-http-test.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; sleep 0.2; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
code() { curl -s -o "$tmp/body" -w '%{http_code}' --max-time 10 "$@"; }

mkdir -p "$tmp/A"
cat >"$tmp/A/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = no
[logging]
  loglevel = 4
[interfaces]
  [[Status Test Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = 0
EOF

"$RNSC" daemon --config "$tmp/A" --http-bind 127.0.0.1 >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && ok "--http-bind without --http is a usage error" || bad "--http-bind alone exit $rc"
"$RNSC" daemon --config "$tmp/A" --http 70000 >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && ok "a port beyond 65535 is a usage error" || bad "--http 70000 exit $rc"
"$RNSC" daemon --config "$tmp/A" --http 0 --http-bind not-an-address >"$tmp/badbind" 2>&1; rc=$?
[ $rc = 3 ] && grep -qs "not an IPv4 or IPv6 address" "$tmp/badbind" && ok "a bad bind address is refused (exit 3)" \
  || bad "bad bind address exit $rc" "$tmp/badbind"

"$RNSC" daemon --config "$tmp/A" --http 0 >"$tmp/d.log" 2>&1 &
DPID=$!; pids+=($DPID)
wait_for 20 grep -qs "status endpoint on" "$tmp/d.log" || { bad "daemon did not start its endpoint" "$tmp/d.log"; exit 1; }
PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/status.*/\1/p' "$tmp/d.log")
ok "endpoint on 127.0.0.1:$PORT"
U="http://127.0.0.1:$PORT"

[ "$(code "$U/status")" = 200 ] && ok "GET /status 200" || bad "GET /status" "$tmp/body"
"$PY" - "$tmp/body" <<'EOF' >"$tmp/json.out" 2>&1 && ok "status JSON describes the node" || bad "status JSON" "$tmp/json.out" "$tmp/body"
import json, sys
d = json.load(open(sys.argv[1]))
# rnstatus -j's document (Reticulum.get_interface_stats) plus rnsc's keys
assert d["rnsc"]["transport_enabled"] is True and len(d["transport_id"]) == 32
assert d["probe_responder"] is None and isinstance(d["transport_uptime"], float)
(i,) = [x for x in d["interfaces"] if x["short_name"] == "Status Test Server"]
assert i["name"].startswith("TCPServerInterface[Status Test Server/127.0.0.1:")
assert i["type"] == "TCPServerInterface" and i["rnsc_plugin"] == "tcp" and i["status"] is True
assert i["clients"] == 0 and i["mode"] == 1 and i["mtu"] == 16384 and len(i["hash"]) == 64
assert set(i["rnsc_drops"]) >= {"runt", "oversize", "garbage", "partial"}
assert isinstance(d["rnsc"]["transport"]["rx"], int) and d["rnsc"]["paths"] >= 0
for k in ("rxb", "txb", "rxs", "txs", "rss", "interfaces"):
    assert k in d, k
EOF
[ "$(code "$U/metrics")" = 200 ] && ok "GET /metrics 200" || bad "GET /metrics" "$tmp/body"
"$PY" - "$tmp/body" <<'EOF' >"$tmp/prom.out" 2>&1 && ok "metrics are well-formed Prometheus text" || bad "metrics format" "$tmp/prom.out"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
sample = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*\})? -?[0-9.e+]+$')
typed = set()
for l in lines:
    if l.startswith("# TYPE "):
        typed.add(l.split()[2]); continue
    if l.startswith("#"): continue
    assert sample.match(l), l
    assert l.split("{")[0].split(" ")[0] in typed, l
assert any(l.startswith('rnsc_interface_up{interface="Status Test Server"') and l.endswith(" 1") for l in lines)
assert any(l.startswith("rnsc_transport_rx_total ") for l in lines)
EOF
[ "$(code "$U/")" = 404 ] && ok "GET / is 404" || bad "GET / code"
[ "$(code -X POST -d 'a=1' "$U/status")" = 405 ] && ok "POST is 405" || bad "POST code"
[ "$(code -X DELETE "$U/metrics")" = 405 ] && ok "DELETE is 405" || bad "DELETE code"
big=$(head -c 40000 /dev/zero | tr '\0' a)
c=$(code -H "X-Big: $big" "$U/status"); case $c in 4*) ok "oversized header refused ($c)";; *) bad "oversized header got $c";; esac

# What curl will not send: garbage, half a request then silence, a flood of connections.
"$PY" - "$PORT" <<'EOF' >"$tmp/raw.out" 2>&1 && ok "garbage, half requests and a connection flood handled" || bad "raw clients" "$tmp/raw.out" "$tmp/d.log"
import socket, sys, time
port = int(sys.argv[1])
def talk(data, wait=3.0):
    s = socket.create_connection(("127.0.0.1", port), 5); s.settimeout(wait)
    s.sendall(data); out = b""
    try:
        while True:
            b = s.recv(4096)
            if not b: break
            out += b
    except socket.timeout:
        pass
    s.close(); return out
# not even a request line: the connection is closed without an answer
r = talk(b"GARBAGE\r\n\r\n")
assert r == b"" or r.startswith(b"HTTP/1.1 4"), r[:60]
r = talk(bytes(range(256)) * 8)
assert not r.startswith(b"HTTP/1.1 2"), r[:60]
# a request line but no Host header (HTTP/1.1 requires one): 400 and closed
r = talk(b"GET /status HTTP/1.1\r\n\r\n")
assert r.startswith(b"HTTP/1.1 400") and b"Connection: close" in r, r[:80]
r = talk(b"GET /status HTTP/1.1\r\nHost: x\r\n" + b"X: " + b"b" * 100000 + b"\r\n\r\n")
assert r == b"" or r.startswith(b"HTTP/1.1 4"), r[:60]
# half a request, then silence: other clients are still served meanwhile
half = socket.create_connection(("127.0.0.1", port), 5); half.sendall(b"GET /sta")
flood = []
for _ in range(40):
    try: flood.append(socket.create_connection(("127.0.0.1", port), 2))
    except OSError: pass
for s in flood: s.close()
time.sleep(0.5)
r = talk(b"GET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
assert r.startswith(b"HTTP/1.1 200"), r[:60]
half.close()
print("ok")
EOF
kill -0 "$DPID" 2>/dev/null && ok "daemon still running" || bad "daemon died" "$tmp/d.log"
kill -TERM "$DPID"; wait "$DPID" 2>/dev/null
grep -Eqs "status endpoint: [1-9][0-9]* served, [1-9][0-9]* refused" "$tmp/d.log" \
  && ok "served and refused requests counted: $(grep -o 'status endpoint: .*' "$tmp/d.log" | tail -1)" \
  || bad "no request counts" "$tmp/d.log"

# HTTPS with a self-signed certificate made here for 127.0.0.1.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/key.pem" -out "$tmp/cert.pem" >/dev/null 2>&1 \
  || { bad "openssl could not make a certificate"; exit 1; }
"$RNSC" daemon --config "$tmp/A" --http 0 --https-cert "$tmp/cert.pem" --https-key "$tmp/none.pem" >"$tmp/nokey" 2>&1; rc=$?
[ $rc = 3 ] && grep -qs "cannot read the key" "$tmp/nokey" && ok "a missing key file is refused (exit 3)" || bad "missing key exit $rc" "$tmp/nokey"
"$RNSC" daemon --config "$tmp/A" --http 0 --https-cert "$tmp/cert.pem" --https-key "$tmp/key.pem" >"$tmp/s.log" 2>&1 &
SPID=$!; pids+=($SPID)
wait_for 20 grep -qs "status endpoint on https" "$tmp/s.log" || { bad "HTTPS endpoint did not start" "$tmp/s.log"; exit 1; }
SPORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/status.*/\1/p' "$tmp/s.log")
[ "$(code --cacert "$tmp/cert.pem" "https://127.0.0.1:$SPORT/status")" = 200 ] && grep -qs '"interfaces"' "$tmp/body" \
  && ok "HTTPS GET /status verified against the certificate" || bad "HTTPS status" "$tmp/body" "$tmp/s.log"
c=$(code "https://127.0.0.1:$SPORT/status"); [ "$c" = 000 ] && ok "an unverified client is refused by its own TLS check" || bad "unverified got $c"
c=$(code "http://127.0.0.1:$SPORT/status"); case $c in 200) bad "plain HTTP answered on the HTTPS port";; *) ok "plain HTTP on the HTTPS port gets no status ($c)";; esac
kill -0 "$SPID" 2>/dev/null && ok "HTTPS daemon still running" || bad "HTTPS daemon died" "$tmp/s.log"

echo "http_status_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
