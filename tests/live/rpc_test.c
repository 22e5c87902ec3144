/* SPDX-License-Identifier: MIT */
/*
 * Tests of the shared-instance RPC: MD5 and HMAC-MD5 against RFC 1321 / RFC 2202, the
 * multiprocessing.connection message header, the challenge/response state machine both
 * ways (right key, wrong key either side, the Python >= 3.12 {sha256} form, hostile bytes),
 * the request parser, the JSON renderer, and a running node's RPC server answered through
 * rnsc_rpc_call() (every served call, a wrong key refused and counted, unknown calls
 * closed).
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "crypto.h"
#include "cu_run.h"
#include "msgpack.h"
#include "node.h"
#include "node_rpc.h"
#include "node_status.h"
#include "rpc.h"
#include "status_json.h"

static rnsc_ctx *C;
static rnsc_plugin_host *H;
static char root[256];

static void hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static void test_md5(void)
{
	static const struct {
		const char *in, *out;
	} v[] = {
		{"", "d41d8cd98f00b204e9800998ecf8427e"},
		{"abc", "900150983cd24fb0d6963f7d28e17f72"},
		{"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
		{"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
		 "57edf4a22be3c955ac49da2e2107b67a"}};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t d[16];
		char h[33];
		rnsc_md5(d, (const uint8_t *)v[i].in, strlen(v[i].in));
		hex(h, d, 16);
		CU_ASSERT_STRING_EQUAL(h, v[i].out);
	}
	/* padding that spills into a second block (56..63 bytes in the last one) */
	static const struct {
		char c;
		size_t n;
		const char *out;
	} w[] = {{'a', 57, "652b906d60af96844ebd21b674f35e93"},
		 {'b', 64, "0b649bcb5a82868817fec9a6e709d233"},
		 {'c', 119, "e259897e3e8fb46951621b2cc1ff17f9"}};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		uint8_t m[128], d[16];
		char h[33];
		memset(m, w[i].c, w[i].n);
		rnsc_md5(d, m, w[i].n);
		hex(h, d, 16);
		CU_ASSERT_STRING_EQUAL(h, w[i].out);
	}
	/* RFC 2202 HMAC-MD5 cases 1, 2 and 6 (a key longer than the block) */
	uint8_t k1[16], k6[80], d[16];
	char h[33];
	memset(k1, 0x0b, sizeof(k1));
	memset(k6, 0xaa, sizeof(k6));
	rnsc_hmac_md5(d, k1, sizeof(k1), (const uint8_t *)"Hi There", 8);
	hex(h, d, 16);
	CU_ASSERT_STRING_EQUAL(h, "9294727a3638bb1c13f48ef8158bfc9d");
	rnsc_hmac_md5(d, (const uint8_t *)"Jefe", 4,
		      (const uint8_t *)"what do ya want for nothing?", 28);
	hex(h, d, 16);
	CU_ASSERT_STRING_EQUAL(h, "750c783e6ab0b503eaa86e310a5db738");
	const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
	rnsc_hmac_md5(d, k6, sizeof(k6), (const uint8_t *)m6, strlen(m6));
	hex(h, d, 16);
	CU_ASSERT_STRING_EQUAL(h, "6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd");
}

static void test_frame_header(void)
{
	size_t hdr, body;
	const uint8_t a[] = {0, 0, 1, 0};
	CU_ASSERT_EQUAL(rnsc_rpc_frame_header(a, 3, 1000, &hdr, &body), 0);
	CU_ASSERT_EQUAL(rnsc_rpc_frame_header(a, 4, 1000, &hdr, &body), 1);
	CU_ASSERT(hdr == 4 && body == 256);
	CU_ASSERT_EQUAL(rnsc_rpc_frame_header(a, 4, 255, &hdr, &body), RNSC_ERR_TOOBIG);
	const uint8_t b[] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 9};
	CU_ASSERT_EQUAL(rnsc_rpc_frame_header(b, 8, 1000, &hdr, &body), 0);
	CU_ASSERT_EQUAL(rnsc_rpc_frame_header(b, 12, 1000, &hdr, &body), 1);
	CU_ASSERT(hdr == 12 && body == 9);
	const uint8_t c[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0};
	CU_ASSERT_EQUAL(rnsc_rpc_frame_header(c, 12, 1000, &hdr, &body), RNSC_ERR_TOOBIG);
	const uint8_t d[] = {0x80, 0, 0, 0};
	CU_ASSERT_EQUAL(rnsc_rpc_frame_header(d, 4, 1000, &hdr, &body), RNSC_ERR_MALFORMED);
}

static void pump(rnsc_rpc_conn *from, rnsc_rpc_conn *to)
{
	const uint8_t *p;
	size_t n;
	while ((n = rnsc_rpc_conn_pending(from, &p)) > 0) {
		uint8_t tmp[600];
		size_t k = n < 7 ? n : 7; /* byte dribbles: every split point */
		memcpy(tmp, p, k);
		rnsc_rpc_conn_consume(from, k);
		rnsc_rpc_conn_feed(to, tmp, k);
	}
}

static void handshake(rnsc_rpc_conn *s, rnsc_rpc_conn *c)
{
	for (int i = 0; i < 4; i++) {
		pump(s, c);
		pump(c, s);
	}
}

