/* SPDX-License-Identifier: MIT */
/*
 * The interface host with the "udp" plugin over real sockets on 127.0.0.1: rnsc to
 * rnsc by unicast and by broadcast (device = lo), runts, oversized and noise
 * datagrams, config errors, and interop with the pinned reference's own UDPInterface
 * (tests/live/iface_udp_peer.py run with the venv's python). Every wait is bounded.
 */
#include <stdarg.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "iface_test_util.h"

/* Same list as tests/live/iface_udp_peer.py: up to HW_MTU 1064 + IFAC 16. */
static const size_t LENGTHS[] = {20,  21,  22,  31,  63,  64,   100,  127,  128,  255,  256,  400,
				 500, 501, 511, 512, 700, 1000, 1023, 1024, 1063, 1064, 1079, 1080};
#define NFRAMES (sizeof(LENGTHS) / sizeof(LENGTHS[0]))

static size_t make_frame(unsigned i, uint8_t *out)
{
	return tu_make_frame(LENGTHS, i, out);
}

/* Every rx frame must be one of ours, on iface, and each must appear `times` times. */
static int frames_match(rnsc_iface *iface, unsigned times)
{
	return tu_frames_match(make_frame, NFRAMES, 1080, iface, times);
}

/* A port nobody uses right now (bound and released; a race only with strangers). */
static unsigned free_udp_port(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t l = sizeof(a);
	unsigned port = 0;
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &l) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static rnsc_iface *open_udp(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static rnsc_iface *open_udp(const char *name, const char *fmt, ...)
{
	char opts[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(opts, sizeof(opts), fmt, ap);
	va_end(ap);
	return open_iface(name, "UDPInterface", opts);
}

static void send_all(rnsc_iface *i)
{
	uint8_t f[1080];
	for (unsigned k = 0; k < NFRAMES; k++) {
		CU_ASSERT_EQUAL(rnsc_iface_send(i, f, make_frame(k, f)), 0);
		rnsc_loop_run_once(L, 0); /* let the receiver drain: no kernel buffer loss */
	}
}

static uint64_t payload_sum(void)
{
	uint64_t s = 0;
	for (unsigned i = 0; i < NFRAMES; i++)
		s += LENGTHS[i];
	return s;
}

/* ---- tests --------------------------------------------------------------------------- */

static void test_plugin_found(void)
{
	const rnsc_plugin_rec *r = rnsc_plugin_host_find_iface(P, "UDPInterface");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_STRING_EQUAL(r->desc->name, "udp");
	CU_ASSERT_EQUAL(r->desc->kind, RNSC_PLUGIN_IFACE);
}

static void test_unicast(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	unsigned pa = free_udp_port(), pb = free_udp_port();
	CU_ASSERT_FATAL(pa && pb && pa != pb);
	rnsc_iface *a = open_udp("a",
				 "    listen_ip = 127.0.0.1\n    listen_port = %u\n"
				 "    forward_ip = 127.0.0.1\n    forward_port = %u\n",
				 pa, pb);
	/* "port" fills both ports. */
	rnsc_iface *b = open_udp("b",
				 "    listen_ip = 127.0.0.1\n    forward_ip = localhost\n"
				 "    port = %u\n    listen_port = %u\n",
				 pa, pb);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT(rnsc_iface_online(a) && rnsc_iface_online(b));
	CU_ASSERT_EQUAL(port_of(a), pa);
	CU_ASSERT_EQUAL(port_of(b), pb);
	char d[128];
	rnsc_iface_describe(a, d, sizeof(d));
	char want[64];
	snprintf(want, sizeof(want), "UDPInterface[a/127.0.0.1:%u]", pa);
	CU_ASSERT_STRING_EQUAL(d, want);

	send_all(a);
	size_t n = NFRAMES;
	CU_ASSERT(run_until(have_rx, &n, 5000));
	CU_ASSERT(frames_match(b, 1));
	rx_clear();
	send_all(b);
	CU_ASSERT(run_until(have_rx, &n, 5000));
	CU_ASSERT(frames_match(a, 1));

	rnsc_iface_status st;
	rnsc_iface_status_get(a, &st);
	CU_ASSERT_EQUAL(st.stats.tx_packets, NFRAMES);
	CU_ASSERT_EQUAL(st.stats.rx_packets, NFRAMES);
	CU_ASSERT_EQUAL(st.stats.tx_bytes, payload_sum()); /* no framing on UDP */
	CU_ASSERT_EQUAL(st.stats.rx_bytes, payload_sum());
	CU_ASSERT_EQUAL(st.stats.hw_mtu, 1064);
	CU_ASSERT_EQUAL(st.stats.bitrate, 10000000);
	CU_ASSERT_EQUAL(st.stats.remote_port, pb);
	CU_ASSERT_EQUAL(st.delivered, NFRAMES);
	for (unsigned r = 0; r < RNSC_IFACE_DROP_COUNT; r++)
		CU_ASSERT_EQUAL(st.drops[r], 0);
	tu_teardown();
}

/* Broadcast on lo: device = lo resolves to 127.255.255.255 (address | ~netmask), which
 * the kernel only lets a socket send to with SO_BROADCAST. */
static void test_broadcast(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	unsigned pb = free_udp_port();
	CU_ASSERT_FATAL(pb);
	rnsc_iface *a =
		open_udp("a", "    device = lo\n    listen_port = 0\n    forward_port = %u\n", pb);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	unsigned pa = port_of(a);
	CU_ASSERT(pa > 0);
	char d[128], want[96];
	rnsc_iface_describe(a, d, sizeof(d));
	snprintf(want, sizeof(want), "UDPInterface[a/127.255.255.255:%u]", pa);
	CU_ASSERT_STRING_EQUAL(d, want);
	rnsc_iface *b = open_udp("b",
				 "    listen_ip = 0.0.0.0\n    listen_port = %u\n"
				 "    forward_ip = 127.255.255.255\n    forward_port = %u\n",
				 pb, pa);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	send_all(a);
	size_t n = NFRAMES;
	CU_ASSERT(run_until(have_rx, &n, 5000));
	CU_ASSERT(frames_match(b, 1));
	rx_clear();
	send_all(b);
	CU_ASSERT(run_until(have_rx, &n, 5000));
	CU_ASSERT(frames_match(a, 1));
	tu_teardown();
}

static void test_one_way(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *rxo = open_udp("rx only", "    listen_ip = 127.0.0.1\n    listen_port = 0\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(rxo);
	rnsc_iface *txo = open_udp("tx only", "    forward_ip = 127.0.0.1\n    forward_port = %u\n",
				   port_of(rxo));
	CU_ASSERT_PTR_NOT_NULL_FATAL(txo);
	CU_ASSERT(rnsc_iface_online(txo));
	uint8_t f[1080];
	size_t len = make_frame(5, f);
	CU_ASSERT_EQUAL(rnsc_iface_send(rxo, f, len), RNSC_ERR_STATE); /* nowhere to send */
	CU_ASSERT_EQUAL(rnsc_iface_send(txo, f, len), 0);
	size_t one = 1;
	CU_ASSERT(run_until(have_rx, &one, 5000));
	CU_ASSERT(nrx == 1 && rx[0].iface == rxo && rx[0].len == len &&
		  memcmp(rx[0].data, f, len) == 0);
	rnsc_iface_status st;
	rnsc_iface_status_get(rxo, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OFFLINE], 1);
	CU_ASSERT_EQUAL(st.stats.remote_port, 0);
	/* A datagram beyond what UDP can carry is refused by the kernel: counted, no crash. */
	static uint8_t big[70000];
	CU_ASSERT_EQUAL(rnsc_iface_send(txo, big, sizeof(big)), RNSC_ERR_TOOBIG);
	rnsc_iface_status_get(txo, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_TXQUEUE], 1);
	CU_ASSERT_EQUAL(st.stats.tx_packets, 1);
	tu_teardown();
}

static void raw_sendto(int fd, unsigned port, const uint8_t *p, size_t n)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CU_ASSERT_EQUAL(sendto(fd, p, n, 0, (struct sockaddr *)&a, sizeof(a)), (ssize_t)n);
	/* The datagram is queued at the receiver already; read it before the next one so
	 * the kernel's receive buffer never overflows and every count is exact. */
	rnsc_loop_run_once(L, 0);
}

