#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Behaviour of the rnsc command line: help, exit codes, plugin listing (text and JSON),
# broken plugins on the search path, and the identity tool's files.
set -u
. "$(dirname "$0")/../common/lib.sh"
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

check "top-level help" 0 "$RNSC" --help
expect_grep "help lists plugins" "plugins" "$tmp/out"
check "no command is a usage error" 2 "$RNSC"
check "unknown command" 2 "$RNSC" frobnicate
check "version" 0 "$RNSC" --version
check "plugins help" 0 "$RNSC" plugins --help
check "plugins bad option" 2 "$RNSC" plugins --nope

unset RNSC_PLUGIN_PATH
check "plugins list" 0 "$RNSC" plugins -v
expect_grep "openssl listed" "^openssl" "$tmp/out"
expect_grep "sodium listed" "^sodium" "$tmp/out"
expect_grep "aes served by openssl" "aes256-cbc *openssl" "$tmp/out"
check "plugins json" 0 "$RNSC" plugins --json
cp "$tmp/out" "$tmp/saved"
check "plugins json shape" 0 "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = {p["name"] for p in d}
assert {"openssl", "sodium"} <= names, names
for p in d:
    for k in ("name", "kind", "version", "file"):
        assert k in p, (k, p)
    assert p["kind"] in ("crypto", "iface", "scenario"), p  # iface: the tcp plugin
so = [p for p in d if p["name"] == "sodium"][0]
assert "aes256-cbc" not in so["primitives"]
' "$tmp/saved"
check "crypto order sodium first" 0 "$RNSC" plugins -v --crypto "sodium, openssl"
expect_grep "ed25519 from sodium" "ed25519 *sodium" "$tmp/out"
expect_grep "aes falls back to openssl" "aes256-cbc *openssl" "$tmp/out"
check "unknown crypto backend" 3 "$RNSC" plugins --crypto "nosuch"
expect_grep "unknown backend named" "nosuch" "$tmp/err"

# Broken plugins first on the path: each is rejected with its reason, the host carries on.
RNSC_PLUGIN_PATH="$B/tests/plugins/.libs" check "broken plugins rejected" 1 "$RNSC" plugins
for w in RNSC_ERR_NOSYM RNSC_ERR_ABI RNSC_ERR_PLUGIN_INIT RNSC_ERR_SELFTEST RNSC_ERR_PLUGIN_DESC; do
  expect_grep "reason $w" "$w" "$tmp/out"
done
expect_grep "good plugins still load" "^openssl .* ok" "$tmp/out"
RNSC_PLUGIN_PATH="$B/tests/plugins/.libs" check "broken plugins in json" 1 "$RNSC" plugins --json
cp "$tmp/out" "$tmp/saved"
check "broken json shape" 0 "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
bad = [p for p in d if not p["loaded"]]
assert len(bad) == 6, bad
assert all(p["reason"] for p in bad)
' "$tmp/saved"

# Identity tool (rnid's messages and exit codes; tests/live/id_interop_test.sh compares it with
# rnid flag by flag).
check "id generate" 0 "$RNSC" id -g "$tmp/id1"
check "id refuses overwrite" 11 "$RNSC" id -g "$tmp/id1"
check "id overwrite with -f" 0 "$RNSC" id -g "$tmp/id1" -f
check "id print" 0 "$RNSC" id -i "$tmp/id1" -p -H rnsc.test
expect_grep "id hash printed" "Identity Hash : <" "$tmp/out"
expect_grep "private key hidden" "Private Key   : Hidden" "$tmp/out"
expect_grep "destination hash printed" "rnsc.test destination" "$tmp/out"
cp "$tmp/out" "$tmp/saved"
check "reference loads rnsc identity" 0 "$PY" -c '
import sys, RNS
i = RNS.Identity.from_file(sys.argv[1])
h = open(sys.argv[2]).read()
assert "<" + i.hash.hex() + ">" in h, h
assert RNS.Destination.hash(i, "rnsc", "test").hex() in h
' "$tmp/id1" "$tmp/saved"
"$PY" -c 'import RNS,sys; RNS.Identity().to_file(sys.argv[1])' "$tmp/id2"
check "rnsc loads reference identity" 0 "$RNSC" id -i "$tmp/id2" -x
sed -n 's/^Public Identity Keys  : //p' "$tmp/out" > "$tmp/saved"
check "public keys agree" 0 "$PY" -c '
import sys, RNS
i = RNS.Identity.from_file(sys.argv[1])
assert open(sys.argv[2]).read().strip() == i.get_public_key().hex()
' "$tmp/id2" "$tmp/saved"
head -c 10 /dev/urandom > "$tmp/short"
check "truncated identity rejected" 8 "$RNSC" id -i "$tmp/short" -p
expect_grep "clear error" "wrong key length" "$tmp/out"
check "missing identity file" 2 "$RNSC" id -i "$tmp/nope" -p
check "id without file" 2 "$RNSC" id -p
check "bad option" 250 "$RNSC" id --nope

# The conformance command against the embedded reference (few cases: the suites do 1000).
check "conform" 0 "$RNSC" conform --cases 5 --report "$tmp/report.md"
expect_grep "conformant" "^CONFORMANT" "$tmp/out"
expect_grep "report written" "Conformant" "$tmp/report.md"
check "conform json" 0 "$RNSC" conform --cases 3 --json
cp "$tmp/out" "$tmp/saved"
check "conform json shape" 0 "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["passed"] is True and d["disagreements"] == 0 and d["vector_failures"] == 0
assert {v["backend"] for v in d["vectors"]} >= {"openssl", "sodium", "reference"}
assert len(d["cross_checks"]) > 20
' "$tmp/saved"
check "conform bad cases" 2 "$RNSC" conform --cases 0
RNSC_VENV="$tmp/novenv" check "conform without reference fails loudly" 3 "$RNSC" conform --cases 1
expect_grep "says how to install" "make venv" "$tmp/err"

check "bench crypto" 0 "$RNSC" bench crypto --seconds 0.01 --json "$tmp/bench.json"
expect_grep "ratio column" "best/ref" "$tmp/out"
check "bench json shape" 0 "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["reference_version"]
be = {r["backend"] for r in d["results"]}
assert {"openssl", "sodium", "reference"} <= be, be
assert all(r["ops_per_s"] is None or r["ops_per_s"] > 0 for r in d["results"])
assert any(r.get("served") is False for r in d["results"])
' "$tmp/bench.json"
check "bench bad seconds" 2 "$RNSC" bench crypto --seconds 0
check "bench help" 0 "$RNSC" bench --help
check "bench unknown" 2 "$RNSC" bench nope

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