static void test_pair(void)
{
	const uint8_t key[32] = {7};
	for (int round = 0; round < 300; round++) { /* every random challenge byte */
		rnsc_rpc_conn s, c;
		CU_ASSERT_EQUAL_FATAL(rnsc_rpc_conn_init(&s, C, 1, key, 32, 100), 0);
		CU_ASSERT_EQUAL_FATAL(rnsc_rpc_conn_init(&c, C, 0, key, 32, 1000), 0);
		CU_ASSERT_EQUAL(rnsc_rpc_conn_send(&c, (const uint8_t *)"x", 1), RNSC_ERR_STATE);
		handshake(&s, &c);
		CU_ASSERT_EQUAL(s.state, RNSC_RPC_READY);
		CU_ASSERT_EQUAL(c.state, RNSC_RPC_READY);
		CU_ASSERT_EQUAL(rnsc_rpc_conn_send(&s, (const uint8_t *)"x", 1), RNSC_ERR_STATE);
		CU_ASSERT_EQUAL(rnsc_rpc_conn_send(&c, (const uint8_t *)"request", 7), 0);
		pump(&c, &s);
		CU_ASSERT_EQUAL(s.state, RNSC_RPC_DONE);
		CU_ASSERT(s.msg_len == 7 && memcmp(s.msg, "request", 7) == 0);
		CU_ASSERT_EQUAL(rnsc_rpc_conn_send(&s, (const uint8_t *)"response!", 9), 0);
		pump(&s, &c);
		CU_ASSERT_EQUAL(c.state, RNSC_RPC_DONE);
		CU_ASSERT(c.msg_len == 9 && memcmp(c.msg, "response!", 9) == 0);
		/* one request per connection: more bytes fail it (also in the same read) */
		if (round == 0) {
			rnsc_rpc_conn s2, c2;
			rnsc_rpc_conn_init(&s2, C, 1, key, 32, 100);
			rnsc_rpc_conn_init(&c2, C, 0, key, 32, 100);
			handshake(&s2, &c2);
			uint8_t two[] = {0, 0, 0, 1, 'a', 0, 0, 0, 1, 'b'};
			CU_ASSERT_EQUAL(rnsc_rpc_conn_feed(&s2, two, sizeof(two)), RNSC_RPC_FAILED);
			CU_ASSERT_EQUAL(s2.err, RNSC_ERR_MALFORMED);
			rnsc_rpc_conn_free(&s2);
			rnsc_rpc_conn_free(&c2);
		}
		CU_ASSERT_EQUAL(rnsc_rpc_conn_feed(&s, (const uint8_t *)"\0\0\0\0", 4),
				RNSC_RPC_FAILED);
		rnsc_rpc_conn_free(&s);
		rnsc_rpc_conn_free(&c);
	}
	/* a request over the server's bound */
	rnsc_rpc_conn s, c;
	rnsc_rpc_conn_init(&s, C, 1, key, 32, 100);
	rnsc_rpc_conn_init(&c, C, 0, key, 32, 1000);
	handshake(&s, &c);
	uint8_t big[101] = {0};
	rnsc_rpc_conn_send(&c, big, sizeof(big));
	pump(&c, &s);
	CU_ASSERT(s.state == RNSC_RPC_FAILED && s.err == RNSC_ERR_TOOBIG);
	rnsc_rpc_conn_free(&s);
	rnsc_rpc_conn_free(&c);
}

static void test_wrong_key(void)
{
	const uint8_t k1[32] = {1}, k2[32] = {2};
	rnsc_rpc_conn s, c;
	/* the server refuses the client's digest and says so */
	rnsc_rpc_conn_init(&s, C, 1, k1, 32, 100);
	rnsc_rpc_conn_init(&c, C, 0, k2, 32, 100);
	handshake(&s, &c);
	CU_ASSERT(s.state == RNSC_RPC_FAILED && s.err == RNSC_ERR_AUTH);
	CU_ASSERT(c.state == RNSC_RPC_FAILED && c.err == RNSC_ERR_AUTH); /* got #FAILURE# */
	rnsc_rpc_conn_free(&s);
	rnsc_rpc_conn_free(&c);
	/* the client refuses a server that answers its challenge wrongly */
	rnsc_rpc_conn_init(&c, C, 0, k1, 32, 100);
	uint8_t m[64];
	memcpy(m, "\0\0\0\x1f#CHALLENGE#", 15);
	memset(m + 15, 0x42, 20);
	CU_ASSERT_EQUAL(rnsc_rpc_conn_feed(&c, m, 35), RNSC_RPC_HANDSHAKE);
	const uint8_t *p;
	size_t n = rnsc_rpc_conn_pending(&c, &p);
	CU_ASSERT_EQUAL(n, 4 + 16);
	uint8_t want[16];
	rnsc_hmac_md5(want, k1, 32, m + 15, 20);
	CU_ASSERT(n == 20 && memcmp(p + 4, want, 16) == 0);
	rnsc_rpc_conn_consume(&c, n);
	CU_ASSERT_EQUAL(rnsc_rpc_conn_feed(&c, (const uint8_t *)"\0\0\0\x09#WELCOME#", 13),
			RNSC_RPC_HANDSHAKE);
	n = rnsc_rpc_conn_pending(&c, &p); /* its own challenge */
	CU_ASSERT(n == 4 + 11 + 20 && memcmp(p + 4, "#CHALLENGE#", 11) == 0);
	rnsc_rpc_conn_consume(&c, n);
	uint8_t bad[20] = {0, 0, 0, 16};
	CU_ASSERT_EQUAL(rnsc_rpc_conn_feed(&c, bad, 20), RNSC_RPC_FAILED);
	CU_ASSERT_EQUAL(c.err, RNSC_ERR_AUTH);
	rnsc_rpc_conn_free(&c);
}

