/* SPDX-License-Identifier: MIT */
/*
 * The "tls" and "websocket" interface plugins through the runtime over real sockets on
 * 127.0.0.1: rnsc server and client exchanging frames of many lengths both ways,
 * reconnects, refused certificates (expired, wrong host, untrusted, pin mismatch), config
 * errors, and malformed input from raw sockets (garbage instead of handshakes, unmasked,
 * oversize and bad-opcode WebSocket frames, half frames). An independent Python peer
 * (tests/live/iface_tls_peer.py, stdlib ssl only) serves an expired certificate and checks
 * the rnsc server's TLS 1.3 handshake. Certificates are made at run time with the
 * OpenSSL API in a temp dir, removed at exit. Every wait is bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "cu_run.h"
#include "hdlc.h"
#include "iface_test_util.h"

static const size_t LENGTHS[] = {20, 21, 64, 100, 125, 126, 500, 1000, 4096, 16383, 16400};
#define NFRAMES (sizeof(LENGTHS) / sizeof(LENGTHS[0]))

static size_t make_frame(unsigned i, uint8_t *out)
{
	return tu_make_frame(LENGTHS, i, out);
}

static char dir[256]; /* the certificates */

/* Log lines are kept (and shown when RNSC_TEST_VERBOSE is set) so tests can look for
 * the error a refused handshake must produce. */
static char logbuf[1 << 16];
static size_t loglen;

static void on_log(void *ud, int level, const char *who, const char *msg)
{
	(void)ud;
	char line[1024];
	int n = snprintf(line, sizeof(line), "[%d] %s: %s\n", level, who ? who : "-", msg);
	if (n > 0 && loglen + (size_t)n < sizeof(logbuf)) {
		memcpy(logbuf + loglen, line, (size_t)n);
		loglen += (size_t)n;
		logbuf[loglen] = 0;
	}
	if (getenv("RNSC_TEST_VERBOSE"))
		fputs(line, stderr);
}

static int no_child(void *a)
{
	(void)a;
	return last_child == NULL;
}
static int log_has(void *a)
{
	return strstr(logbuf, a) != NULL;
}

/* Servers on 127.0.0.1; cert/key are file stems in dir ("srv" -> srv.pem, srv.key). */
static rnsc_iface *tls_server(const char *type, const char *name, unsigned port, const char *cert,
			      const char *extra)
{
	char o[1024];
	snprintf(o, sizeof(o),
		 "    listen_ip = 127.0.0.1\n    listen_port = %u\n"
		 "    certificate = %s/%s.pem\n    private_key = %s/%s.key\n%s",
		 port, dir, cert, dir, cert, extra ? extra : "");
	return open_iface(name, type, o);
}

static rnsc_iface *tls_client(const char *type, const char *name, unsigned port, const char *extra)
{
	char o[1024];
	snprintf(o, sizeof(o),
		 "    target_host = 127.0.0.1\n    target_port = %u\n    reconnect_wait = 0.2\n%s",
		 port, extra ? extra : "");
	return open_iface(name, type, o);
}

/* tu_setup, with the log kept from this test on. */
static int setup(void)
{
	loglen = 0;
	logbuf[0] = 0;
	return tu_setup();
}

static int frames_match(rnsc_iface *iface, unsigned times)
{
	return tu_frames_match(make_frame, NFRAMES, 16400, iface, times);
}

/* ---- certificates ------------------------------------------------------------------- */

static EVP_PKEY *ca_key;
static X509 *ca_cert;

static void add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v3;
	X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
	if (e) {
		X509_add_ext(x, e, -1);
		X509_EXTENSION_free(e);
	}
}

/* Makes stem.pem / stem.key: signed by the CA unless self_signed (or is_ca). */
static int make_cert(const char *stem, const char *cn, const char *san, long from_s, long to_s,
		     int is_ca, int self_signed)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	if (!k || !x)
		return -1;
	static long serial = 1;
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
	X509_gmtime_adj(X509_getm_notBefore(x), from_s);
	X509_gmtime_adj(X509_getm_notAfter(x), to_s);
	X509_set_pubkey(x, k);
	X509_NAME *nm = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	int own = is_ca || self_signed;
	X509_set_issuer_name(x, own ? nm : X509_get_subject_name(ca_cert));
	X509 *issuer = own ? x : ca_cert;
	add_ext(x, issuer, NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "CA:FALSE");
	if (san)
		add_ext(x, issuer, NID_subject_alt_name, san);
	if (!X509_sign(x, own ? k : ca_key, EVP_sha256()))
		return -1;
	char path[512];
	snprintf(path, sizeof(path), "%s/%s.pem", dir, stem);
	FILE *f = fopen(path, "w");
	if (!f || !PEM_write_X509(f, x))
		return -1;
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s.key", dir, stem);
	f = fopen(path, "w");
	if (!f || !PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL))
		return -1;
	fclose(f);
	if (is_ca) {
		ca_key = k;
		ca_cert = x;
	} else {
		EVP_PKEY_free(k);
		X509_free(x);
	}
	return 0;
}

static int make_certs(void)
{
	const long day = 86400;
	snprintf(dir, sizeof(dir), "%s/rnsc-tls-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	return make_cert("ca", "rnsc test CA", NULL, -day, day, 1, 0) ||
	       make_cert("srv", "localhost", "DNS:localhost,IP:127.0.0.1", -day, day, 0, 0) ||
	       make_cert("expired", "localhost", "DNS:localhost,IP:127.0.0.1", -3 * day, -day, 0,
			 0) ||
	       make_cert("wrong", "wrong.example", "DNS:wrong.example", -day, day, 0, 0) ||
	       make_cert("self", "localhost", "DNS:localhost,IP:127.0.0.1", -day, day, 0, 1) ||
	       make_cert("other", "localhost", "DNS:localhost", -day, day, 0, 0);
}

static void remove_certs(void)
{
	static const char *const stems[] = {"ca", "srv", "expired", "wrong", "self", "other"};
	char path[512];
	for (size_t i = 0; i < sizeof(stems) / sizeof(stems[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s.pem", dir, stems[i]);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s.key", dir, stems[i]);
		unlink(path);
	}
	rmdir(dir);
	EVP_PKEY_free(ca_key);
	X509_free(ca_cert);
}

/* The SHA-256 fingerprint of stem.pem as AA:BB:... */
static void fingerprint(const char *stem, char *out, size_t cap)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s.pem", dir, stem);
	FILE *f = fopen(path, "r");
	X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
	if (f)
		fclose(f);
	unsigned char md[32];
	unsigned n = 0;
	out[0] = 0;
	if (x && X509_digest(x, EVP_sha256(), md, &n) == 1)
		for (unsigned i = 0, o = 0; i < n && o + 4 <= cap; i++)
			o += (unsigned)snprintf(out + o, cap - o, i ? ":%02X" : "%02X", md[i]);
	X509_free(x);
}

/* ---- raw sockets ---------------------------------------------------------------------- */

static int raw_connect(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void raw_send(int fd, const void *pv, size_t n)
{
	const uint8_t *p = pv;
	uint64_t end = mono_ms() + 5000;
	while (n && mono_ms() < end) {
		ssize_t w = send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			return; /* the server closed on us: fine, the test looks at what came back */
		} else {
			rnsc_loop_run_once(L, 10);
		}
	}
}

/* Reads (pumping the loop) until `want` bytes, EOF or timeout. Returns bytes; *eof set
 * when the server closed the connection. */
static size_t raw_recv(int fd, uint8_t *buf, size_t want, unsigned timeout_ms, int *eof)
{
	size_t got = 0;
	uint64_t end = mono_ms() + timeout_ms;
	*eof = 0;
	while (got < want && mono_ms() < end) {
		ssize_t r = recv(fd, buf + got, want - got, MSG_DONTWAIT);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
			*eof = 1;
			break;
		}
		rnsc_loop_run_once(L, 10);
	}
	return got;
}

