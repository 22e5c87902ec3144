/* SPDX-License-Identifier: MIT */
/*
 * The interface host with the "tcp" plugin over real sockets on 127.0.0.1: rnsc server
 * and client through the runtime, reconnects, malformed input, config errors and the
 * MTU policy, and interop with the pinned reference's own TCP interface classes
 * (tests/live/iface_tcp_peer.py run with the venv's python). Every wait is bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cu_run.h"
#include "hdlc.h"
#include "iface_test_util.h"

/* Same generator as tests/live/iface_tcp_peer.py. */
static const size_t LENGTHS[] = {20, 21, 64, 100, 500, 1000, 4096, 16383, 16400};
#define NFRAMES (sizeof(LENGTHS) / sizeof(LENGTHS[0]))

static size_t make_frame(unsigned i, uint8_t *out)
{
	return tu_make_frame(LENGTHS, i, out);
}

static rnsc_iface *open_server(const char *name, unsigned port, const char *extra)
{
	char opts[512];
	snprintf(opts, sizeof(opts), "    listen_ip = 127.0.0.1\n    listen_port = %u\n%s", port,
		 extra ? extra : "");
	return open_iface(name, "TCPServerInterface", opts);
}

static rnsc_iface *open_client(const char *name, unsigned port, const char *extra)
{
	char opts[512];
	snprintf(opts, sizeof(opts), "    target_host = 127.0.0.1\n    target_port = %u\n%s", port,
		 extra ? extra : "");
	return open_iface(name, "TCPClientInterface", opts);
}

/* Every rx frame i (0..NFRAMES) must appear exactly `times` times on iface. */
static int frames_match(rnsc_iface *iface, unsigned times)
{
	return tu_frames_match(make_frame, NFRAMES, 16400, iface, times);
}

/* ---- tests --------------------------------------------------------------------------- */

static void test_plugin_found(void)
{
	const rnsc_plugin_rec *r = rnsc_plugin_host_find_iface(P, "TCPServerInterface");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_STRING_EQUAL(r->desc->name, "tcp");
	CU_ASSERT_EQUAL(r->desc->kind, RNSC_PLUGIN_IFACE);
	CU_ASSERT_PTR_EQUAL(rnsc_plugin_host_find_iface(P, "TCPClientInterface"), r);
	CU_ASSERT_PTR_NULL(rnsc_plugin_host_find_iface(P, "UDPInterface"));
}

static void test_exchange(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv = open_server("srv", 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT(rnsc_iface_online(srv));
	unsigned port = port_of(srv);
	CU_ASSERT(port > 0);
	rnsc_iface *cli = open_client("cli", port, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
	CU_ASSERT_FATAL(run_until(is_online, cli, 5000));
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));
	rnsc_iface *child = last_child;
	CU_ASSERT_PTR_EQUAL(rnsc_iface_parent(child), srv);
	CU_ASSERT_STRING_EQUAL(rnsc_iface_name(child), "Client on srv");
	char d[128];
	rnsc_iface_describe(cli, d, sizeof(d));
	CU_ASSERT(strncmp(d, "TCPInterface[cli/127.0.0.1:", 27) == 0);

	static uint8_t f[16400];
	for (unsigned i = 0; i < NFRAMES; i++)
		CU_ASSERT_EQUAL(rnsc_iface_send(cli, f, make_frame(i, f)), 0);
	size_t want = NFRAMES;
	CU_ASSERT(run_until(have_rx, &want, 5000));
	CU_ASSERT(frames_match(child, 1));
	rx_clear();
	for (unsigned i = 0; i < NFRAMES; i++)
		CU_ASSERT_EQUAL(rnsc_iface_send(child, f, make_frame(i, f)), 0);
	CU_ASSERT(run_until(have_rx, &want, 5000));
	CU_ASSERT(frames_match(cli, 1));

	/* Sending on the server itself is the reference's no-op. */
	CU_ASSERT_EQUAL(rnsc_iface_send(srv, f, 20), 0);

	rnsc_iface_status st;
	rnsc_iface_status_get(cli, &st);
	CU_ASSERT_EQUAL(st.stats.tx_packets, NFRAMES);
	CU_ASSERT_EQUAL(st.stats.rx_packets, NFRAMES);
	CU_ASSERT_EQUAL(st.stats.hw_mtu, 16384);
	CU_ASSERT_EQUAL(st.stats.bitrate, 10000000);
	CU_ASSERT_EQUAL(st.delivered, NFRAMES);
	uint64_t payload = 0, wire = 0;
	for (unsigned i = 0; i < NFRAMES; i++) {
		size_t n = make_frame(i, f);
		payload += n;
		wire += rnsc_hdlc_encoded_len(f, n);
	}
	CU_ASSERT_EQUAL(st.stats.rx_bytes, payload); /* like rxb: de-framed bytes */
	CU_ASSERT_EQUAL(st.stats.tx_bytes, wire);    /* like txb: framed bytes */
	rnsc_iface_status_get(srv, &st);
	CU_ASSERT_EQUAL(st.stats.children, 1);
	CU_ASSERT_EQUAL(st.stats.rx_bytes, payload); /* a server sums its children */
	CU_ASSERT_EQUAL(st.stats.tx_bytes, wire);
	tu_teardown();
}

