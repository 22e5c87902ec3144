#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rnsc id against the reference's rnid (rns 1.5.4), run side by side on the same inputs in
# two copies of one folder: stdout (log lines with a timestamp left out) and exit status
# must be identical, and so must every file written (Ed25519 signatures are deterministic,
# so .rsg/.rsm files match byte for byte). Files made by one tool are then read by the
# other: signatures validate, .rfe files decrypt, imported/exported identities round-trip
# in hex, base32 and base64. Bad input (truncated signature, wrong key, non-hex hash, not
# an encrypted file) gets the same message and exit code from both. Finally, -a and -R
# through an rnsc daemon as shared instance: an identity announced by one tool is
# requested from the network by the other.
set -u
. "$(dirname "$0")/../common/lib.sh"
RNID="$VENV/bin/rnid"
bad() { fail=$((fail+1)); echo "FAIL $1"; shift; for f in "$@"; do [ -f "$f" ] && head -30 "$f" | sed 's/^/     /'; done; }
if [ ! -x "$RNID" ]; then echo "FAIL the reference's rnid is not in $VENV/bin (make venv)"; exit 1; fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-id-test.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  local end=$((SECONDS + 5)) p
  for p in "${pids[@]}"; do
    while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
  done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
R="$tmp/ref" C="$tmp/rnsc"
mkdir -p "$R" "$C"
export HOME="$tmp/home" # neither tool may touch the real ~/.reticulum

# Both tools in their folder; outputs in $tmp/{ref,rnsc}.out, statuses in rs/cs.
run_both() {
  (cd "$R" && timeout 60 "$RNID" "$@" </dev/null >"$tmp/ref.raw" 2>&1); rs=$?
  (cd "$C" && timeout 60 "$RNSC" id "$@" </dev/null >"$tmp/rnsc.raw" 2>&1); cs=$?
  grep -v '^\[20[0-9-]* [0-9:]*\]' "$tmp/ref.raw" >"$tmp/ref.out"
  grep -v '^\[20[0-9-]* [0-9:]*\]' "$tmp/rnsc.raw" >"$tmp/rnsc.out"
}
# same NAME WANT_STATUS ARGS...: identical output and status, and the status expected.
same() {
  local name=$1 want=$2; shift 2
  run_both "$@"
  if [ "$rs" != "$want" ]; then bad "$name: rnid exit $rs, want $want" "$tmp/ref.raw"
  elif [ "$cs" != "$rs" ]; then bad "$name: rnsc id exit $cs, rnid $rs" "$tmp/rnsc.raw" "$tmp/ref.raw"
  elif ! cmp -s "$tmp/ref.out" "$tmp/rnsc.out"; then
    diff "$tmp/ref.out" "$tmp/rnsc.out" >"$tmp/diff"; bad "$name: output differs" "$tmp/diff"
  else ok "$name"; fi
}
# same_file NAME PATH: the file each tool wrote is byte-identical.
same_file() {
  if [ -f "$R/$2" ] && cmp -s "$R/$2" "$C/$2"; then ok "$1"
  else bad "$1: $2 differs or is missing"; fi
}
both() { cp "$@" "$R/"; cp "$@" "$C/"; }

"$RNID" -g "$tmp/a.rid" >/dev/null && "$RNID" -g "$tmp/b.rid" >/dev/null || { echo "FAIL rnid -g"; exit 1; }
both "$tmp/a.rid" "$tmp/b.rid"
A_HASH=$("$RNID" -i "$tmp/a.rid" -p | sed -n 's/^Identity Hash : <\(.*\)>$/\1/p')
printf 'hello reticulum\n' >"$tmp/f.txt"; head -c 70000 /dev/urandom >"$tmp/g.bin"; : >"$tmp/empty"
both "$tmp/f.txt" "$tmp/g.bin" "$tmp/empty"

