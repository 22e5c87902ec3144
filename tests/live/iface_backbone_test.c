/* SPDX-License-Identifier: MIT */
/*
 * The interface host with the "backbone" plugin over real sockets on 127.0.0.1: rnsc
 * listener and client through the runtime, Reticulum.py's option aliases, reconnects,
 * malformed input, a connection flood against max_clients, the fast-flapping block,
 * a peer that stops reading, config errors and the MTU policy, and interop with the
 * pinned reference's own BackboneInterface classes (tests/live/iface_backbone_peer.py run
 * with the venv's python). Every wait is bounded.
 */
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "hdlc.h"
#include "iface_test_util.h"

/* Same list as tests/live/iface_backbone_peer.py: up to HW_MTU 32768 + IFAC 16. */
static const size_t LENGTHS[] = {20,   21,    64,    100,   500,   1000, 1064,
				 4096, 16383, 16400, 32767, 32768, 32784};
#define NFRAMES (sizeof(LENGTHS) / sizeof(LENGTHS[0]))
#define MAXF 32784

static size_t make_frame(unsigned i, uint8_t *out)
{
	return tu_make_frame(LENGTHS, i, out);
}

/* Every rx frame i must appear exactly `times` times on iface. */
static int frames_match(rnsc_iface *iface, unsigned times)
{
	return tu_frames_match(make_frame, NFRAMES, MAXF, iface, times);
}

static rnsc_iface *open_listener(const char *name, unsigned port, const char *extra)
{
	char opts[1024];
	snprintf(opts, sizeof(opts), "    listen_ip = 127.0.0.1\n    listen_port = %u\n%s", port,
		 extra ? extra : "");
	return open_iface(name, "BackboneInterface", opts);
}

static rnsc_iface *open_client(const char *name, unsigned port, const char *extra)
{
	char opts[1024];
	snprintf(opts, sizeof(opts), "    target_host = 127.0.0.1\n    target_port = %u\n%s", port,
		 extra ? extra : "");
	return open_iface(name, "BackboneClientInterface", opts);
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
	/* Pump the loop between partial writes so the listener drains the socket. */
	uint64_t end = mono_ms() + 10000;
	while (n && mono_ms() < end) {
		ssize_t w = send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else {
			rnsc_loop_run_once(L, 10);
		}
	}
	CU_ASSERT_EQUAL(n, 0);
}

/* True when the peer closed fd (EOF) within timeout_ms while the loop runs. */
static int raw_sees_eof(int fd, unsigned timeout_ms)
{
	uint64_t end = mono_ms() + timeout_ms;
	char b[256];
	while (mono_ms() < end) {
		ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			return 1;
		rnsc_loop_run_once(L, 10);
	}
	return 0;
}

static uint64_t status_of(rnsc_iface *i, unsigned drop, uint32_t *children)
{
	rnsc_iface_status st;
	rnsc_iface_status_get(i, &st);
	if (children)
		*children = st.stats.children;
	return st.drops[drop];
}

typedef struct {
	rnsc_iface *srv;
	uint32_t children;
	uint64_t refused;
} flood_goal;

static int flood_reached(void *a)
{
	flood_goal *g = a;
	uint32_t ch;
	uint64_t r = status_of(g->srv, RNSC_IFACE_DROP_REFUSED, &ch);
	return ch == g->children && r == g->refused;
}

/* ---- tests --------------------------------------------------------------------------- */

static void test_plugin_found(void)
{
	const rnsc_plugin_rec *r = rnsc_plugin_host_find_iface(P, "BackboneInterface");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_STRING_EQUAL(r->desc->name, "backbone");
	CU_ASSERT_EQUAL(r->desc->kind, RNSC_PLUGIN_IFACE);
	CU_ASSERT_PTR_EQUAL(rnsc_plugin_host_find_iface(P, "BackboneClientInterface"), r);
}