static void test_reconnect(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv = open_server("srv", 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	unsigned port = port_of(srv);
	rnsc_iface *cli = open_client("cli", port, "    reconnect_wait = 0.2\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
	CU_ASSERT_FATAL(run_until(is_online, cli, 5000));
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));

	rnsc_iface_close(srv); /* the server goes away with its connection */
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 1);
	CU_ASSERT_FATAL(run_until(is_offline, cli, 5000));
	run_for(500); /* a few failed attempts (connection refused) */
	CU_ASSERT(!rnsc_iface_online(cli));
	uint8_t f[64];
	CU_ASSERT_EQUAL(rnsc_iface_send(cli, f, make_frame(2, f)), RNSC_ERR_STATE);

	srv = open_server("srv", port, NULL); /* restarted on the same port */
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT_FATAL(run_until(is_online, cli, 5000));
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));
	rnsc_iface_status st;
	rnsc_iface_status_get(cli, &st);
	CU_ASSERT_EQUAL(st.stats.reconnects, 1);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OFFLINE], 1);
	CU_ASSERT_EQUAL(rnsc_iface_send(cli, f, make_frame(2, f)), 0);
	size_t want = 1;
	CU_ASSERT(run_until(have_rx, &want, 5000));
	CU_ASSERT(nrx == 1 && rx[0].iface == last_child && rx[0].len == 64 &&
		  memcmp(rx[0].data, f, 64) == 0);
	tu_teardown();
}

static int raw_connect(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	/* A blocking connect to a listening socket completes in the kernel's backlog. */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void raw_send(int fd, const uint8_t *p, size_t n)
{
	/* Pump the loop between partial writes so the server drains the socket. */
	while (n) {
		ssize_t w = send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else {
			rnsc_loop_run_once(L, 10);
		}
	}
}

static void test_bad_input(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv = open_server("srv", 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	int fd = raw_connect(port_of(srv));
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));

	static uint8_t payload[16401], enc[2 * 16401 + 2];
	raw_send(fd, (const uint8_t *)"hello", 5); /* garbage before any FLAG */
	memset(payload, 0x41, sizeof(payload));
	int n = rnsc_hdlc_encode(enc, sizeof(enc), payload, 10); /* runt */
	raw_send(fd, enc, (size_t)n);
	n = rnsc_hdlc_encode(enc, sizeof(enc), payload, 16401); /* HW_MTU + IFAC + 1 */
	raw_send(fd, enc, (size_t)n);
	n = rnsc_hdlc_encode(enc, sizeof(enc), payload, 16400); /* the largest accepted */
	raw_send(fd, enc, (size_t)n);
	n = rnsc_hdlc_encode(enc, sizeof(enc), payload, 20); /* the smallest accepted */
	raw_send(fd, enc, (size_t)n);
	static const uint8_t binary[] = {0x7E, 0x7D, 0x7D, 0x7D, 0x7E}; /* 2-byte runt */
	raw_send(fd, binary, sizeof(binary));
	size_t want = 2;
	CU_ASSERT(run_until(have_rx, &want, 5000));
	CU_ASSERT_EQUAL(nrx, 2);
	if (nrx == 2) {
		CU_ASSERT_EQUAL(rx[0].len, 16400);
		CU_ASSERT_EQUAL(rx[1].len, 20);
	}
	/* Half a frame, then the peer vanishes. */
	raw_send(fd, enc, 12);
	run_for(100);
	close(fd);
	size_t one = 1;
	CU_ASSERT(run_until(host_count_is, &one, 5000));
	CU_ASSERT_PTR_NULL(last_child);

	rnsc_iface_status st;
	rnsc_iface_status_get(srv, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_GARBAGE], 5);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_RUNT], 2);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OVERSIZE], 1);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_PARTIAL], 1);
	CU_ASSERT_EQUAL(st.stats.children, 0);
	CU_ASSERT(rnsc_iface_online(srv));

	/* Pure noise with flags sprinkled in, a megabyte of it: counted, never a crash. */
	fd = raw_connect(port_of(srv));
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));
	static uint8_t noise[1 << 20];
	uint32_t x = 12345;
	for (size_t k = 0; k < sizeof(noise); k++) {
		x = x * 1103515245u + 12345u;
		noise[k] = (uint8_t)(x >> 16);
	}
	raw_send(fd, noise, sizeof(noise));
	close(fd);
	CU_ASSERT(run_until(host_count_is, &one, 5000));
	rnsc_iface_status_get(srv, &st);
	CU_ASSERT(st.drops[RNSC_IFACE_DROP_RUNT] > 2);
	tu_teardown();
}

