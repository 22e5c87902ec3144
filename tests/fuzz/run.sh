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

# The packet, announce, proof and IFAC targets need a context and crypto: the
# core modules plus the OpenSSL crypto plugin compiled in (fuzz_wire.h).
core="err ctx crypto token identity destination msgpack packet announce proof pathreq linkfmt ifac"
# A core module's source: the HDLC/KISS framing lives in src/framing, the rest in src/lib.
libsrc() { case $1 in hdlc | kiss) echo "$top/src/framing/$1.c" ;; *) echo "$top/src/lib/$1.c" ;; esac; }
# Every core module and the framing codecs.
allcore() { echo "$top"/src/lib/*.c "$top"/src/framing/*.c; }
sources() {
	case $1 in
	hdlc | kiss | msgpack)
		# Only the codec itself and err.c: these targets need no rnsc_ctx.
		echo "$(libsrc "$1") $top/src/lib/err.c"
		;;
	rnode)
		# The RNode host protocol (the rnode plugin's) on the KISS decoder.
		echo "$top/plugins/iface/rnode_proto.c $top/src/framing/kiss.c $top/src/lib/err.c"
		;;
	shlex)
		# The PipeInterface command splitter (compiled into the pipe plugin).
		echo "$top/plugins/iface/shlex.c $top/src/lib/err.c"
		;;
	known | pathfile)
		# The persistence file parsers: msgpack and err.c, no crypto needed.
		f=known_file; [ "$1" = pathfile ] && f=path_file
		echo "$top/src/runtime/$f.c $top/src/lib/msgpack.c $top/src/lib/err.c -lm"
		;;
	tunnels)
		# storage/tunnels: its records are the path table's.
		echo "$top/src/runtime/tunnel_file.c $top/src/runtime/path_file.c $top/src/lib/msgpack.c $top/src/lib/err.c -lm"
		;;
	config)
		# The runtime's config reader: its sources, the ctx allocator and err.c.
		for m in cfgfile cfg_scan cfg_parse cfg_access cfg_interp cfg_convert cfg_settings cfg_locate; do printf '%s ' "$top/src/runtime/$m.c"; done
		echo "$top/src/runtime/store.c $top/src/lib/ctx.c $top/src/lib/err.c -lpthread"
		;;
	link)
		# The link state machine and Channel on top of every wire-format module, with the OpenSSL
		# crypto plugin compiled in (fuzz_wire.h).
		for m in $core link channel linkport; do printf '%s ' "$(libsrc "$m")"; done
		echo "$top/plugins/crypto/openssl/openssl.c -lcrypto"
		;;
	request | stream)
		# Requests / the Buffer's stream messages (request.h, buffer.h) on the link layer
		# they sit on, OpenSSL compiled in (fuzz_wire.h), libbz2 for stream messages.
		for m in $core link channel linkport request buffer; do printf '%s ' "$(libsrc "$m")"; done
		echo "$top/plugins/crypto/openssl/openssl.c -lcrypto -lbz2 -lm"
		;;
	auto)
		# AutoInterface's discovery check and duplicate filter; libcrypto for SHA-256.
		echo "$top/plugins/iface/auto_disc.c -lcrypto"
		;;
	ws)
		# The WebSocket plugin's frame and handshake codec; libcrypto for SHA-1/base64.
		echo "-I$top/plugins/iface $top/plugins/iface/ws_codec.c -lcrypto"
		;;
	ws_session)
		# The WebSocket plugin itself (it includes websocket.c) on the stream engine.
		echo "-I$top/plugins/iface $top/plugins/iface/stream.c $top/plugins/iface/txq.c $top/plugins/iface/tls_io.c $top/plugins/iface/ws_codec.c -lssl -lcrypto"
		;;
	wire_codec)
		# The benchmark wire driver's framing and header view, checked against the core's HDLC.
		echo "-I$top/bench/driver $top/src/framing/hdlc.c $top/src/lib/err.c"
		;;
	rpc)
		# The shared-instance RPC and the status JSON renderer, with the OpenSSL crypto
		# plugin compiled in (fuzz_wire.h) for HMAC-SHA256 and randomness.
		for m in $core; do printf '%s ' "$(libsrc "$m")"; done
		echo "$top/src/runtime/rpc.c $top/src/runtime/status_json.c $top/src/runtime/store.c $top/plugins/crypto/openssl/openssl.c -lcrypto -lm"
		;;
	rsg)
		# rnsc id's signature envelopes, base32/base64 decoders and -E metadata
		# (src/cli/cmd_id_crypt.c, cmd_id_meta.c), with the store for its file helpers, the
		# config reader, and the OpenSSL crypto plugin compiled in.
		for m in $core; do printf '%s ' "$(libsrc "$m")"; done
		for m in cfgfile cfg_scan cfg_parse cfg_access cfg_interp cfg_convert cfg_settings cfg_locate; do printf '%s ' "$top/src/runtime/$m.c"; done
		echo "-I$top/src/cli $top/src/cli/cmd_id_crypt.c $top/src/cli/cmd_id_meta.c $top/src/runtime/strfmt.c $top/src/runtime/store.c $top/plugins/crypto/openssl/openssl.c -lcrypto -lm -lpthread"
		;;
	x)
		# rnx's request data and result as rnsc x reads them (src/cli/x_wire.c).
		echo "-I$top/src/cli $top/src/cli/x_wire.c $top/src/lib/msgpack.c $top/src/lib/err.c -lm"
		;;
	remote_mgmt)
		# Remote management's request data and table filter (src/runtime/remote_mgmt_msg.c).
		for m in $core; do printf '%s ' "$(libsrc "$m")"; done
		echo "$top/src/runtime/remote_mgmt_msg.c $top/plugins/crypto/openssl/openssl.c -lcrypto"
		;;
	echo_http)
		# The echo benchmark's HTTP/1.1 parser (bench/echo/echo_http.c): no dependencies.
		echo "-I$top/bench/echo $top/bench/echo/echo_http.c"
		;;
	transport | blackhole)
		# The transport engine: the whole core (every src/lib module, so a new transport
		# file needs no edit here), with the OpenSSL crypto plugin compiled in (fuzz_wire.h).
		echo "$(allcore) $top/plugins/crypto/openssl/openssl.c -lcrypto -lbz2 -lm"
		;;
	bridge)
		# rnsc-conformance-bridge's request handling (primitive and behavioral commands; the
		# wire_* table is not plugged in) on the whole core, the runtime's config reader and
		# interface policy for config_parse_interface, jansson, libbz2, and the OpenSSL
		# crypto plugin compiled in (fuzz_wire.h).
		for m in cfgfile cfg_scan cfg_parse cfg_access cfg_interp cfg_convert cfg_settings cfg_locate store node_policy; do printf '%s ' "$top/src/runtime/$m.c"; done
		echo "$(allcore) -I$top/src/bridge $top/src/bridge/bridge.c $top/src/bridge/bridge_prim.c $top/src/bridge/bridge_beh.c $top/plugins/crypto/openssl/openssl.c -ljansson -lcrypto -lbz2 -lm -lpthread"
		;;
	ratchet)
		# The two ratchet file layouts (ratchet_file.h), OpenSSL compiled in for signatures.
		for m in $core ratchet_file; do printf '%s ' "$(libsrc "$m")"; done
		echo "$top/plugins/crypto/openssl/openssl.c -lcrypto"
		;;
	resource)
		# Resource advertisements and a receiving resource, with bzip2 and the OpenSSL
		# crypto plugin compiled in (fuzz_wire.h).
		for m in $core resource resource_adv; do printf '%s ' "$(libsrc "$m")"; done
		echo "$top/plugins/crypto/openssl/openssl.c -lcrypto -lbz2 -lm"
		;;
	discovery)
		# Interface discovery announces: the stamper, the parser and record writer, the core
		# and the OpenSSL crypto plugin compiled in (fuzz_wire.h).
		for m in $core stamper discovery; do printf '%s ' "$(libsrc "$m")"; done
		echo "$top/plugins/crypto/openssl/openssl.c -lcrypto"
		;;
	*)
		for m in $core; do printf '%s ' "$(libsrc "$m")"; done
		echo "$top/plugins/crypto/openssl/openssl.c -lcrypto"
		;;
	esac
}

# One target: build, fuzz, report (its output goes to a file so lanes do not interleave).
run_target() {
	t=$1
	exe=$work/fuzz_$t
	# shellcheck disable=SC2046 # the source list is meant to split
	if ! "$cc" -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -I"$top/include/rnsc" -I"$top/src/lib" -I"$top/src/runtime" -I"$top/plugins/crypto" -I"$top/plugins/iface" \
		"$here/fuzz_$t.c" $(sources "$t") -o "$exe"; then
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
jobs=${RNSC_FUZZ_JOBS:-2}
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