/* Reads until EOF (true) or timeout (false), discarding. */
static int raw_wait_eof(int fd, unsigned timeout_ms)
{
	uint8_t buf[4096];
	int eof = 0;
	uint64_t end = mono_ms() + timeout_ms;
	while (!eof && mono_ms() < end)
		raw_recv(fd, buf, sizeof(buf), 50, &eof);
	return eof;
}

/* ---- TLS tests -------------------------------------------------------------------------- */

static void test_plugins_found(void)
{
	const rnsc_plugin_rec *r = rnsc_plugin_host_find_iface(P, "TLSServerInterface");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_STRING_EQUAL(r->desc->name, "tls");
	CU_ASSERT_PTR_EQUAL(rnsc_plugin_host_find_iface(P, "TLSClientInterface"), r);
	r = rnsc_plugin_host_find_iface(P, "WebSocketServerInterface");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_STRING_EQUAL(r->desc->name, "websocket");
	CU_ASSERT_PTR_EQUAL(rnsc_plugin_host_find_iface(P, "WebSocketClientInterface"), r);
}

/* Client and server of one plugin exchange every length both ways, byte-exact. */
static void exchange(const char *stype, const char *ctype, const char *sextra, const char *cextra,
		     const char *label)
{
	CU_ASSERT_FATAL(setup() == 0);
	rnsc_iface *srv = tls_server(stype, "srv", 0, "srv", sextra);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT(rnsc_iface_online(srv));
	rnsc_iface *cli = tls_client(ctype, "cli", port_of(srv), cextra);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
	CU_ASSERT_FATAL(run_until(is_online, cli, 5000));
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));
	rnsc_iface *child = last_child;
	CU_ASSERT_PTR_EQUAL(rnsc_iface_parent(child), srv);
	char d[160], want[64];
	rnsc_iface_describe(cli, d, sizeof(d));
	snprintf(want, sizeof(want), "%s[cli/127.0.0.1:", label);
	CU_ASSERT(strncmp(d, want, strlen(want)) == 0);

	static uint8_t f[16400];
	for (int round = 0; round < 2; round++) { /* twice: the second round hits warm buffers */
		rx_clear();
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
	}
	rnsc_iface_status st;
	rnsc_iface_status_get(cli, &st);
	CU_ASSERT_EQUAL(st.stats.tx_packets, 2 * NFRAMES);
	CU_ASSERT_EQUAL(st.stats.rx_packets, 2 * NFRAMES);
	CU_ASSERT_EQUAL(st.stats.hw_mtu, 16384);
	uint64_t payload = 0;
	for (unsigned i = 0; i < NFRAMES; i++)
		payload += 2 * make_frame(i, f);
	CU_ASSERT_EQUAL(st.stats.rx_bytes, payload);
	CU_ASSERT(st.stats.tx_bytes > payload); /* framing included */
	for (unsigned k = 0; k < RNSC_IFACE_DROP_COUNT; k++)
		CU_ASSERT_EQUAL(st.drops[k], 0);
	rnsc_iface_status_get(srv, &st);
	CU_ASSERT_EQUAL(st.stats.children, 1);
	CU_ASSERT_EQUAL(st.stats.rx_bytes, payload);
	tu_teardown();
}

static void test_tls_exchange_ca(void)
{
	char o[512];
	snprintf(o, sizeof(o), "    ca_file = %s/ca.pem\n    server_name = localhost\n", dir);
	exchange("TLSServerInterface", "TLSClientInterface", NULL, o, "TLSInterface");
}

static void test_tls_exchange_pin(void)
{
	char o[512], fp[128];
	fingerprint("srv", fp, sizeof(fp));
	CU_ASSERT_EQUAL_FATAL(strlen(fp), 95);
	snprintf(o, sizeof(o), "    pinned_sha256 = %s\n", fp);
	exchange("TLSServerInterface", "TLSClientInterface", NULL, o, "TLSInterface");
}

static void test_tls_exchange_ip_name(void)
{
	/* No server_name: the target 127.0.0.1 is checked against the IP SAN. */
	char o[512];
	snprintf(o, sizeof(o), "    ca_file = %s/ca.pem\n", dir);
	exchange("TLSServerInterface", "TLSClientInterface", NULL, o, "TLSInterface");
}

static void reconnect(const char *stype, const char *ctype, const char *sextra, const char *cextra)
{
	CU_ASSERT_FATAL(setup() == 0);
	rnsc_iface *srv = tls_server(stype, "srv", 0, "srv", sextra);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	unsigned port = port_of(srv);
	rnsc_iface *cli = tls_client(ctype, "cli", port, cextra);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
	CU_ASSERT_FATAL(run_until(is_online, cli, 5000));
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));
	rnsc_iface_close(srv);
	CU_ASSERT_FATAL(run_until(is_offline, cli, 5000));
	run_for(500);
	CU_ASSERT(!rnsc_iface_online(cli));
	uint8_t f[64];
	CU_ASSERT_EQUAL(rnsc_iface_send(cli, f, make_frame(2, f)), RNSC_ERR_STATE);
	srv = tls_server(stype, "srv", port, "srv", sextra);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT_FATAL(run_until(is_online, cli, 8000));
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

static void test_tls_reconnect(void)
{
	char o[512];
	snprintf(o, sizeof(o), "    ca_file = %s/ca.pem\n    server_name = localhost\n", dir);
	reconnect("TLSServerInterface", "TLSClientInterface", NULL, o);
}

