/* SPDX-License-Identifier: MIT */
/*
 * The interface host with the "tcp" plugin over real sockets on 127.0.0.1: rnsc server
 * and client through the runtime, reconnects, malformed input, config errors and the
 * MTU policy, and interop with the pinned reference's own TCP interface classes
 * (tests/iface_tcp_peer.py run with the venv's python). Every wait is bounded.
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
#include "iface_host.h"

/* Same generator as tests/iface_tcp_peer.py. */
static const size_t LENGTHS[] = {20, 21, 64, 100, 500, 1000, 4096, 16383, 16400};
#define NFRAMES (sizeof(LENGTHS) / sizeof(LENGTHS[0]))

static size_t make_frame(unsigned i, uint8_t *out)
{
	size_t n = LENGTHS[i];
	for (size_t j = 0; j < n; j++)
		out[j] = (uint8_t)((i * 31 + j * 7) & 0xFF);
	out[1] = 0x7E;
	out[2] = 0x7D;
	out[3] = 0x5E;
	return n;
}

static rnsc_ctx *C;
static rnsc_plugin_host *P;
static rnsc_loop *L;
static rnsc_iface_host *H;

#define MAXRX 256
static struct {
	rnsc_iface *iface;
	uint8_t *data;
	size_t len;
} rx[MAXRX];
static size_t nrx;

static void rx_clear(void)
{
	for (size_t k = 0; k < nrx; k++)
		free(rx[k].data);
	nrx = 0;
}

static void on_rx(void *ud, rnsc_iface *iface, const uint8_t *frame, size_t len, uint64_t now)
{
	(void)ud;
	(void)now;
	if (nrx >= MAXRX)
		return;
	rx[nrx].iface = iface;
	rx[nrx].data = malloc(len ? len : 1);
	memcpy(rx[nrx].data, frame, len);
	rx[nrx].len = len;
	nrx++;
}

static rnsc_iface *last_child;
static int removed_events;