static void test_exchange(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv = open_listener("srv", 0, NULL);
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
	char d[128], want[96];
	rnsc_iface_describe(cli, d, sizeof(d));
	snprintf(want, sizeof(want), "BackboneInterface[cli/127.0.0.1:%u]", port);
	CU_ASSERT_STRING_EQUAL(d, want);
	rnsc_iface_describe(srv, d, sizeof(d));
	snprintf(want, sizeof(want), "BackboneInterface[srv/127.0.0.1:%u]", port);
	CU_ASSERT_STRING_EQUAL(d, want);

	static uint8_t f[MAXF];
	for (unsigned i = 0; i < NFRAMES; i++)
		CU_ASSERT_EQUAL(rnsc_iface_send(cli, f, make_frame(i, f)), 0);
	size_t n = NFRAMES;
	CU_ASSERT(run_until(have_rx, &n, 5000));
	CU_ASSERT(frames_match(child, 1));
	rx_clear();
	for (unsigned i = 0; i < NFRAMES; i++)
		CU_ASSERT_EQUAL(rnsc_iface_send(child, f, make_frame(i, f)), 0);
	CU_ASSERT(run_until(have_rx, &n, 5000));
	CU_ASSERT(frames_match(cli, 1));
	CU_ASSERT_EQUAL(rnsc_iface_send(srv, f, 20), 0); /* the reference's no-op */

	rnsc_iface_status st;
	rnsc_iface_status_get(cli, &st);
	CU_ASSERT_EQUAL(st.stats.tx_packets, NFRAMES);
	CU_ASSERT_EQUAL(st.stats.rx_packets, NFRAMES);
	CU_ASSERT_EQUAL(st.stats.hw_mtu, 32768);
	CU_ASSERT_EQUAL(st.stats.bitrate, 100000000);
	uint64_t payload = 0, wire = 0;
	for (unsigned i = 0; i < NFRAMES; i++) {
		size_t k = make_frame(i, f);
		payload += k;
		wire += rnsc_hdlc_encoded_len(f, k);
	}
	CU_ASSERT_EQUAL(st.stats.rx_bytes, payload);
	CU_ASSERT_EQUAL(st.stats.tx_bytes, wire);
	rnsc_iface_status_get(srv, &st);
	CU_ASSERT_EQUAL(st.stats.children, 1);
	CU_ASSERT_EQUAL(st.stats.rx_bytes, payload); /* a listener sums its children */
	CU_ASSERT_EQUAL(st.stats.tx_bytes, wire);
	CU_ASSERT_EQUAL(st.stats.hw_mtu, 32768);
	tu_teardown();
}

/* Reticulum.py: listen_on/port on a BackboneInterface make a listener; remote/port on a
 * BackboneInterface make a client. */
