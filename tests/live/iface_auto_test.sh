#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# AutoInterface live test in network namespaces (needs root and iproute2; fails, never
# skips, without them). Each scenario gets two fresh namespaces joined by a veth pair
# with IPv6 DAD off, so link-local addresses are usable at once:
#
#   1. rnsc drives  <-> the reference's AutoInterface echoes (tests/live/iface_auto_peer.py)
#   2. the reference drives <-> rnsc echoes
#   3. rnsc drives  <-> rnsc echoes
#   4, 5. two veth pairs between the namespaces: rnsc finds a peer per adapter and
#      reaches the reference (4) or rnsc (5) through each
#   7. rnsc <-> rnsc, then the echoing side's link-local address is replaced: the
#      driver must discover it at the new address and exchange frames with it
#   6. `rnsc daemon` and the reference's rnsd, each with an AutoInterface: each
#      learns the other's probe destination (1 hop via the peer child), and the
#      reference's rnprobe gets a reply from rnsc's probe responder
#
# The driver waits for discovery, sends frames of 20..1212 bytes and checks their echoes
# byte-exact (so both directions are checked); the reference as driver also checks that
# rnsc drops a frame that arrives twice within 0.75 s (the multi-interface filter) but
# not one resent later. Then the echoing process is killed and the driver must see its
# peer time out (22 s peering timeout, 4 s job interval).
# Plus config errors (a missing device, a device without link-local address, a bad
# scope). Names carry the PID so parallel runs never collide; a trap removes the
# namespaces. The scenarios run in parallel; every wait is bounded.
set -u
. "$(dirname "$0")/../common/lib.sh"
NODE="$B/tests/live/iface_auto_node"
PEER="$S/tests/live/iface_auto_peer.py"
ID=$$
W=$(mktemp -d "${TMPDIR:-/tmp}/rnsc-auto.XXXXXX")
NSLIST=""
for t in r2p p2r r2r mr2p mr2r dmn chg err; do NSLIST="$NSLIST rnsc-$t-$ID-a rnsc-$t-$ID-b"; done