# ---- identity output, export, hashes ------------------------------------------------------
same "print identity" 0 -i a.rid -p
same "print private base32" 0 -i a.rid -p -P -B
same "print private base64" 0 -i a.rid -P -p -b
same "export pub base32" 0 -i a.rid -x -B
same "export prv base64" 0 -i a.rid -X -b
same "export both hex" 0 -i a.rid -x -X -F
same "destination hash" 0 -i a.rid -H rnstransport.probe
same "generate refuses overwrite" 11 -g a.rid
same "mutually exclusive -i -g" 1 -i a.rid -g x.rid
same "mutually exclusive encodings" 1 -i a.rid -p -b -B
same "no identity" 2 -p
same "missing file is no identity" 2 -i nosuch.rid -p
head -c 30 "$tmp/a.rid" >"$tmp/short.rid"; both "$tmp/short.rid"
run_both -i short.rid -p
if [ "$rs" = 8 ] && [ "$cs" = 8 ] && [ "$(head -1 "$tmp/ref.out")" = "$(head -1 "$tmp/rnsc.out")" ]; then
  ok "truncated identity file: exit 8"; else bad "truncated identity: $rs/$cs" "$tmp/rnsc.raw" "$tmp/ref.raw"; fi
same "-H with a hex identity hash" 0 -i "$A_HASH" -N -H app.x || true
run_both -i a.rid # nothing to do: both print their help (the program names differ)
if [ "$rs" = 0 ] && [ "$cs" = 0 ] && grep -q '^usage: rnsc id' "$tmp/rnsc.out" &&
   grep -q -- '--print-identity' "$tmp/rnsc.out"; then ok "help when nothing to do"
else bad "help when nothing to do: $rs/$cs" "$tmp/rnsc.out"; fi

# ---- import / export round trips ------------------------------------------------------------
PRV_HEX=$("$RNID" -i "$tmp/a.rid" -X -F | sed -n 's/^Private Identity Keys : //p')
PRV_B32=$("$RNID" -i "$tmp/a.rid" -X -B | sed -n 's/^Private Identity Keys : //p')
PRV_B64=$("$RNID" -i "$tmp/a.rid" -X -b | sed -n 's/^Private Identity Keys : //p')
PUB_B64=$("$RNSC" id -i "$tmp/a.rid" -x -b | sed -n 's/^Public Identity Keys  : //p')
PUB_B32=$("$RNSC" id -i "$tmp/a.rid" -x -B | sed -n 's/^Public Identity Keys  : //p')
for e in HEX B32 B64; do
  v=PRV_$e
  same "import private $e, write" 0 "--import-prv=${!v}" -X -w "imp_$e.rid"
  same_file "imported private $e file identical" "imp_$e.rid"
  if cmp -s "$C/imp_$e.rid" "$tmp/a.rid"; then ok "private $e round-trips to the original key"
  else bad "private $e round trip"; fi
done
same "import public base64, print" 0 "--import-pub=$PUB_B64" -p
same "import public base32, write .pub" 0 -m "$PUB_B32" -w pubout
same_file "written .pub identical" pubout.pub
same "import public from .pub file" 0 -m pubout.pub -x -b
same "import garbage" 8 -M notakey
same "write refuses overwrite" 11 -M "$PRV_HEX" -X -w imp_HEX.rid

# ---- signatures ---------------------------------------------------------------------------------
same "sign" 0 -i a.rid -s f.txt
same_file "rsg identical" f.txt.rsg
same "sign refuses overwrite" 11 -i a.rid -s f.txt
same "sign -f, two files" 0 -i a.rid -f -s f.txt g.bin
same_file "rsg of g identical" g.bin.rsg
same "sign empty file" 0 -i a.rid -s empty
same_file "rsg of empty identical" empty.rsg
for enc in -B -U; do same "sign armoured $enc" 0 -i a.rid -s f.txt $enc; done
same "validate (any signer)" 0 -V f.txt.rsg
same "validate two" 0 -V f.txt g.bin
same "validate with required signer" 0 -i a.rid -V f.txt.rsg
same "validate with required signer hash" 0 -i "$A_HASH" -N -V f.txt.rsg
same "validate wrong signer" 10 -i b.rid -V f.txt.rsg
same "validate non-hex signer hash" 8 -i "zz${A_HASH:2}" -N -V f.txt.rsg
same "validate short signer hash" 8 -i "${A_HASH:2}" -N -V f.txt.rsg
# cross: each validates what the other wrote (the files are identical, so swap them anyway)
printf 'hello reticulum!\n' >"$R/f2.txt"; cp "$R/f2.txt" "$C/f2.txt"
cp "$R/f.txt.rsg" "$R/f2.txt.rsg"; cp "$C/f.txt.rsg" "$C/f2.txt.rsg"
same "signature over other content" 10 -V f2.txt
head -c 100 "$R/f.txt.rsg" >"$R/t.txt.rsg"; cp "$R/t.txt.rsg" "$C/t.txt.rsg"; cp "$R/f.txt" "$R/t.txt"; cp "$C/f.txt" "$C/t.txt"
same "truncated signature file" 10 -V t.txt
head -c 40 "$R/f.txt.rsg" >"$R/t.txt.rsg"; cp "$R/t.txt.rsg" "$C/t.txt.rsg"
same "very short signature file" 10 -i a.rid -V t.txt
same "no signature file" 6 -V f.bin
same "raw legacy signature" 0 -i a.rid -f --raw -s f.txt
same_file "legacy signature identical" f.txt.rsg
same "legacy validate" 0 -i a.rid -V f.txt
same "legacy without identity" 2 -V f.txt

