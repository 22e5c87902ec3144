/* SPDX-License-Identifier: MIT */
#include "bench_iface.h"

#include <stdio.h>
#include <string.h>

#include "scenario_abi.h"

static const bench_iface IFACES[] = {
	{"backbone", "Backbone (loopback TCP), the scenario's own policy", 1, 1, 1, NULL},
	{"tcp", "TCPServerInterface / TCPClientInterface on 127.0.0.1", 1, 1, 0, NULL},
	{"udp", "UDPInterface, one 127.0.0.1 port per direction", 2, 1, 0, NULL},
	{"local",
	 "local shared instance: the responder is the shared instance (TCP on "
	 "127.0.0.1), the initiator its client",
	 2, 1, 0, NULL},
	{"pipe",
	 "PipeInterface both sides, joined by a byte relay over 127.0.0.1 TCP "
	 "(bench/participants/pipe_relay.py)",
	 1, 1, 0, NULL},
	{"tls",
	 "TLSServerInterface / TLSClientInterface on 127.0.0.1 (TLS 1.3, self-signed "
	 "certificate, pinned)",
	 1, 0, 0, NULL},
	{"websocket", "WebSocketServerInterface / WebSocketClientInterface (ws://127.0.0.1)", 1, 0,
	 0, NULL},
	/* Listed so their cells appear in the report with why, instead of disappearing. */
	{"auto", "AutoInterface (IPv6 link-local multicast discovery)", 0, 1, 0,
	 "AutoInterface peers over IPv6 link-local multicast on a real adapter (loopback has no "
	 "link-local address, and both ends in one host share one address, so each drops the "
	 "other's announcements as its own): it needs two network namespaces joined by a veth "
	 "pair, which this runner does not set up yet"},
	{"serial", "SerialInterface / KISSInterface over a pty pair", 0, 1, 0,
	 "SerialInterface and KISSInterface need a serial line between the two ends: a pty pair "
	 "joined by a byte relay, which this runner does not set up yet (no socat on this "
	 "machine)"},
	{"rnode", "RNodeInterface against the RNode simulator", 0, 1, 0,
	 "RNodeInterface needs an RNode: the simulator (tests/rnode_sim.py, one pty and one UDP "
	 "'air' port per radio, with LoRa time-on-air) is not started per cell by this runner "
	 "yet, and at a LoRa air rate a cell would carry a few packets a second, a radio's "
	 "figure that belongs in its own report, not this grid"},
};
#define N_IFACES (sizeof(IFACES) / sizeof(IFACES[0]))

const bench_iface *bench_iface_find(const char *name)
{
	for (size_t i = 0; i < N_IFACES; i++)
		if (!strcmp(IFACES[i].name, name))
			return &IFACES[i];
	return NULL;
}

const bench_iface *bench_iface_at(size_t i)
{
	return i < N_IFACES ? &IFACES[i] : NULL;
}

#define PUT(buf, cap, ...) (snprintf(buf, cap, __VA_ARGS__) >= (int)(cap) ? -1 : 0)

int bench_iface_config(const bench_iface *f, int role, const int *ports, const bench_iface_env *env,
		       char *reticulum, size_t rcap, char *interfaces, size_t icap)
{
	int srv = role == RNSC_SCENARIO_ROLE_RESPONDER;
	if (rcap)
		reticulum[0] = '\0';
	if (!strcmp(f->name, "tcp"))
		return srv ? PUT(interfaces, icap,
				 "[interfaces]\n  [[bench server]]\n    type = TCPServerInterface\n"
				 "    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %d\n",
				 ports[0])
			   : PUT(interfaces, icap,
				 "[interfaces]\n  [[bench client]]\n    type = TCPClientInterface\n"
				 "    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %d\n",
				 ports[0]);
	if (!strcmp(f->name, "udp"))
		return PUT(
			interfaces, icap,
			"[interfaces]\n  [[bench udp]]\n    type = UDPInterface\n    enabled = yes\n"
			"    listen_ip = 127.0.0.1\n    listen_port = %d\n"
			"    forward_ip = 127.0.0.1\n    forward_port = %d\n",
			ports[srv ? 0 : 1], ports[srv ? 1 : 0]);
	if (!strcmp(f->name, "local")) {
		/* The first to bind the port becomes the shared instance: the responder starts
		 * first and answers "ready" only once it is up. */
		if (PUT(reticulum, rcap,
			"  share_instance = Yes\n  shared_instance_type = tcp\n"
			"  shared_instance_port = %d\n  instance_control_port = %d\n",
			ports[0], ports[1]))
			return -1;
		return PUT(interfaces, icap, "[interfaces]\n");
	}
	if (!strcmp(f->name, "pipe"))
		return PUT(interfaces, icap,
			   "[interfaces]\n  [[bench pipe]]\n    type = PipeInterface\n"
			   "    enabled = yes\n    command = %s %s %s 127.0.0.1 %d\n"
			   "    respawn_delay = 1\n",
			   env->python, env->helper, srv ? "listen" : "connect", ports[0]);
	if (!strcmp(f->name, "tls")) {
		if (!env->tls_cert || !env->tls_key || !env->tls_pin)
			return -1;
		return srv ? PUT(interfaces, icap,
				 "[interfaces]\n  [[bench server]]\n    type = TLSServerInterface\n"
				 "    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %d\n"
				 "    certificate = %s\n    private_key = %s\n",
				 ports[0], env->tls_cert, env->tls_key)
			   : PUT(interfaces, icap,
				 "[interfaces]\n  [[bench client]]\n    type = TLSClientInterface\n"
				 "    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %d\n"
				 "    pinned_sha256 = %s\n",
				 ports[0], env->tls_pin);
	}
	if (!strcmp(f->name, "websocket"))
		return srv ? PUT(interfaces, icap,
				 "[interfaces]\n  [[bench server]]\n    type = WebSocketServerInterface\n"
				 "    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %d\n",
				 ports[0])
			   : PUT(interfaces, icap,
				 "[interfaces]\n  [[bench client]]\n    type = WebSocketClientInterface\n"
				 "    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %d\n",
				 ports[0]);
	return -1;
}