/* A client that must refuse the server: never online, the error logged with the peer. */
static void refused(const char *server_cert, const char *cextra, const char *needle)
{
	CU_ASSERT_FATAL(setup() == 0);
	rnsc_iface *srv = tls_server("TLSServerInterface", "srv", 0, server_cert, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	rnsc_iface *cli = tls_client("TLSClientInterface", "cli", port_of(srv), cextra);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
	CU_ASSERT(run_until(log_has, (void *)needle, 5000));
	CU_ASSERT_PTR_NOT_NULL(strstr(logbuf, "TLS handshake for cli with 127.0.0.1:"));
	if (!strstr(logbuf, needle))
		fprintf(stderr, "log (wanted \"%s\"):\n%s", needle, logbuf);
	run_for(300);
	CU_ASSERT(!rnsc_iface_online(cli));
	/* The client keeps retrying (with backoff); once it is gone, so are the server's
	 * connections from it. */
	rnsc_iface_close(cli);
	CU_ASSERT(run_until(no_child, NULL, 5000));
	CU_ASSERT(rnsc_iface_online(srv));
	tu_teardown();
}

static void test_tls_wrong_host(void)
{
	char o[512];
	snprintf(o, sizeof(o), "    ca_file = %s/ca.pem\n    server_name = localhost\n", dir);
	refused("wrong", o,
		"certificate verify failed: hostname mismatch (expected \"localhost\")");
}

static void test_tls_untrusted(void)
{
	char o[512];
	snprintf(o, sizeof(o), "    ca_file = %s/ca.pem\n    server_name = localhost\n", dir);
	refused("self", o, "certificate verify failed: self-signed certificate");
}

static void test_tls_server_name_mismatch(void)
{
	char o[512];
	snprintf(o, sizeof(o), "    ca_file = %s/ca.pem\n    server_name = rnsc.example\n", dir);
	refused("srv", o, "hostname mismatch (expected \"rnsc.example\")");
}

static void test_tls_pin_mismatch(void)
{
	char o[512], fp[128];
	fingerprint("other", fp, sizeof(fp));
	snprintf(o, sizeof(o), "    pinned_sha256 = %s\n", fp);
	char needle[256];
	fingerprint("srv", fp, sizeof(fp));
	snprintf(needle, sizeof(needle),
		 "pinned certificate mismatch: the server presented SHA-256 %s", fp);
	refused("srv", o, needle);
}

/* ---- the Python peer ------------------------------------------------------------------- */

/* `python tests/live/iface_tls_peer.py argv...` */
static int tls_peer_start(peer *p, const char *const argv[])
{
	return peer_startv(p, src_file("tests/live/iface_tls_peer.py"), argv);
}

/* A run_until predicate: the current peer has written a whole line containing needle. */
static int peer_wrote(void *needle)
{
	peer_read(cur_peer);
	const char *hit = strstr(cur_peer->buf, needle);
	return hit && strchr(hit, '\n');
}

/* rnsc's server refuses to load an expired certificate, so Python serves one. */
static void test_tls_expired(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	char cert[512], key[512];
	snprintf(cert, sizeof(cert), "%s/expired.pem", dir);
	snprintf(key, sizeof(key), "%s/expired.key", dir);
	peer p;
	const char *argv[] = {"serve", cert, key, NULL};
	CU_ASSERT_FATAL(tls_peer_start(&p, argv) == 0);
	cur_peer = &p;
	CU_ASSERT(run_until(peer_wrote, "PORT ", 20000));
	unsigned port = 0;
	const char *l = strstr(p.buf, "PORT ");
	if (l)
		sscanf(l, "PORT %u", &port);
	CU_ASSERT(port > 0);
	if (port) {
		char o[512];
		snprintf(o, sizeof(o), "    ca_file = %s/ca.pem\n    server_name = localhost\n",
			 dir);
		rnsc_iface *cli = tls_client("TLSClientInterface", "cli", port, o);
		CU_ASSERT_PTR_NOT_NULL(cli);
		const char *needle = "certificate verify failed: certificate has expired";
		CU_ASSERT(run_until(log_has, (void *)needle, 10000));
		if (!strstr(logbuf, needle))
			fprintf(stderr, "log:\n%s\npeer said: %s\n", logbuf, p.buf);
		CU_ASSERT(cli && !rnsc_iface_online(cli));
	}
	peer_stop(&p);
	tu_teardown();
}

/* Python's ssl module as the client of an rnsc TLS server: TLS 1.3 and HDLC both ways. */
static void test_tls_python_client(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	rnsc_iface *srv = tls_server("TLSServerInterface", "srv", 0, "srv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	char port[16], ca[512];
	snprintf(port, sizeof(port), "%u", port_of(srv));
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	peer p;
	const char *argv[] = {"client", port, ca, "localhost", NULL};
	CU_ASSERT_FATAL(tls_peer_start(&p, argv) == 0);
	cur_peer = &p;
	size_t one = 1;
	CU_ASSERT(run_until(have_rx, &one, 20000));
	uint8_t want[42];
	for (int i = 0; i < 40; i++)
		want[i] = (uint8_t)(100 + i);
	want[40] = 0x7E;
	want[41] = 0x7D;
	CU_ASSERT(nrx == 1 && rx[0].len == 42 && memcmp(rx[0].data, want, 42) == 0);
	if (last_child) {
		uint8_t f[32];
		for (int i = 0; i < 32; i++)
			f[i] = (uint8_t)(0xA0 + i);
		CU_ASSERT_EQUAL(rnsc_iface_send(last_child, f, sizeof(f)), 0);
	}
	CU_ASSERT(run_until(peer_wrote, "RESULT ", 10000));
	CU_ASSERT_PTR_NOT_NULL(strstr(p.buf, "RESULT ok TLSv1.3 a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"
					     "b0b1b2b3b4b5b6b7b8b9babbbcbdbebf\n"));
	if (!strstr(p.buf, "RESULT ok"))
		fprintf(stderr, "peer said: %s\nlog:\n%s", p.buf, logbuf);
	peer_stop(&p);
	tu_teardown();
}

/* TLS 1.3 only: a client offering at most TLS 1.2 gets no session. */
static void test_tls_no_tls12(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	rnsc_iface *srv = tls_server("TLSServerInterface", "srv", 0, "srv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	char port[16], ca[512];
	snprintf(port, sizeof(port), "%u", port_of(srv));
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	peer p;
	const char *argv[] = {"client12", port, ca, "localhost", NULL};
	CU_ASSERT_FATAL(tls_peer_start(&p, argv) == 0);
	cur_peer = &p;
	CU_ASSERT(run_until(peer_wrote, "RESULT ", 20000));
	CU_ASSERT_PTR_NOT_NULL(strstr(p.buf, "RESULT refused"));
	CU_ASSERT(run_until(log_has, "unsupported protocol", 5000));
	if (!strstr(p.buf, "RESULT refused") || !strstr(logbuf, "unsupported protocol"))
		fprintf(stderr, "peer said: %s\nlog:\n%s", p.buf, logbuf);
	CU_ASSERT_EQUAL(nrx, 0);
	peer_stop(&p);
	CU_ASSERT(run_until(no_child, NULL, 5000));
	tu_teardown();
}

/* Not TLS at all, and silence: the server drops both and stays up. */
static void test_tls_garbage(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	rnsc_iface *srv =
		tls_server("TLSServerInterface", "srv", 0, "srv", "    handshake_timeout = 0.5\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	int fd = raw_connect(port_of(srv));
	CU_ASSERT_FATAL(fd >= 0);
	raw_send(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
	CU_ASSERT(raw_wait_eof(fd, 5000));
	close(fd);
	CU_ASSERT(run_until(no_child, NULL, 5000));
	CU_ASSERT(strstr(logbuf, "TLS handshake for Client on srv with 127.0.0.1:") != NULL);

	fd = raw_connect(port_of(srv));
	CU_ASSERT_FATAL(fd >= 0);
	uint64_t t0 = mono_ms();
	CU_ASSERT(raw_wait_eof(fd, 5000)); /* handshake_timeout */
	CU_ASSERT(mono_ms() - t0 >= 400);
	close(fd);
	CU_ASSERT(strstr(logbuf, "timed out") != NULL);
	CU_ASSERT(run_until(no_child, NULL, 5000));
	CU_ASSERT(rnsc_iface_online(srv));
	tu_teardown();
}

/* A TLS client of our own (no verification: the server side is under test). */
static SSL *tls_raw_connect(unsigned port, SSL_CTX **ctxp)
{
	int fd = raw_connect(port);
	if (fd < 0)
		return NULL;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *s = ctx ? SSL_new(ctx) : NULL;
	*ctxp = ctx;
	if (!s || SSL_set_fd(s, fd) != 1)
		return NULL;
	uint64_t end = mono_ms() + 5000;
	while (mono_ms() < end) {
		int r = SSL_connect(s);
		if (r == 1)
			return s;
		int e = SSL_get_error(s, r);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
			break;
		rnsc_loop_run_once(L, 10);
	}
	SSL_free(s);
	close(fd);
	return NULL;
}

static void tls_raw_send(SSL *s, const void *p, size_t n)
{
	uint64_t end = mono_ms() + 5000;
	size_t put = 0;
	while (mono_ms() < end) {
		if (SSL_write_ex(s, p, n, &put) == 1)
			return;
		int e = SSL_get_error(s, 0);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
			return;
		rnsc_loop_run_once(L, 10);
	}
}

static void tls_raw_close(SSL *s, SSL_CTX *ctx)
{
	int fd = SSL_get_fd(s);
	SSL_free(s);
	SSL_CTX_free(ctx);
	close(fd);
}

/* HDLC inside TLS: garbage, runts, oversize and half frames are counted, never a crash. */
static void test_tls_bad_hdlc(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	rnsc_iface *srv = tls_server("TLSServerInterface", "srv", 0, "srv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	SSL_CTX *ctx = NULL;
	SSL *s = tls_raw_connect(port_of(srv), &ctx);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));
	static uint8_t payload[16401], enc[2 * 16401 + 2];
	memset(payload, 0x41, sizeof(payload));
	tls_raw_send(s, "hello", 5);                             /* garbage before any FLAG */
	int n = rnsc_hdlc_encode(enc, sizeof(enc), payload, 10); /* runt */
	tls_raw_send(s, enc, (size_t)n);
	n = rnsc_hdlc_encode(enc, sizeof(enc), payload, 16401); /* HW_MTU + IFAC + 1 */
	tls_raw_send(s, enc, (size_t)n);
	n = rnsc_hdlc_encode(enc, sizeof(enc), payload, 16400); /* the largest accepted */
	tls_raw_send(s, enc, (size_t)n);
	n = rnsc_hdlc_encode(enc, sizeof(enc), payload, 20); /* the smallest accepted */
	tls_raw_send(s, enc, (size_t)n);
	static const uint8_t runt2[] = {0x7E, 0x7D, 0x7D, 0x7D, 0x7E};
	tls_raw_send(s, runt2, sizeof(runt2));
	size_t want = 2;
	CU_ASSERT(run_until(have_rx, &want, 5000));
	CU_ASSERT_EQUAL(nrx, 2);
	if (nrx == 2) {
		CU_ASSERT(rx[0].len == 16400 && memcmp(rx[0].data, payload, 16400) == 0);
		CU_ASSERT(rx[1].len == 20 && memcmp(rx[1].data, payload, 20) == 0);
	}
	tls_raw_send(s, enc, 12); /* half a frame, then the peer vanishes */
	run_for(100);
	tls_raw_close(s, ctx);
	CU_ASSERT(run_until(no_child, NULL, 5000));
	rnsc_iface_status st;
	rnsc_iface_status_get(srv, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_GARBAGE], 5);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_RUNT], 2);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OVERSIZE], 1);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_PARTIAL], 1);
	CU_ASSERT_EQUAL(st.stats.rx_packets, 2);
	CU_ASSERT(rnsc_iface_online(srv));
	tu_teardown();
}

