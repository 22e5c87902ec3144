#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `rnsc timelock` from the outside: exit codes, messages, seal/open round trip on a tiny
# light-mode chain, tampered/truncated/foreign files rejected with nothing written, resuming
# from a checkpoint, and the calibration's JSON record. Light mode only (256 MiB cache per run).
set -u
. "$(dirname "$0")/../common/lib.sh"
[ -x "$PY" ] || PY=python3
check() { # check NAME EXPECTED_STATUS COMMAND...
  local name=$1 want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  if [ "$got" = "$want" ]; then pass=$((pass+1)); echo "ok   $name"
  else fail=$((fail+1)); echo "FAIL $name: exit $got, want $want"; sed 's/^/     /' "$tmp/err" | head -8; fi
}
expect_grep() { # expect_grep NAME PATTERN FILE
  if grep -q -- "$2" "$3"; then pass=$((pass+1)); echo "ok   $1"
  else fail=$((fail+1)); echo "FAIL $1: '$2' not in $3"; head -20 "$3" | sed 's/^/     /'; fi
}
expect_absent() { # expect_absent NAME PATH
  if [ ! -e "$2" ]; then pass=$((pass+1)); echo "ok   $1"
  else fail=$((fail+1)); echo "FAIL $1: $2 exists"; fi
}
flip() { # flip SRC DST OFFSET (negative: from the end)
  "$PY" -c 'import sys
b = bytearray(open(sys.argv[1], "rb").read()); i = int(sys.argv[3]); b[i] ^= 1
open(sys.argv[2], "wb").write(b)' "$@"
}
setbyte() { # setbyte SRC DST OFFSET VALUE
  "$PY" -c 'import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[int(sys.argv[3])] = int(sys.argv[4])
open(sys.argv[2], "wb").write(b)' "$@"
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
TL="$RNSC timelock"

# Usage and option errors never build anything.
check "timelock without a command" 2 $TL
check "timelock --help" 0 $TL --help
expect_grep "help documents the chain input" "4-byte little-endian step counter" "$tmp/out"
expect_grep "help documents exit status 4" "4 open stopped" "$tmp/out"
check "rnsc --help lists timelock" 0 "$RNSC" --help
expect_grep "timelock in command list" "timelock" "$tmp/out"
check "unknown subcommand" 2 $TL frobnicate
check "calibrate --workers 2 refused" 2 $TL calibrate --workers 2
expect_grep "workers reason" "exactly one worker" "$tmp/err"
check "bad --mode" 2 $TL calibrate --mode medium
check "bad --samples" 2 $TL calibrate --samples 0
check "librandomx has no v2" 2 $TL calibrate --impl librandomx --algo v2
check "seal without files" 2 $TL seal --seconds 1
check "seal without --seconds" 2 $TL seal "$tmp/a" "$tmp/b"
check "seal --steps 0 refused" 2 $TL seal --steps 0 "$tmp/a" "$tmp/b"
check "open without files" 2 $TL open
check "open of a missing file" 3 $TL open "$tmp/nope" "$tmp/x"
check "seal of a missing file" 3 $TL seal --steps 1 --mode light "$tmp/nope" "$tmp/x"

# Round trip: 4 steps, a checkpoint every step.
head -c 5000 /dev/urandom >"$tmp/plain"
check "seal (light, 4 steps)" 0 $TL seal -q --mode light --algo v2 --steps 4 --checkpoint-every 1 \
  "$tmp/plain" "$tmp/sealed"
check "info" 0 $TL info "$tmp/sealed"
expect_grep "info shows steps" "steps  *4" "$tmp/out"
expect_grep "info shows algorithm" "RandomX v2" "$tmp/out"
check "open" 0 $TL open -q "$tmp/sealed" "$tmp/opened"
check "round trip content" 0 cmp "$tmp/plain" "$tmp/opened"
expect_absent "checkpoint removed after success" "$tmp/opened.tlckpt"
check "open refuses to overwrite" 3 $TL open -q "$tmp/sealed" "$tmp/opened"
expect_grep "overwrite reason" "use -f" "$tmp/err"

# Rejected files: a specific message each, exit 1, and no output file.
check "not a timelock file" 1 $TL open -q "$tmp/plain" "$tmp/o1"
expect_grep "bad magic named" "bad magic" "$tmp/err"
expect_absent "nothing written (foreign)" "$tmp/o1"
setbyte "$tmp/sealed" "$tmp/v9" 8 9
check "unsupported version" 1 $TL open -q "$tmp/v9" "$tmp/o2"
expect_grep "version named" "RNSC_ERR_VERSION" "$tmp/err"
expect_absent "nothing written (version)" "$tmp/o2"
flip "$tmp/sealed" "$tmp/hdr" 50
check "header byte flipped" 1 $TL open -q "$tmp/hdr" "$tmp/o3"
expect_grep "header check named" "header check mismatch" "$tmp/err"
expect_absent "nothing written (header)" "$tmp/o3"
head -c 3000 "$tmp/sealed" >"$tmp/short"
check "truncated file" 1 $TL open -q "$tmp/short" "$tmp/o4"
expect_grep "truncation named" "truncated" "$tmp/err"
expect_absent "nothing written (truncated)" "$tmp/o4"
flip "$tmp/sealed" "$tmp/ct" 2000
check "ciphertext byte flipped" 1 $TL open -q "$tmp/ct" "$tmp/o5"
expect_grep "authentication failure named" "authentication failed" "$tmp/err"
expect_absent "nothing written (ciphertext)" "$tmp/o5"
flip "$tmp/sealed" "$tmp/tag" -1
# sodium first on the command line: RandomX still comes from the randomx plugin.
RNSC_CRYPTO="sodium, openssl" check "tag byte flipped" 1 $TL open -q "$tmp/tag" "$tmp/o6"
expect_grep "tag failure named" "RNSC_ERR_AUTH" "$tmp/err"
expect_absent "nothing written (tag)" "$tmp/o6"

# Resume: stop after 2 of 4 steps (exit 4, checkpoint saved), then finish.
check "open stops at --max-steps" 4 $TL open -q --max-steps 2 "$tmp/sealed" "$tmp/r"
expect_grep "stop message" "stopped at step 2 of 4" "$tmp/err"
expect_absent "no output while paused" "$tmp/r"
[ -s "$tmp/r.tlckpt" ] && { pass=$((pass+1)); echo "ok   checkpoint saved"; } || { fail=$((fail+1)); echo "FAIL checkpoint saved"; }
check "open resumes" 0 $TL open "$tmp/sealed" "$tmp/r"
expect_grep "resumed at step 2" "resuming from .* at step 2 of 4" "$tmp/err"
check "resumed content" 0 cmp "$tmp/plain" "$tmp/r"
expect_absent "checkpoint removed" "$tmp/r.tlckpt"
check "pause again" 4 $TL open -q --max-steps 1 "$tmp/sealed" "$tmp/r2"
flip "$tmp/r2.tlckpt" "$tmp/r2.tlckpt" 60
check "corrupted checkpoint: start over" 0 $TL open "$tmp/sealed" "$tmp/r2"
expect_grep "corruption reported" "corrupted" "$tmp/err"
check "content after restart" 0 cmp "$tmp/plain" "$tmp/r2"

# Calibration: one tiny light-mode configuration, JSON record on stdout and in a file.
check "calibrate (light, json)" 0 $TL calibrate --mode light --workers 1 --samples 2 --hashes 2 \
  --algo v2 --impl own --json --output "$tmp/cal.json"
cp "$tmp/out" "$tmp/cal_stdout.json"
check "calibration json shape" 0 "$PY" -c '
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    assert d["mode"] == "light" and d["workers"] == 1, d
    env = d["environment"]
    for k in ("cpu_model", "cpu_flags", "page_size", "thp_enabled", "hugetlb_pages_total", "kernel"):
        assert k in env, k
    (r,) = d["runs"]
    assert r["impl"] == "own" and r["algo"] == "v2" and r["ok"], r
    assert len(r["hs_samples"]) == 2 and r["hs_min"] <= r["hs_median"] <= r["hs_max"], r
    assert r["hs_min"] > 0 and r["cache_init_s"] > 0 and r["dataset_init_s"] == 0, r
    assert r["jit"] in ("on", "off") and r["pages"] in ("4k", "thp", "hugetlb"), r
    assert r["prefetch"] == "none", r  # light mode computes items, it fetches none
' "$tmp/cal_stdout.json" "$tmp/cal.json"
check "bad --prefetch refused" 2 $TL calibrate --mode light --prefetch sometimes
expect_grep "bad --prefetch named" "invalid value 'sometimes' for --prefetch" "$tmp/err"
check "calibrate with the W^X JIT" 0 $TL calibrate --mode light --workers 1 --samples 1 --hashes 2 \
  --algo v1 --impl own --secure-jit --json --output "$tmp/calw.json"
check "secure JIT reported" 0 "$PY" -c '
import json, sys
(r,) = json.load(open(sys.argv[1]))["runs"]
assert r["ok"], r
assert r.get("jit_pages") in ("wx", "none"), r
' "$tmp/calw.json"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
