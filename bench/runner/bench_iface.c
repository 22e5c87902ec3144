/* SPDX-License-Identifier: MIT */
#include "bench_iface.h"

#include <stdio.h>
#include <string.h>

#include "scenario_abi.h"

static const bench_iface IFACES[] = {
	{"backbone", "Backbone (loopback TCP), the scenario's own policy", 1, 1, 1, NULL,
	 BENCH_CARRIER_NONE, 0},
	{"tcp", "TCPServerInterface / TCPClientInterface on 127.0.0.1", 1, 1, 0, NULL,
	 BENCH_CARRIER_NONE, 0},
	{"udp", "UDPInterface, one 127.0.0.1 port per direction", 2, 1, 0, NULL, BENCH_CARRIER_NONE,
	 0},
	{"local",
	 "local shared instance: the responder is the shared instance (TCP on "
	 "127.0.0.1), the initiator its client",
	 2, 1, 0, NULL, BENCH_CARRIER_NONE, 0},
	{"pipe",
	 "PipeInterface both sides, joined by a byte relay over 127.0.0.1 TCP "
	 "(bench/participants/pipe_relay.py)",
	 1, 1, 0, NULL, BENCH_CARRIER_NONE, 0},
	{"tls",
	 "TLSServerInterface / TLSClientInterface on 127.0.0.1 (TLS 1.3, self-signed "
	 "certificate, pinned)",
	 1, 0, 0, NULL, BENCH_CARRIER_NONE, 0},
	{"websocket", "WebSocketServerInterface / WebSocketClientInterface (ws://127.0.0.1)", 1, 0,
	 0, NULL, BENCH_CARRIER_NONE, 0},
	{"auto",
	 "AutoInterface (IPv6 link-local multicast discovery) over a veth pair between two "
	 "network namespaces, one end in each",
	 0, 1, 0, NULL, BENCH_CARRIER_NETNS, 0},
	{"serial",
	 "SerialInterface (HDLC framing) both sides, 921600 baud, over two ptys joined back to "
	 "back (bench/participants/pty_pair.py)",
	 0, 1, 0, NULL, BENCH_CARRIER_PTY, 0},
	{"kiss",
	 "KISSInterface both sides (each the other's TNC), 921600 baud, over two ptys joined "
	 "back to back (bench/participants/pty_pair.py)",
	 0, 1, 0, NULL, BENCH_CARRIER_PTY, 0},
	{"rnode",
	 "RNodeInterface both sides, each on its own simulated RNode (tests/common/rnode_sim.py) on one "
	 "simulated LoRa channel: 2.4 GHz, 1625 kHz, SF5, CR 4/5 (the fastest parameters "
	 "RNodeInterface accepts, 203 kbit/s raw, at least 24 ms of preamble per LoRa frame)",
	 2, 1, 0, NULL, BENCH_CARRIER_RNODE, 30},
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
	const char *dev = env->dev[srv ? 0 : 1];
	if (f->carrier != BENCH_CARRIER_NONE && !dev)
		return -1;
	if (!strcmp(f->name, "auto"))
		return PUT(interfaces, icap,
			   "[interfaces]\n  [[bench auto]]\n    type = AutoInterface\n"
			   "    enabled = yes\n    devices = %s\n",
			   dev);
	if (!strcmp(f->name, "serial") || !strcmp(f->name, "kiss"))
		return PUT(interfaces, icap,
			   "[interfaces]\n  [[bench serial]]\n    type = %s\n    enabled = yes\n"
			   "    port = %s\n    speed = 921600\n",
			   f->name[0] == 's' ? "SerialInterface" : "KISSInterface", dev);
	if (!strcmp(f->name, "rnode"))
		return PUT(interfaces, icap,
			   "[interfaces]\n  [[bench rnode]]\n    type = RNodeInterface\n"
			   "    enabled = yes\n    port = %s\n    frequency = 2400000000\n"
			   "    bandwidth = 1625000\n    txpower = 7\n    spreadingfactor = 5\n"
			   "    codingrate = 5\n",
			   dev);
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
