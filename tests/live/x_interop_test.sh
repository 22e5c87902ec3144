#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc x against the reference's rnx, live over TCP on loopback, both ways:
#   rnx DEST CMD -> rnsc x -l   and   rnsc x DEST CMD -> rnx -l
# Each case also runs rnx -> rnx -l, whose output and exit code are the expectation: the
# two cross pairings must print the same (the spinner lines rendered as a terminal would,
# destination hashes masked) and exit with the same code. Cases: plain output, stdout and
# stderr with the remote exit code mirrored (-m), --stdin, --stdout truncation, -d (detailed,
# figures masked), a command that cannot be started, a command that runs past -w (killed),
# an identity not on the allow-list (refused), no identification (-N), a short and a non-hex
# hash; and a listener's bad -a. HOME is a scratch folder. Every wait is bounded; a reference
# that cannot start fails the test.
set -u
. "$(dirname "$0")/../common/lib.sh"
RNX=("$PY" -m RNS.Utilities.rnx)

if ! "$PY" -c 'import RNS' 2>/dev/null; then
  echo "FAIL the reference (RNS) does not import with $PY (make venv)"; exit 1
fi
[ -x "$RNSC" ] || { echo "FAIL $RNSC is not built"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-x-test.XXXXXX")
export HOME="$tmp/home" # no ~/.rnx/allowed_identities of the user's
mkdir -p "$HOME"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -z "${KEEP:-}" ] && rm -rf "$tmp"
}
trap cleanup EXIT

read -r P1 P2 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

wait_for() { local end=$((SECONDS + $1)); shift
  while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }

config() { # config DIR server|client PORT
mkdir -p "$1"
if [ "$2" = server ]; then iface="type = TCPServerInterface
    listen_ip = 127.0.0.1
    listen_port = $3"
else iface="type = TCPClientInterface
    target_host = 127.0.0.1
    target_port = $3"; fi
cat >"$1/config" <<EOT
[reticulum]
  enable_transport = no
  share_instance = no
[logging]
  loglevel = 2
[interfaces]
  [[Link]]
    enabled = yes
    $iface
EOT
}
# L1: rnsc x -l on P1; L2: rnx -l on P2. Client identities: A (allowed), U (not allowed).
config "$tmp/L1" server "$P1"; config "$tmp/L2" server "$P2"
idof() { sed -n 's/^Identity *: <\(.*\)>.*/\1/p'; }
dstof() { sed -n 's/^Listening on : <\(.*\)>.*/\1/p'; }
config "$tmp/mk" client "$P1"
ID_A=$("${RNX[@]}" --config "$tmp/mk" -i "$tmp/id_A" -p 2>/dev/null | idof)
ID_U=$("$RNSC" x --config "$tmp/mk" -i "$tmp/id_U" -p 2>/dev/null | idof)
D_L1=$("$RNSC" x --config "$tmp/L1" -p 2>/dev/null | dstof)
D_L2=$("${RNX[@]}" --config "$tmp/L2" -p 2>/dev/null | dstof)
if [ ${#ID_A} = 32 ] && [ ${#ID_U} = 32 ] && [ ${#D_L1} = 32 ] && [ ${#D_L2} = 32 ]; then
  ok "identities: allowed <$ID_A>, not allowed <$ID_U>; listeners <$D_L1> (rnsc), <$D_L2> (rnx)"
else
  bad "could not read identities/destinations ('$ID_A' '$ID_U' '$D_L1' '$D_L2')"; exit 1
fi

timeout 150 "$RNSC" x --config "$tmp/L1" -l -a "$ID_A" -v >"$tmp/L1.log" 2>&1 &
pids+=($!)
timeout 150 "${RNX[@]}" --config "$tmp/L2" -l -a "$ID_A" -v >"$tmp/L2.log" 2>&1 &
pids+=($!)
if wait_for 20 port_open "$P1" && wait_for 30 port_open "$P2"; then ok "both listeners up"
else bad "a listener did not start" "$tmp/L1.log" "$tmp/L2.log"; exit 1; fi

# What a terminal shows: each line's text after its last \r, hashes and figures masked.
render() {
  "$PY" -c '
import re, sys
t = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
out = []
for line in t.split("\n"):
    line = line.split("\r")[-1]
    line = re.sub(r"<[0-9a-f]{32}>", "<H>", line)
    line = re.sub(r"-?[0-9]+(\.[0-9]+)? ?[KMGT]?(bps|B|seconds|s\b)", "N \\2", line)
    out.append(line)
sys.stdout.write("\n".join(out))' "$1"
}

# run_pair DIR PAIRING DEST CLIENT... -- ARGS... : one client run, bounded
run_pair() {
  local d=$1 p=$2 dest=$3; shift 3
  local cl=() a=()
  while [ "$1" != -- ]; do cl+=("$1"); shift; done; shift
  for x in "$@"; do a+=("${x//@DEST@/$dest}"); done
  local in=/dev/null; [ -f "$d/stdin" ] && in="$d/stdin"
  timeout 40 "${cl[@]}" --config "$d/$p" -i "$tmp/id_${ids[$d]}" "${a[@]}" <"$in" >"$d/$p.out" 2>"$d/$p.err"
  echo $? >"$d/$p.rc"
}
# run_case NAME IDENTITY ARGS... : the three pairings, in parallel
declare -A ids argl
cases=() jobs_=()
run_case() {
  local name=$1 id=$2; shift 2
  cases+=("$name")
  local d="$tmp/c_$name"; mkdir -p "$d"; ids[$d]=$id
  config "$d/ref_ref" client "$P2"; config "$d/rnsc_ref" client "$P2"; config "$d/ref_rnsc" client "$P1"
  printf '%s\0' "$@" >"$d/args"
  run_pair "$d" ref_ref "$D_L2" "${RNX[@]}" -- "$@" & jobs_+=($!)
  run_pair "$d" rnsc_ref "$D_L2" "$RNSC" x -- "$@" & jobs_+=($!)
  run_pair "$d" ref_rnsc "$D_L1" "${RNX[@]}" -- "$@" & jobs_+=($!)
}
# Under a loaded machine a Python client now and then finds no path within -w (rnx -> rnx
# as well): no case expects that, so a run ending in "Path not found" (242) runs once more.
rerun_242() {
  for name in "${cases[@]}"; do
    local d="$tmp/c_$name" A; mapfile -d '' A <"$d/args"
    for p in ref_ref rnsc_ref ref_rnsc; do
      [ "$(cat "$d/$p.rc" 2>/dev/null)" = 242 ] || continue
      echo "     $name: $p found no path, once more"
      case $p in
        ref_ref) run_pair "$d" $p "$D_L2" "${RNX[@]}" -- "${A[@]}";;
        rnsc_ref) run_pair "$d" $p "$D_L2" "$RNSC" x -- "${A[@]}";;
        ref_rnsc) run_pair "$d" $p "$D_L1" "${RNX[@]}" -- "${A[@]}";;
      esac
    done
  done
}

t0=$SECONDS
run_case echo A @DEST@ "echo hello  world"
run_case mirror A -m @DEST@ "sh -c 'echo out; echo err >&2; exit 3'"
run_case stdin A --stdin "piped input" @DEST@ cat
wait "${jobs_[@]}"; jobs_=()
run_case trunc A --stdout 3 @DEST@ "echo abcdefgh"
# -d: a result of ~24 kB (a resource; big enough that rnx's own transfer-time arithmetic,
# which divides by it, never meets a zero)
run_case detailed A -d @DEST@ "awk 'BEGIN { srand(1); for (i = 0; i < 3000; i++) printf \"%08x\", int(rand() * 4294967295) }'"
run_case quoting A @DEST@ "printf '%s|' 'a\"b c' \"d'e\" f\\ g"
wait "${jobs_[@]}"; jobs_=()
run_case noexec A @DEST@ "/nonexistent/rnsc-x-no-such-command"
run_case timeout A -m -w 3 @DEST@ "sleep 9"
run_case refused U @DEST@ "echo should not run"
wait "${jobs_[@]}"; jobs_=()
run_case noid A -N -w 3 @DEST@ "echo should not run"
# -x: commands read from stdin on one link, the prompt showing a non-zero code (-m)
mkdir -p "$tmp/c_interactive"; printf 'echo one\nsh -c "exit 4"\nclear\necho two\nexit\n' >"$tmp/c_interactive/stdin"
run_case interactive A -x -m @DEST@
run_case badhash A 0123abcd "echo x"
run_case badhex A 0123456789abcdef0123456789abcdeg "echo x"
wait "${jobs_[@]}"
rerun_242
echo "     (cases ran in $((SECONDS - t0)) s)"