# ---- signed messages ----------------------------------------------------------------------------------
same "sign message" 0 -i a.rid -S "signed words" -w msg
same_file "rsm identical" msg.rsm
same "sign message needs -w" 250 -i a.rid -S "x"
same "sign message armoured" 0 -i a.rid -S "armoured words" -b
same "sign message from file" 0 -i a.rid -r f.txt -S -w msg2.rsm
same_file "rsm from file identical" msg2.rsm
same "sign message both sources" 250 -i a.rid -r f.txt -S text -w m3
same "validate message --meta" 0 -V msg.rsm --meta
same "validate message, wrong signer" 10 -i b.rid -V msg.rsm
head -c 90 "$R/msg.rsm" >"$R/cut.rsm"; cp "$R/cut.rsm" "$C/cut.rsm"
same "truncated message file" 254 -V cut.rsm
printf 'name = pkg\nversion = 1.0\n[sub]\nkey = value\nn = 3\n' >"$tmp/meta.cfg"; both "$tmp/meta.cfg"
(cd "$R" && "$RNID" -i a.rid -S "with meta" -E meta.cfg -w metamsg >/dev/null) && cp "$R/metamsg.rsm" "$C/"
same "validate rnid's message with metadata" 0 -V metamsg.rsm --meta
same "embed metadata (-E)" 0 -i a.rid -S "with meta" -E meta.cfg -w metamsg2
same_file "rsm with metadata identical" metamsg2.rsm
(cd "$R" && "$RNSC" id -i a.rid -S "by rnsc" -E meta.cfg -w rnscmeta >/dev/null) && cp "$R/rnscmeta.rsm" "$C/"
same "validate rnsc's message with metadata" 0 -V rnscmeta.rsm --meta
same "-E: no such metadata file" 6 -i a.rid -S x -E nometa.cfg -F
# -E's ConfigObj file with every value shape, then one spec per case through --meta-spec
# (rnid's Validator converts, defaults and rejects; the armoured rsm must match byte for byte).
cat >"$tmp/m2.cfg" <<'CFG'
# release manifest
name = "my pkg"
version = 1.2
count = 7
neg = -3
ratio = 0.25
tags = a, b, c
one = x,
none = ,
flags = yes, no, on
nums = 1, 2, 3
greet = hello %(name)s
pubkey = not rnid's own
hashy = 'with # hash'
[origin]
path = /x/y
  [[deep]]
  k = v
[signer]
z = 1
CFG
both "$tmp/m2.cfg"
cp "$tmp/m2.cfg" "$tmp/m3.cfg"; printf 'count = integer(min=1)\nflag = boolean(default=yes)\n' >"$tmp/m3.cfg.spec"
both "$tmp/m3.cfg" "$tmp/m3.cfg.spec"
same "-E picks up path.spec" 0 -i a.rid -S x -E m3.cfg -F
n=0
while IFS='|' read -r want spec; do
  n=$((n+1)); printf '%b' "$spec" >"$tmp/spec$n"; both "$tmp/spec$n"
  same "--meta-spec '$spec'" "$want" -i a.rid -S hello -E m2.cfg --meta-spec "spec$n" -F
