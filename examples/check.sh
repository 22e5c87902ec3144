#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs a configured rnsc build tree into a scratch DESTDIR, checks what the install
# holds (public headers, rnsc.pc, plugins without libtool archives, no test-only plugin,
# man pages, the systemd unit), builds examples/ against it with pkg-config only, and runs
# them: the example plugin loads in the installed rnsc, and the example program announces a
# destination through an installed `rnsc daemon` that the installed `rnsc probe` reaches.
# The installed rnsc must never pick up the build tree's plugins.
#
#   examples/check.sh BUILD_DIR
set -euo pipefail
B=$(cd "${1:?usage: examples/check.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "examples/check: FAIL: $*"; [ -f "$tmp/daemon.log" ] && tail -20 "$tmp/daemon.log"; exit 1; }
ok() { echo "examples/check: ok: $*"; }

D=$tmp/dest
make -s -C "$B" install DESTDIR="$D" >"$tmp/install.log" 2>&1 || { tail -20 "$tmp/install.log"; fail "make install"; }
prefix=$(sed -n 's/^prefix=//p' "$B/rnsc.pc")
libdir=$(PKG_CONFIG_PATH="$B" pkg-config --variable=libdir rnsc)
plugindir=$(PKG_CONFIG_PATH="$B" pkg-config --variable=plugindir rnsc)
inc=$D$prefix/include/rnsc

for h in plugin_abi.h crypto_abi.h iface_abi.h scenario_abi.h err.h export.h transport.h loop.h; do
  [ -f "$inc/$h" ] || fail "header rnsc/$h not installed"
done
[ -f "$D$libdir/pkgconfig/rnsc.pc" ] || fail "rnsc.pc not installed"
ls "$D$plugindir"/*.so >/dev/null 2>&1 || fail "no plugin installed in $plugindir"
! ls "$D$plugindir"/*.la >/dev/null 2>&1 || fail "libtool archives installed beside the plugins"
[ ! -e "$D$plugindir/lossy.so" ] || fail "the test-only lossy plugin is installed"
for m in rnsc rnsc-daemon rnsc-status rnsc-path rnsc-probe rnsc-cp rnsc-id; do
  [ -s "$D$prefix/share/man/man1/$m.1" ] || fail "man page $m.1 not installed"
done
[ -f "$D$prefix/lib/systemd/system/rnsc.service" ] || fail "systemd unit not installed"
grep -q "^ExecStart=$prefix/bin/rnsc daemon" "$D$prefix/lib/systemd/system/rnsc.service" ||
  fail "the unit does not start the installed rnsc"
# Every installed header compiles on its own with only the installed tree on the path.
for h in "$inc"/*.h; do
  printf '#include <rnsc/%s>\nint main(void) { return 0; }\n' "$(basename "$h")" >"$tmp/h.c"
  cc -std=c11 -Wall -Wextra -Werror -I"$D$prefix/include" -c "$tmp/h.c" -o "$tmp/h.o" ||
    fail "rnsc/$(basename "$h") does not compile on its own"
done
ok "install holds headers, rnsc.pc, $(ls "$D$plugindir" | wc -l) plugins (no .la, no lossy), man pages, unit"

# The examples, out of tree, with pkg-config alone (the sysroot maps the DESTDIR).
cp -r "$here" "$tmp/examples"
export PKG_CONFIG_PATH=$D$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
make -s -C "$tmp/examples" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "building examples/ with pkg-config"; }
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
ok "examples/ built against the installed tree with pkg-config --cflags --libs rnsc"

export LD_LIBRARY_PATH=$D$libdir
rnsc=$D$prefix/bin/rnsc
# Without RNSC_PLUGIN_PATH the installed rnsc searches only its own plugin folder (which
# lies under DESTDIR here, so it finds none): never the build tree.
out=$(env -u RNSC_PLUGIN_PATH "$rnsc" plugins 2>&1 || true)
! grep -q "$B" <<<"$out" || fail "the installed rnsc loaded plugins from the build tree: $out"
ok "the installed rnsc does not look in the build tree"
export RNSC_PLUGIN_PATH=$D$plugindir:$tmp/examples/iface-null
"$rnsc" plugins | grep -E '^example-null +iface .* ok ' >/dev/null || { "$rnsc" plugins; fail "example plugin not loaded"; }
ok "the example plugin loads in the installed rnsc"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$tmp/cfg"
cat >"$tmp/cfg/config" <<CFG
[reticulum]
  enable_transport = yes
  share_instance = yes
  instance_name = examples-check-$$
[logging]
  loglevel = 4
[interfaces]
  [[Example Server]]
    type = TCPServerInterface
    enabled = yes
    listen_ip = 127.0.0.1
    listen_port = $port
  [[Sink]]
    type = ExampleNullInterface
    enabled = yes
    bitrate = 250000
CFG
"$rnsc" daemon --config "$tmp/cfg" >"$tmp/daemon.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$port" 2>/dev/null && break
  sleep 0.1
done
"$rnsc" status --config "$tmp/cfg" 2>&1 | grep -q 'ExampleNullInterface\[Sink\]' ||
  { "$rnsc" status --config "$tmp/cfg"; fail "the daemon does not show the example interface"; }
ok "the installed rnsc daemon runs the example interface"

RNSC_PLUGIN_PATH=$D$plugindir "$tmp/examples/echo/rnsc-example-echo" 127.0.0.1 "$port" 60 >"$tmp/echo.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q '^rnsc_example.echo ' "$tmp/echo.log" && break; sleep 0.1; done
hash=$(awk '/^rnsc_example.echo / {print $2}' "$tmp/echo.log")
[ -n "$hash" ] || { cat "$tmp/echo.log"; fail "the example program did not start"; }
"$rnsc" probe --config "$tmp/cfg" -n 2 -t 15 rnsc_example.echo "$hash" >"$tmp/probe.log" 2>&1 ||
  { cat "$tmp/probe.log" "$tmp/echo.log"; fail "rnsc probe did not reach the example program"; }
grep -q 'received .* proved' "$tmp/echo.log" || { cat "$tmp/echo.log"; fail "the example saw no packet"; }
ok "the example program announced through the daemon and answered 2 probes ($(grep -c received "$tmp/echo.log") packets)"
echo "examples/check: all passed"
