#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Builds the libFuzzer targets (HDLC, KISS, MessagePack, packet, announce,
# proof, IFAC, the config reader, the transport engine, the link state machine, the
# persisted known-destinations, path and tunnel tables, the PipeInterface command splitter, the
# AutoInterface discovery-packet check, the RNode host protocol, the resource advertisement parser with a receiving
# resource, the WebSocket interface plugin's codec and session logic, the request and
# stream messages, the shared-instance RPC, the wire driver's codec and the echo
# benchmark's HTTP/1.1 parser, the conformance bridge's requests, rnsc x's rnx messages) with clang
# -fsanitize=fuzzer,address,undefined and
# runs each for SECONDS (default 60) on a scratch copy of its seed corpus, so
# the corpus in the source tree never changes. Exits non-zero if any target
# crashes, leaks, hits undefined behaviour or times out; crash inputs are kept
# in $RNSC_FUZZ_ARTIFACTS (default ./fuzz-artifacts) because the scratch
# directory is removed on exit.
#
# Usage: tests/fuzz/run.sh [SECONDS]      (CLANG=clang-14 to pick a compiler;
#        RNSC_FUZZ_TARGETS="packet ifac" to run a subset)
set -eu

secs=${1:-60}
case $secs in
'' | *[!0-9]*)
	echo "usage: $0 [seconds]" >&2
	exit 2
	;;
esac

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cc=${CLANG:-clang}
artifacts=${RNSC_FUZZ_ARTIFACTS:-$PWD/fuzz-artifacts}
work=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# UB must stop the run, not scroll past in the log.
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export UBSAN_OPTIONS

# Every target links one archive of the core (src/lib), the HDLC/KISS framing (src/framing)
# and the OpenSSL crypto plugin (compiled in for the targets that need a context and crypto,
# fuzz_wire.h), built once with the fuzzing flags: the linker takes only the objects a
# target needs, so no target keeps a list of core modules that could fall behind the core.
# sources() names what a target adds beyond it.
rtcfg="cfgfile cfg_scan cfg_parse cfg_access cfg_interp cfg_convert cfg_settings cfg_locate store"
rt() { for m in "$@"; do printf '%s ' "$top/src/runtime/$m.c"; done; }
sources() {
	case $1 in
	rnode) echo "$top/plugins/iface/rnode_proto.c" ;; # the rnode plugin's host protocol
	shlex) echo "$top/plugins/iface/shlex.c" ;;       # the PipeInterface command splitter
	known) rt known_file ;;                           # the persistence file parsers
	pathfile) rt path_file ;;
	tunnels) rt tunnel_file path_file ;; # storage/tunnels: its records are the path table's
	config) rt $rtcfg ;;                 # the runtime's config reader
	auto) echo "$top/plugins/iface/auto_disc.c" ;; # AutoInterface's discovery check
	ws) echo "$top/plugins/iface/ws_codec.c" ;;    # the WebSocket frame and handshake codec
	ws_session)
		# The WebSocket plugin itself (the target includes websocket.c) on the stream engine.
		echo "$top/plugins/iface/stream.c $top/plugins/iface/txq.c $top/plugins/iface/tls_io.c $top/plugins/iface/ws_codec.c"
		;;
	wire_codec) echo "-I$top/bench/driver" ;; # the benchmark wire driver's codec (header-only)
	rpc) rt rpc status_json store ;;          # the shared-instance RPC and status JSON
	rsg)
		# rnsc id's signature envelopes, base32/base64 decoders and -E metadata.
		rt $rtcfg strfmt
		echo "-I$top/src/cli $top/src/cli/cmd_id_crypt.c $top/src/cli/cmd_id_meta.c"
		;;
	x) echo "-I$top/src/cli $top/src/cli/x_wire.c" ;; # rnx's request data and result
	remote_mgmt) rt remote_mgmt_msg ;;               # remote management's request data
	echo_http) echo "-I$top/bench/echo $top/bench/echo/echo_http.c" ;; # the echo HTTP parser
	bridge)
		# rnsc-conformance-bridge's request handling (primitive and behavioral commands; the
		# wire_* table is not plugged in), the runtime's config reader and interface policy
		# for config_parse_interface.
		rt $rtcfg node_policy
		echo "-I$top/src/bridge $top/src/bridge/bridge.c $top/src/bridge/bridge_prim.c $top/src/bridge/bridge_beh.c"
		;;
	esac
}
cflags="-std=gnu11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -I$top/include/rnsc -I$top/src/lib -I$top/src/runtime -I$top/plugins/crypto -I$top/plugins/iface"
libs="-ljansson -lssl -lcrypto -lbz2 -lm -lpthread"
jobs=${RNSC_FUZZ_JOBS:-2}

