/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the shared-instance RPC (src/runtime/rpc.c) and the status JSON
 * renderer (src/runtime/status_json.c): what a hostile local process can send to the
 * instance control socket, and what a hostile "shared instance" can answer rnsc status.
 *
 *   1. the message header parser: a complete header never claims more than the bound;
 *   2. a server connection fed the input in pieces: it never completes without having
 *      authenticated the peer (the input cannot know the key), and stays bounded;
 *   3. an authenticated client/server pair (same key), then the input as what follows the
 *      handshake on the server: at most one request comes out, within the bound;
 *   4. the request parser and the JSON renderer over the raw input.
 */
#include "fuzz_wire.h"
#include "rpc.h"
#include "status_json.h"

static void pump(rnsc_rpc_conn *from, rnsc_rpc_conn *to)
{
	const uint8_t *p;
	size_t n;
	while ((n = rnsc_rpc_conn_pending(from, &p)) > 0) {
		uint8_t tmp[512];
		size_t k = n < sizeof(tmp) ? n : sizeof(tmp);
		memcpy(tmp, p, k);
		rnsc_rpc_conn_consume(from, k);
		rnsc_rpc_conn_feed(to, tmp, k);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_ctx *ctx = fuzz_ctx();
	static const uint8_t key[32] = {1, 2, 3};

	size_t hdr = 0, body = 0;
	int r = rnsc_rpc_frame_header(data, size, 4096, &hdr, &body);
	FUZZ_CODE(r, RNSC_ERR_TOOBIG, RNSC_ERR_MALFORMED);
	if (r == 1)
		FUZZ_CHECK((hdr == 4 || hdr == 12) && body <= 4096 && hdr <= size);

	rnsc_rpc_conn s;
	FUZZ_CHECK(rnsc_rpc_conn_init(&s, ctx, 1, key, sizeof(key), 1024) == 0);
	size_t off = 0, step = size ? (size_t)data[0] % 17 + 1 : 1;
	while (off < size) {
		size_t k = size - off < step ? size - off : step;
		int st = rnsc_rpc_conn_feed(&s, data + off, k);
		FUZZ_CHECK(st != RNSC_RPC_READY && st != RNSC_RPC_DONE); /* never without the key */
		FUZZ_CHECK(s.in_len <= RNSC_RPC_HANDSHAKE_MAX + 12 + 4096 + step);
		off += k;
		if (st == RNSC_RPC_FAILED)
			break;
	}
	rnsc_rpc_conn_free(&s);

	rnsc_rpc_conn c;
	FUZZ_CHECK(rnsc_rpc_conn_init(&s, ctx, 1, key, sizeof(key), 1024) == 0);
	FUZZ_CHECK(rnsc_rpc_conn_init(&c, ctx, 0, key, sizeof(key), 1024) == 0);
	for (int i = 0; i < 4; i++) {
		pump(&s, &c);
		pump(&c, &s);
	}
	FUZZ_CHECK(s.state == RNSC_RPC_READY && c.state == RNSC_RPC_READY);
	int st = rnsc_rpc_conn_feed(&s, data, size);
	if (st == RNSC_RPC_DONE)
		FUZZ_CHECK(s.msg && s.msg_len <= 1024);
	rnsc_rpc_conn_free(&s);
	rnsc_rpc_conn_free(&c);

	rnsc_rpc_request q;
	if (rnsc_rpc_request_parse(&q, data, size) == 0) {
		if (q.get)
			FUZZ_CHECK(q.get >= (const char *)data &&
				   q.get + q.get_len <= (const char *)data + size);
		if (q.dest)
			FUZZ_CHECK(q.dest >= data && q.dest + q.dest_len <= data + size);
	}
	char *js = NULL;
	size_t jl = 0;
	int jr = rnsc_status_json_from_mp(data, size, &js, &jl);
	FUZZ_CHECK((jr == 0) == (js != NULL));
	if (js)
		FUZZ_CHECK(jl > 0 && js[jl - 1] == '\n');
	free(js);
	return 0;
}