static void on_event(void *ud, rnsc_iface *iface, int ev)
{
	(void)ud;
	if (ev == RNSC_IFACE_ADDED && rnsc_iface_parent(iface))
		last_child = iface;
	if (ev == RNSC_IFACE_REMOVED) {
		removed_events++;
		if (iface == last_child)
			last_child = NULL;
	}
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

typedef int (*pred_fn)(void *);

/* Runs the loop until pred holds or timeout_ms passes; returns pred's final value. */
static int run_until(pred_fn pred, void *arg, unsigned timeout_ms)
{
	uint64_t end = mono_ms() + timeout_ms;
	while (!pred(arg)) {
		if (mono_ms() >= end)
			return 0;
		rnsc_loop_run_once(L, 10);
	}
	return 1;
}

static void run_for(unsigned ms)
{
	uint64_t end = mono_ms() + ms;
	while (mono_ms() < end)
		rnsc_loop_run_once(L, 10);
}

static int is_online(void *a)
{
	return rnsc_iface_online(a);
}
static int is_offline(void *a)
{
	return !rnsc_iface_online(a);
}
static int child_online(void *a)
{
	(void)a;
	return last_child && rnsc_iface_online(last_child);
}
static int have_rx(void *a)
{
	return nrx >= *(size_t *)a;
}
static int host_count_is(void *a)
{
	return rnsc_iface_host_count(H) == *(size_t *)a;
}

static int open_text(const char *text, rnsc_config_error *err)
{
	rnsc_config *cfg = NULL;
	int rc = rnsc_config_parse(C, text, strlen(text), "test", &cfg, err);
	if (rc)
		return rc;
	rc = rnsc_iface_host_open_config(H, cfg, err);
	rnsc_config_del(cfg);
	return rc;
}

static rnsc_iface *open_server(const char *name, unsigned port, const char *extra)
{
	char text[512];
	rnsc_config_error err;
	snprintf(text, sizeof(text),
		 "[interfaces]\n  [[%s]]\n    type = TCPServerInterface\n    enabled = yes\n"
		 "    listen_ip = 127.0.0.1\n    listen_port = %u\n%s",
		 name, port, extra ? extra : "");
	int rc = open_text(text, &err);
	if (rc != 1)
		fprintf(stderr, "open_server: %d %s\n", rc, err.msg);
	return rnsc_iface_host_find(H, name);
}

static rnsc_iface *open_client(const char *name, unsigned port, const char *extra)
{
	char text[512];
	rnsc_config_error err;
	snprintf(text, sizeof(text),
		 "[interfaces]\n  [[%s]]\n    type = TCPClientInterface\n    enabled = yes\n"
		 "    target_host = 127.0.0.1\n    target_port = %u\n%s",
		 name, port, extra ? extra : "");
	int rc = open_text(text, &err);
	if (rc != 1)
		fprintf(stderr, "open_client: %d %s\n", rc, err.msg);
	return rnsc_iface_host_find(H, name);
}

static unsigned port_of(rnsc_iface *i)
{
	rnsc_iface_status st;
	rnsc_iface_status_get(i, &st);
	return st.stats.local_port;
}

static int setup(void)
{
	rx_clear();
	last_child = NULL;
	removed_events = 0;
	if (rnsc_loop_new(C, &L) || rnsc_iface_host_new(C, P, L, &H))
		return 1;
	rnsc_iface_host_set_rx(H, on_rx, NULL);
	rnsc_iface_host_set_event(H, on_event, NULL);
	return 0;
}

static void teardown(void)
{
	rnsc_iface_host_del(H);
	H = NULL;
	rnsc_loop_del(L);
	L = NULL;
	rx_clear();
}

/* Every rx frame i (0..NFRAMES) must appear exactly `times` times on iface. */
static int frames_match(rnsc_iface *iface, unsigned times)
{
	static uint8_t want[16400];
	unsigned seen[NFRAMES] = {0};
	for (size_t k = 0; k < nrx; k++) {
		if (iface && rx[k].iface != iface)
			return 0;
		int hit = 0;
		for (unsigned i = 0; i < NFRAMES && !hit; i++) {
			size_t n = make_frame(i, want);
			if (n == rx[k].len && memcmp(want, rx[k].data, n) == 0) {
				seen[i]++;
				hit = 1;
			}
		}
		if (!hit)
			return 0;
	}
	for (unsigned i = 0; i < NFRAMES; i++)
		if (seen[i] != times)
			return 0;
	return 1;
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
	CU_ASSERT_FATAL(setup() == 0);
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
	teardown();
}

static void test_reconnect(void)
{
	CU_ASSERT_FATAL(setup() == 0);
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
	teardown();
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
	CU_ASSERT_FATAL(setup() == 0);
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
	teardown();
}

static void expect_error(const char *text, int code, const char *needle1, const char *needle2)
{
	rnsc_config_error err;
	int rc = open_text(text, &err);
	CU_ASSERT_EQUAL(rc, code);
	if (rc != code || !strstr(err.msg, needle1) || (needle2 && !strstr(err.msg, needle2)))
		fprintf(stderr, "unexpected error %d (%s) for:\n%s\n", rc, err.msg, text);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, needle1));
	if (needle2)
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, needle2));
}

static void test_config_errors(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	expect_error("[interfaces]\n [[Weird]]\n type = NoSuchInterface\n enabled = yes\n",
		     RNSC_ERR_NOTFOUND, "[[Weird]]", "\"type\"");
	expect_error("[interfaces]\n [[S]]\n type = TCPServerInterface\n enabled = yes\n"
		     " listen_ip = 127.0.0.1\n listen_port = abc\n",
		     RNSC_ERR_CONFIG_VALUE, "[[S]] listen_port", "not an integer");
	expect_error("[interfaces]\n [[S]]\n type = TCPServerInterface\n enabled = yes\n"
		     " listen_ip = 127.0.0.1\n listen_port = 70000\n",
		     RNSC_ERR_CONFIG_VALUE, "\"listen_port\"", NULL);
	expect_error("[interfaces]\n [[S]]\n type = TCPServerInterface\n enabled = yes\n"
		     " listen_port = 4242\n",
		     RNSC_ERR_CONFIG_VALUE, "\"listen_ip\"", NULL);
	expect_error("[interfaces]\n [[S]]\n type = TCPServerInterface\n enabled = yes\n"
		     " listen_ip = 127.0.0.1\n",
		     RNSC_ERR_CONFIG_VALUE, "\"listen_port\"", NULL);
	expect_error("[interfaces]\n [[C]]\n type = TCPClientInterface\n enabled = yes\n"
		     " target_host = 127.0.0.1\n",
		     RNSC_ERR_CONFIG_VALUE, "\"target_port\"", NULL);
	expect_error("[interfaces]\n [[C]]\n type = TCPClientInterface\n enabled = yes\n"
		     " target_host = 127.0.0.1\n target_port = 4242\n fixed_mtu = 100\n",
		     RNSC_ERR_CONFIG_VALUE, "\"fixed_mtu\"", "too small");
	expect_error("[interfaces]\n [[C]]\n type = TCPClientInterface\n enabled = yes\n"
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
	expect_error(text, RNSC_ERR_IO, "[[Second]] option \"port\"", "in use");
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 1);
	/* Disabled sections are skipped. */
	CU_ASSERT_EQUAL(open_text("[interfaces]\n [[Off]]\n type = NoSuchInterface\n"
				  " enabled = no\n",
				  &(rnsc_config_error){0}),
			0);
	teardown();
}