static void test_hostile(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *a = open_udp("a", "    listen_ip = 127.0.0.1\n    listen_port = 0\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	unsigned port = port_of(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	CU_ASSERT_FATAL(fd >= 0);
	static uint8_t buf[65507];
	memset(buf, 0x41, sizeof(buf));
	static const size_t runts[] = {0, 1, 2, 19};
	static const size_t big[] = {1081, 1500, 8192, 65507};
	for (unsigned k = 0; k < 4; k++)
		raw_sendto(fd, port, buf, runts[k]);
	for (unsigned k = 0; k < 4; k++)
		raw_sendto(fd, port, buf, big[k]);
	raw_sendto(fd, port, buf, 20);   /* the smallest accepted */
	raw_sendto(fd, port, buf, 1080); /* the largest: HW_MTU + IFAC */
	size_t two = 2;
	CU_ASSERT(run_until(have_rx, &two, 5000));
	run_for(50);
	CU_ASSERT_EQUAL(nrx, 2);
	if (nrx == 2) {
		CU_ASSERT_EQUAL(rx[0].len, 20);
		CU_ASSERT_EQUAL(rx[1].len, 1080);
	}
	rnsc_iface_status st;
	rnsc_iface_status_get(a, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_RUNT], 4);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OVERSIZE], 4);

	/* Noise: 2000 datagrams of random length and bytes. The interface cannot tell
	 * noise from packets (that is the transport's job): it must deliver exactly those
	 * in range, count the rest, and survive. */
	rx_clear();
	uint32_t x = 4242;
	uint64_t in_range = 0, runt = 0, over = 0;
	for (unsigned k = 0; k < 2000; k++) {
		x = x * 1103515245u + 12345u;
		size_t len = (x >> 8) % 2200;
		for (size_t j = 0; j < len; j++) {
			x = x * 1103515245u + 12345u;
			buf[j] = (uint8_t)(x >> 16);
		}
		if (len <= 19)
			runt++;
		else if (len > 1080)
			over++;
		else
			in_range++;
		raw_sendto(fd, port, buf, len);
		if (nrx >= TU_MAXRX - 64)
			rx_clear(); /* keep capturing; the host's counter has the total */
	}
	run_for(100);
	rnsc_iface_status_get(a, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_RUNT], 4 + runt);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OVERSIZE], 4 + over);
	CU_ASSERT_EQUAL(st.delivered, 2 + in_range);
	CU_ASSERT_EQUAL(st.stats.rx_packets, 2 + in_range);
	CU_ASSERT(rnsc_iface_online(a));
	close(fd);
	tu_teardown();
}