static void test_sha256_form(void)
{
	const uint8_t key[32] = {9};
	rnsc_rpc_conn c;
	rnsc_rpc_conn_init(&c, C, 0, key, 32, 100);
	uint8_t m[4 + 11 + 8 + 40];
	m[0] = 0, m[1] = 0, m[2] = 0, m[3] = 59;
	memcpy(m + 4, "#CHALLENGE#{sha256}", 19);
	memset(m + 23, 0x5a, 40);
	CU_ASSERT_EQUAL(rnsc_rpc_conn_feed(&c, m, sizeof(m)), RNSC_RPC_HANDSHAKE);
	const uint8_t *p;
	size_t n = rnsc_rpc_conn_pending(&c, &p);
	uint8_t want[32];
	CU_ASSERT_EQUAL(rnsc_hmac_sha256(C, want, key, 32, m + 15, 48), 0);
	CU_ASSERT(n == 4 + 8 + 32 && memcmp(p + 4, "{sha256}", 8) == 0 &&
		  memcmp(p + 12, want, 32) == 0);
	rnsc_rpc_conn_free(&c);
	/* a server accepts a {sha256} answer to its legacy challenge (Python >= 3.12) */
	rnsc_rpc_conn s;
	rnsc_rpc_conn_init(&s, C, 1, key, 32, 100);
	n = rnsc_rpc_conn_pending(&s, &p);
	CU_ASSERT_EQUAL(n, 4 + 11 + 20);
	uint8_t ch[20], ans[4 + 40] = {0, 0, 0, 40};
	memcpy(ch, p + 15, 20);
	rnsc_rpc_conn_consume(&s, n);
	memcpy(ans + 4, "{sha256}", 8);
	rnsc_hmac_sha256(C, ans + 12, key, 32, ch, 20);
	CU_ASSERT_EQUAL(rnsc_rpc_conn_feed(&s, ans, sizeof(ans)), RNSC_RPC_HANDSHAKE);
	n = rnsc_rpc_conn_pending(&s, &p);
	CU_ASSERT(n == 13 && memcmp(p + 4, "#WELCOME#", 9) == 0);
	/* an unknown digest name in a challenge is refused */
	rnsc_rpc_conn_consume(&s, n);
	uint8_t md[4 + 11 + 8 + 40];
	memcpy(md, m, sizeof(md));
	memcpy(md + 15, "{sha512}", 8);
	CU_ASSERT_EQUAL(rnsc_rpc_conn_feed(&s, md, sizeof(md)), RNSC_RPC_FAILED);
	rnsc_rpc_conn_free(&s);
	/* garbage, a wrong challenge prefix, a handshake message over 256 bytes */
	rnsc_rpc_conn_init(&c, C, 0, key, 32, 100);
	CU_ASSERT_EQUAL(rnsc_rpc_conn_feed(&c, (const uint8_t *)"\0\0\0\x05hello", 9),
			RNSC_RPC_FAILED);
	rnsc_rpc_conn_free(&c);
	rnsc_rpc_conn_init(&c, C, 0, key, 32, 100);
	CU_ASSERT_EQUAL(rnsc_rpc_conn_feed(&c, (const uint8_t *)"\0\0\x01\x01", 4),
			RNSC_RPC_FAILED);
	CU_ASSERT_EQUAL(c.err, RNSC_ERR_TOOBIG);
	CU_ASSERT_EQUAL(rnsc_rpc_conn_feed(&c, (const uint8_t *)"x", 1), RNSC_RPC_FAILED);
	rnsc_rpc_conn_free(&c);
	CU_ASSERT_EQUAL(rnsc_rpc_conn_init(NULL, C, 0, key, 32, 1), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_rpc_conn_init(&c, C, 0, key, 65, 1), RNSC_ERR_INVAL);
}