static void test_aliases(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv =
		open_iface("srv", "BackboneInterface",
			   "    listen_on = 127.0.0.1\n    port = 0\n    listen_port = 9\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	unsigned port = port_of(srv);
	CU_ASSERT(port > 0 && port != 9); /* port wins over listen_port */
	char opts[256];
	snprintf(opts, sizeof(opts), "    remote = 127.0.0.1\n    port = %u\n    target_port = 9\n",
		 port);
	rnsc_iface *cli = open_iface("cli", "BackboneInterface", opts);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
	CU_ASSERT(run_until(is_online, cli, 5000));
	CU_ASSERT(run_until(child_online, NULL, 5000));
	uint8_t f[100];
	CU_ASSERT_EQUAL(rnsc_iface_send(cli, f, make_frame(3, f)), 0);
	size_t one = 1;
	CU_ASSERT(run_until(have_rx, &one, 5000));
	CU_ASSERT(nrx == 1 && rx[0].iface == last_child && rx[0].len == 100 &&
		  memcmp(rx[0].data, f, 100) == 0);
	/* IPv6 on both sides; the reference's str() brackets the address. */
	rnsc_iface *v6 =
		open_iface("v6", "BackboneInterface", "    listen_ip = ::1\n    port = 0\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(v6);
	char d[128], want[96];
	snprintf(want, sizeof(want), "BackboneInterface[v6/[::1]:%u]", port_of(v6));
	rnsc_iface_describe(v6, d, sizeof(d));
	CU_ASSERT_STRING_EQUAL(d, want);
	snprintf(opts, sizeof(opts),
		 "    target_host = ::1\n    target_port = %u\n"
		 "    prefer_ipv6 = yes\n",
		 port_of(v6));
	rnsc_iface *c6 = open_iface("c6", "BackboneClientInterface", opts);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c6);
	CU_ASSERT(run_until(is_online, c6, 5000));
	CU_ASSERT(run_until(child_online, NULL, 5000));
	CU_ASSERT_PTR_EQUAL(rnsc_iface_parent(last_child), v6);
	rx_clear();
	CU_ASSERT_EQUAL(rnsc_iface_send(last_child, f, make_frame(3, f)), 0);
	CU_ASSERT(run_until(have_rx, &one, 5000));
	CU_ASSERT(nrx == 1 && rx[0].iface == c6 && rx[0].len == 100 &&
		  memcmp(rx[0].data, f, 100) == 0);
	/* A listener bound through device = lo takes lo's IPv4 address. */
	rnsc_iface *dev = open_iface("dev", "BackboneInterface", "    device = lo\n    port = 0\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	rnsc_iface_describe(dev, d, sizeof(d));
	CU_ASSERT(strncmp(d, "BackboneInterface[dev/127.0.0.1:", 32) == 0);
	/* ... and its IPv6 address when prefer_ipv6 is set. */
	rnsc_iface *dev6 = open_iface("dev6", "BackboneInterface",
				      "    device = lo\n    port = 0\n    prefer_ipv6 = yes\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev6);
	rnsc_iface_describe(dev6, d, sizeof(d));
	CU_ASSERT(strncmp(d, "BackboneInterface[dev6/[::1]:", 29) == 0);
	tu_teardown();
}

static void test_reconnect(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv = open_listener("srv", 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	unsigned port = port_of(srv);
	rnsc_iface *cli = open_client("cli", port, "    reconnect_wait = 0.2\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
	CU_ASSERT_FATAL(run_until(is_online, cli, 5000));
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));

	rnsc_iface_close(srv);
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 1);
	CU_ASSERT_FATAL(run_until(is_offline, cli, 5000));
	run_for(500); /* a few refused attempts */
	uint8_t f[64];
	CU_ASSERT_EQUAL(rnsc_iface_send(cli, f, make_frame(2, f)), RNSC_ERR_STATE);
	srv = open_listener("srv", port, NULL);
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

	/* max_reconnect_tries: one round of attempts, then the client stays down. */
	rnsc_iface *gone = open_client("gone", 9,
				       "    reconnect_wait = 0.05\n"
				       "    max_reconnect_tries = 2\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(gone);
	run_for(600);
	CU_ASSERT(!rnsc_iface_online(gone));
	tu_teardown();
}

static void test_bad_input(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv = open_listener("srv", 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	int fd = raw_connect(port_of(srv));
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));

	static uint8_t payload[MAXF + 1], enc[2 * (MAXF + 1) + 2];
	raw_send(fd, (const uint8_t *)"hello", 5); /* garbage before any FLAG */
	memset(payload, 0x41, sizeof(payload));
	int n = rnsc_hdlc_encode(enc, sizeof(enc), payload, 10); /* runt */
	raw_send(fd, enc, (size_t)n);
	n = rnsc_hdlc_encode(enc, sizeof(enc), payload, MAXF + 1); /* HW_MTU + IFAC + 1 */
	raw_send(fd, enc, (size_t)n);
	n = rnsc_hdlc_encode(enc, sizeof(enc), payload, MAXF); /* the largest accepted */
	raw_send(fd, enc, (size_t)n);
	n = rnsc_hdlc_encode(enc, sizeof(enc), payload, 20); /* the smallest accepted */
	raw_send(fd, enc, (size_t)n);
	static const uint8_t binary[] = {0x7E, 0x7D, 0x7D, 0x7D, 0x7E}; /* 2-byte runt */
	raw_send(fd, binary, sizeof(binary));
	size_t want = 2;
	CU_ASSERT(run_until(have_rx, &want, 5000));
	CU_ASSERT_EQUAL(nrx, 2);
	if (nrx == 2) {
		CU_ASSERT_EQUAL(rx[0].len, MAXF);
		CU_ASSERT_EQUAL(rx[1].len, 20);
	}
	/* Half a frame, then silence: nothing is delivered and the connection stays. */
	raw_send(fd, enc, 12);
	run_for(300);
	CU_ASSERT_EQUAL(nrx, 2);
	CU_ASSERT_PTR_NOT_NULL(last_child);
	/* Then the peer vanishes: the cut frame is counted. */
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

	/* A megabyte of noise with flags sprinkled in: counted, never a crash. */
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
	CU_ASSERT(rnsc_iface_online(srv));
	tu_teardown();
}

/* A flood of 40 connections against max_clients = 8: 8 are kept, 32 are closed at
 * once and counted; when the kept ones leave, new connections are accepted again. */
static void test_flood(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv =
		open_listener("srv", 0, "    max_clients = 8\n    block_fast_flapping = no\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	unsigned port = port_of(srv);
	int fds[40];
	for (int k = 0; k < 40; k++) {
		fds[k] = raw_connect(port);
		CU_ASSERT(fds[k] >= 0);
		rnsc_loop_run_once(L, 0);
	}
	flood_goal g = {srv, 8, 32};
	CU_ASSERT(run_until(flood_reached, &g, 5000));
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 9);
	/* The first 8 were kept (accept order is connect order); the others see EOF. */
	for (int k = 8; k < 40; k++)
		CU_ASSERT(fds[k] >= 0 && raw_sees_eof(fds[k], 2000));
	/* The kept ones still work: a frame from one of them is delivered. */
	uint8_t f[64], e[160];
	int n = rnsc_hdlc_encode(e, sizeof(e), f, make_frame(2, f));
	raw_send(fds[0], e, (size_t)n);
	size_t one = 1;
	CU_ASSERT(run_until(have_rx, &one, 5000));
	for (int k = 0; k < 40; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	size_t only_srv = 1;
	CU_ASSERT(run_until(host_count_is, &only_srv, 5000));
	int fd = raw_connect(port);
	CU_ASSERT(fd >= 0);
	CU_ASSERT(run_until(child_online, NULL, 5000));
	CU_ASSERT_EQUAL(status_of(srv, RNSC_IFACE_DROP_REFUSED, NULL), 32);
	if (fd >= 0)
		close(fd);
	tu_teardown();
}

/* Beyond fast_flapping_grace short-lived connections from one IP, further ones are
 * refused until fast_flapping_block_time passes. */
static void test_fast_flapping(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv = open_listener("srv", 0,
					"    fast_flapping_grace = 2\n"
					"    fast_flapping_block_time = 0.05\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	unsigned port = port_of(srv);
	size_t only_srv = 1;
	for (int k = 0; k < 3; k++) { /* three flaps: the third exceeds the grace of 2 */
		int fd = raw_connect(port);
		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT(run_until(child_online, NULL, 5000));
		close(fd);
		CU_ASSERT(run_until(host_count_is, &only_srv, 5000));
	}
	CU_ASSERT_EQUAL(added_children, 3);
	int fd = raw_connect(port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(raw_sees_eof(fd, 2000));
	close(fd);
	CU_ASSERT_EQUAL(added_children, 3);
	CU_ASSERT_EQUAL(status_of(srv, RNSC_IFACE_DROP_REFUSED, NULL), 1);
	/* The block (0.05 min = 3 s, long enough for a slow machine to see it) expires. */
	run_for(3300);
	fd = raw_connect(port);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(run_until(child_online, NULL, 5000));
	CU_ASSERT_EQUAL(added_children, 4);
	close(fd);
	tu_teardown();
}

/* Out of descriptors: accept fails with EMFILE while connections wait in the backlog.
 * The listener pauses instead of spinning on its readable socket, and takes the
 * waiting connections once descriptors are available again. */
static void test_fd_exhaustion(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv = open_listener("srv", 0, "    block_fast_flapping = no\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	int fds[3];
	for (int k = 0; k < 3; k++)
		fds[k] = raw_connect(port_of(srv)); /* complete in the backlog, not accepted yet */
	CU_ASSERT_FATAL(fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0);
	struct rlimit old, low;
	CU_ASSERT_FATAL(getrlimit(RLIMIT_NOFILE, &old) == 0);
	int top = fds[2] > fds[1] ? fds[2] : fds[1];
	top = top > fds[0] ? top : fds[0];
	low = old;
	low.rlim_cur = (rlim_t)top + 1; /* nothing above the newest descriptor */
	CU_ASSERT_FATAL(setrlimit(RLIMIT_NOFILE, &low) == 0);
	/* Descriptors below top that are free would still be handed out: fill them. */
	int fill[64], nfill = 0;
	while (nfill < 64) {
		int f = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (f < 0)
			break;
		fill[nfill++] = f;
	}
	run_for(600); /* accept keeps failing: paused, retried every 250 ms */
	uint32_t ch = 0;
	(void)status_of(srv, RNSC_IFACE_DROP_REFUSED, &ch);
	CU_ASSERT_EQUAL(ch, 0);
	for (int k = 0; k < nfill; k++)
		close(fill[k]);
	CU_ASSERT_FATAL(setrlimit(RLIMIT_NOFILE, &old) == 0);
	flood_goal g = {srv, 3, 0};
	CU_ASSERT(run_until(flood_reached, &g, 5000));
	for (int k = 0; k < 3; k++)
		close(fds[k]);
	tu_teardown();
}

/* Reads everything the peer has for fd (pumping the loop so the listener keeps writing)
 * until nothing more comes for a few rounds or budget_ms passes. Returns bytes read. */
static size_t raw_drain(int fd, unsigned budget_ms)
{
	static uint8_t b[1 << 16];
	size_t total = 0;
	int idle = 0;
	uint64_t end = mono_ms() + budget_ms;
	while (idle < 5 && mono_ms() < end) {
		ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		if (n > 0) {
			total += (size_t)n;
			idle = 0;
		} else {
			idle++;
		}
		rnsc_loop_run_once(L, n > 0 ? 0 : 2);
	}
	return total;
}

/* Offers 32 KiB frames to a connection whose peer does not read until one is refused. */
static int fill_until_refused(rnsc_iface *child)
{
	static uint8_t f[MAXF];
	size_t len = make_frame(NFRAMES - 1, f);
	for (int k = 0; k < 2000; k++) { /* at most ~65 MiB offered */
		int rc = rnsc_iface_send(child, f, len);
		if (rc == RNSC_ERR_TOOBIG)
			return 1;
		CU_ASSERT_EQUAL(rc, 0);
		rnsc_loop_run_once(L, 0);
	}
	return 0;
}

/* A peer that stops reading: the 4 MiB queue bound refuses frames; after 3 one-second
 * ticks without progress egress control gates the queue, so even once the peer has
 * drained everything a new frame is refused until the next tick sees the queue clear;
 * and after 12 s without drain progress the connection is torn down (DP_EC_DEAD_TIME).
 * The gating check relies on tick timing: the drain happens half-way between ticks. */
static void test_stalled_peer(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv = open_listener("srv", 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	int fd = raw_connect(port_of(srv));
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));
	rnsc_iface *child = last_child;
	/* Ticks run every second from the first EAGAIN, which falls between ts and te: the
	 * third (the gate) by te + 3 s, the fourth not before ts + 4 s. The drain and the
	 * probe must fit between; a loaded machine that misses the window tries again. */
	int checked = 0;
	uint64_t refused = 0;
	for (int attempt = 0; attempt < 3 && !checked; attempt++) {
		uint64_t ts = mono_ms();
		CU_ASSERT_FATAL(fill_until_refused(child));
		uint64_t te = mono_ms();
		refused++;
		while (mono_ms() < te + 3100)
			rnsc_loop_run_once(L, 5);
		CU_ASSERT(raw_drain(fd, 300) > ((size_t)4 << 20));
		uint8_t small[20];
		if (mono_ms() + 50 < ts + 4000) {
			CU_ASSERT_EQUAL(rnsc_iface_send(child, small, make_frame(0, small)),
					RNSC_ERR_TOOBIG);
			refused++;
			checked = 1;
		} else {
			fprintf(stderr,
				"stalled peer: tick window missed (fill took %llu ms), again\n",
				(unsigned long long)(te - ts));
		}
		run_for(1500); /* the next tick finds the queue drained and releases the gate */
		raw_drain(fd, 300);
		CU_ASSERT_EQUAL(rnsc_iface_send(child, small, make_frame(0, small)), 0);
	}
	CU_ASSERT(checked);
	CU_ASSERT_EQUAL(status_of(child, RNSC_IFACE_DROP_TXQUEUE, NULL), refused);

	/* Teardown comes 12 s after the last tick that saw progress (the kernel may still
	 * take data on the first tick after the fill); a loaded machine delays ticks, so the
	 * bound is generous: the behaviour is checked here, not its timing. */
	CU_ASSERT(fill_until_refused(child));
	size_t only_srv = 1;
	uint64_t t0 = mono_ms();
	CU_ASSERT(run_until(host_count_is, &only_srv, 40000));
	fprintf(stderr, "stalled peer: torn down %llu ms after the queue filled\n",
		(unsigned long long)(mono_ms() - t0));
	CU_ASSERT_PTR_NULL(last_child);
	close(fd);
	tu_teardown();
}

static void test_config_errors(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	static const char *srv =
		"[interfaces]\n [[S]]\n type = BackboneInterface\n enabled = yes\n";
	static const char *cli =
		"[interfaces]\n [[C]]\n type = BackboneClientInterface\n enabled = yes\n";
	char text[1024];
#define EXPECT(hdr, opts, code, n1, n2)                                                            \
	do {                                                                                       \
		snprintf(text, sizeof(text), "%s%s", hdr, opts);                                   \
		tu_expect_error(text, code, n1, n2);                                               \
	} while (0)
	EXPECT(srv, " listen_ip = 127.0.0.1\n", RNSC_ERR_CONFIG_VALUE,
	       "[[S]] option \"listen_port\"", "no TCP port");
	EXPECT(srv, " listen_port = 4242\n", RNSC_ERR_CONFIG_VALUE, "\"listen_ip\"",
	       "no TCP bind IP");
	EXPECT(srv, " listen_on = no such host.invalid\n port = 4242\n", RNSC_ERR_CONFIG_VALUE,
	       "\"listen_on\"", "cannot resolve");
	EXPECT(srv, " device = nosuchdev0\n port = 4242\n", RNSC_ERR_NOENT, "\"device\"",
	       "no kernel interface named");
	EXPECT(srv, " listen_ip = 127.0.0.1\n listen_port = 70000\n", RNSC_ERR_CONFIG_VALUE,
	       "\"listen_port\"", NULL);
	EXPECT(srv, " listen_ip = 192.0.2.77\n listen_port = 0\n", RNSC_ERR_IO, "\"listen_ip\"",
	       "cannot listen");
	EXPECT(srv, " listen_ip = 127.0.0.1\n port = 0\n max_clients = 0\n", RNSC_ERR_CONFIG_VALUE,
	       "\"max_clients\"", NULL);
	EXPECT(srv, " listen_ip = 127.0.0.1\n port = 0\n block_fast_flapping = perhaps\n",
	       RNSC_ERR_CONFIG_VALUE, "[[S]] block_fast_flapping", "not a boolean");
	EXPECT(cli, " target_port = 4242\n", RNSC_ERR_CONFIG_VALUE, "\"target_host\"", NULL);
	EXPECT(cli, " target_host = 127.0.0.1\n", RNSC_ERR_CONFIG_VALUE, "\"target_port\"", NULL);
	EXPECT(cli, " remote = 127.0.0.1\n port = 0\n", RNSC_ERR_CONFIG_VALUE, "\"port\"",
	       "port 0");
	EXPECT(cli, " target_host = 127.0.0.1\n target_port = x\n", RNSC_ERR_CONFIG_VALUE,
	       "[[C]] target_port", "not an integer");
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 0);

	rnsc_iface *s = open_listener("srv", 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	snprintf(text, sizeof(text), "%s listen_ip = 127.0.0.1\n port = %u\n", srv, port_of(s));
	tu_expect_error(text, RNSC_ERR_IO, "[[S]] option \"port\"", "in use");
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 1);
	tu_teardown();
#undef EXPECT
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
		{"", 1, 100000000, 32768},
		{"", 0, 100000000, 32768},
		{"    bitrate = 1000000000\n", 1, 1000000000, 524288},
		{"    bitrate = 10000000\n", 0, 10000000, 16384},
		{"    bitrate = 3\n", 1, 100000000, 32768}, /* below MINIMUM_BITRATE: ignored */
		{"    bitrate = 1000\n", 0, 1000, 0},       /* the reference's None */
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char name[16];
		snprintf(name, sizeof(name), "m%zu", k);
		rnsc_iface *i = cases[k].server ? open_listener(name, 0, cases[k].extra)
						: open_client(name, 9, cases[k].extra);
		CU_ASSERT_PTR_NOT_NULL(i);
		if (!i)
			continue;
		rnsc_iface_status st;
		rnsc_iface_status_get(i, &st);
		CU_ASSERT_EQUAL(st.stats.bitrate, cases[k].bitrate);
		CU_ASSERT_EQUAL(st.stats.hw_mtu, cases[k].hw_mtu);
	}
	/* A child inherits its listener's MTU: 524288 + 16 crosses, one more byte does not. */
	rnsc_iface *srv = open_listener("big", 0, "    bitrate = 1000000000\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	int fd = raw_connect(port_of(srv));
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));
	static uint8_t p[524305], e[524305 + 2];
	memset(p, 0x33, sizeof(p));
	int n = rnsc_hdlc_encode(e, sizeof(e), p, 524304);
	raw_send(fd, e, (size_t)n);
	n = rnsc_hdlc_encode(e, sizeof(e), p, 524305);
	raw_send(fd, e, (size_t)n);
	size_t one = 1;
	CU_ASSERT(run_until(have_rx, &one, 5000));
	run_for(100);
	CU_ASSERT(nrx == 1 && rx[0].len == 524304);
	CU_ASSERT_PTR_NOT_NULL_FATAL(last_child); /* drops reach the listener on removal */
	CU_ASSERT_EQUAL(status_of(last_child, RNSC_IFACE_DROP_OVERSIZE, NULL), 1);
	close(fd);
	tu_teardown();
}

/* ---- interop with the reference --------------------------------------------------------- */

static int peer_online(void *a)
{
	(void)a;
	return peer_has(cur_peer, "ONLINE") || peer_has(cur_peer, "RESULT");
}

/* rnsc client (a BackboneInterface with remote) -> the reference's BackboneInterface. */
static void test_interop_ref_server(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	peer p;
	CU_ASSERT_FATAL(peer_start(&p, "iface_backbone_peer.py", "server", NULL) == 0);
	cur_peer = &p;
	CU_ASSERT(run_until(peer_port, NULL, 30000));
	unsigned port = 0;
	sscanf(peer_line(&p, "PORT "), "PORT %u", &port);
	CU_ASSERT(port > 0);
	if (port) {
		char opts[128];
		snprintf(opts, sizeof(opts), "    remote = 127.0.0.1\n    port = %u\n", port);
		rnsc_iface *cli = open_iface("to ref", "BackboneInterface", opts);
		CU_ASSERT_PTR_NOT_NULL(cli);
		if (cli && run_until(is_online, cli, 10000) &&
		    run_until(peer_online, NULL, 10000)) {
			static uint8_t f[MAXF];
			for (unsigned i = 0; i < NFRAMES; i++)
				CU_ASSERT_EQUAL(rnsc_iface_send(cli, f, make_frame(i, f)), 0);
			size_t want = 2 * NFRAMES; /* its own frames and the echoes of ours */
			CU_ASSERT(run_until(peer_done, &want, 20000));
			CU_ASSERT_EQUAL(nrx, 2 * NFRAMES);
			CU_ASSERT(frames_match(cli, 2));
			char ok[32];
			snprintf(ok, sizeof(ok), "RESULT ok %zu\n", NFRAMES);
			CU_ASSERT_PTR_NOT_NULL(strstr(p.buf, ok));
		} else {
			CU_FAIL("rnsc client did not connect to the reference's BackboneInterface");
		}
	}
	if (!strstr(p.buf, "RESULT ok"))
		fprintf(stderr, "peer said: %s\n", p.buf);
	peer_stop(&p);
	tu_teardown();
}

/* The reference's BackboneClientInterface -> rnsc listener. */
static void test_interop_ref_client(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *srv = open_listener("srv", 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	char arg[16];
	snprintf(arg, sizeof(arg), "%u", port_of(srv));
	peer p;
	CU_ASSERT_FATAL(peer_start(&p, "iface_backbone_peer.py", "client", arg) == 0);
	cur_peer = &p;
	if (run_until(child_online, NULL, 30000) && run_until(peer_online, NULL, 10000)) {
		rnsc_iface *child = last_child;
		static uint8_t f[MAXF];
		for (unsigned i = 0; i < NFRAMES; i++)
			CU_ASSERT_EQUAL(rnsc_iface_send(child, f, make_frame(i, f)), 0);
		size_t want = 2 * NFRAMES;
		CU_ASSERT(run_until(peer_done, &want, 20000));
		CU_ASSERT_EQUAL(nrx, 2 * NFRAMES);
		CU_ASSERT(frames_match(child, 2));
		char ok[32];
		snprintf(ok, sizeof(ok), "RESULT ok %zu\n", NFRAMES);
		CU_ASSERT_PTR_NOT_NULL(strstr(p.buf, ok));
	} else {
		CU_FAIL("the reference's BackboneClientInterface did not connect");
	}
	if (!strstr(p.buf, "RESULT ok"))
		fprintf(stderr, "peer said: %s\n", p.buf);
	peer_stop(&p);
	tu_teardown();
}

static int suite_init(void)
{
	return tu_suite_init("backbone.so");
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("iface_backbone", suite_init, tu_suite_fini);
	CU_add_test(s, "plugin serves the Backbone types", test_plugin_found);
	CU_add_test(s, "listener and client exchange frames", test_exchange);
	CU_add_test(s, "Reticulum.py aliases: listen_on, remote, port, device", test_aliases);
	CU_add_test(s, "client reconnects; max_reconnect_tries", test_reconnect);
	CU_add_test(s, "garbage, runts, oversize, half frames, noise", test_bad_input);
	CU_add_test(s, "connection flood bounded by max_clients", test_flood);
	CU_add_test(s, "fast-flapping block and its expiry", test_fast_flapping);
	CU_add_test(s, "out of descriptors: accept pauses, then recovers", test_fd_exhaustion);
	CU_add_test(s, "stalled peer: queue bound, egress dead time", test_stalled_peer);
	CU_add_test(s, "config errors name section and option", test_config_errors);
	CU_add_test(s, "bitrate to MTU tiers, inherited by children", test_mtu_policy);
	CU_add_test(s, "interop: rnsc client to reference BackboneInterface",
		    test_interop_ref_server);
	CU_add_test(s, "interop: reference BackboneClientInterface to rnsc",
		    test_interop_ref_client);
	return rnsc_cu_run();
}
