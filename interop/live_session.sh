#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A live session between rnsc and the pinned reference on 127.0.0.1, narrated: the
# reference's rnsd and `rnsc daemon` connect over TCP, each announces its probe
# destination, each learns the other's path, the reference's rnprobe probes rnsc and
# `rnsc probe` probes the reference; then files go each way over links as resources, and
# each side fetches one from the other (a request answered with a resource). Run by `./run.sh main` (and usable by hand:
# RNSC_BUILDDIR=build RNSC_VENV=.venv interop/live_session.sh). Exit 0 only if every step
# happened; every wait is bounded; logs are kept in $RNSC_SESSION_DIR (default a temp dir
# printed at the end).
set -u
B=${RNSC_BUILDDIR:?RNSC_BUILDDIR must point at the build tree}
RNSC="$B/src/cli/rnsc"
VENV=${RNSC_VENV:-$B/.venv}
PY=$VENV/bin/python
for tool in rnsd rnprobe rnpath; do
  [ -x "$VENV/bin/$tool" ] || { echo "session: the reference's $tool is not in $VENV/bin (make venv)"; exit 3; }
done
dir=${RNSC_SESSION_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/rnsc-session.XXXXXX")}
mkdir -p "$dir/ref" "$dir/rnsc" "$dir/refclient" "$dir/rnscclient"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
steps=0 failed=0
step() { steps=$((steps+1)); printf '  [%s] %s\n' "$1" "$2"; [ "$1" = ok ] || failed=$((failed+1)); }
wait_for() { local end=$((SECONDS + $1)); shift; while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done; return 1; }
port_open() { "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; }

read -r P1 P2 < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
inst="rnscsession$$"
cat >"$dir/ref/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = yes
  instance_name = $inst
  respond_to_probes = yes
[logging]
  loglevel = 4
[interfaces]
  [[Reference TCP Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P1
EOF
cat >"$dir/rnsc/config" <<EOF
[reticulum]
  enable_transport = yes
  share_instance = no
  respond_to_probes = yes
[logging]
  loglevel = 4
[interfaces]
  [[To Reference]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = $P1
  [[rnsc TCP Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P2
EOF
for c in refclient:$P2 rnscclient:$P1; do
  cat >"$dir/${c%%:*}/config" <<EOF
[reticulum]
  share_instance = no
[logging]
  loglevel = 3
[interfaces]
  [[Client]]
    type = TCPClientInterface
    enabled = yes
    target_host = 127.0.0.1
    target_port = ${c##*:}
EOF
done

echo "live session: reference rnsd (RNS $("$PY" -c 'import RNS; print(RNS.__version__)' 2>/dev/null)) <-> rnsc daemon over TCP on 127.0.0.1"
"$VENV/bin/rnsd" --config "$dir/ref" >"$dir/rnsd.log" 2>&1 &
pids+=($!)
if wait_for 30 port_open "$P1"; then step ok "reference rnsd listening on :$P1"
else step FAIL "reference rnsd did not start (see $dir/rnsd.log)"; exit 1; fi
"$RNSC" daemon --config "$dir/rnsc" -vv >"$dir/rnsc.log" 2>&1 &
pids+=($!)
if wait_for 20 port_open "$P2"; then step ok "rnsc daemon connected to it and listening on :$P2"
else step FAIL "rnsc daemon did not start (see $dir/rnsc.log)"; exit 1; fi

REF_PROBE=$("$RNSC" id -i "$dir/ref/storage/transport_identity" -H rnstransport.probe | sed -n 's/.*destination for this Identity is <\([0-9a-f]*\)>.*/\1/p')
RNSC_PROBE=$("$RNSC" id -i "$dir/rnsc/storage/transport_identity" -H rnstransport.probe | sed -n 's/.*destination for this Identity is <\([0-9a-f]*\)>.*/\1/p')
echo "  probe destinations: reference <$REF_PROBE>, rnsc <$RNSC_PROBE>"
echo "  (both announce them 15 s after start, as the reference does)"
if wait_for 60 grep -qs "path to <$REF_PROBE> is 1 hop" "$dir/rnsc.log"; then
  step ok "rnsc received the reference's announce: $(grep -m1 "path to <$REF_PROBE>" "$dir/rnsc.log" | sed 's/^.*\(path to\)/\1/')"
else step FAIL "rnsc never learned a path to the reference's probe destination"; fi
ref_has() { timeout 20 "$VENV/bin/rnpath" --config "$dir/ref" -t >"$dir/rnpath.out" 2>&1 && grep -qs "<$RNSC_PROBE>" "$dir/rnpath.out"; }
if wait_for 60 ref_has; then step ok "the reference's path table (rnpath -t): $(grep "<$RNSC_PROBE>" "$dir/rnpath.out" | tr -s ' ')"
else step FAIL "the reference never learned a path to rnsc's probe destination"; fi

timeout 60 "$VENV/bin/rnprobe" --config "$dir/refclient" rnstransport.probe "$RNSC_PROBE" -t 15 -n 3 >"$dir/rnprobe.out" 2>&1; rc=$?
if [ $rc = 0 ]; then step ok "reference rnprobe -> rnsc: $(grep -c 'Valid reply' "$dir/rnprobe.out") replies; $(grep -m1 'packet loss' "$dir/rnprobe.out")"
else step FAIL "reference rnprobe -> rnsc failed (exit $rc): $(tail -1 "$dir/rnprobe.out")"; fi
timeout 60 "$RNSC" probe --config "$dir/rnscclient" rnstransport.probe "$REF_PROBE" -t 15 -n 3 >"$dir/probe.out" 2>&1; rc=$?
if [ $rc = 0 ]; then step ok "rnsc probe -> reference: $(grep -c 'Valid reply' "$dir/probe.out") replies; $(grep -m1 'packet loss' "$dir/probe.out")"
else step FAIL "rnsc probe -> reference failed (exit $rc): $(tail -1 "$dir/probe.out")"; fi
timeout 60 "$RNSC" probe --config "$dir/rnscclient" rnstransport.probe "$RNSC_PROBE" -t 15 >"$dir/probe2.out" 2>&1; rc=$?
if [ $rc = 0 ]; then step ok "rnsc probe -> rnsc daemon through the reference: $(grep -m1 'Valid reply' "$dir/probe2.out" | sed 's/^.*\(Round-trip\)/\1/')"
else step FAIL "rnsc probe through the reference failed (exit $rc)"; fi

# ---- a link, a request and resources, both ways ------------------------------------------
# rncp against rnsc cp, each on its own node: the rnsc tools attach to the reference's rnsd,
# the reference's tools to the rnsc daemon, so every transfer crosses both daemons as
# transport nodes. A file sent each way (a link, identify, one resource with the file's
# name as metadata, its proof), then a file fetched each way (a fetch_file request on the
# link, answered with the file as a resource). Accounting: bytes and SHA-256 at both ends.
RNCP=("$PY" -m RNS.Utilities.rncp)
for c in rnsclisten:$P1 rnscsend:$P1 reflisten:$P2 refsend:$P2; do
  mkdir -p "$dir/${c%%:*}" "$dir/${c%%:*}.in" "$dir/${c%%:*}.jail"
  sed "s/target_port = .*/target_port = ${c##*:}/" "$dir/refclient/config" >"$dir/${c%%:*}/config"
done
head -c 200000 /dev/urandom >"$dir/to_ref.bin"; head -c 250000 /dev/urandom >"$dir/to_rnsc.bin"
head -c 300000 /dev/urandom >"$dir/reflisten.jail/from_ref.bin"
head -c 350000 /dev/urandom >"$dir/rnsclisten.jail/from_rnsc.bin"
sha() { sha256sum <"$1" | cut -c1-16; }
dst() { sed -n 's/^Listening on : <\(.*\)>.*/\1/p' | head -1; }
L_RNSC=$("$RNSC" cp --config "$dir/rnsclisten" -p 2>/dev/null | dst)
L_REF=$("${RNCP[@]}" --config "$dir/reflisten" -p 2>/dev/null | dst)
"$RNSC" cp --config "$dir/rnsclisten" -l -n -F -j "$dir/rnsclisten.jail" -s "$dir/rnsclisten.in" -b 0 >"$dir/rnsclisten.log" 2>&1 &
pids+=($!)
"${RNCP[@]}" --config "$dir/reflisten" -l -n -F -j "$dir/reflisten.jail" -s "$dir/reflisten.in" -b 0 >"$dir/reflisten.log" 2>&1 &
pids+=($!)
sleep 3
if [ ${#L_RNSC} = 32 ] && [ ${#L_REF} = 32 ] && kill -0 "${pids[-1]}" "${pids[-2]}" 2>/dev/null; then
  step ok "file listeners up: rnsc cp -l <$L_RNSC> (on rnsd), rncp -l <$L_REF> (on the rnsc daemon)"
  # send FILE DEST LISTENER_INBOX TAG TOOL...
  send() { local f=$1 d=$2 in=$3 tag=$4; shift 4
    timeout 90 "$@" -S -w 30 "$f" "$d" >"$dir/$tag.out" 2>&1; local rc=$?
    local got="$in/$(basename "$f")"
    if [ $rc = 0 ] && [ -f "$got" ] && [ "$(sha "$got")" = "$(sha "$f")" ]; then
      step ok "$tag: $(stat -c %s "$f") bytes sent, $(stat -c %s "$got") received, SHA-256 $(sha "$f")… equal"
    else step FAIL "$tag (exit $rc): $(tail -1 "$dir/$tag.out")"; fi; }
  send "$dir/to_ref.bin" "$L_REF" "$dir/reflisten.in" "resource rnsc cp -> rncp -l" "$RNSC" cp --config "$dir/rnscsend"
  send "$dir/to_rnsc.bin" "$L_RNSC" "$dir/rnsclisten.in" "resource rncp -> rnsc cp -l" "${RNCP[@]}" --config "$dir/refsend"
  # fetch NAME DEST JAIL TAG TOOL...: a request, answered with a resource. The reference's
  # fetcher can miss an immediate answer (it registers its request after sending it), so it
  # gets three tries.
  fetch() { local f=$1 d=$2 jail=$3 tag=$4 k rc; shift 4; mkdir -p "$dir/$tag.got"
    for k in 1 2 3; do
      (cd "$dir" && timeout 40 "$@" -S -w 30 -f -s "$dir/$tag.got" "$f" "$d" >"$dir/$tag.out" 2>&1); rc=$?
      [ $rc = 0 ] && break
    done
    local got="$dir/$tag.got/$f"
    if [ $rc = 0 ] && [ -f "$got" ] && [ "$(sha "$got")" = "$(sha "$jail/$f")" ]; then
      step ok "$tag: $(stat -c %s "$jail/$f") bytes served, $(stat -c %s "$got") fetched, SHA-256 $(sha "$got")… equal$([ $k -gt 1 ] && echo " (try $k)")"
    else step FAIL "$tag (exit $rc): $(tail -1 "$dir/$tag.out")"; fi; }
  fetch from_ref.bin "$L_REF" "$dir/reflisten.jail" "request+resource rnsc cp -f <- rncp -l -F" "$RNSC" cp --config "$dir/rnscsend"
  fetch from_rnsc.bin "$L_RNSC" "$dir/rnsclisten.jail" "request+resource rncp -f <- rnsc cp -l -F" "${RNCP[@]}" --config "$dir/refsend"
else step FAIL "a file listener did not start (see $dir/rnsclisten.log, $dir/reflisten.log)"; fi

echo "live session: $((steps-failed))/$steps steps succeeded; logs in $dir"
[ "$failed" -eq 0 ]