done <<'SPECS'
0|
0|count = integer
254|count = integer(min=8)
254|count = integer(max=6)
0|count = integer(0)
0|neg = integer(min=-5)
0|ratio = float(max=1)
254|ratio = float(min=0.5)
0|version = float
254|version = integer
254|name = string(max=3)
0|name = string(min=3)
254|tags = string
0|tags = list
0|tags = tuple
254|tags = list(max=2)
0|tags = string_list
0|nums = int_list
254|tags = int_list
0|flags = bool_list
254|name = list
0|one = list
0|none = list
254|missing = integer
0|missing = integer(default=5)
0|missing = boolean(default=off)
0|missing = string(default=None)
0|missing = float(default=2)
0|missing = string(default="a b")
0|missing = ip_addr(default=10.0.0.1)
254|missing = pass
0|tags = pass
254|count = boolean
0|count = ip_addr
254|name = ip_addr
0|greet = string
0|count = option(7)
254|count = option(8)
254|count = frobnicate
0|[origin]\npath = string\nextra = integer(default=1)
0|[origin]\n[[deep]]\nk = string\nj = boolean(default=1)
0|[newsec]\nq = integer(default=4)
254|[newsec]\nq = integer
254|origin = string
254|[count]\nq = integer(default=4)
SPECS
# A check with a comma reaches rnid's Validator as a list and fails (exit 254, a Python
# TypeError in its message); rnsc id says why instead. Only the status and file are compared.
printf 'count = integer(min=0, max=9)\n' >"$tmp/specc"; both "$tmp/specc"
run_both -i a.rid -S hello -E m2.cfg --meta-spec specc -F
if [ "$rs" = 254 ] && [ "$cs" = 254 ] && grep -q "holds a comma" "$tmp/rnsc.out"; then ok "spec check with a comma fails in both"
else bad "spec check with a comma: rnid $rs, rnsc id $cs" "$tmp/rnsc.out" "$tmp/ref.out"; fi
# A bare -E: rnid dies with a TypeError traceback (exit 1); rnsc id exits 1 with a message.
run_both -i a.rid -S hello -E -F
if [ "$rs" = 1 ] && [ "$cs" = 1 ] && grep -q "No metadata file" "$tmp/rnsc.out"; then ok "bare -E exits 1 in both"
else bad "bare -E: rnid $rs, rnsc id $cs" "$tmp/rnsc.out"; fi

# ---- encryption --------------------------------------------------------------------------------------
same "encrypt" 0 -i a.rid -e f.txt
same "encrypt two, -f" 0 -i a.rid -f -e f.txt g.bin
same "encrypt empty" 0 -i a.rid -e empty
same "encrypt missing" 6 -i a.rid -e nosuch
same "encrypt to -w" 0 -i a.rid -e f.txt -w out.rfe
for d in R C; do mkdir -p "${!d}/x"; done
# each decrypts the other's .rfe files
for f in f.txt.rfe g.bin.rfe out.rfe empty.rfe; do cp "$R/$f" "$C/x/$f"; cp "$C/$f" "$R/x/$f"; done
same "decrypt the other's file" 0 -i a.rid -d x/f.txt.rfe
same "decrypt the other's 70 kB file" 0 -i a.rid -d x/g.bin.rfe
same "decrypt the other's empty file" 0 -i a.rid -d x/empty.rfe
for f in f.txt g.bin empty; do
  if cmp -s "$R/x/$f" "$tmp/$f" && cmp -s "$C/x/$f" "$tmp/$f"; then ok "plaintext of $f intact both ways"
  else bad "plaintext of $f"; fi
done
same "decrypt refuses overwrite" 11 -i a.rid -d x/f.txt.rfe
same "decrypt to -w" 0 -i a.rid -d x/out.rfe -w x/out.txt
same "decrypt with the wrong key" 12 -i b.rid -d x/out.rfe -w x/wrong.txt
head -c 60 "$R/x/out.rfe" >"$R/x/cut.rfe"; cp "$R/x/cut.rfe" "$C/x/cut.rfe"
same "decrypt a truncated file" 12 -i a.rid -d x/cut.rfe
same "decrypt a non-rfe file" 7 -i a.rid -d f.txt
same "decrypt without private key" 4 "--import-pub=$PUB_B64" -d x/out.rfe
same "one operation at a time" 1 -i a.rid -e f.txt -s f.txt