static void test_config(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	static const char *hdr = "[interfaces]\n [[U]]\n type = UDPInterface\n enabled = yes\n";
	char text[1024];
#define EXPECT(opts, code, n1, n2)                                                                 \
	do {                                                                                       \
		snprintf(text, sizeof(text), "%s%s", hdr, opts);                                   \
		tu_expect_error(text, code, n1, n2);                                               \
	} while (0)
	EXPECT("", RNSC_ERR_CONFIG_VALUE, "[[U]] option \"port\"", "no UDP port");
	EXPECT(" listen_ip = 127.0.0.1\n", RNSC_ERR_CONFIG_VALUE, "\"listen_port\"", NULL);
	EXPECT(" listen_port = 4242\n", RNSC_ERR_CONFIG_VALUE, "\"listen_ip\"", NULL);
	EXPECT(" forward_ip = 127.0.0.1\n", RNSC_ERR_CONFIG_VALUE, "\"forward_port\"", NULL);
	EXPECT(" forward_port = 4242\n", RNSC_ERR_CONFIG_VALUE, "\"forward_ip\"", NULL);
	EXPECT(" forward_ip = 127.0.0.1\n forward_port = 0\n", RNSC_ERR_CONFIG_VALUE,
	       "\"forward_port\"", "port 0");
	EXPECT(" port = 70000\n listen_ip = 127.0.0.1\n", RNSC_ERR_CONFIG_VALUE, "\"port\"", NULL);
	EXPECT(" listen_ip = 127.0.0.1\n listen_port = abc\n", RNSC_ERR_CONFIG_VALUE,
	       "[[U]] listen_port", "not an integer");
	EXPECT(" listen_ip = no such host.invalid\n port = 4242\n", RNSC_ERR_CONFIG_VALUE,
	       "\"listen_ip\"", "cannot resolve");
	EXPECT(" forward_ip = 300.1.2.3\n forward_port = 4242\n", RNSC_ERR_CONFIG_VALUE,
	       "\"forward_ip\"", "cannot resolve");
	EXPECT(" port = 4242\n", RNSC_ERR_CONFIG_VALUE, "\"listen_ip\"", "no address");
	EXPECT(" device = nosuchdev0\n port = 4242\n", RNSC_ERR_NOENT, "\"device\"",
	       "no kernel interface named");
	/* An address that is not this host's cannot be bound. */
	EXPECT(" listen_ip = 192.0.2.77\n listen_port = 0\n", RNSC_ERR_IO, "\"listen_ip\"",
	       "cannot listen");
	EXPECT(" listen_ip = 127.0.0.1\n listen_port = 0\n ifac_size = 5000\n",
	       RNSC_ERR_CONFIG_VALUE, "\"ifac_size\"", NULL);
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 0);

	/* A port in use. */
	rnsc_iface *a = open_udp("a", "    listen_ip = 127.0.0.1\n    listen_port = 0\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	snprintf(text, sizeof(text), "%s listen_ip = 127.0.0.1\n port = %u\n", hdr, port_of(a));
	tu_expect_error(text, RNSC_ERR_IO, "[[U]] option \"port\"", "in use");
	snprintf(text, sizeof(text), "%s listen_ip = 127.0.0.1\n listen_port = %u\n", hdr,
		 port_of(a));
	tu_expect_error(text, RNSC_ERR_IO, "[[U]] option \"listen_port\"", "in use");
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 1);

	/* bitrate replaces the guess but never the MTU (UDPInterface does not autoconfigure). */
	rnsc_iface *b = open_udp("b", "    listen_ip = 127.0.0.1\n    listen_port = 0\n"
				      "    bitrate = 1000000000\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	rnsc_iface_status st;
	rnsc_iface_status_get(b, &st);
	CU_ASSERT_EQUAL(st.stats.bitrate, 1000000000);
	CU_ASSERT_EQUAL(st.stats.hw_mtu, 1064);
	/* A smaller IFAC lowers the largest datagram accepted: 1064 + 8. */
	rnsc_iface *c = open_udp("c", "    listen_ip = 127.0.0.1\n    listen_port = 0\n"
				      "    ifac_size = 64\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	static uint8_t buf[1073];
	raw_sendto(fd, port_of(c), buf, 1072);
	raw_sendto(fd, port_of(c), buf, 1073);
	close(fd);
	size_t one = 1;
	CU_ASSERT(run_until(have_rx, &one, 5000));
	run_for(50);
	CU_ASSERT(nrx == 1 && rx[0].len == 1072);
	rnsc_iface_status_get(c, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OVERSIZE], 1);
	tu_teardown();
#undef EXPECT
}