cleanup() {
	for p in $(jobs -p); do kill "$p" 2>/dev/null; done
	for ns in $NSLIST; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

die() { echo "FAIL $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "the AutoInterface test needs root (network namespaces)"
command -v ip >/dev/null || die "iproute2 (ip) is not installed"
[ -x "$NODE" ] || die "$NODE is not built"
[ -x "$B/src/cli/rnsc" ] || die "$B/src/cli/rnsc is not built"
[ -x "$PY" ] || die "no python in the venv $VENV"

# mkpair TAG [2]: namespaces rnsc-TAG-ID-a/-b joined by veth a<TAG><ID> / b<TAG><ID>
# (and with 2 a second pair c<TAG><ID> / d<TAG><ID>).
mkpair() {
	local t=$1 a="rnsc-$1-$ID-a" b="rnsc-$1-$ID-b" ns x y
	for ns in $a $b; do
		ip netns add "$ns" || return 1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0 || return 1
		ip -n "$ns" link set lo up || return 1
	done
	local pairs="a:b"
	[ "${2:-1}" = 2 ] && pairs="a:b c:d"
	for xy in $pairs; do
		x=${xy%:*} y=${xy#*:}
		ip link add "$x$t$ID" netns "$a" type veth peer name "$y$t$ID" netns "$b" || return 1
		ip -n "$a" link set "$x$t$ID" up && ip -n "$b" link set "$y$t$ID" up || return 1
	done
	# the link-local addresses appear once the link is up; wait for them, not tentative
	for xy in $pairs; do
		x=${xy%:*} y=${xy#*:}
		for _ in $(seq 101); do
			if ip -n "$a" -6 addr show dev "$x$t$ID" scope link | grep -q 'inet6 fe80' &&
				ip -n "$b" -6 addr show dev "$y$t$ID" scope link | grep -q 'inet6 fe80' &&
				! ip -n "$a" -6 addr show dev "$x$t$ID" | grep -q tentative &&
				! ip -n "$b" -6 addr show dev "$y$t$ID" | grep -q tentative; then
				break
			fi
			sleep 0.1
		done
		ip -n "$a" -6 addr show dev "$x$t$ID" scope link | grep -q 'inet6 fe80' || {
			echo "link-local addresses did not appear on the veth pair $x$t" >&2
			return 1
		}
	done
	return 0
}

# side KIND ROLE TAG NS DEV: the command line of one end.
side() {
	if [ "$1" = rnsc ]; then
		echo ip netns exec "$4" "$NODE" "$2" "$5"
	else
		echo ip netns exec "$4" "$PY" "$PEER" "$2" "$5"
	fi
}

# scenario TAG DRIVER ECHOER: prints one ok/FAIL line, returns 0 on success.
scenario() {
	local t=$1 drv=$2 ech=$3 a="rnsc-$1-$ID-a" b="rnsc-$1-$ID-b"
	local dout="$W/$t.drive" eout="$W/$t.echo" dpid epid
	if ! mkpair "$t" 2>"$W/$t.setup"; then
		echo "FAIL $t: namespace set-up"; cat "$W/$t.setup"; return 1
	fi
	$(side "$ech" echo "$t" "$b" "b$t$ID") >"$eout" 2>"$eout.err" &
	epid=$!
	$(side "$drv" drive "$t" "$a" "a$t$ID") >"$dout" 2>"$dout.err" &
	dpid=$!
	# the echoer is killed once the driver needs it no more
	local until='^ECHO'
	[ "$drv" = ref ] && until='^\(DEDUP\|ECHO fail\)'
	for _ in $(seq 450); do
		grep -q "$until" "$dout" && break
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$epid" 2>/dev/null
	wait "$epid" 2>/dev/null
	for _ in $(seq 500); do
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$dpid" 2>/dev/null
	wait "$dpid"
	local rc=$?
	if [ $rc = 0 ] && grep -q '^PEER ' "$dout" && grep -q '^ECHO ok' "$dout" &&
		grep -q '^TIMEOUT ok' "$dout" && grep -q '^PEER ' "$eout" &&
		{ [ "$drv" = rnsc ] || grep -q '^DEDUP ok' "$dout"; }; then
		echo "ok   $t: $drv drives, $ech echoes: discovery, $(sed -n 's/^ECHO ok //p' "$dout") frames both ways byte-exact,$([ "$drv" = ref ] && echo " rnsc drops a doubled frame,") peer timeout"
		return 0
	fi
	echo "FAIL $t: $drv drives, $ech echoes (driver exit $rc)"
	sed 's/^/     driver: /' "$dout"; tail -20 "$dout.err" | sed 's/^/     driver err: /'
	sed 's/^/     echoer: /' "$eout"; tail -20 "$eout.err" | sed 's/^/     echoer err: /'
	return 1
}

# multi TAG ECHOER: two veth pairs; rnsc must find a peer on each adapter and reach
# each through its own child (scope ids per adapter).
multi() {
	local t=$1 ech=$2 a="rnsc-$1-$ID-a" b="rnsc-$1-$ID-b"
	local dout="$W/$t.drive" eout="$W/$t.echo" epid rc
	if ! mkpair "$t" 2 2>"$W/$t.setup"; then
		echo "FAIL $t: namespace set-up"; cat "$W/$t.setup"; return 1
	fi
	$(side "$ech" echo "$t" "$b" "b$t$ID,d$t$ID") >"$eout" 2>"$eout.err" &
	epid=$!
	timeout 60 ip netns exec "$a" "$NODE" multi "a$t$ID,c$t$ID" >"$dout" 2>"$dout.err"
	rc=$?
	kill -9 "$epid" 2>/dev/null
	wait "$epid" 2>/dev/null
	if [ $rc = 0 ] && grep -q '^MULTI ok' "$dout"; then
		echo "ok   $t: two adapters, rnsc <-> $ech: a peer on each, frames through each"
		return 0
	fi
	echo "FAIL $t: two adapters, rnsc <-> $ech (exit $rc)"
	sed 's/^/     rnsc: /' "$dout"; tail -20 "$dout.err" | sed 's/^/     rnsc err: /'
	sed 's/^/     echoer: /' "$eout"; tail -20 "$eout.err" | sed 's/^/     echoer err: /'
	return 1
}

# daemons TAG: rnsc daemon (a) and rnsd (b) over AutoInterface.
daemons() {
	local t=$1 a="rnsc-$1-$ID-a" b="rnsc-$1-$ID-b" d="$W/$1" rp=""
	if ! mkpair "$t" 2>"$W/$t.setup"; then
		echo "FAIL $t: namespace set-up"; cat "$W/$t.setup"; return 1
	fi
	mkdir -p "$d/A" "$d/B"
	printf '[reticulum]\n  enable_transport = yes\n  share_instance = no\n  respond_to_probes = yes\n[logging]\n  loglevel = 6\n[interfaces]\n  [[Auto]]\n    type = AutoInterface\n    enabled = yes\n    devices = a%s%s\n' \
		"$t" "$ID" >"$d/A/config"
	printf '[reticulum]\n  enable_transport = yes\n  share_instance = yes\n  instance_name = rnscauto%s\n  respond_to_probes = yes\n[logging]\n  loglevel = 6\n[interfaces]\n  [[Auto]]\n    type = AutoInterface\n    enabled = yes\n    devices = b%s%s\n' \
		"$ID" "$t" "$ID" >"$d/B/config"
	ip netns exec "$b" "$VENV/bin/rnsd" --config "$d/B" >"$d/rnsd.log" 2>&1 &
	ip netns exec "$a" "$B/src/cli/rnsc" daemon --config "$d/A" -vv >"$d/rnsc.log" 2>&1 &
	local rnsc_probe="" ref_probe="" ok=0
	for _ in $(seq 300); do
		rnsc_probe=$(sed -n 's/.*respond to probe requests on <\([0-9a-f]*\)>.*/\1/p' "$d/rnsc.log" | head -1)
		[ -f "$d/B/storage/transport_identity" ] && [ -n "$rnsc_probe" ] && break
		sleep 0.1
	done
	[ -f "$d/B/storage/transport_identity" ] &&
		ref_probe=$("$B/src/cli/rnsc" id -i "$d/B/storage/transport_identity" -H rnstransport.probe |
			sed -n 's/.*destination for this Identity is <\([0-9a-f]*\)>.*/\1/p')
	# the management announces go out about 15 s after start
	if [ ${#ref_probe} = 32 ] && [ ${#rnsc_probe} = 32 ]; then
		for _ in $(seq 450); do
			grep -qs "path to <$ref_probe> is 1 hop via AutoInterfacePeer\[" "$d/rnsc.log" &&
				grep -qs "<$rnsc_probe> is now 1 hops away .* on AutoInterfacePeer\[" "$d/rnsd.log" &&
				break
			sleep 0.1
		done
		if grep -qs "path to <$ref_probe> is 1 hop via AutoInterfacePeer\[" "$d/rnsc.log" &&
			timeout 40 ip netns exec "$b" "$VENV/bin/rnprobe" --config "$d/B" rnstransport.probe \
				"$rnsc_probe" -t 15 >"$d/rnprobe.out" 2>&1 &&
			grep -q "Valid reply from <$rnsc_probe>" "$d/rnprobe.out"; then
			ok=1
		fi
	fi
	ip netns pids "$a" | xargs -r kill 2>/dev/null
	ip netns pids "$b" | xargs -r kill 2>/dev/null
	if [ $ok = 1 ]; then
		echo "ok   $t: rnsc daemon <-> rnsd over AutoInterface: probe paths both ways, rnprobe answered by rnsc"
		return 0
	fi
	echo "FAIL $t: rnsc daemon <-> rnsd over AutoInterface (probes rnsc '$rnsc_probe' ref '$ref_probe')"
	tail -20 "$d/rnsc.log" | sed 's/^/     rnsc: /'; tail -20 "$d/rnsd.log" | sed 's/^/     rnsd: /'
	sed 's/^/     rnprobe: /' "$d/rnprobe.out" 2>/dev/null
	return 1
}

# readdr TAG: the echoer (rnsc, namespace b) gets a new link-local address mid-run.
readdr() {
	local t=$1 a="rnsc-$1-$ID-a" b="rnsc-$1-$ID-b" new=fe80::beef:$((ID % 9000 + 1000))
	local dout="$W/$t.drive" eout="$W/$t.echo" dpid epid rc
	if ! mkpair "$t" 2>"$W/$t.setup"; then
		echo "FAIL $t: namespace set-up"; cat "$W/$t.setup"; return 1
	fi
	ip netns exec "$b" "$NODE" echo "b$t$ID" >"$eout" 2>"$eout.err" &
	epid=$!
	ip netns exec "$a" "$NODE" readdr "a$t$ID" "$new" >"$dout" 2>"$dout.err" &
	dpid=$!
	for _ in $(seq 450); do
		grep -q '^ECHO' "$dout" && break
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.1
	done
	ip -n "$b" -6 addr flush dev "b$t$ID" scope link &&
		ip -n "$b" -6 addr add "$new/64" dev "b$t$ID" 2>>"$eout.err"
	for _ in $(seq 700); do
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$dpid" "$epid" 2>/dev/null
	wait "$dpid"
	rc=$?
	wait "$epid" 2>/dev/null
	if [ $rc = 0 ] && grep -q '^READDR ok' "$dout"; then
		echo "ok   $t: rnsc's new link-local address $new discovered and used"
		return 0
	fi
	echo "FAIL $t: address change (driver exit $rc)"
	sed 's/^/     driver: /' "$dout"; tail -20 "$dout.err" | sed 's/^/     driver err: /'
	sed 's/^/     echoer: /' "$eout"; tail -20 "$eout.err" | sed 's/^/     echoer err: /'
	return 1
}

# config errors, in a namespace of their own
errors() {
	if mkpair err 2>"$W/err.setup" &&
		ip netns exec "rnsc-err-$ID-a" "$NODE" errors "aerr$ID" >"$W/err.out" 2>&1 &&
		grep -q '^ERRORS ok' "$W/err.out"; then
		echo "ok   errors: missing device names section and option; no link-local or only ignored devices: offline; bad scope"
		return 0
	fi
	echo "FAIL errors"; cat "$W/err.setup" "$W/err.out" 2>/dev/null
	return 1
}

fail=0
scenario r2p rnsc ref >"$W/s1" & p1=$!
scenario p2r ref rnsc >"$W/s2" & p2=$!
scenario r2r rnsc rnsc >"$W/s3" & p3=$!
multi mr2p ref >"$W/s4" & p4=$!
multi mr2r rnsc >"$W/s5" & p5=$!
daemons dmn >"$W/s6" & p6=$!
errors >"$W/s7" & p7=$!
readdr chg >"$W/s8" & p8=$!
for p in $p1 $p2 $p3 $p4 $p5 $p6 $p7 $p8; do wait "$p" || fail=1; done
cat "$W/s1" "$W/s2" "$W/s3" "$W/s4" "$W/s5" "$W/s8" "$W/s6" "$W/s7"
exit $fail

