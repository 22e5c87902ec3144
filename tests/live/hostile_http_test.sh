#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hostile clients of the --http endpoint (issue 28, findings 1 and 5): 300 connections
# that each send "GET /status HTTP/1.1\r\nHost: x\r\n" and never the blank line, held,
# then closed, must not lock the endpoint: once the flood stops /status answers within
# 2 s, no socket is left in CLOSE-WAIT and the descriptors come back; a slow client is
# cut at the header deadline; a path with an embedded NUL is not /status. Legitimate
# traffic over TCP and the shared instance gets through during the flood.
set -u
. "${RNSC_SRCDIR:-$(dirname "$0")/../..}/tests/common/hostile_common.sh"
command -v ss >/dev/null || { echo "FAIL ss (iproute2) is not installed"; exit 1; }
start_a
status_within 2 && ok "/status answers before the flood" || bad "/status before" "$tmp/A.log"
fd0=$(fds_of $DA)

"$PY" - "$HPORT" "$tmp/flood.ctl" <<'PYEOF' >"$tmp/flood.out" 2>&1 &
import os, socket, sys, time
port, ctl = int(sys.argv[1]), sys.argv[2]
held = []
for _ in range(300):
    try:
        s = socket.create_connection(("127.0.0.1", port), 1)
        s.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n")
        held.append(s)
    except OSError:
        pass
print("held", len(held), flush=True)
open(ctl, "w").write("up")
end = time.time() + 25
while not os.path.exists(ctl + ".stop") and time.time() < end:
    time.sleep(0.1)
for s in held:
    s.close()
print("closed", flush=True)
PYEOF
FP=$!; pids+=($FP)
wait_for 15 test -s "$tmp/flood.ctl" || bad "the flood did not start" "$tmp/flood.out"
probe_shared "during the HTTP flood"
probe_tcp "during the HTTP flood"
touch "$tmp/flood.ctl.stop"; wait $FP
t0=$(date +%s.%N)
if status_within 2; then
  ok "/status answers within 2 s of the flood stopping ($("$PY" -c "import time;print(round(time.time()-$t0,2))") s)"
else bad "/status after the flood" "$tmp/flood.out" "$tmp/A.log"; fi
sleep 1
cw=$(ss -tan "sport = :$HPORT" 2>/dev/null | grep -c CLOSE-WAIT)
fd1=$(fds_of $DA)
[ "$cw" = 0 ] && [ "$fd1" -le $((fd0 + 2)) ] && ok "descriptors released: $fd1 open (before $fd0), no CLOSE-WAIT" \
  || bad "after the flood: $cw in CLOSE-WAIT, $fd1 descriptors (before $fd0)" "$tmp/A.log"

# what the library alone never noticed: clients that sent half a request and closed before
# they were accepted (the daemon stopped meanwhile) leave CLOSE-WAIT sockets holding slots
kill -STOP $DA
"$PY" - "$HPORT" <<'PYEOF' >"$tmp/pre.out" 2>&1
import socket, sys
for _ in range(8):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2)
    s.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n"); s.close()
PYEOF
kill -CONT $DA
sleep 0.5
status_within 2 && ok "/status answers after connections that closed before being accepted" || bad "/status after pre-closed connections" "$tmp/pre.out"
sleep 0.5
cw=$(ss -tan "sport = :$HPORT" 2>/dev/null | grep -c CLOSE-WAIT)
[ "$cw" = 0 ] && ok "no CLOSE-WAIT left by them" || bad "$cw sockets in CLOSE-WAIT"

# a slowloris client that keeps the headers coming, one byte a second, is cut at the
# deadline; a client that sends nothing at all too
"$PY" - "$HPORT" <<'PYEOF' >"$tmp/slow.out" 2>&1 && ok "slow and silent clients cut at the header deadline: $(tail -1 "$tmp/slow.out")" || bad "header deadline" "$tmp/slow.out"
import socket, sys, time
port = int(sys.argv[1])
silent = socket.create_connection(("127.0.0.1", port), 2)
slow = socket.create_connection(("127.0.0.1", port), 2)
slow.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n")
t0 = time.time(); cut = None
while time.time() - t0 < 12:
    try:
        slow.sendall(b"X: y\r\n")
    except OSError:
        cut = time.time() - t0; break
    slow.settimeout(1.0)
    try:
        if slow.recv(1) == b"":
            cut = time.time() - t0; break
    except socket.timeout:
        pass
    except OSError:
        cut = time.time() - t0; break
assert cut is not None and cut < 8, cut
silent.settimeout(3)
assert silent.recv(1) == b""
print("cut after %.1f s" % cut)
PYEOF

# finding 5: the path is cut at a NUL by the HTTP library; it must not be taken as /status
"$PY" - "$HPORT" <<'PYEOF' >"$tmp/nul.out" 2>&1 && ok "NUL, escapes and queries in the target are not /status: $(tail -1 "$tmp/nul.out")" || bad "request target" "$tmp/nul.out"
import socket, sys
port = int(sys.argv[1])
def code(target):
    s = socket.create_connection(("127.0.0.1", port), 3); s.settimeout(3)
    s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    r = s.recv(64); s.close()
    return int(r.split(b" ")[1])
got = {t: code(t) for t in (b"/status\x00/../x", b"/metrics\x00", b"/st%61tus", b"/status?a=1", b"/status", b"/metrics")}
assert all(got[t] in (400, 404) for t in list(got)[:4]), got
assert got[b"/status"] == 200 and got[b"/metrics"] == 200, got
# a client that half-closes after its request still gets the answer
s = socket.create_connection(("127.0.0.1", port), 3); s.settimeout(3)
s.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n"); s.shutdown(socket.SHUT_WR)
r = s.recv(64); s.close()
assert r.startswith(b"HTTP/1.1 200"), r
print(" ".join("%r=%d" % (k, v) for k, v in got.items()), "half-closed=200")
PYEOF
curl -s --max-time 5 "http://127.0.0.1:$HPORT/metrics" >"$tmp/metrics.txt"
if grep -Eq '^rnsc_http_connections_closed_total\{reason="over_source_budget"\} [1-9]' "$tmp/metrics.txt" &&
   grep -Eq '^rnsc_http_connections_closed_total\{reason="deadline"\} [1-9]' "$tmp/metrics.txt" &&
   grep -Eq '^rnsc_http_connections_closed_total\{reason="peer_gone"\} [1-9]' "$tmp/metrics.txt"; then
  ok "/metrics serves the endpoint's own counters: $(grep -c '^rnsc_http_' "$tmp/metrics.txt") samples"
else bad "rnsc_http_* in /metrics" "$tmp/metrics.txt"; fi
kill -TERM $DA; wait $DA 2>/dev/null
grep -Eqs "closed: [1-9][0-9]* over the per-source budget, [1-9][0-9]* past the deadline, [1-9][0-9]* gone" "$tmp/A.log" \
  && ok "the endpoint's defences counted: $(grep -o 'connections closed: .*' "$tmp/A.log")" || bad "defence counters" "$tmp/A.log"
finish