/* Frames received by the backpressure test: sequence numbers and content checked. */
static const unsigned *bp_want; /* the accepted sequence numbers, in order */
static size_t bp_nwant, bp_idx;
static int bp_bad;
static int bp_frame(void *ud, const uint8_t *f, size_t len)
{
	(void)ud;
	uint32_t seq = (uint32_t)f[0] << 24 | (uint32_t)f[1] << 16 | (uint32_t)f[2] << 8 | f[3];
	if (len != 16400 || bp_idx >= bp_nwant || seq != bp_want[bp_idx])
		bp_bad++;
	for (size_t j = 4; j < len && !bp_bad; j++)
		if (f[j] != (uint8_t)(seq + j))
			bp_bad++;
	bp_idx++;
	return 0;
}

/* A peer that does not read: partial TLS writes from a moving, growing queue, the 4 MiB
 * limit counted as TXQUEUE drops; then every queued frame arrives intact and in order. */
static void test_tls_backpressure(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	rnsc_iface *srv = tls_server("TLSServerInterface", "srv", 0, "srv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	SSL_CTX *ctx = NULL;
	SSL *s = tls_raw_connect(port_of(srv), &ctx);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));
	static uint8_t f[16400];
	unsigned ok = 0, dropped = 0, sent_seq[1200];
	for (uint32_t seq = 0; seq < 1200; seq++) { /* 19.7 MB: beyond any socket buffers + 4 MiB */
		f[0] = (uint8_t)(seq >> 24);
		f[1] = (uint8_t)(seq >> 16);
		f[2] = (uint8_t)(seq >> 8);
		f[3] = (uint8_t)seq;
		for (size_t j = 4; j < sizeof(f); j++)
			f[j] = (uint8_t)(seq + j);
		int rc = rnsc_iface_send(last_child, f, sizeof(f));
		if (rc == 0)
			sent_seq[ok++] = seq;
		else if (rc == RNSC_ERR_TOOBIG)
			dropped++;
		if (seq % 100 == 99)
			rnsc_loop_run_once(L, 0); /* some writes between bursts move the queue */
	}
	CU_ASSERT(dropped > 0);
	CU_ASSERT(ok + dropped == 1200);
	rnsc_iface_status st;
	rnsc_iface_status_get(last_child, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_TXQUEUE], dropped);

	static uint8_t dbuf[16400], rbuf[65536];
	rnsc_hdlc_decoder dec;
	rnsc_hdlc_decoder_init(&dec, dbuf, sizeof(dbuf));
	bp_want = sent_seq;
	bp_nwant = ok;
	bp_idx = 0;
	bp_bad = 0;
	size_t frames = 0;
	uint64_t end = mono_ms() + 20000;
	while (mono_ms() < end && (size_t)dec.stats.frames < ok) {
		size_t got = 0;
		if (SSL_read_ex(s, rbuf, sizeof(rbuf), &got) == 1) {
			rnsc_hdlc_decoder_feed(&dec, rbuf, got, bp_frame, NULL);
			continue;
		}
		int e = SSL_get_error(s, 0);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
			break;
		rnsc_loop_run_once(L, 10);
	}
	frames = (size_t)dec.stats.frames;
	CU_ASSERT_EQUAL(frames, ok);
	CU_ASSERT_EQUAL(bp_bad, 0);
	CU_ASSERT_EQUAL(bp_idx, ok);
	rnsc_iface_status_get(last_child, &st);
	CU_ASSERT_EQUAL(st.stats.tx_packets, ok);
	tls_raw_close(s, ctx);
	CU_ASSERT(run_until(no_child, NULL, 5000));
	tu_teardown();
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