# same NAME PAIRING: 0 when the pairing's exit code, output and stderr are rnx -> rnx's
same() {
  local d="$tmp/c_$1" p=$2
  [ "$(cat "$d/$p.rc" 2>/dev/null)" = "$(cat "$d/ref_ref.rc" 2>/dev/null)" ] &&
    [ "$(render "$d/$p.out")" = "$(render "$d/ref_ref.out")" ] &&
    [ "$(cat "$d/$p.err")" = "$(cat "$d/ref_ref.err")" ]
}
# On a loaded machine the reference's own rnx -> rnx now and then loses a result ("No
# response" in -x): a case whose pairings differ from it is run once more, all three
# pairings, one after the other, and said so; the second run must agree.
for name in "${cases[@]}"; do
  same "$name" rnsc_ref && same "$name" ref_rnsc && continue
  d="$tmp/c_$name"; mapfile -d '' A <"$d/args"
  echo "     $name: a pairing differs from rnx -> rnx, the three pairings once more"
  run_pair "$d" ref_ref "$D_L2" "${RNX[@]}" -- "${A[@]}"
  run_pair "$d" rnsc_ref "$D_L2" "$RNSC" x -- "${A[@]}"
  run_pair "$d" ref_rnsc "$D_L1" "${RNX[@]}" -- "${A[@]}"
done

for name in "${cases[@]}"; do
  d="$tmp/c_$name"
  exp_rc=$(cat "$d/ref_ref.rc" 2>/dev/null)
  exp_out=$(render "$d/ref_ref.out"); exp_err=$(cat "$d/ref_ref.err")
  case $exp_rc in ''|124) bad "$name: rnx -> rnx -l gave no result (rc '$exp_rc')" "$d/ref_ref.out" "$d/ref_ref.err"; continue;; esac
  for p in rnsc_ref ref_rnsc; do
    rc=$(cat "$d/$p.rc" 2>/dev/null); out=$(render "$d/$p.out"); err=$(cat "$d/$p.err")
    label=$([ "$p" = rnsc_ref ] && echo "rnsc x -> rnx -l" || echo "rnx -> rnsc x -l")
    if same "$name" "$p"; then
      ok "$name: $label: exit $rc, output as rnx -> rnx -l ($(printf %s "$out" | tr '\n' '|' | cut -c1-70))"
    else
      bad "$name: $label: exit $rc (rnx: $exp_rc)" "$d/$p.out" "$d/$p.err"
      diff <(echo "$exp_out") <(echo "$out") | head -10 | sed 's/^/     /'
      [ "$err" != "$exp_err" ] && echo "     stderr: '$err' vs rnx '$exp_err'"
    fi
  done
done
# the rnsc listener ran the allowed commands and refused the other identity
if grep -q "not allowed, tearing down link" "$tmp/L1.log" && ! grep -q "should not run" "$tmp/L1.log"; then
  ok "rnsc x -l: identity <$ID_U> refused, its commands never ran"
else bad "rnsc x -l did not refuse <$ID_U> as expected" "$tmp/L1.log"; fi

# a listener given a bad -a says why and exits 1, as rnx -l does
mkdir -p "$tmp/na"; printf '[reticulum]\n  share_instance = no\n[interfaces]\n' >"$tmp/na/config"
for a in 0123 0123456789abcdef0123456789abcdeg; do
  exp=$(timeout 20 "${RNX[@]}" --config "$tmp/na" -i "$tmp/id_A" -l -a "$a" 2>&1); exp_rc=$?
  got=$(timeout 20 "$RNSC" x --config "$tmp/na" -i "$tmp/id_A" -l -a "$a" 2>&1); got_rc=$?
  if [ "$got_rc" = "$exp_rc" ] && [ "$got" = "$(printf %s "$exp" | grep -v '^\[')" ]; then
    ok "rnsc x -l -a $a: exit $got_rc, '$got' as rnx -l"
  else bad "rnsc x -l -a $a: exit $got_rc '$got' (rnx: $exp_rc '$exp')"; fi
done

echo "x_interop: $pass passed, $fail failed ($SECONDS s)"
[ $fail = 0 ]