static void test_config_errors(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	tu_expect_error("[interfaces]\n [[Weird]]\n type = NoSuchInterface\n enabled = yes\n",
			RNSC_ERR_NOTFOUND, "[[Weird]]", "\"type\"");
	tu_expect_error("[interfaces]\n [[S]]\n type = TCPServerInterface\n enabled = yes\n"
			" listen_ip = 127.0.0.1\n listen_port = abc\n",
			RNSC_ERR_CONFIG_VALUE, "[[S]] listen_port", "not an integer");
	tu_expect_error("[interfaces]\n [[S]]\n type = TCPServerInterface\n enabled = yes\n"
			" listen_ip = 127.0.0.1\n listen_port = 70000\n",
			RNSC_ERR_CONFIG_VALUE, "\"listen_port\"", NULL);
	tu_expect_error("[interfaces]\n [[S]]\n type = TCPServerInterface\n enabled = yes\n"
			" listen_port = 4242\n",
			RNSC_ERR_CONFIG_VALUE, "\"listen_ip\"", NULL);
	tu_expect_error("[interfaces]\n [[S]]\n type = TCPServerInterface\n enabled = yes\n"
			" listen_ip = 127.0.0.1\n",
			RNSC_ERR_CONFIG_VALUE, "\"listen_port\"", NULL);
	tu_expect_error("[interfaces]\n [[C]]\n type = TCPClientInterface\n enabled = yes\n"
			" target_host = 127.0.0.1\n",
			RNSC_ERR_CONFIG_VALUE, "\"target_port\"", NULL);
	tu_expect_error("[interfaces]\n [[C]]\n type = TCPClientInterface\n enabled = yes\n"
			" target_host = 127.0.0.1\n target_port = 4242\n fixed_mtu = 100\n",
			RNSC_ERR_CONFIG_VALUE, "\"fixed_mtu\"", "too small");
	tu_expect_error("[interfaces]\n [[C]]\n type = TCPClientInterface\n enabled = yes\n"
			" target_host = 127.0.0.1\n target_port = 4242\n kiss_framing = maybe\n",
			RNSC_ERR_CONFIG_VALUE, "[[C]] kiss_framing", "not a boolean");
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 0);

	/* A port in use. */
	rnsc_iface *srv = open_server("srv", 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	char text[256];
	snprintf(text, sizeof(text),
		 "[interfaces]\n [[Second]]\n type = TCPServerInterface\n enabled = yes\n"
		 " listen_ip = 127.0.0.1\n port = %u\n",
		 port_of(srv));
	tu_expect_error(text, RNSC_ERR_IO, "[[Second]] option \"port\"", "in use");
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 1);
	/* Disabled sections are skipped. */
	CU_ASSERT_EQUAL(open_text("[interfaces]\n [[Off]]\n type = NoSuchInterface\n"
				  " enabled = no\n",
				  &(rnsc_config_error){0}),
			0);
	tu_teardown();
}

