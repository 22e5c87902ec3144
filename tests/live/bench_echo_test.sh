#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc bench echo: the command line, one in-process run per protocol and IO model (every
# echo checked byte for byte and for order by the run itself), and the quick matrix with
# the Boost.Asio peer, whose JSON must show every run valid. Behaviour only: the numbers
# are not judged here (bench/results holds the measured matrix).
set -u
. "$(dirname "$0")/../common/lib.sh"
PEER="$B/bench/peers/asio_echo"
check() { # check NAME EXPECTED_STATUS COMMAND...
  local name=$1 want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  if [ "$got" = "$want" ]; then pass=$((pass+1)); echo "ok   $name"
  else fail=$((fail+1)); echo "FAIL $name: exit $got, want $want"; sed 's/^/     /' "$tmp/err" | head -5; fi
}
expect_grep() { # expect_grep NAME PATTERN FILE
  if grep -q -- "$2" "$3"; then pass=$((pass+1)); echo "ok   $1"
  else fail=$((fail+1)); echo "FAIL $1: '$2' not in $3"; head -20 "$3" | sed 's/^/     /'; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

check "help" 0 "$RNSC" bench echo --help
expect_grep "help names the peer" "Boost.Asio" "$tmp/out"
check "bad option" 2 "$RNSC" bench echo --frobnicate
check "bad model" 2 "$RNSC" bench echo --no-peer --models warp:2
check "bad reps" 2 "$RNSC" bench echo --no-peer --reps 0
check "missing peer" 3 "$RNSC" bench echo --peer "$tmp/none"
check "one: bad payload" 1 "$RNSC" bench echo --one tcp single 1 8 1 1 0 0.1 1
[ -x "$PEER" ] || { fail=$((fail+1)); echo "FAIL the Asio peer $PEER was not built"; }
LEAN="$B/bench/echo/rnsc-echo"
[ -x "$LEAN" ] || { fail=$((fail+1)); echo "FAIL the runtime-only runner $LEAN was not built"; }
check "rnsc-echo: bad arguments" 2 "$LEAN" --one tcp
check "rnsc-echo: one pool run" 0 "$LEAN" --one tcp pool 2 5000 2 4 0.05 0.2 2
expect_grep "rnsc-echo prints the result line" "^ECHO impl=rnsc proto=tcp model=pool" "$tmp/out"
expect_grep "rnsc-echo run had no errors" "err_content=0 err_order=0 err_loss=0 err_disconnect=0 err_drain_timeout=0" "$tmp/out"

for proto in tcp udp; do
  for model in "single 1" "pool 2" "sharded 2"; do
    set -- $model
    win=4; [ "$proto" = udp ] && win=1
    check "one run $proto $1" 0 "$RNSC" bench echo --one "$proto" "$1" "$2" 300 3 "$win" 0.05 0.2 2
    expect_grep "$proto $1 counted echoes" "echoes=[1-9]" "$tmp/out"
    expect_grep "$proto $1 had no errors" "err_content=0 err_order=0 err_loss=0 err_disconnect=0 err_drain_timeout=0" "$tmp/out"
  done
done
check "peer one run" 0 "$PEER" --one tcp sharded 2 300 3 4 0.05 0.2 2
expect_grep "peer prints the same line" "^ECHO impl=asio proto=tcp model=sharded" "$tmp/out"

# tls, websocket, wss, http, https: pool runs with messages large enough for the workers
# (5000 B), sharded runs with small ones; the TLS ones make their own certificate
for proto in tls websocket wss http https; do
  check "one run $proto pool" 0 "$LEAN" --one "$proto" pool 2 5000 2 4 0.05 0.15 2
  expect_grep "$proto pool counted echoes without errors" "echoes=[1-9].* err_content=0 err_order=0 err_loss=0 err_disconnect=0 err_drain_timeout=0" "$tmp/out"
  check "one run $proto sharded" 0 "$RNSC" bench echo --one "$proto" sharded 2 300 3 4 0.05 0.15 2
  expect_grep "$proto sharded counted echoes without errors" "echoes=[1-9].* err_content=0 err_order=0 err_loss=0 err_disconnect=0 err_drain_timeout=0" "$tmp/out"
done
check "one run: unknown protocol" 1 "$LEAN" --one gopher single 1 300 1 1 0.05 0.1 1
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/key.pem" \
  -out "$tmp/cert.pem" -days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost \
  >/dev/null 2>&1 || { fail=$((fail+1)); echo "FAIL openssl CLI could not make a certificate"; }
check "peer wss run" 0 env RNSC_ECHO_CERT="$tmp/cert.pem" RNSC_ECHO_KEY="$tmp/key.pem" \
  "$PEER" --one wss pool 2 300 2 4 0.05 0.15 2
expect_grep "peer wss without errors" "^ECHO impl=asio proto=wss.*echoes=[1-9].* err_content=0 err_order=0 err_loss=0 err_disconnect=0 err_drain_timeout=0" "$tmp/out"
check "peer https without a certificate" 3 env -u RNSC_ECHO_CERT -u RNSC_ECHO_KEY \
  "$PEER" --one https single 1 300 1 1 0.05 0.1 1
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/k2.pem" \
  -out "$tmp/c2.pem" -days 1 -subj /CN=elsewhere -addext subjectAltName=DNS:elsewhere \
  >/dev/null 2>&1 || { fail=$((fail+1)); echo "FAIL openssl CLI could not make a certificate"; }
check "rnsc refuses a certificate for another host" 1 env RNSC_ECHO_CERT="$tmp/c2.pem" \
  RNSC_ECHO_KEY="$tmp/k2.pem" "$LEAN" --one tls single 1 300 1 1 0.05 0.1 1
expect_grep "the refusal names the host check" "certificate verify failed" "$tmp/err"

check "quick matrix with the peer" 0 "$RNSC" bench echo --quick --json "$tmp/e.json" \
  --md "$tmp/e.md" --svg-prefix "$tmp/e"
check "quick matrix JSON: every run valid on both sides" 0 "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
cells = d["cells"]
assert len(cells) == 28, len(cells)
assert sorted({c["protocol"] for c in cells}) == sorted(
    ["tcp", "udp", "tls", "websocket", "wss", "http", "https"])
for c in cells:
    for side in ("rnsc", "peer"):
        assert c[side]["valid"], (side, c["protocol"], c["io_model"])
        assert c[side]["rt_per_s"] > 0
    assert c["ratio_rt"] > 0
assert d["settings"]["rnsc_program"].startswith("rnsc-echo"), d["settings"]
' "$tmp/e.json"
expect_grep "markdown has a table per protocol" "^## udp" "$tmp/e.md"
expect_grep "markdown has the https table" "^## https" "$tmp/e.md"
expect_grep "svg written" "<svg" "$tmp/e-throughput.svg"

echo "bench_echo_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