static void test_tls_config_errors(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	char t[1024];
	const char *srv = "[interfaces]\n [[S]]\n type = TLSServerInterface\n enabled = yes\n"
			  " listen_ip = 127.0.0.1\n listen_port = 0\n";
	snprintf(t, sizeof(t), "%s private_key = %s/srv.key\n", srv, dir);
	expect_error(t, RNSC_ERR_CONFIG_VALUE, "[[S]] option \"certificate\"",
		     "needs a certificate");
	snprintf(t, sizeof(t), "%s certificate = %s/srv.pem\n private_key = %s/nope.key\n", srv,
		 dir, dir);
	expect_error(t, RNSC_ERR_IO, "[[S]] option \"private_key\"", "nope.key");
	snprintf(t, sizeof(t), "%s certificate = %s/srv.pem\n private_key = %s/srv.pem\n", srv, dir,
		 dir);
	expect_error(t, RNSC_ERR_CONFIG_VALUE, "\"private_key\"", "no unencrypted PEM private key");
	snprintf(t, sizeof(t), "%s certificate = %s/srv.pem\n private_key = %s/wrong.key\n", srv,
		 dir, dir);
	expect_error(t, RNSC_ERR_CONFIG_VALUE, "\"private_key\"", "does not match");
	snprintf(t, sizeof(t), "%s certificate = %s/expired.pem\n private_key = %s/expired.key\n",
		 srv, dir, dir);
	expect_error(t, RNSC_ERR_CONFIG_VALUE, "[[S]] option \"certificate\"", "has expired");
	snprintf(t, sizeof(t), "%s certificate = %s/srv.key\n private_key = %s/srv.key\n", srv, dir,
		 dir);
	expect_error(t, RNSC_ERR_CONFIG_VALUE, "\"certificate\"", "no PEM certificate");
	snprintf(t, sizeof(t), "%s certificate = %s/missing.pem\n private_key = %s/srv.key\n", srv,
		 dir, dir);
	expect_error(t, RNSC_ERR_IO, "\"certificate\"", "cannot read");

	const char *cli = "[interfaces]\n [[C]]\n type = TLSClientInterface\n enabled = yes\n"
			  " target_host = 127.0.0.1\n target_port = 4242\n";
	expect_error(cli, RNSC_ERR_CONFIG_VALUE, "[[C]] option \"ca_file\"", "pinned_sha256");
	snprintf(t, sizeof(t), "%s pinned_sha256 = 12:34:zz\n", cli);
	expect_error(t, RNSC_ERR_CONFIG_VALUE, "[[C]] option \"pinned_sha256\"", "64 hex digits");
	snprintf(t, sizeof(t), "%s ca_file = %s/none.pem\n", cli, dir);
	expect_error(t, RNSC_ERR_IO, "[[C]] option \"ca_file\"", "none.pem");
	snprintf(t, sizeof(t), "%s ca_file = %s/srv.key\n", cli, dir);
	expect_error(t, RNSC_ERR_CONFIG_VALUE, "[[C]] option \"ca_file\"", "cannot load CA");
	snprintf(t, sizeof(t),
		 "[interfaces]\n [[W]]\n type = WebSocketServerInterface\n enabled = yes\n"
		 " listen_ip = 127.0.0.1\n listen_port = 0\n path = nope\n");
	expect_error(t, RNSC_ERR_CONFIG_VALUE, "[[W]] option \"path\"", "start with");
	snprintf(t, sizeof(t),
		 "[interfaces]\n [[W]]\n type = WebSocketServerInterface\n enabled = yes\n"
		 " listen_ip = 127.0.0.1\n listen_port = 0\n tls = yes\n");
	expect_error(t, RNSC_ERR_CONFIG_VALUE, "[[W]] option \"certificate\"", NULL);
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 0);
	/* Upper and lower case hex and no colons are all one pin. */
	char fp[128], bare[80];
	fingerprint("srv", fp, sizeof(fp));
	size_t o = 0;
	for (const char *c = fp; *c; c++)
		if (*c != ':')
			bare[o++] = (char)(*c >= 'A' && *c <= 'F' ? *c + 32 : *c);
	bare[o] = 0;
	snprintf(t, sizeof(t), "%s pinned_sha256 = %s\n", cli, bare);
	CU_ASSERT_EQUAL(open_text(t, &(rnsc_config_error){0}), 1);
	tu_teardown();
}

/* ---- WebSocket tests ------------------------------------------------------------------- */

static void test_ws_exchange(void)
{
	exchange("WebSocketServerInterface", "WebSocketClientInterface", "    path = /rns\n",
		 "    path = /rns\n", "WebSocketInterface");
}

static void test_wss_exchange(void)
{
	char o[512];
	snprintf(o, sizeof(o),
		 "    tls = yes\n    ca_file = %s/ca.pem\n    server_name = localhost\n", dir);
	exchange("WebSocketServerInterface", "WebSocketClientInterface", "    tls = yes\n", o,
		 "WebSocketInterface");
}

static void test_ws_reconnect(void)
{
	reconnect("WebSocketServerInterface", "WebSocketClientInterface", NULL, NULL);
}

static void test_wss_reconnect(void)
{
	char o[512];
	snprintf(o, sizeof(o),
		 "    tls = yes\n    ca_file = %s/ca.pem\n    server_name = localhost\n", dir);
	reconnect("WebSocketServerInterface", "WebSocketClientInterface", "    tls = yes\n", o);
}