static void test_mtu_policy(void)
{
	CU_ASSERT_FATAL(setup() == 0);
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
	teardown();
}

/* ---- interop with the reference --------------------------------------------------------- */

typedef struct peer {
	pid_t pid;
	int in_fd;  /* its stdin */
	int out_fd; /* its stdout, non-blocking */
	char buf[4096];
	size_t len;
} peer;

static int peer_start(peer *p, const char *mode, const char *arg)
{
	const char *venv = getenv("RNSC_VENV");
	const char *src = getenv("RNSC_SRCDIR");
	char py[1024], script[1024];
	snprintf(py, sizeof(py), "%s/bin/python", venv && *venv ? venv : RNSC_DEFAULT_VENV);
	snprintf(script, sizeof(script), "%s/tests/iface_tcp_peer.py", src && *src ? src : RNSC_SRCDIR);
	int in[2], out[2];
	if (pipe(in) || pipe(out))
		return -1;
	memset(p, 0, sizeof(*p));
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execl(py, py, script, mode, arg, (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", py, strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in_fd = in[1];
	p->out_fd = out[0];
	fcntl(p->out_fd, F_SETFL, fcntl(p->out_fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

/* Collects the peer's output; true once a line starting with `prefix` is there. */
static int peer_has(peer *p, const char *prefix)
{
	ssize_t n;
	while (p->len + 1 < sizeof(p->buf) &&
	       (n = read(p->out_fd, p->buf + p->len, sizeof(p->buf) - 1 - p->len)) > 0)
		p->len += (size_t)n;
	p->buf[p->len] = 0;
	for (const char *l = p->buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, prefix, strlen(prefix)) == 0 && strchr(l, '\n'))
			return 1;
	return 0;
}

static const char *peer_line(peer *p, const char *prefix)
{
	for (const char *l = p->buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, prefix, strlen(prefix)) == 0)
			return l;
	return "";
}

static void peer_stop(peer *p)
{
	close(p->in_fd); /* the peer exits when its stdin closes */
	int status = 0;
	for (int k = 0; k < 300; k++) {
		if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
			close(p->out_fd);
			return;
		}
		rnsc_loop_run_once(L, 10);
	}
	kill(p->pid, SIGKILL);
	waitpid(p->pid, &status, 0);
	close(p->out_fd);
}

static peer *cur_peer;
static int peer_done(void *a)
{
	size_t want = *(size_t *)a;
	return nrx >= want && peer_has(cur_peer, "RESULT");
}
static int peer_port(void *a)
{
	(void)a;
	return peer_has(cur_peer, "PORT ") || peer_has(cur_peer, "RESULT");
}

/* rnsc client -> the reference's TCPServerInterface. */
static void test_interop_ref_server(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	peer p;
	CU_ASSERT_FATAL(peer_start(&p, "server", NULL) == 0);
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
	teardown();
}

/* The reference's TCPClientInterface -> rnsc server. */
static void test_interop_ref_client(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	rnsc_iface *srv = open_server("srv", 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	char arg[16];
	snprintf(arg, sizeof(arg), "%u", port_of(srv));
	peer p;
	CU_ASSERT_FATAL(peer_start(&p, "client", arg) == 0);
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
	teardown();
}

static int suite_init(void)
{
	char path[4096];
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &P))
		return 1;
	snprintf(path, sizeof(path), "%s/plugins/iface/.libs/tcp.so", RNSC_BUILDDIR);
	return rnsc_plugin_host_load_file(P, path) != 0;
}

static int suite_fini(void)
{
	rnsc_plugin_host_del(P);
	rnsc_ctx_del(C);
	return 0;
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("iface_tcp", suite_init, suite_fini);
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
