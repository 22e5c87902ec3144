/* SPDX-License-Identifier: MIT */
/*
 * The interface host with the "lossy" test plugin (LossyInterface) over real sockets on
 * 127.0.0.1: a clean pair delivers every frame once; drop, duplicate, reorder and latency
 * each do what they say, seeded runs repeat exactly, a direction switched off by `apply`
 * is untouched, `spare = setup` lets set-up packets through total loss and nothing else;
 * runts and oversized frames; config errors name the option.
 */
#include <netinet/in.h>
#include <stdarg.h>
#include <sys/socket.h>

#include "iface_test_util.h"

static const size_t LENGTHS[] = {20,  40,   100,  200, 300, 400, 500, 600, 700,  800,
				 900, 1000, 1064, 21,  64,  128, 256, 512, 1024, 1063};
#define NFRAMES (sizeof(LENGTHS) / sizeof(LENGTHS[0]))

static size_t make_frame(unsigned i, uint8_t *out)
{
	return tu_make_frame(LENGTHS, i % NFRAMES, out);
}

static unsigned free_udp_port(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t l = sizeof(a);
	unsigned port = 0;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &l) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* A pair a <-> b; extra option lines for a (b is clean). */
static void open_pair(rnsc_iface **a, rnsc_iface **b, const char *a_opts)
{
	unsigned pa = free_udp_port(), pb = free_udp_port();
	CU_ASSERT_FATAL(pa && pb && pa != pb);
	char o[1024];
	snprintf(o, sizeof(o),
		 "    listen_ip = 127.0.0.1\n    listen_port = %u\n    forward_ip = 127.0.0.1\n"
		 "    forward_port = %u\n%s",
		 pa, pb, a_opts);
	*a = open_iface("a", "LossyInterface", o);
	snprintf(o, sizeof(o),
		 "    listen_ip = 127.0.0.1\n    listen_port = %u\n    forward_ip = 127.0.0.1\n"
		 "    forward_port = %u\n",
		 pb, pa);
	*b = open_iface("b", "LossyInterface", o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(*a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(*b);
}

static void send_n(rnsc_iface *i, unsigned n)
{
	uint8_t f[1100];
	for (unsigned k = 0; k < n; k++) {
		CU_ASSERT_EQUAL(rnsc_iface_send(i, f, make_frame(k, f)), 0);
		rnsc_loop_run_once(L, 0);
	}
}

static void test_clean(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *a, *b;
	open_pair(&a, &b, "");
	send_n(a, NFRAMES);
	size_t n = NFRAMES;
	CU_ASSERT(run_until(have_rx, &n, 5000));
	CU_ASSERT(tu_frames_match(make_frame, NFRAMES, 1100, b, 1));
	rnsc_iface_status st;
	rnsc_iface_status_get(a, &st);
	CU_ASSERT_EQUAL(st.stats.tx_packets, NFRAMES);
	CU_ASSERT_EQUAL(st.stats.hw_mtu, 1064);
	CU_ASSERT_EQUAL(st.stats.bitrate, 10000000);
	char d[256];
	rnsc_iface_describe(a, d, sizeof(d));
	CU_ASSERT_PTR_NOT_NULL(strstr(d, "LossyInterface[a/"));
	tu_teardown();
}

/* Drop everything one way; duplicate everything the other. */
static void test_drop_dup(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *a, *b;
	open_pair(&a, &b, "    drop = 100\n    apply = tx\n");
	send_n(a, 10);
	run_for(200);
	CU_ASSERT_EQUAL(nrx, 0);
	char d[256];
	rnsc_iface_describe(a, d, sizeof(d));
	CU_ASSERT_PTR_NOT_NULL(strstr(d, "tx 10/-10/+0/~0 rx 0/-0/+0/~0"));
	/* rx is not affected (apply = tx) */
	send_n(b, 5);
	size_t n = 5;
	CU_ASSERT(run_until(have_rx, &n, 5000));
	tu_teardown();

	CU_ASSERT_FATAL(tu_setup() == 0);
	open_pair(&a, &b, "    duplicate = 100\n    apply = rx\n");
	send_n(b, NFRAMES);
	n = 2 * NFRAMES;
	CU_ASSERT(run_until(have_rx, &n, 5000));
	CU_ASSERT(tu_frames_match(make_frame, NFRAMES, 1100, a, 2));
	tu_teardown();
}

/* 50% loss with a seed: the same frames get through on a second run. */
static unsigned survivors(const char *seed, uint8_t *mask)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *a, *b;
	char o[128];
	snprintf(o, sizeof(o), "    drop = 50\n    seed = %s\n", seed);
	open_pair(&a, &b, o);
	send_n(a, NFRAMES);
	run_for(300);
	memset(mask, 0, NFRAMES);
	for (size_t i = 0; i < nrx; i++)
		for (unsigned k = 0; k < NFRAMES; k++)
			if (rx[i].len == LENGTHS[k])
				mask[k] = 1;
	unsigned got = (unsigned)nrx;
	tu_teardown();
	return got;
}

static void test_seeded(void)
{
	uint8_t m1[NFRAMES], m2[NFRAMES], m3[NFRAMES];
	unsigned g1 = survivors("42", m1), g2 = survivors("42", m2), g3 = survivors("43", m3);
	CU_ASSERT(g1 > 0 && g1 < NFRAMES);
	CU_ASSERT(g1 == g2 && memcmp(m1, m2, NFRAMES) == 0);
	CU_ASSERT(g3 > 0 && memcmp(m1, m3, NFRAMES) != 0);
}

/* Reordering: every frame held back arrives after the next one (or after the delay). */
static void test_reorder_latency(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *a, *b;
	open_pair(&a, &b,
		  "    reorder = 50\n    seed = 3\n    reorder_delay_ms = 5\n    apply = tx\n");
	send_n(a, NFRAMES);
	size_t n = NFRAMES;
	CU_ASSERT(run_until(have_rx, &n, 5000));
	CU_ASSERT(tu_frames_match(make_frame, NFRAMES, 1100, b, 1));
	int reordered = 0;
	for (size_t i = 0; i + 1 < nrx; i++)
		if (rx[i].len != LENGTHS[i])
			reordered = 1;
	CU_ASSERT(reordered);
	tu_teardown();

	CU_ASSERT_FATAL(tu_setup() == 0);
	open_pair(&a, &b, "    latency_ms = 40\n");
	uint64_t t0 = mono_ms();
	send_n(a, 3);
	n = 3;
	CU_ASSERT(run_until(have_rx, &n, 5000));
	CU_ASSERT(mono_ms() - t0 >= 35);
	CU_ASSERT(tu_frames_match(make_frame, 3, 1100, b, 1));
	/* the receive side is delayed too */
	rx_clear();
	send_n(b, 2);
	n = 2;
	t0 = mono_ms();
	CU_ASSERT(run_until(have_rx, &n, 5000));
	CU_ASSERT(mono_ms() - t0 >= 30);
	/* more in flight than the delay line holds: the rest is dropped and counted */
	send_n(a, 300);
	run_for(200);
	char d[256];
	rnsc_iface_describe(a, d, sizeof(d));
	unsigned long long pk = 0, dr = 0;
	const char *tx = strstr(d, " tx ");
	CU_ASSERT(tx && sscanf(tx, " tx %llu/-%llu", &pk, &dr) == 2);
	CU_ASSERT(dr > 0 && pk == 303);
	tu_teardown();
}

/* A header: flags, hops, one address (or two for HEADER_2), context, some payload. */
static size_t hdr_frame(uint8_t flags, uint8_t ctx, uint8_t *out)
{
	size_t addr = (flags & 0x40) ? 32 : 16;
	memset(out, 0xA5, 80);
	out[0] = flags;
	out[1] = 0;
	out[2 + addr] = ctx;
	return 2 + addr + 1 + 40;
}

/* spare = setup under 100 % loss: announces, link requests, link proofs, path requests
 * (DATA to PLAIN), RTT and identify packets (also in HEADER_2) pass once each; link data,
 * other proofs, keepalives and anything with the IFAC bit are lost. */
static void test_spare_setup(void)
{
	static const struct {
		uint8_t flags, ctx;
		int spared;
	} F[] = {
		{0x01, 0x00, 1}, /* ANNOUNCE, SINGLE */
		{0x02, 0x00, 1}, /* LINKREQUEST */
		{0x0F, 0xFF, 1}, /* PROOF to a LINK, LRPROOF */
		{0x08, 0x00, 1}, /* DATA to PLAIN: a path request */
		{0x0C, 0xFE, 1}, /* DATA to a LINK, LRRTT */
		{0x0C, 0xFB, 1}, /* LINKIDENTIFY */
		{0x4C, 0xFE, 1}, /* HEADER_2 LRRTT */
		{0x0C, 0x00, 0}, /* link DATA */
		{0x0C, 0x01, 0}, /* RESOURCE part */
		{0x0C, 0xFA, 0}, /* KEEPALIVE */
		{0x0F, 0x00, 0}, /* an ordinary proof */
		{0x00, 0x00, 0}, /* DATA to SINGLE */
		{0x81, 0x00, 0}, /* IFAC set: the header cannot be read */
	};
	const size_t nf = sizeof(F) / sizeof(F[0]);
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *a, *b;
	open_pair(&a, &b, "    drop = 100\n    spare = setup\n    apply = tx\n");
	uint8_t f[128];
	size_t want = 0;
	for (size_t i = 0; i < nf; i++) {
		CU_ASSERT_EQUAL(rnsc_iface_send(a, f, hdr_frame(F[i].flags, F[i].ctx, f)), 0);
		rnsc_loop_run_once(L, 0);
		want += (size_t)F[i].spared;
	}
	CU_ASSERT(run_until(have_rx, &want, 5000));
	run_for(100);
	CU_ASSERT_EQUAL(nrx, want);
	size_t j = 0;
	for (size_t i = 0; i < nf && j < nrx; i++) {
		if (!F[i].spared)
			continue;
		CU_ASSERT(rx[j].len == hdr_frame(F[i].flags, F[i].ctx, f) &&
			  memcmp(rx[j].data, f, rx[j].len) == 0);
		j++;
	}
	char d[256];
	rnsc_iface_describe(a, d, sizeof(d));
	char exp[96];
	snprintf(exp, sizeof(exp), "tx %zu/-%zu/+0/~0 rx 0/-0/+0/~0 spared %zu/0]", nf, nf - want,
		 want);
	CU_ASSERT_PTR_NOT_NULL(strstr(d, exp));
	tu_teardown();
}

static void test_hostile(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *a, *b;
	open_pair(&a, &b, "");
	static uint8_t big[2000];
	CU_ASSERT_EQUAL(rnsc_iface_send(a, big, sizeof(big)), RNSC_ERR_TOOBIG);
	/* a runt and an oversized datagram straight to b */
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port_of(b))};
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CU_ASSERT(sendto(fd, big, 5, 0, (struct sockaddr *)&to, sizeof(to)) == 5);
	CU_ASSERT(sendto(fd, big, 1500, 0, (struct sockaddr *)&to, sizeof(to)) == 1500);
	close(fd);
	run_for(200);
	rnsc_iface_status st;
	rnsc_iface_status_get(b, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_RUNT], 1);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OVERSIZE], 1);
	CU_ASSERT_EQUAL(nrx, 0);
	tu_teardown();
}

