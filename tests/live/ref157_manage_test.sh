#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rns 1.5.7's interface management over the shared instance's RPC (rnstatus --attach,
# --detach, --reload NAME) against rnsc daemon and, for the expected answer, against 1.5.7's
# rnsd with enable_interface_management = no: rnsc attaches interfaces only at start, so it
# must answer every call as that rnsd does (False: "Could not ... interface NAME"),
# log the refusal, and keep serving. Then rnsc status --attach/--detach/--reload against
# those two and, step by step beside rnstatus, against two rnsd 1.5.7 that do manage their
# interfaces. Real processes on 127.0.0.1; every wait is bounded.
set -u
. "$(dirname "$0")/../common/ref157_env.sh"
RNSC="$B/src/cli/rnsc"
VENV=$RNSC_VENV PY=$RNSC_VENV/bin/python
for tool in rnsd rnstatus; do
  [ -x "$VENV/bin/$tool" ] || { echo "FAIL the reference's $tool is not in $VENV/bin (make venv)"; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-ref157-manage.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass+1)); echo "ok   $1"; }
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && tail -20 "$f" | sed 's/^/     /'; done; }
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }

read -r P1 P2 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
inst="rnscmanage$$x$RANDOM"
conf() { # conf DIR INSTANCE PORT EXTRA
  mkdir -p "$1"
  printf '[reticulum]\n  share_instance = yes\n  instance_name = %s\n%s[logging]\n  loglevel = 5\n[interfaces]\n  [[Srv]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %s\n' \
    "$2" "$4" "$3" >"$1/config"
}
conf "$tmp/R" "${inst}r" "$P1" "  enable_interface_management = no
"
conf "$tmp/A" "${inst}a" "$P2" ""
"$VENV/bin/rnsd" --config "$tmp/R" >"$tmp/R.log" 2>&1 & pids+=($!)
"$RNSC" daemon --config "$tmp/A" >"$tmp/A.log" 2>&1 & DA=$!; pids+=($DA)
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }
wait_for 20 port_open "$P1" || { bad "rnsd did not come up" "$tmp/R.log"; exit 1; }
wait_for 15 grep -qs "started the shared instance interface" "$tmp/A.log" ||
  { bad "rnsc daemon did not become the shared instance" "$tmp/A.log"; exit 1; }
# the reference's RPC listener comes up after its interfaces: wait until rnstatus answers
wait_for 20 sh -c "timeout 10 '$VENV/bin/rnstatus' --config '$tmp/R' >/dev/null 2>&1" ||
  { bad "rnstatus cannot reach rnsd" "$tmp/R.log"; exit 1; }

for op in detach attach reload; do
  timeout 30 "$VENV/bin/rnstatus" --config "$tmp/R" --$op Srv >"$tmp/ref.out" 2>&1; rr=$?
  timeout 30 "$VENV/bin/rnstatus" --config "$tmp/A" --$op Srv >"$tmp/rnsc.out" 2>&1; rc=$?
  # rnstatus' own exit status after "Could not ..." is 0 or 1 from run to run (its exit(1)
  # races the reference's exit handlers), so the printed answer is what is compared
  if [ $rr -le 1 ] && [ $rc -le 1 ] && grep -q "Could not $op interface Srv" "$tmp/ref.out" &&
     diff "$tmp/ref.out" "$tmp/rnsc.out" >"$tmp/diff"; then
    ok "rnstatus --$op Srv: rnsc answers as rnsd with management off ($(cat "$tmp/rnsc.out"))"
  else
    bad "rnstatus --$op Srv: rnsd exit $rr, rnsc exit $rc" "$tmp/ref.out" "$tmp/rnsc.out" "$tmp/A.log"
  fi
done
if grep -q 'refused RPC detach_interface of interface "Srv"' "$tmp/A.log" &&
   grep -q 'refused RPC reload_interface of interface "Srv"' "$tmp/A.log"; then
  ok "rnsc's log names each refused call and the interface"
else
  bad "rnsc's log does not name the refused calls" "$tmp/A.log"
fi
if timeout 30 "$VENV/bin/rnstatus" --config "$tmp/A" >"$tmp/st.out" 2>&1 && grep -q "Srv" "$tmp/st.out" &&
   kill -0 $DA 2>/dev/null; then
  ok "rnsc daemon keeps serving: rnstatus still lists Srv"
else
  bad "rnsc daemon stopped serving after the refusals" "$tmp/st.out" "$tmp/A.log"
fi