static void test_wss_refused(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	rnsc_iface *srv =
		tls_server("WebSocketServerInterface", "srv", 0, "wrong", "    tls = yes\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	char o[512];
	snprintf(o, sizeof(o),
		 "    tls = yes\n    ca_file = %s/ca.pem\n    server_name = localhost\n", dir);
	rnsc_iface *cli = tls_client("WebSocketClientInterface", "cli", port_of(srv), o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
	CU_ASSERT(run_until(log_has, "hostname mismatch", 5000));
	CU_ASSERT(!rnsc_iface_online(cli));
	tu_teardown();
}

/* The RFC 6455 section 1.3 example nonce and its accept value. */
static const char RFC_KEY[] = "dGhlIHNhbXBsZSBub25jZQ==";
static const char RFC_ACCEPT[] = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

static int ws_raw_open(unsigned port, const char *path)
{
	char req[512];
	int fd = raw_connect(port);
	if (fd < 0)
		return -1;
	int n = snprintf(req, sizeof(req),
			 "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
			 "Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: %s\r\n"
			 "Sec-WebSocket-Version: 13\r\n\r\n",
			 path, RFC_KEY);
	raw_send(fd, req, (size_t)n);
	return fd;
}

/* Reads an HTTP answer header block. */
static size_t read_http(int fd, char *buf, size_t cap)
{
	size_t got = 0;
	int eof = 0;
	uint64_t end = mono_ms() + 5000;
	while (got + 1 < cap && !eof && mono_ms() < end) {
		got += raw_recv(fd, (uint8_t *)buf + got, 1, 50, &eof);
		buf[got] = 0;
		if (got >= 4 && strcmp(buf + got - 4, "\r\n\r\n") == 0)
			break;
	}
	buf[got] = 0;
	return got;
}

/* A masked client frame. */
static size_t ws_frame(uint8_t *out, unsigned b0, const uint8_t *p, size_t n, int masked)
{
	static const uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
	size_t h = 2;
	out[0] = (uint8_t)b0;
	if (n < 126) {
		out[1] = (uint8_t)n;
	} else if (n <= 0xFFFF) {
		out[1] = 126;
		out[2] = (uint8_t)(n >> 8);
		out[3] = (uint8_t)n;
		h = 4;
	} else {
		out[1] = 127;
		for (int i = 0; i < 8; i++)
			out[2 + i] = (uint8_t)((uint64_t)n >> (56 - 8 * i));
		h = 10;
	}
	if (masked) {
		out[1] |= 0x80;
		memcpy(out + h, mask, 4);
		h += 4;
	}
	for (size_t i = 0; i < n; i++)
		out[h + i] = (uint8_t)(p[i] ^ (masked ? mask[i & 3] : 0));
	return h + n;
}

/* Expects the server's close frame with `code` and then the end of the connection. */
static void expect_close(int fd, unsigned code)
{
	uint8_t b[4];
	int eof;
	size_t n = raw_recv(fd, b, 4, 5000, &eof);
	CU_ASSERT_EQUAL(n, 4);
	if (n == 4) {
		CU_ASSERT_EQUAL(b[0], 0x88);
		CU_ASSERT_EQUAL(b[1], 2);
		CU_ASSERT_EQUAL((unsigned)b[2] << 8 | b[3], code);
	}
	CU_ASSERT(raw_wait_eof(fd, 5000));
}

static void test_ws_raw_client(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	rnsc_iface *srv = open_iface("srv", "WebSocketServerInterface",
				     "    listen_ip = 127.0.0.1\n    listen_port = 0\n"
				     "    path = /rns\n    handshake_timeout = 0.5\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	unsigned port = port_of(srv);
	char http[1024];
	static uint8_t buf[40000], pl[20000];
	for (size_t i = 0; i < sizeof(pl); i++)
		pl[i] = (uint8_t)(i * 13 + 5);

	/* 1. A valid session: accept value, a masked message, a fragmented one, ping/pong,
	 *    a runt, and a clean close. */
	int fd = ws_raw_open(port, "/rns?x=1");
	CU_ASSERT_FATAL(fd >= 0);
	read_http(fd, http, sizeof(http));
	CU_ASSERT(strncmp(http, "HTTP/1.1 101 ", 13) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(http, RFC_ACCEPT));
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));
	size_t n = ws_frame(buf, 0x82, pl, 300, 1);
	raw_send(fd, buf, n);
	n = ws_frame(buf, 0x02, pl, 100, 1);                       /* binary, not FIN */
	n += ws_frame(buf + n, 0x89, (const uint8_t *)"hi", 2, 1); /* ping between fragments */
	n += ws_frame(buf + n, 0x00, pl + 100, 5000, 1);           /* continuation */
	n += ws_frame(buf + n, 0x80, pl + 5100, 11300, 1);         /* final: 16400 in all */
	n += ws_frame(buf + n, 0x82, pl, 19, 1);                   /* runt */
	raw_send(fd, buf, n);
	size_t two = 2;
	CU_ASSERT(run_until(have_rx, &two, 5000));
	CU_ASSERT_EQUAL(nrx, 2);
	if (nrx == 2) {
		CU_ASSERT(rx[0].len == 300 && memcmp(rx[0].data, pl, 300) == 0);
		CU_ASSERT(rx[1].len == 16400 && memcmp(rx[1].data, pl, 16400) == 0);
	}
	uint8_t pong[4];
	int eof;
	CU_ASSERT_EQUAL(raw_recv(fd, pong, 4, 5000, &eof), 4);
	CU_ASSERT(memcmp(pong, "\x8a\x02hi", 4) == 0); /* unmasked pong, same payload */
	/* A frame from the server: binary, unmasked. */
	if (last_child) {
		CU_ASSERT_EQUAL(rnsc_iface_send(last_child, pl, 200), 0);
		uint8_t got[204];
		CU_ASSERT_EQUAL(raw_recv(fd, got, 204, 5000, &eof), 204);
		CU_ASSERT(got[0] == 0x82 && got[1] == 126 && got[2] == 0 && got[3] == 200 &&
			  memcmp(got + 4, pl, 200) == 0);
	}
	n = ws_frame(buf, 0x88, (const uint8_t *)"\x03\xe8", 2, 1);
	raw_send(fd, buf, n);
	expect_close(fd, 1000);
	close(fd);
	CU_ASSERT(run_until(no_child, NULL, 5000));

	/* 2. Malformed frames after a good handshake -> close code, counted drop. */
	static const struct {
		unsigned b0;
		size_t len;
		int masked;
		unsigned code;
	} bad[] = {
		{0x82, 100, 0, 1002},   /* unmasked client frame */
		{0x82, 16401, 1, 1009}, /* beyond HW_MTU + IFAC */
		{0x83, 10, 1, 1002},    /* reserved opcode */
		{0xC2, 30, 1, 1002},    /* RSV1 without an extension */
		{0x09, 2, 1, 1002},     /* fragmented ping */
		{0x80, 30, 1, 1002},    /* continuation of nothing */
		{0x81, 30, 1, 1003},    /* text */
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		fd = ws_raw_open(port, "/rns");
		CU_ASSERT_FATAL(fd >= 0);
		read_http(fd, http, sizeof(http));
		CU_ASSERT(strncmp(http, "HTTP/1.1 101 ", 13) == 0);
		n = ws_frame(buf, bad[k].b0, pl, bad[k].len, bad[k].masked);
		raw_send(fd, buf, n);
		expect_close(fd, bad[k].code);
		close(fd);
		CU_ASSERT(run_until(no_child, NULL, 5000));
	}
	/* Two fragments that together exceed the MTU. */
	fd = ws_raw_open(port, "/rns");
	read_http(fd, http, sizeof(http));
	n = ws_frame(buf, 0x02, pl, 9000, 1);
	n += ws_frame(buf + n, 0x80, pl, 9000, 1);
	raw_send(fd, buf, n);
	expect_close(fd, 1009);
	close(fd);
	CU_ASSERT(run_until(no_child, NULL, 5000));

	/* 3. Bad handshakes -> an HTTP error and the end of the connection. */
	static const struct {
		const char *req;
		const char *status;
	} hs[] = {
		{"\x16\x03\x01\x02\x00garbage, not HTTP", "HTTP/1.1 400 "},
		{"GET /other HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
		 "HTTP/1.1 404 "},
		{"GET /rns HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n",
		 "HTTP/1.1 426 "},
		{"GET /rns HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n",
		 "HTTP/1.1 400 "},
		{"GET /rns HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
		 "HTTP/1.1 400 "},
	};
	for (size_t k = 0; k < sizeof(hs) / sizeof(hs[0]); k++) {
		fd = raw_connect(port);
		CU_ASSERT_FATAL(fd >= 0);
		raw_send(fd, hs[k].req, strlen(hs[k].req));
		read_http(fd, http, sizeof(http));
		CU_ASSERT(strncmp(http, hs[k].status, strlen(hs[k].status)) == 0);
		if (strncmp(http, hs[k].status, strlen(hs[k].status)) != 0)
			fprintf(stderr, "case %zu: got \"%s\"\n", k, http);
		CU_ASSERT(raw_wait_eof(fd, 5000));
		close(fd);
		CU_ASSERT(run_until(no_child, NULL, 5000));
	}

	/* 4. Half a handshake, then silence: dropped after handshake_timeout. */
	fd = raw_connect(port);
	raw_send(fd, "GET /rns HTTP/1.1\r\nHost: a\r\n", 28);
	CU_ASSERT(raw_wait_eof(fd, 5000));
	close(fd);
	CU_ASSERT(run_until(no_child, NULL, 5000));

	/* 5. Half a frame, then silence: nothing delivered, the connection stays; when the
	 *    peer goes, the partial frame is counted. */
	rx_clear();
	fd = ws_raw_open(port, "/rns");
	read_http(fd, http, sizeof(http));
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));
	n = ws_frame(buf, 0x82, pl, 1000, 1);
	raw_send(fd, buf, 600);
	run_for(700); /* beyond handshake_timeout: an open session has no such deadline */
	CU_ASSERT_EQUAL(nrx, 0);
	CU_ASSERT(child_online(NULL));
	close(fd);
	CU_ASSERT(run_until(no_child, NULL, 5000));

	/* 6. The server going away says so: close 1001 to an open session. */
	fd = ws_raw_open(port, "/rns");
	read_http(fd, http, sizeof(http));
	CU_ASSERT(strncmp(http, "HTTP/1.1 101 ", 13) == 0);
	CU_ASSERT_FATAL(run_until(child_online, NULL, 5000));
	rnsc_iface_close(last_child);
	expect_close(fd, 1001);
	close(fd);
	CU_ASSERT(run_until(no_child, NULL, 5000));
	rnsc_iface_status st;
	rnsc_iface_status_get(srv, &st);

	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_RUNT], 1);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OVERSIZE], 2);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_PARTIAL], 1);
	CU_ASSERT(st.drops[RNSC_IFACE_DROP_GARBAGE] >= 6 + 5);
	CU_ASSERT_EQUAL(st.stats.children, 0);
	CU_ASSERT(rnsc_iface_online(srv));
	tu_teardown();
}