static void test_mtu_policy(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	static const struct {
		const char *extra;
		int server;
		uint64_t bitrate;
		size_t hw_mtu;
	} cases[] = {
		{"", 1, 10000000, 16384},
		{"    bitrate = 100000000\n", 1, 100000000, 32768},
		{"    bitrate = 1000000000\n", 1, 1000000000, 524288},
		{"    bitrate = 3\n", 1, 10000000, 16384}, /* below MINIMUM_BITRATE: ignored */
		{"    bitrate = 5000000\n", 0, 5000000, 8192},
		{"    fixed_mtu = 1000\n", 0, 10000000, 1000},
		{"    fixed_mtu = 0\n", 0, 10000000, 16384}, /* 0 means unset */
		{"    fixed_mtu = 300000\n    bitrate = 64000\n", 0, 64000, 300000},
		{"    bitrate = 1000\n", 0, 1000, 0}, /* the reference's None */
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char name[16];
		snprintf(name, sizeof(name), "m%zu", k);
		/* Clients target a closed port; only their configuration is looked at. */
		rnsc_iface *i = cases[k].server ? open_server(name, 0, cases[k].extra)
						: open_client(name, 9, cases[k].extra);
		CU_ASSERT_PTR_NOT_NULL(i);
		if (!i)
			continue;
		rnsc_iface_status st;
		rnsc_iface_status_get(i, &st);
		CU_ASSERT_EQUAL(st.stats.bitrate, cases[k].bitrate);
		CU_ASSERT_EQUAL(st.stats.hw_mtu, cases[k].hw_mtu);
	}
	tu_teardown();
}

/* ---- interop with the reference --------------------------------------------------------- */

/* rnsc client -> the reference's TCPServerInterface. */
static void test_interop_ref_server(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	peer p;
	CU_ASSERT_FATAL(peer_start(&p, "iface_tcp_peer.py", "server", NULL) == 0);
	cur_peer = &p;
	CU_ASSERT(run_until(peer_port, NULL, 30000));
	unsigned port = 0;
	sscanf(peer_line(&p, "PORT "), "PORT %u", &port);
	CU_ASSERT(port > 0);
	if (port) {
		rnsc_iface *cli = open_client("to ref", port, NULL);
		CU_ASSERT_PTR_NOT_NULL(cli);
		if (cli && run_until(is_online, cli, 10000)) {
			static uint8_t f[16400];
			for (unsigned i = 0; i < NFRAMES; i++)
				CU_ASSERT_EQUAL(rnsc_iface_send(cli, f, make_frame(i, f)), 0);
			size_t want = 2 * NFRAMES; /* its own frames and the echoes of ours */
			CU_ASSERT(run_until(peer_done, &want, 20000));
			CU_ASSERT(frames_match(cli, 2));
			CU_ASSERT_PTR_NOT_NULL(strstr(p.buf, "RESULT ok 9\n"));
		} else {
			CU_FAIL("rnsc client did not connect to the reference server");
		}
	}
	if (!strstr(p.buf, "RESULT ok"))
		fprintf(stderr, "peer said: %s\n", p.buf);
	peer_stop(&p);
	tu_teardown();
}

/* The reference's TCPClientInterface -> rnsc server. */
static void test_interop_ref_client(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv = open_server("srv", 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	char arg[16];
	snprintf(arg, sizeof(arg), "%u", port_of(srv));
	peer p;
	CU_ASSERT_FATAL(peer_start(&p, "iface_tcp_peer.py", "client", arg) == 0);
	cur_peer = &p;
	if (run_until(child_online, NULL, 30000)) {
		rnsc_iface *child = last_child;
		static uint8_t f[16400];
		for (unsigned i = 0; i < NFRAMES; i++)
			CU_ASSERT_EQUAL(rnsc_iface_send(child, f, make_frame(i, f)), 0);
		size_t want = 2 * NFRAMES;
		CU_ASSERT(run_until(peer_done, &want, 20000));
		CU_ASSERT(frames_match(child, 2));
		CU_ASSERT_PTR_NOT_NULL(strstr(p.buf, "RESULT ok 9\n"));
	} else {
		CU_FAIL("the reference client did not connect");
	}
	if (!strstr(p.buf, "RESULT ok"))
		fprintf(stderr, "peer said: %s\n", p.buf);
	peer_stop(&p);
	tu_teardown();
}

static int suite_init(void)
{
	return tu_suite_init("tcp.so");
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("iface_tcp", suite_init, tu_suite_fini);
	CU_add_test(s, "plugin serves the TCP types", test_plugin_found);
	CU_add_test(s, "server and client exchange frames", test_exchange);
	CU_add_test(s, "client reconnects after a server restart", test_reconnect);
	CU_add_test(s, "garbage, runts, oversize, half frames", test_bad_input);
	CU_add_test(s, "config errors name section and option", test_config_errors);
	CU_add_test(s, "bitrate and fixed_mtu policy", test_mtu_policy);
	CU_add_test(s, "interop: rnsc client to reference server", test_interop_ref_server);
	CU_add_test(s, "interop: reference client to rnsc server", test_interop_ref_client);
	return rnsc_cu_run();
}