# rnsc status --attach/--detach/--reload against the same instances: the rnsd with
# management off and the rnsc daemon answer it as they answer rnstatus.
for d in R A; do
  for op in detach attach reload; do
    timeout 30 "$VENV/bin/rnstatus" --config "$tmp/$d" --$op Srv >"$tmp/ref.out" 2>&1
    timeout 30 "$RNSC" status --config "$tmp/$d" --$op Srv >"$tmp/rnsc.out" 2>&1; rc=$?
    if [ $rc = 1 ] && grep -q "Could not $op interface Srv" "$tmp/ref.out" &&
       diff "$tmp/ref.out" "$tmp/rnsc.out" >"$tmp/diff"; then
      ok "rnsc status --$op Srv against $([ $d = R ] && echo "rnsd (management off)" || echo "rnsc daemon"): as rnstatus, exit 1"
    else
      bad "rnsc status --$op Srv against $d: exit $rc" "$tmp/ref.out" "$tmp/rnsc.out"
    fi
  done
done

# Two rnsd 1.5.7 with interface management on (its default) and the same interfaces: one
# walks a sequence of calls with rnstatus, the other the same sequence with rnsc status;
# each step's answer must match (True/None/False as "was ...", "does not exist", "Could
# not"), rnsc status exiting 0 exactly when the call was done. "Cli" is a TCPClientInterface
# to a closed port, so detaching and re-attaching it binds nothing.
read -r P3 P4 PC < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
for m in M1:$P3 M2:$P4; do
  conf "$tmp/${m%%:*}" "${inst}${m%%:*}" "${m#*:}" ""
  printf '  [[Cli]]\n    type = TCPClientInterface\n    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %s\n' "$PC" >>"$tmp/${m%%:*}/config"
  "$VENV/bin/rnsd" --config "$tmp/${m%%:*}" >"$tmp/${m%%:*}.log" 2>&1 & pids+=($!)
done
for m in M1 M2; do
  # no client before rnsd has saved its transport identity: an early rnstatus would write
  # one of its own to the storage folder and every later RPC key would be refused
  wait_for 30 grep -qs "Started rnsd version" "$tmp/$m.log" ||
    { bad "rnsd $m did not start" "$tmp/$m.log"; exit 1; }
  wait_for 30 sh -c "timeout 10 '$VENV/bin/rnstatus' --config '$tmp/$m' >/dev/null 2>&1" ||
    { bad "rnstatus cannot reach rnsd $m" "$tmp/$m.log"; exit 1; }
done
timeout 30 "$RNSC" status --config "$tmp/M2" >"$tmp/s0" 2>&1
grep -q "\[Cli/" "$tmp/s0" && ok "before the calls rnsc status lists Cli on rnsd" ||
  bad "rnsc status does not list Cli before the calls" "$tmp/s0"
step=0
for call in "detach Cli" "detach Cli" "reload Cli" "attach Nope" "attach Cli" "attach Cli" \
            "reload Cli" "reload Nope" "detach Nope"; do
  step=$((step+1)); set -- $call
  timeout 30 "$VENV/bin/rnstatus" --config "$tmp/M1" --$1 $2 >"$tmp/ref.out" 2>&1
  timeout 30 "$RNSC" status --config "$tmp/M2" --$1 $2 >"$tmp/rnsc.out" 2>&1; rc=$?
  want=1; grep -q "^Interface $2 was " "$tmp/ref.out" && want=0
  if [ -s "$tmp/ref.out" ] && diff "$tmp/ref.out" "$tmp/rnsc.out" >"$tmp/diff" && [ $rc = $want ]; then
    ok "step $step --$1 $2 with management on: $(cat "$tmp/rnsc.out"), exit $rc"
  else
    bad "step $step --$1 $2 with management on: rnsc exit $rc, want $want" "$tmp/ref.out" "$tmp/rnsc.out" "$tmp/M2.log"
  fi
  if [ $step = 1 ]; then # the detach is real: neither instance lists Cli any more
    timeout 30 "$RNSC" status --config "$tmp/M1" >"$tmp/s1" 2>&1
    timeout 30 "$VENV/bin/rnstatus" --config "$tmp/M2" >"$tmp/s2" 2>&1
    if grep -q Srv "$tmp/s1" && grep -q Srv "$tmp/s2" && ! grep -q "\[Cli/" "$tmp/s1" && ! grep -q "\[Cli/" "$tmp/s2"; then
      ok "after --detach Cli neither instance lists Cli (each read by the other tool)"
    else
      bad "after --detach Cli an instance still lists Cli" "$tmp/s1" "$tmp/s2"
    fi
  fi
done
timeout 30 "$RNSC" status --config "$tmp/nosuch" --attach Cli >"$tmp/none.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q "No shared RNS instance available" "$tmp/none.out"; then
  ok "rnsc status --attach with no shared instance: exit 1, said aloud"
else
  bad "rnsc status --attach with no shared instance: exit $rc" "$tmp/none.out"
fi
echo "ref157_manage_test: $pass passed, $fail failed"
[ $fail -eq 0 ]