/* Accepts the rnsc client's connection on ls and answers its opening handshake (with a
 * corrupted accept value when corrupt). Returns the fd or -1. */
static int raw_ws_accept(int ls, int corrupt)
{
	int fd = -1;
	uint64_t end = mono_ms() + 5000;
	while (fd < 0 && mono_ms() < end) {
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			rnsc_loop_run_once(L, 10);
	}
	if (fd < 0)
		return -1;
	char req[2048], resp[512];
	read_http(fd, req, sizeof(req));
	CU_ASSERT(strncmp(req, "GET / HTTP/1.1\r\n", 16) == 0);
	const char *k = strstr(req, "Sec-WebSocket-Key: ");
	CU_ASSERT(k != NULL);
	if (!k) {
		close(fd);
		return -1;
	}
	char key[25] = {0};
	memcpy(key, k + 19, 24);
	/* The accept value, computed here independently of the plugin. */
	char cat[80];
	unsigned char md[20];
	char acc[40];
	snprintf(cat, sizeof(cat), "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
	EVP_Digest(cat, strlen(cat), md, NULL, EVP_sha1(), NULL);
	EVP_EncodeBlock((unsigned char *)acc, md, 20);
	if (corrupt)
		acc[3] ^= 1;
	int n = snprintf(resp, sizeof(resp),
			 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
			 "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
			 acc);
	raw_send(fd, resp, (size_t)n);
	return fd;
}

static int raw_listen(unsigned *port)
{
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(ls, 4) != 0)
		return -1;
	getsockname(ls, (struct sockaddr *)&a, &al);
	*port = ntohs(a.sin_port);
	return ls;
}