static void test_request_and_json(void)
{
	uint8_t b[256];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, b, sizeof(b));
	rnsc_mp_write_map(&w, 4);
	rnsc_mp_write_cstr(&w, "get");
	rnsc_mp_write_cstr(&w, "path_table");
	rnsc_mp_write_cstr(&w, "max_hops");
	rnsc_mp_write_int(&w, 3);
	rnsc_mp_write_cstr(&w, "destination_hash");
	rnsc_mp_write_bin(&w, (const uint8_t *)"0123456789abcdef", 16);
	rnsc_mp_write_cstr(&w, "other");
	rnsc_mp_write_array(&w, 1);
	rnsc_mp_write_nil(&w);
	int n = rnsc_mp_writer_finish(&w);
	rnsc_rpc_request q;
	CU_ASSERT_EQUAL(rnsc_rpc_request_parse(&q, b, (size_t)n), 0);
	CU_ASSERT(q.get_len == 10 && memcmp(q.get, "path_table", 10) == 0);
	CU_ASSERT(q.has_max_hops && q.max_hops == 3 && q.dest_len == 16);
	CU_ASSERT_EQUAL(rnsc_rpc_request_parse(&q, (const uint8_t *)"\x91\x01", 2),
			RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_rpc_request_parse(&q, (const uint8_t *)"\x81\x01\x01", 3),
			RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_rpc_request_parse(&q, (const uint8_t *)"\x81\xa3get\x01", 6),
			RNSC_ERR_MALFORMED);

	/* the JSON renderer: rnstatus -j's conventions */
	rnsc_mp_writer_init(&w, b, sizeof(b));
	rnsc_mp_write_map(&w, 8);
	rnsc_mp_write_cstr(&w, "h");
	rnsc_mp_write_bin(&w, (const uint8_t *)"\x01\xab", 2);
	rnsc_mp_write_cstr(&w, "f");
	rnsc_mp_write_double(&w, 0.1);
	rnsc_mp_write_cstr(&w, "g");
	rnsc_mp_write_double(&w, 1e16);
	rnsc_mp_write_cstr(&w, "i");
	rnsc_mp_write_double(&w, 1000000.0);
	rnsc_mp_write_cstr(&w, "s");
	rnsc_mp_write_cstr(&w, "a\"b\\\n");
	rnsc_mp_write_cstr(&w, "l");
	rnsc_mp_write_array(&w, 3);
	rnsc_mp_write_nil(&w);
	rnsc_mp_write_bool(&w, 1);
	rnsc_mp_write_int(&w, -5);
	rnsc_mp_write_int(&w, 7); /* a non-str key */
	rnsc_mp_write_double(&w, 2.5e-05);
	rnsc_mp_write_cstr(&w, "e");
	rnsc_mp_write_map(&w, 0);
	n = rnsc_mp_writer_finish(&w);
	char *js = NULL;
	size_t jl = 0;
	CU_ASSERT_EQUAL_FATAL(rnsc_status_json_from_mp(b, (size_t)n, &js, &jl), 0);
	CU_ASSERT_STRING_EQUAL(js, "{\"h\": \"01ab\", \"f\": 0.1, \"g\": 1e+16, \"i\": 1000000.0, "
				   "\"s\": \"a\\\"b\\\\\\u000a\", \"l\": [null, true, -5], "
				   "\"7\": 2.5e-05, \"e\": {}}\n");
	free(js);
	CU_ASSERT_EQUAL(rnsc_status_json_from_mp(b, 5, &js, &jl), RNSC_ERR_TRUNCATED);
	CU_ASSERT_PTR_NULL(js);
	uint8_t deep[64];
	memset(deep, 0x91, sizeof(deep)); /* arrays nested past the limit */
	CU_ASSERT_EQUAL(rnsc_status_json_from_mp(deep, sizeof(deep), &js, &jl), RNSC_ERR_TOOBIG);
	/* float32, NaN, infinities, an ext value, non-str keys */
	rnsc_mp_writer_init(&w, b, sizeof(b));
	rnsc_mp_write_array(&w, 5);
	rnsc_mp_write_float(&w, 0.5f);
	rnsc_mp_write_double(&w, 0.0 / 0.0);
	rnsc_mp_write_double(&w, 1.0 / 0.0);
	rnsc_mp_write_double(&w, -1.0 / 0.0);
	rnsc_mp_write_ext(&w, 5, (const uint8_t *)"xy", 2);
	n = rnsc_mp_writer_finish(&w);
	CU_ASSERT_EQUAL_FATAL(rnsc_status_json_from_mp(b, (size_t)n, &js, &jl), 0);
	CU_ASSERT_STRING_EQUAL(js, "[0.5, NaN, Infinity, -Infinity, null]\n");
	free(js);
	/* truncated inside a map key, a map value, an array */
	const uint8_t t1[] = {0x81}, t2[] = {0x81, 0xa1, 'k'}, t3[] = {0x92, 0x01},
		      t4[] = {0x81, 0x01};
	CU_ASSERT_EQUAL(rnsc_status_json_from_mp(t1, sizeof(t1), &js, &jl), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_status_json_from_mp(t2, sizeof(t2), &js, &jl), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_status_json_from_mp(t3, sizeof(t3), &js, &jl), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_status_json_from_mp(t4, sizeof(t4), &js, &jl), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_status_json_from_mp(NULL, 0, &js, &jl), RNSC_ERR_INVAL);
	char f[40];
	rnsc_py_float_repr(f, sizeof(f), 6.0);
	CU_ASSERT_STRING_EQUAL(f, "6.0");
	rnsc_py_float_repr(f, sizeof(f), -0.000123);
	CU_ASSERT_STRING_EQUAL(f, "-0.000123");
	rnsc_py_float_repr(f, sizeof(f), 123456789.125);
	CU_ASSERT_STRING_EQUAL(f, "123456789.125");
}

/* ---- a running shared instance --------------------------------------------------------- */