# ---- announce and request through an rnsc daemon ---------------------------------------------------------
read -r P1 < <("$PY" -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
inst="rnscid$$"
mkdir -p "$tmp/D"
cat >"$tmp/D/config" <<EOF
[reticulum]
  enable_transport = No
  share_instance = Yes
  instance_name = $inst
  panic_on_interface_error = No
[logging]
  loglevel = 4
[interfaces]
  [[TCP]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $P1
EOF
"$RNSC" daemon --config "$tmp/D" >"$tmp/daemon.log" 2>&1 &
pids+=($!)
end=$((SECONDS + 15))
until grep -q "$inst" /proc/net/unix 2>/dev/null || [ $SECONDS -ge $end ]; do sleep 0.2; done
mkdir -p "$tmp/CR" "$tmp/CC"
cp "$tmp/D/config" "$tmp/CR/config"; cp "$tmp/D/config" "$tmp/CC/config"
B_DEST=$("$RNID" -i "$tmp/b.rid" -H rns.id | sed -n 's/^The rns.id destination for this Identity is <\(.*\)>$/\1/p')
A_DEST=$("$RNID" -i "$tmp/a.rid" -H app.idtest | sed -n 's/^The app.idtest destination for this Identity is <\(.*\)>$/\1/p')
if out=$(timeout 30 "$RNSC" id --config "$tmp/CC" -i "$tmp/b.rid" -a 2>&1) &&
   echo "$out" | grep -q "^Announcing rns.id destination <$B_DEST>"; then ok "rnsc id -a announces"
else bad "rnsc id -a: $out" "$tmp/daemon.log"; fi
if out=$(timeout 40 "$RNID" --config "$tmp/CR" -i "$B_DEST" -R -t 10 -p 2>&1) &&
   echo "$out" | grep -q "Identity Hash : <"; then ok "rnid -R gets the identity rnsc id announced"
else bad "rnid -R: $out" "$tmp/daemon.log"; fi
if out=$(timeout 30 "$RNID" --config "$tmp/CR" -i "$tmp/a.rid" -a app.idtest 2>&1) &&
   echo "$out" | grep -q "^Announcing app.idtest destination <$A_DEST>"; then ok "rnid -a announces"
else bad "rnid -a: $out"; fi
if out=$(timeout 30 "$RNSC" id --config "$tmp/CC" -i "$A_DEST" -R -t 10 -p 2>&1) &&
   echo "$out" | grep -q "^Identity Hash : <$A_HASH>"; then ok "rnsc id -R gets the identity rnid announced"
else bad "rnsc id -R: $out" "$tmp/daemon.log"; fi
(cd "$tmp" && timeout 30 "$RNSC" id --config "$tmp/CC" -i 00112233445566778899aabbccddeeff -p >"$tmp/c1" 2>&1); c1=$?
(cd "$tmp" && timeout 30 "$RNID" --config "$tmp/CR" -i 00112233445566778899aabbccddeeff -p >"$tmp/r1.raw" 2>&1); r1=$?
grep -v '^\[' "$tmp/r1.raw" >"$tmp/r1"
# rnid means exit 2 (R_NO_IDENTITY) here, but attached to a shared instance its exit
# handlers turn it into 0; rnsc id keeps the 2.
if [ "$c1" = 2 ] && { [ "$r1" = 2 ] || [ "$r1" = 0 ]; } && cmp -s "$tmp/c1" "$tmp/r1"; then ok "unknown hash without -R: same text, exit 2"
else bad "unknown hash without -R: $c1/$r1" "$tmp/c1" "$tmp/r1"; fi
start=$SECONDS
timeout 30 "$RNSC" id --config "$tmp/CC" -i 00112233445566778899aabbccddeeff -R -t 2 -p >"$tmp/c2" 2>&1; c2=$?
if [ "$c2" = 2 ] && grep -q "Identity request timed out" "$tmp/c2" && [ $((SECONDS - start)) -lt 10 ]; then
  ok "unreachable identity: timed out, exit 2"; else bad "unreachable identity: exit $c2" "$tmp/c2"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