/* ping_interval: pings go out; answered, the session stays; unanswered, it is dropped. */
static void test_ws_keepalive(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	unsigned port = 0;
	int ls = raw_listen(&port);
	CU_ASSERT_FATAL(ls >= 0);
	rnsc_iface *cli =
		tls_client("WebSocketClientInterface", "cli", port, "    ping_interval = 0.2\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
	int fd = raw_ws_accept(ls, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(run_until(is_online, cli, 5000));
	int pings = 0, eof = 0;
	uint64_t end = mono_ms() + 1000, last_pong = mono_ms();
	while (mono_ms() < end && !eof) { /* answer every ping for a second */
		uint8_t pg[10];
		if (raw_recv(fd, pg, 10, 100, &eof) == 10) {
			CU_ASSERT(pg[0] == 0x89 && pg[1] == 0x84);
			CU_ASSERT((pg[6] ^ pg[2]) == 'r' && (pg[9] ^ pg[5]) == 'c');
			uint8_t pong[6] = {0x8A, 4, 'r', 'n', 's', 'c'};
			raw_send(fd, pong, sizeof(pong));
			last_pong = mono_ms();
			pings++;
		}
	}
	CU_ASSERT(pings >= 3);
	CU_ASSERT(rnsc_iface_online(cli));
	/* Now silent: dropped once nothing has arrived for more than two intervals, counted
	 * from the last pong (the client cannot have read it earlier than it was sent). */
	CU_ASSERT(raw_wait_eof(fd, 5000));
	CU_ASSERT(mono_ms() - last_pong >= 400);
	CU_ASSERT(run_until(log_has, "did not answer pings", 5000));
	CU_ASSERT(!rnsc_iface_online(cli));
	close(fd);
	close(ls);
	tu_teardown();
}

/* An rnsc client against a raw server: a wrong accept value is refused; a masked
 * server frame is answered with close 1002. */
static void test_ws_raw_server(void)
{
	CU_ASSERT_FATAL(setup() == 0);
	unsigned port = 0;
	int ls = raw_listen(&port);
	CU_ASSERT_FATAL(ls >= 0);
	rnsc_iface *cli = tls_client("WebSocketClientInterface", "cli", port, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
	for (int round = 0; round < 2; round++) {
		int fd = raw_ws_accept(ls, round == 0);
		CU_ASSERT_FATAL(fd >= 0);
		if (round == 0) {
			CU_ASSERT(run_until(log_has, "wrong Sec-WebSocket-Accept", 5000));
			CU_ASSERT(raw_wait_eof(fd, 5000));
			CU_ASSERT(!rnsc_iface_online(cli));
		} else {
			CU_ASSERT(run_until(is_online, cli, 5000));
			/* A ping from the server: the client answers with a masked pong. */
			raw_send(fd,
				 "\x89\x02"
				 "ab",
				 4);
			uint8_t pg[8];
			int peof;
			CU_ASSERT_EQUAL(raw_recv(fd, pg, 8, 5000, &peof), 8);
			CU_ASSERT(pg[0] == 0x8A && pg[1] == 0x82 && (pg[6] ^ pg[2]) == 'a' &&
				  (pg[7] ^ pg[3]) == 'b');
			/* A message from the client is masked too, and unmasks to the packet. */
			uint8_t pkt[40];
			for (int i = 0; i < 40; i++)
				pkt[i] = (uint8_t)(i * 3);
			CU_ASSERT_EQUAL(rnsc_iface_send(cli, pkt, sizeof(pkt)), 0);
			uint8_t m[46];
			CU_ASSERT_EQUAL(raw_recv(fd, m, sizeof(m), 5000, &peof), sizeof(m));
			int same = m[0] == 0x82 && m[1] == (0x80 | 40);
			for (int i = 0; i < 40 && same; i++)
				same = (m[6 + i] ^ m[2 + (i & 3)]) == pkt[i];
			CU_ASSERT(same);
			uint8_t fr[64], pl[30] = {0};
			size_t fl = ws_frame(fr, 0x82, pl, sizeof(pl), 1); /* masked: not allowed */
			raw_send(fd, fr, fl);
			uint8_t b[8];
			int eof;
			/* The client's close frame is masked: 0x88, 0x82, 4 mask bytes, code. */
			CU_ASSERT_EQUAL(raw_recv(fd, b, 8, 5000, &eof), 8);
			CU_ASSERT(b[0] == 0x88 && b[1] == 0x82);
			CU_ASSERT_EQUAL(((unsigned)(b[6] ^ b[2]) << 8 | (b[7] ^ b[3])), 1002);
			CU_ASSERT(raw_wait_eof(fd, 5000));
			CU_ASSERT(run_until(is_offline, cli, 5000));
		}
		close(fd);
	}
	close(ls);
	tu_teardown();
}

static int suite_init(void)
{
	char path[4096];
	if (make_certs() != 0)
		return 1;
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &P))
		return 1;
	rnsc_ctx_set_log(C, on_log, NULL, RNSC_LOG_DEBUG);
	snprintf(path, sizeof(path), "%s/plugins/iface/.libs/tls.so", RNSC_BUILDDIR);
	if (rnsc_plugin_host_load_file(P, path) != 0)
		return 1;
	snprintf(path, sizeof(path), "%s/plugins/iface/.libs/websocket.so", RNSC_BUILDDIR);
	return rnsc_plugin_host_load_file(P, path) != 0;
}

static int suite_fini(void)
{
	rnsc_plugin_host_del(P);
	rnsc_ctx_del(C);
	remove_certs();
	return 0;
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("iface_tls_ws", suite_init, suite_fini);
	CU_add_test(s, "plugins serve the TLS and WebSocket types", test_plugins_found);
	CU_add_test(s, "tls: exchange, CA-verified by name", test_tls_exchange_ca);
	CU_add_test(s, "tls: exchange, CA-verified by IP", test_tls_exchange_ip_name);
	CU_add_test(s, "tls: exchange, pinned fingerprint", test_tls_exchange_pin);
	CU_add_test(s, "tls: reconnect after a server restart", test_tls_reconnect);
	CU_add_test(s, "tls: wrong host refused", test_tls_wrong_host);
	CU_add_test(s, "tls: untrusted (self-signed) refused", test_tls_untrusted);
	CU_add_test(s, "tls: server_name mismatch refused", test_tls_server_name_mismatch);
	CU_add_test(s, "tls: pin mismatch refused", test_tls_pin_mismatch);
	CU_add_test(s, "tls: expired certificate refused (Python server)", test_tls_expired);
	CU_add_test(s, "tls: Python ssl client to rnsc server", test_tls_python_client);
	CU_add_test(s, "tls: a TLS 1.2 client is refused", test_tls_no_tls12);
	CU_add_test(s, "tls: garbage and silence instead of a handshake", test_tls_garbage);
	CU_add_test(s, "tls: garbage, runts, oversize, half frames inside TLS", test_tls_bad_hdlc);
	CU_add_test(s, "tls: a peer that does not read: queue limit, then all in order",
		    test_tls_backpressure);
	CU_add_test(s, "tls/ws: config errors name section and option", test_tls_config_errors);
	CU_add_test(s, "ws: exchange over ws://", test_ws_exchange);
	CU_add_test(s, "ws: exchange over wss://", test_wss_exchange);
	CU_add_test(s, "ws: reconnect after a server restart", test_ws_reconnect);
	CU_add_test(s, "wss: reconnect after a server restart", test_wss_reconnect);
	CU_add_test(s, "wss: wrong host refused", test_wss_refused);
	CU_add_test(s, "ws: raw client: frames, ping, close codes, bad handshakes",
		    test_ws_raw_client);
	CU_add_test(s, "ws: raw server: bad accept, masked server frame", test_ws_raw_server);
	CU_add_test(s, "ws: keepalive pings, silence drops the session", test_ws_keepalive);
	return rnsc_cu_run();
}