static rnsc_node *N;
static pthread_t T;
static struct sockaddr_storage A;
static unsigned AL;
static uint8_t K[64];
static size_t KL;

static void *runner(void *ud)
{
	rnsc_node_run(ud);
	return NULL;
}

static int call_raw(const uint8_t *req, size_t len, uint8_t **resp, size_t *rl)
{
	return rnsc_rpc_call(C, &A, AL, K, KL, req, len, resp, rl, 5000);
}

/* {"get": what} or {kind: what, "destination_hash": 16 bytes} */
static int call2(const char *kind, const char *what, int with_dest, uint8_t **resp, size_t *rl)
{
	uint8_t b[128];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, b, sizeof(b));
	rnsc_mp_write_map(&w, with_dest ? 2 : 1);
	rnsc_mp_write_cstr(&w, kind);
	rnsc_mp_write_cstr(&w, what);
	if (with_dest) {
		rnsc_mp_write_cstr(&w, "destination_hash");
		rnsc_mp_write_bin(
			&w,
			(const uint8_t
				 *)"\x11\x22\x33\x44\x55\x66\x77\x88\x11\x22\x33\x44\x55\x66\x77\x88",
			16);
	}
	return call_raw(b, (size_t)rnsc_mp_writer_finish(&w), resp, rl);
}

/* One blackhole call as Reticulum.py sends it; the answer's bytes in *resp. */
static int bh_call(const char *kind, const uint8_t *id, size_t idlen, int with_args, uint8_t **resp,
		   size_t *rl)
{
	uint8_t b[160];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, b, sizeof(b));
	if (strcmp(kind, "is_blackholed") == 0 || strcmp(kind, "blackholed_identities") == 0) {
		rnsc_mp_write_map(&w, id ? 2 : 1);
		rnsc_mp_write_cstr(&w, "get");
		rnsc_mp_write_cstr(&w, kind);
		if (id) {
			rnsc_mp_write_cstr(&w, "identity_hash");
			rnsc_mp_write_bin(&w, id, idlen);
		}
	} else {
		rnsc_mp_write_map(&w, with_args ? 3 : 1);
		rnsc_mp_write_cstr(&w, kind);
		rnsc_mp_write_bin(&w, id, idlen);
		if (with_args) {
			rnsc_mp_write_cstr(&w, "until");
			if (with_args == 2)
				rnsc_mp_write_double(&w, 4102444800.5); /* 2100 */
			else
				rnsc_mp_write_nil(&w);
			rnsc_mp_write_cstr(&w, "reason");
			if (with_args == 2)
				rnsc_mp_write_cstr(&w, "spam");
			else
				rnsc_mp_write_nil(&w);
		}
	}
	return call_raw(b, (size_t)rnsc_mp_writer_finish(&w), resp, rl);
}

static int bh_first(const char *kind, const uint8_t *id, size_t idlen, int with_args)
{
	uint8_t *resp = NULL;
	size_t rl = 0;
	int rc = bh_call(kind, id, idlen, with_args, &resp, &rl);
	int b = rc == 0 && rl ? resp[0] : -1;
	free(resp);
	return b;
}

static void bh_calls(const char *dir)
{
	static const uint8_t id[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	static const uint8_t id2[16] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
	CU_ASSERT_EQUAL(bh_first("blackhole_identity", id, 16, 2), 0xc3); /* True */
	CU_ASSERT_EQUAL(bh_first("blackhole_identity", id, 16, 2), 0xc0); /* None: already */
	CU_ASSERT_EQUAL(bh_first("blackhole_identity", id2, 16, 1), 0xc3);
	CU_ASSERT_EQUAL(bh_first("blackhole_identity", id, 5, 1), 0xc2); /* False: length */
	CU_ASSERT_EQUAL(bh_first("is_blackholed", id, 16, 0), 0xc3);
	CU_ASSERT_EQUAL(bh_first("unblackhole_identity", id2, 16, 0), 0xc3);
	CU_ASSERT_EQUAL(bh_first("unblackhole_identity", id2, 16, 0), 0xc0); /* None */
	CU_ASSERT_EQUAL(bh_first("is_blackholed", id2, 16, 0), 0xc2);
	/* the table as Transport's dict: one entry, this transport as source */
	uint8_t *resp = NULL;
	size_t rl = 0;
	CU_ASSERT_EQUAL_FATAL(bh_call("blackholed_identities", NULL, 0, 0, &resp, &rl), 0);
	rnsc_transport *t = rnsc_node_transport(N);
	uint8_t want[160];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, want, sizeof(want));
	int wl = rnsc_blackhole_list_write(&w, t, NULL);
	CU_ASSERT(wl > 0 && (size_t)wl == rl && memcmp(resp, want, rl) == 0);
	CU_ASSERT(rl > 2 && resp[0] == 0x81);
	free(resp);
	/* a bad until is malformed: the connection is closed */
	uint8_t bad[64];
	rnsc_mp_writer_init(&w, bad, sizeof(bad));
	rnsc_mp_write_map(&w, 2);
	rnsc_mp_write_cstr(&w, "blackhole_identity");
	rnsc_mp_write_bin(&w, id2, 16);
	rnsc_mp_write_cstr(&w, "until");
	rnsc_mp_write_cstr(&w, "soon");
	CU_ASSERT_EQUAL(call_raw(bad, (size_t)rnsc_mp_writer_finish(&w), &resp, &rl), RNSC_ERR_IO);
	/* storage/blackhole/local holds the local entries as the reference writes them */
	char path[400];
	snprintf(path, sizeof(path), "%s/storage/blackhole/local", dir);
	FILE *f = fopen(path, "rb");
	CU_ASSERT_FATAL(f != NULL);
	uint8_t file[256];
	size_t fl = fread(file, 1, sizeof(file), f);
	fclose(f);
	CU_ASSERT(fl == (size_t)wl && memcmp(file, want, fl) == 0);
	CU_ASSERT_EQUAL(bh_first("unblackhole_identity", id, 16, 0), 0xc3);
}