/* ---- interop with the reference --------------------------------------------------------- */

static int peer_ready(void *a)
{
	(void)a;
	return peer_has(cur_peer, "READY") || peer_has(cur_peer, "RESULT");
}

static void interop(const char *mode)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	peer p;
	CU_ASSERT_FATAL(peer_start(&p, "iface_udp_peer.py", mode, NULL) == 0);
	cur_peer = &p;
	CU_ASSERT(run_until(peer_port, NULL, 30000));
	unsigned port = 0;
	sscanf(peer_line(&p, "PORT "), "PORT %u", &port);
	CU_ASSERT(port > 0);
	rnsc_iface *u = NULL;
	if (port) {
		int bcast = strcmp(mode, "bcast") == 0;
		u = bcast ? open_udp("to ref",
				     "    device = lo\n    listen_port = 0\n"
				     "    forward_port = %u\n",
				     port)
			  : open_udp("to ref",
				     "    listen_ip = 127.0.0.1\n    listen_port = 0\n"
				     "    forward_ip = 127.0.0.1\n    forward_port = %u\n",
				     port);
		CU_ASSERT_PTR_NOT_NULL(u);
	}
	if (u) {
		char line[32];
		snprintf(line, sizeof(line), "FORWARD %u\n", port_of(u));
		peer_say(&p, line);
		CU_ASSERT(run_until(peer_ready, NULL, 10000));
		send_all(u);
		size_t want = 2 * NFRAMES; /* its own frames and the echoes of ours */
		CU_ASSERT(run_until(peer_done, &want, 20000));
		CU_ASSERT_EQUAL(nrx, 2 * NFRAMES);
		CU_ASSERT(frames_match(u, 2));
		char ok[32];
		snprintf(ok, sizeof(ok), "RESULT ok %zu\n", NFRAMES);
		CU_ASSERT_PTR_NOT_NULL(strstr(p.buf, ok));
	} else {
		CU_FAIL("no UDP interface towards the reference");
	}
	if (!strstr(p.buf, "RESULT ok"))
		fprintf(stderr, "peer said: %s\n", p.buf);
	peer_stop(&p);
	tu_teardown();
}

static void test_interop_unicast(void)
{
	interop("unicast");
}

static void test_interop_bcast(void)
{
	interop("bcast");
}

static int suite_init(void)
{
	return tu_suite_init("udp.so");
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("iface_udp", suite_init, tu_suite_fini);
	CU_add_test(s, "plugin serves UDPInterface", test_plugin_found);
	CU_add_test(s, "unicast exchange, byte-exact, stats", test_unicast);
	CU_add_test(s, "broadcast on lo via device", test_broadcast);
	CU_add_test(s, "receive-only and forward-only", test_one_way);
	CU_add_test(s, "runts, oversize, noise datagrams", test_hostile);
	CU_add_test(s, "config errors name section and option", test_config);
	CU_add_test(s, "interop: reference UDPInterface, unicast", test_interop_unicast);
	CU_add_test(s, "interop: reference UDPInterface, broadcast", test_interop_bcast);
	return rnsc_cu_run();
}