# The archive: each object compiled in $jobs lanes, a failure named.
mkdir "$work/core"
# shellcheck disable=SC2086 # cflags is meant to split
if ! ls "$top"/src/lib/*.c "$top"/src/framing/*.c "$top/plugins/crypto/openssl/openssl.c" |
	xargs -P "$jobs" -I{} sh -c 'o="$1/core/$(basename "$2" .c).o"; exec "$3" $4 -c "$2" -o "$o"' _ "$work" {} "$cc" "$cflags"; then
	echo "fuzz: the core archive did not build"
	exit 1
fi
ar rcs "$work/libfuzzcore.a" "$work"/core/*.o

# One target: build, fuzz, report (its output goes to a file so lanes do not interleave).
run_target() {
	t=$1
	exe=$work/fuzz_$t
	# shellcheck disable=SC2046 # the source list is meant to split
	# shellcheck disable=SC2046,SC2086 # the source list and flags are meant to split
	if ! "$cc" $cflags -fsanitize=fuzzer "$here/fuzz_$t.c" $(sources "$t") \
		"$work/libfuzzcore.a" $libs -o "$exe"; then
		echo "fuzz_$t: BUILD FAILED"
		return 1
	fi
	cp -R "$here/corpus/fuzz_$t" "$work/corpus_$t"
	mkdir "$work/art_$t"
	if "$exe" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$work/art_$t/" "$work/corpus_$t" >"$work/log_$t" 2>&1; then
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log_$t" | tail -n 1)
		echo "fuzz_$t: ok, ${execs:-?} execs in ${secs}s"
	else
		echo "fuzz_$t: FAILED (log tail follows)"
		tail -n 40 "$work/log_$t"
		mkdir -p "$artifacts"
		cp "$work/art_$t"/* "$artifacts/" 2>/dev/null || true
		echo "fuzz_$t: crash inputs copied to $artifacts"
		return 1
	fi
	return 0
}

# Targets run in RNSC_FUZZ_JOBS lanes (default 2: one per core on the CI machines), each
# lane sequential; the reports are printed in target order at the end.
targets="${RNSC_FUZZ_TARGETS:-hdlc kiss msgpack packet announce proof ifac config transport link known pathfile tunnels shlex auto ws ws_session resource wire_codec request stream rpc echo_http blackhole remote_mgmt rsg rnode bridge x discovery ratchet}"
lane=0
while [ "$lane" -lt "$jobs" ]; do
	(
		i=0
		for t in $targets; do
			if [ $((i % jobs)) -eq "$lane" ]; then
				if run_target "$t" >"$work/out_$t" 2>&1; then echo 0 >"$work/rc_$t"; else echo 1 >"$work/rc_$t"; fi
			fi
			i=$((i + 1))
		done
	) &
	lane=$((lane + 1))
done
wait
status=0
for t in $targets; do
	cat "$work/out_$t" 2>/dev/null
	[ "$(cat "$work/rc_$t" 2>/dev/null)" = 0 ] || status=1
done
exit $status