static void test_node_rpc(void)
{
	char dir[300], cfg[700];
	snprintf(dir, sizeof(dir), "%s/shared", root);
	CU_ASSERT_FATAL(mkdir(dir, 0700) == 0);
	snprintf(cfg, sizeof(cfg), "%s/config", dir);
	FILE *f = fopen(cfg, "w");
	CU_ASSERT_FATAL(f != NULL);
	fprintf(f,
		"[reticulum]\n  share_instance = yes\n  instance_name = rnscrpctest%d\n"
		"  enable_transport = yes\n[logging]\n  loglevel = 2\n",
		(int)getpid());
	fclose(f);
	rnsc_node_options o = {.config_dir = dir};
	rnsc_config_error err;
	CU_ASSERT_EQUAL_FATAL(rnsc_node_new(C, H, &o, &N, &err), 0);
	CU_ASSERT(rnsc_node_is_shared_instance(N));
	CU_ASSERT_PTR_NOT_NULL(rnsc_node_rpc_server(N));
	CU_ASSERT_EQUAL_FATAL(rnsc_rpc_endpoint(C, rnsc_node_settings(N), dir, &A, &AL, K, &KL), 0);
	/* the JSON of GET /status, from the same document */
	char *js = NULL;
	size_t jl = 0;
	CU_ASSERT_EQUAL(rnsc_node_status_json(N, &js, &jl), 0);
	CU_ASSERT(js && strstr(js, "\"name\": \"Shared Instance[rns/rnscrpctest"));
	free(js);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&T, NULL, runner, N), 0);

	static const struct {
		const char *kind, *what;
		int dest;
		const char *expect; /* the answer's first byte(s), as msgpack */
		size_t elen;
	} calls[] = {
		{"get", "path_table", 0, "\x90", 1},
		{"get", "rate_table", 0, "\x90", 1},
		{"get", "next_hop_if_name", 1, "\xa4None", 5},
		{"get", "next_hop", 1, "\xc0", 1},
		{"get", "first_hop_timeout", 1, "\xcb", 1},
		{"get", "lowest_interface_bitrate", 0, "\xce",
		 1}, /* the shared instance's 1 Gbit/s */
		{"get", "medium_path_timeout", 0, "\xcb", 1},
		{"get", "link_count", 0, "\x00", 1},
		{"get", "active_link_count", 0, "\x00", 1},
		{"get", "packet_rssi", 1, "\xc0", 1},
		{"get", "profiling_results", 0, "\xc0", 1},
		{"get", "blackholed_identities", 0, "\x80", 1},
		{"get", "is_blackholed", 1, "\xc2", 1},
		{"drop", "path", 1, "\xc2", 1},
		{"drop", "all_via", 1, "\x00", 1},
		{"drop", "announce_queues", 0, "\x00", 1},
		/* a destination (identity) the instance does not know: False, as from rnsd */
		{"destination_data", "used", 1, "\xc2", 1},
		{"identity_data", "retain", 1, "\xc2", 1},
		{"blackhole_identity", "x", 0, "\xc2", 1},
	};
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		uint8_t *resp = NULL;
		size_t rl = 0;
		int rc = call2(calls[i].kind, calls[i].what, calls[i].dest, &resp, &rl);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT(resp && rl >= calls[i].elen &&
			  memcmp(resp, calls[i].expect, calls[i].elen) == 0);
		if (rc || !resp || memcmp(resp, calls[i].expect, calls[i].elen) != 0)
			fprintf(stderr, "call %s %s: rc %d, first byte %02x\n", calls[i].kind,
				calls[i].what, rc, resp && rl ? resp[0] : 0);
		free(resp);
	}
	bh_calls(dir);
	uint8_t *resp = NULL;
	size_t rl = 0;
	CU_ASSERT_EQUAL(call2("get", "interface_stats", 0, &resp, &rl), 0);
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, resp, rl);
	size_t pairs = 0;
	CU_ASSERT(rnsc_mp_read_map(&r, &pairs) == 0 && pairs == 42);
	free(resp);
	/* an unknown call and a request that is not a map are answered by closing */
	CU_ASSERT_EQUAL(call2("get", "no_such_thing", 0, &resp, &rl), RNSC_ERR_IO);
	CU_ASSERT_EQUAL(call_raw((const uint8_t *)"\x01", 1, &resp, &rl), RNSC_ERR_IO);
	/* more connections than the server takes at once: the extra ones are closed */
	int socks[20];
	for (int i = 0; i < 20; i++) {
		socks[i] = socket(A.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CU_ASSERT(socks[i] >= 0 && connect(socks[i], (struct sockaddr *)&A, AL) == 0);
	}
	usleep(300000);
	int closed = 0;
	for (int i = 0; i < 20; i++) {
		uint8_t tmp[64];
		struct timeval tv = {0, 200000};
		setsockopt(socks[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		ssize_t got = recv(socks[i], tmp, sizeof(tmp), 0); /* a challenge, or the end */
		if (got == 0)
			closed++;
		close(socks[i]);
	}
	CU_ASSERT_EQUAL(closed, 4);
	usleep(200000);
	/* a wrong key is refused */
	uint8_t good[64];
	memcpy(good, K, sizeof(K));
	K[0] ^= 1;
	CU_ASSERT_EQUAL(call2("get", "link_count", 0, &resp, &rl), RNSC_ERR_AUTH);
	memcpy(K, good, sizeof(K));
	/* nothing listens there once the node is gone */
	rnsc_node_stop(N);
	pthread_join(T, NULL);
	rnsc_node_rpc_stats st;
	rnsc_node_rpc_stats_get(rnsc_node_rpc_server(N), &st);
	CU_ASSERT_EQUAL(st.served, sizeof(calls) / sizeof(calls[0]) + 1 + 10); /* + bh_calls */
	CU_ASSERT_EQUAL(st.refused, 1);
	CU_ASSERT(st.dropped >= 2 + 4);
	rnsc_node_del(N);
	N = NULL;
	CU_ASSERT_EQUAL(call2("get", "link_count", 0, &resp, &rl), RNSC_ERR_IO);
}

static int write_cfg(const char *dir, const char *text)
{
	char path[400];
	if (mkdir(dir, 0700) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/config", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void pump2(rnsc_node *a, rnsc_node *b, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		if (a)
			rnsc_node_run_once(a, 5);
		if (b)
			rnsc_node_run_once(b, 5);
	}
}

static int client_online(rnsc_node *k)
{
	rnsc_iface_host *ih = rnsc_node_ifaces(k);
	return rnsc_iface_host_count(ih) == 1 && rnsc_iface_online(rnsc_iface_host_at(ih, 0));
}

/* A program attached to a shared instance: it opens no interfaces of its own, follows the
 * instance going away and comes back (LocalClientInterface.reconnect, every 8 s). */
static void test_attach_reconnect(void)
{
	char ds[300], dk[300], text[300];
	snprintf(ds, sizeof(ds), "%s/S", root);
	snprintf(dk, sizeof(dk), "%s/K", root);
	snprintf(text, sizeof(text),
		 "[reticulum]\n  share_instance = yes\n  instance_name = rnscrc%d\n"
		 "[interfaces]\n  [[Never opened when attached]]\n    type = TCPServerInterface\n"
		 "    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = 0\n",
		 (int)getpid());
	CU_ASSERT_FATAL(write_cfg(ds, text) == 0 && write_cfg(dk, text) == 0);
	rnsc_node_options os = {.config_dir = ds}, ok = {.config_dir = dk};
	rnsc_config_error err;
	rnsc_node *S = NULL, *P = NULL;
	CU_ASSERT_EQUAL_FATAL(rnsc_node_new(C, H, &os, &S, &err), 0);
	CU_ASSERT(rnsc_node_is_shared_instance(S) && !rnsc_node_connected_to_shared(S));
	CU_ASSERT_EQUAL(rnsc_iface_host_count(rnsc_node_ifaces(S)), 2); /* listener + TCP server */
	CU_ASSERT_EQUAL_FATAL(rnsc_node_new(C, H, &ok, &P, &err), 0);
	CU_ASSERT(rnsc_node_connected_to_shared(P) && !rnsc_node_is_shared_instance(P));
	CU_ASSERT(rnsc_transport_connected_to_shared(rnsc_node_transport(P)));
	CU_ASSERT(client_online(P)); /* only the connection to S */
	pump2(S, P, 300);
	CU_ASSERT_EQUAL(rnsc_iface_host_count(rnsc_node_ifaces(S)), 3); /* + the program */
	rnsc_node_del(S);
	pump2(NULL, P, 200);
	CU_ASSERT(!client_online(P));
	CU_ASSERT_EQUAL_FATAL(rnsc_node_new(C, H, &os, &S, &err), 0);
	int back = 0;
	for (int i = 0; i < 130 && !back; i++) {
		pump2(S, P, 100);
		back = client_online(P) && rnsc_iface_host_count(rnsc_node_ifaces(S)) == 3;
	}
	CU_ASSERT(back);
	rnsc_iface_status st;
	CU_ASSERT(rnsc_iface_status_get(rnsc_iface_host_at(rnsc_node_ifaces(P), 0), &st) == 0 &&
		  st.stats.reconnects == 1);
	rnsc_node_del(P);
	rnsc_node_del(S);
}

/* The local plugin's types written into [interfaces] by hand: option errors name the
 * option, a name in use or nothing to attach to is an I/O error. */
static void test_local_plugin_options(void)
{
	static const struct {
		const char *body, *expect;
		int code;
	} cases[] = {
		{"    type = LocalServerInterface\n", "socket_path", RNSC_ERR_CONFIG_VALUE},
		{"    type = LocalServerInterface\n    port = 70000\n", "port",
		 RNSC_ERR_CONFIG_VALUE},
		{"    type = LocalClientInterface\n    port = 0\n", "port", RNSC_ERR_CONFIG_VALUE},
		{"    type = LocalServerInterface\n    socket_path = \"\"\n", "socket_path",
		 RNSC_ERR_CONFIG_VALUE},
		{"    type = LocalClientInterface\n    socket_path = x\n    reconnect_wait = 0\n",
		 "reconnect_wait", RNSC_ERR_CONFIG_VALUE},
		{"    type = LocalClientInterface\n    socket_path = rnsc-nobody-@\n",
		 "socket_path", RNSC_ERR_IO},
		{"    type = LocalServerInterface\n    socket_path = rnsc-twice-@\n"
		 "  [[Again]]\n    type = LocalServerInterface\n    enabled = yes\n"
		 "    socket_path = rnsc-twice-@\n",
		 "socket_path", RNSC_ERR_IO},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char dir[300], body[400], text[800];
		snprintf(dir, sizeof(dir), "%s/L%zu", root, i);
		size_t bl = 0; /* "@" stands for this process's id */
		for (const char *q = cases[i].body; *q && bl < sizeof(body) - 16; q++) {
			if (*q == '@')
				bl += (size_t)snprintf(body + bl, sizeof(body) - bl, "%d",
						       (int)getpid());
			else
				body[bl++] = *q;
		}
		body[bl] = 0;
		snprintf(
			text, sizeof(text),
			"[reticulum]\n  share_instance = no\n"
			"  panic_on_interface_error = yes\n[interfaces]\n  [[L]]\n    enabled = yes\n%s",
			body);
		CU_ASSERT_FATAL(write_cfg(dir, text) == 0);
		rnsc_node_options o = {.config_dir = dir};
		rnsc_config_error err;
		rnsc_node *x = NULL;
		int rc = rnsc_node_new(C, H, &o, &x, &err);
		CU_ASSERT_EQUAL(rc, cases[i].code);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].expect));
		if (rc != cases[i].code)
			fprintf(stderr, "case %zu: %s (%s)\n", i, err.msg, rnsc_err_name(rc));
		rnsc_node_del(x);
	}
	/* a TCP listener on any port, with IFAC options, and a client attaching to it */
	char dir[300], text[600];
	snprintf(dir, sizeof(dir), "%s/Lok", root);
	snprintf(text, sizeof(text),
		 "[reticulum]\n  share_instance = no\n[interfaces]\n"
		 "  [[L]]\n    type = LocalServerInterface\n    enabled = yes\n    port = 0\n"
		 "    ifac_size = 64\n");
	CU_ASSERT_FATAL(write_cfg(dir, text) == 0);
	rnsc_node_options o = {.config_dir = dir};
	rnsc_config_error err;
	rnsc_node *x = NULL;
	CU_ASSERT_EQUAL_FATAL(rnsc_node_new(C, H, &o, &x, &err), 0);
	rnsc_iface *f = rnsc_iface_host_find(rnsc_node_ifaces(x), "L");
	rnsc_iface_status st;
	CU_ASSERT_FATAL(f && rnsc_iface_status_get(f, &st) == 0);
	CU_ASSERT(st.stats.local_port > 0 && st.stats.online);
	char desc[64];
	snprintf(desc, sizeof(desc), "Shared Instance[%u]", (unsigned)st.stats.local_port);
	char got[64];
	CU_ASSERT(rnsc_iface_describe(f, got, sizeof(got)) > 0 && strcmp(got, desc) == 0);
	rnsc_node_del(x);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	snprintf(root, sizeof(root), "%s/rnsc-rpc-test.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		return 1;
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &H) || rnsc_plugin_host_add_default_dirs(H))
		return 1;
	rnsc_plugin_host_scan(H);
	if (rnsc_crypto_set_order(C, "openssl") != 0) {
		fprintf(stderr, "rpc_test: FAILED: the openssl plugin did not load\n");
		return 1;
	}
	rnsc_ctx_set_log_level(C, getenv("RNSC_TEST_VERBOSE") ? RNSC_LOG_DEBUG : RNSC_LOG_CRITICAL);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("rpc", NULL, NULL);
	CU_add_test(s, "MD5 and HMAC-MD5 (RFC 1321, RFC 2202)", test_md5);
	CU_add_test(s, "message header", test_frame_header);
	CU_add_test(s, "handshake, request and response", test_pair);
	CU_add_test(s, "wrong key refused either way", test_wrong_key);
	CU_add_test(s, "the {sha256} form and hostile handshakes", test_sha256_form);
	CU_add_test(s, "request parser and status JSON", test_request_and_json);
	CU_add_test(s, "a shared instance's RPC server", test_node_rpc);
	CU_add_test(s, "attached to a shared instance: reconnects", test_attach_reconnect);
	CU_add_test(s, "local plugin options and errors", test_local_plugin_options);
	int rc = rnsc_cu_run();
	rnsc_plugin_host_del(H);
	rnsc_ctx_del(C);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "rpc_test: could not remove %s\n", root);
	return rc;
}