static void test_config(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	static const char *hdr = "[interfaces]\n [[L]]\n type = LossyInterface\n enabled = yes\n";
	static const char *ok =
		" listen_ip = 127.0.0.1\n listen_port = 0\n forward_ip = 127.0.0.1\n"
		" forward_port = 9\n";
	char text[1024];
#define EXPECT(opts, code, n1)                                                                     \
	do {                                                                                       \
		snprintf(text, sizeof(text), "%s%s", hdr, opts);                                   \
		tu_expect_error(text, code, n1, NULL);                                             \
	} while (0)
#define EXPECT_OK(extra, code, n1)                                                                 \
	do {                                                                                       \
		snprintf(text, sizeof(text), "%s%s%s", hdr, ok, extra);                            \
		tu_expect_error(text, code, n1, NULL);                                             \
	} while (0)
	EXPECT("", RNSC_ERR_CONFIG_VALUE, "\"listen_ip\"");
	EXPECT(" listen_ip = 127.0.0.1\n", RNSC_ERR_CONFIG_VALUE, "\"forward_ip\"");
	EXPECT(" listen_ip = 127.0.0.1\n forward_ip = 127.0.0.1\n", RNSC_ERR_CONFIG_VALUE,
	       "\"listen_port\"");
	EXPECT(" listen_ip = 127.0.0.1\n forward_ip = 127.0.0.1\n listen_port = 0\n",
	       RNSC_ERR_CONFIG_VALUE, "\"forward_port\"");
	EXPECT(" listen_ip = 127.0.0.1\n forward_ip = 127.0.0.1\n listen_port = 70000\n"
	       " forward_port = 9\n",
	       RNSC_ERR_CONFIG_VALUE, "\"listen_port\"");
	EXPECT_OK(" drop = 101\n", RNSC_ERR_CONFIG_VALUE, "\"drop\"");
	EXPECT_OK(" drop = abc\n", RNSC_ERR_CONFIG_VALUE, "drop");
	EXPECT_OK(" drop = 60\n duplicate = 60\n", RNSC_ERR_CONFIG_VALUE, "\"duplicate\"");
	EXPECT_OK(" reorder = -1\n", RNSC_ERR_CONFIG_VALUE, "\"reorder\"");
	EXPECT_OK(" apply = sideways\n", RNSC_ERR_CONFIG_VALUE, "\"apply\"");
	EXPECT_OK(" reorder_delay_ms = 0\n", RNSC_ERR_CONFIG_VALUE, "\"reorder_delay_ms\"");
	EXPECT_OK(" latency_ms = 20000\n", RNSC_ERR_CONFIG_VALUE, "\"latency_ms\"");
	EXPECT_OK(" seed = x\n", RNSC_ERR_CONFIG_VALUE, "seed");
	EXPECT_OK(" spare = everything\n", RNSC_ERR_CONFIG_VALUE, "\"spare\"");
	EXPECT(" listen_ip = no.such.host.invalid\n forward_ip = 127.0.0.1\n listen_port = 0\n"
	       " forward_port = 9\n",
	       RNSC_ERR_CONFIG_VALUE, "\"listen_ip\"");
	EXPECT(" listen_ip = 127.0.0.1\n forward_ip = no.such.host.invalid\n listen_port = 0\n"
	       " forward_port = 9\n",
	       RNSC_ERR_CONFIG_VALUE, "\"forward_ip\"");
	EXPECT(" listen_ip = 192.0.2.1\n forward_ip = 127.0.0.1\n listen_port = 0\n"
	       " forward_port = 9\n",
	       RNSC_ERR_IO, "\"listen_port\"");
	tu_teardown();
}

static int suite_init(void)
{
	return tu_suite_init("lossy.so");
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("iface_lossy", suite_init, tu_suite_fini);
	CU_add_test(s, "clean pair delivers every frame once", test_clean);
	CU_add_test(s, "drop and duplicate, per direction", test_drop_dup);
	CU_add_test(s, "seeded loss repeats", test_seeded);
	CU_add_test(s, "reordering and latency", test_reorder_latency);
	CU_add_test(s, "spare = setup: set-up packets pass total loss", test_spare_setup);
	CU_add_test(s, "runts and oversized datagrams", test_hostile);
	CU_add_test(s, "config errors name the option", test_config);
	return rnsc_cu_run();
}
