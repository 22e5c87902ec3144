# SPDX-License-Identifier: MIT
# Sourced by tests/live/hostile_*_test.sh: one rnsc daemon A on 127.0.0.1 with transport, a
# probe responder, a TCP server (port $P1), the shared instance (@rns/$inst) and the HTTP
# endpoint (port $HPORT), plus the legitimate-traffic checks every flood is judged by:
# a probe through the shared instance, a probe over TCP from a standalone program, and
# /status answering within 2 s. Every wait is bounded.
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
RNSC="$B/src/cli/rnsc"
VENV=${RNSC_VENV:-$B/.venv}
PY=$VENV/bin/python
pass=0 fail=0
ok() { pass=$((pass+1)); echo "ok   $1"; }
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -20 "$f" | sed 's/^/     /'; done; }
[ -x "$PY" ] || { echo "FAIL no python in $VENV (make venv)"; exit 1; }
[ -x "$RNSC" ] || { echo "FAIL $RNSC is not built"; exit 1; }
command -v curl >/dev/null || { echo "FAIL curl is not installed"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-hostile.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; sleep 0.2; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"; }
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
read -r P1 < <("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
inst="rnschostile$$x$RANDOM"

# start_a [extra daemon args...]: A's config in $tmp/A, log in $tmp/A.log, pid in $DA
start_a() {
  mkdir -p "$tmp/A" "$tmp/R"
  cat >"$tmp/A/config" <<EOC
[reticulum]
  share_instance = yes
  instance_name = $inst
  enable_transport = yes
  respond_to_probes = yes
${A_EXTRA_RETICULUM:-}
[logging]
  loglevel = 4
[interfaces]
  [[Hostile TCP]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P1
${A_EXTRA_IFACE:-}
EOC
  cat >"$tmp/R/config" <<EOC
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
EOC
  "$RNSC" daemon --config "$tmp/A" --http 0 "$@" >"$tmp/A.log" 2>&1 & DA=$!; pids+=($DA)
  wait_for 20 grep -qs "respond to probe requests on <" "$tmp/A.log" &&
    wait_for 10 grep -qs "status endpoint on" "$tmp/A.log" || { bad "daemon A did not start" "$tmp/A.log"; exit 1; }
  PA=$(sed -n 's/.*probe requests on <\([0-9a-f]*\)>.*/\1/p' "$tmp/A.log" | head -1)
  HPORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/status.*/\1/p' "$tmp/A.log" | head -1)
}

# status_within SECONDS: /status answers 200 within that time
status_within() { [ "$(curl -s -o "$tmp/status.json" -w '%{http_code}' --max-time "$1" "http://127.0.0.1:$HPORT/status")" = 200 ]; }
# probe_shared / probe_tcp LABEL: a legitimate program's probe gets A's proof
probe_shared() {
  timeout 30 "$RNSC" probe --config "$tmp/A" -t 10 rnstransport.probe "$PA" >"$tmp/ps.out" 2>&1
  if grep -qs "Valid reply from <$PA>" "$tmp/ps.out"; then ok "$1: a probe through the shared instance gets its proof"
  else bad "$1: probe through the shared instance" "$tmp/ps.out"; fi
}
probe_tcp() {
  timeout 30 "$RNSC" probe --config "$tmp/R" -t 10 rnstransport.probe "$PA" >"$tmp/pt.out" 2>&1
  if grep -qs "Valid reply from <$PA>" "$tmp/pt.out"; then ok "$1: a probe over TCP gets its proof"
  else bad "$1: probe over TCP" "$tmp/pt.out"; fi
}
fds_of() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
rss_kb() { sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$1/status"; }
# ASan keeps freed blocks in quarantine (up to 256 MiB): RSS then follows what was
# allocated, not what is live, so memory bounds are reported but not asserted there
asan=""
grep -q -- '-fsanitize=address' "$B/Makefile" 2>/dev/null && asan=1
finish() { echo "$(basename "$0" .sh): $pass passed, $fail failed"; [ "$fail" -eq 0 ]; }
