/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the transport engine (src/lib/transport.c).
 *
 * One fresh engine per input (libFuzzer wants deterministic runs): transport on or off,
 * three interfaces (modes chosen by the input; hardware MTUs of 2,048 bytes, as TCP-like
 * interfaces carry packets beyond the 500-byte MTU, the default and 300), a SINGLE
 * destination proving everything and a PLAIN one registered. The input is a config byte and
 * then records:
 *
 *   op(1) [frame: len_hi(1) len_lo(1) bytes(len)]
 *
 *   op & 0x03  interface: 0..2, 3 = an id that is not attached (must be RNSC_ERR_NOTFOUND)
 *   op & 0x1c  clock advance (0, 1 ms .. past a week), then tick() when op & 0x20
 *   op & 0xc0  0x00/0x40: a frame follows (length prefixed, cut at the input's end);
 *              0x80: the engine acts itself (announce / request_path / send / expire_path,
 *              picked by the clock bits; with bit 0x10 instead of expire_path: opens a link
 *              to the last destination seen, then sends on it or closes it); 0xc0: the oldest outbox frame is looped back into
 *              the engine on the interface named by op.
 *
 * Checked beyond "no crash, no leak, no UB": every ingest return code is one the header
 * documents; every frame the engine puts in its outbox parses, fits the widest
 * interface's hardware MTU (HEADER_2 insertion included) and has hops below
 * PATHFINDER_M; next_deadline() never lies about
 * pending work being due.
 * Randomness comes from a generator seeded by the input, so a crash input replays.
 * Seed regress-forward-beyond-mtu: transport on; on interface 0 a signed announce of a
 * remote destination, then a 900-byte HEADER_2 DATA packet and a 1,200-byte link request
 * addressed through the engine's transport id to it (both once overflowed a stack buffer).
 */
#include "fuzz_wire.h"

#include "destination.h"
#include "packet.h"
#include "transport.h"

static uint64_t fz_rng_state;

static int fz_rng(void *ud, uint8_t *out, size_t len)
{
	(void)ud;
	for (size_t i = 0; i < len; i++) {
		fz_rng_state ^= fz_rng_state << 13;
		fz_rng_state ^= fz_rng_state >> 7;
		fz_rng_state ^= fz_rng_state << 17;
		out[i] = (uint8_t)(fz_rng_state >> 24);
	}
	return 0;
}

/* Clock advances (ms): none, tiny, the retransmission windows, and past every expiry. */
static const uint64_t ADVANCE[8] = {
	0,
	1,
	600,
	5600,
	45001,
	RNSC_ROAMING_PATH_TIME_MS + 1,
	RNSC_AP_PATH_TIME_MS + 1,
	RNSC_PATHFINDER_E_MS + 1,
};

#define FZ_WIDE_MTU 2048u /* interface 0's hardware MTU */
#define FZ_FRAME_MAX (FZ_WIDE_MTU + RNSC_TRUNCATED_HASHLEN)

static void check_outbox(rnsc_transport *t, uint8_t *last, size_t *last_len)
{
	uint32_t ifc;
	size_t n;
	const uint8_t *buf;
	while ((buf = rnsc_transport_outbox_take(t, &ifc, &n)) != NULL) {
		FUZZ_CHECK(ifc <= 2);
		FUZZ_CHECK(n <= FZ_FRAME_MAX && n > 2);
		/* Forwarding in transport passes a packet on with its incremented hop count,
		 * which may reach PATHFINDER_M (the reference's _inbound transmits it just the
		 * same; the next hop drops it at unpack). Everything else must parse. */
		FUZZ_CHECK(buf[1] <= RNSC_PATHFINDER_M);
		rnsc_packet p;
		if (buf[1] < RNSC_PATHFINDER_M)
			FUZZ_CHECK(rnsc_packet_unpack(&p, buf, n) == 0);
		memcpy(last, buf, n);
		*last_len = n;
		rnsc_transport_outbox_release(t, buf);
	}
	FUZZ_CHECK(rnsc_transport_outbox_count(t) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	rnsc_ctx *ctx = fuzz_ctx();
	fz_rng_state = 0x9e3779b97f4a7c15ull ^ size;
	for (size_t i = 0; i < size && i < 16; i++)
		fz_rng_state = fz_rng_state * 0x100000001b3ull ^ data[i];
	if (!fz_rng_state)
		fz_rng_state = 1;
	rnsc_crypto_set_rng(ctx, fz_rng, NULL);

	uint8_t cfgb = data[0];
	/* Fixed identities: transport node and local destination. */
	uint8_t prv[64];
	for (int i = 0; i < 64; i++)
		prv[i] = (uint8_t)(i * 7 + 1);
	rnsc_identity tid, did;
	FUZZ_CHECK(rnsc_identity_from_private(ctx, &tid, prv, 64) == 0);
	prv[0] ^= 0x55;
	FUZZ_CHECK(rnsc_identity_from_private(ctx, &did, prv, 64) == 0);

	rnsc_transport_config cfg = {
		.transport_enabled = cfgb & 1,
		.use_implicit_proof = (cfgb >> 1) & 1,
		.hashlist_maxsize = 8, /* rotate the hashlist often */
	};
	rnsc_transport *t = NULL;
	FUZZ_CHECK(rnsc_transport_new(ctx, &t, &tid, &cfg) == 0);
	static const int modes[4] = {RNSC_TRANSPORT_MODE_FULL, RNSC_TRANSPORT_MODE_ACCESS_POINT,
				     RNSC_TRANSPORT_MODE_ROAMING, RNSC_TRANSPORT_MODE_BOUNDARY};
	for (uint32_t i = 0; i < 3; i++)
		FUZZ_CHECK(rnsc_transport_iface_add(t, i, modes[(cfgb >> (2 + 2 * i)) & 3],
						    i == 1 ? 9600 : 0,
						    i == 0   ? FZ_WIDE_MTU
						    : i == 2 ? 300
							     : 0) == 0);
	FUZZ_CHECK(rnsc_transport_iface_add(t, 0, RNSC_TRANSPORT_MODE_FULL, 0, 0) ==
		   RNSC_ERR_STATE);
	const char *aspects[] = {"fuzz"};
	uint8_t single[RNSC_TRUNCATED_HASHLEN], plain[RNSC_TRUNCATED_HASHLEN];
	FUZZ_CHECK(rnsc_transport_dest_add(t, RNSC_DEST_SINGLE, &did, "rnsc", aspects, 1, 1,
					   single) == 0);
	FUZZ_CHECK(rnsc_transport_dest_add(t, RNSC_DEST_PLAIN, NULL, "rnsc", aspects, 1, 0,
					   plain) == 0);

	uint64_t now = 1700000000000ull;
	uint8_t last[FZ_FRAME_MAX];
	size_t last_len = 0;
	uint8_t remote[RNSC_TRUNCATED_HASHLEN] = {0}; /* destination of the last frame seen */
	uint8_t lid[RNSC_TRUNCATED_HASHLEN] = {0};    /* the link the engine opened itself */
	int have_link = 0;
	size_t i = 1;
	while (i < size) {
		uint8_t op = data[i++];
		uint32_t ifc = op & 3 ? (op & 3) - 1u : 0;
		int unknown_if = (op & 3) == 3;
		if (unknown_if)
			ifc = 7;
		now += ADVANCE[(op >> 2) & 7];
		switch (op >> 6) {
		case 0:
		case 1: {
			if (i + 2 > size)
				break;
			size_t len = (size_t)data[i] << 8 | data[i + 1];
			i += 2;
			if (len > size - i)
				len = size - i;
			int rc = rnsc_transport_ingest(t, ifc, data + i, len, now);
			if (unknown_if)
				FUZZ_CHECK(rc == RNSC_ERR_NOTFOUND);
			else
				FUZZ_CODE(rc, RNSC_ERR_IFAC_UNEXPECTED, RNSC_ERR_TOOBIG,
					  RNSC_ERR_TRUNCATED, RNSC_ERR_HOPS, RNSC_ERR_MALFORMED,
					  RNSC_ERR_INVAL);
			rnsc_packet p;
			if (rnsc_packet_unpack(&p, data + i, len) == 0)
				memcpy(remote, p.dest_hash, sizeof(remote));
			i += len;
			break;
		}
		case 2:
			switch ((op >> 2) & 3) {
			case 0:
				FUZZ_CODE(rnsc_transport_announce(t, single, data + 1,
								  size - 1 > 40 ? 40 : size - 1,
								  now),
					  RNSC_ERR_TOOBIG);
				FUZZ_CHECK(rnsc_transport_announce(t, plain, NULL, 0, now) ==
					   RNSC_ERR_INVAL);
				break;
			case 1:
				FUZZ_CODE(rnsc_transport_request_path(t, remote, (op >> 4) & 1, ifc,
								      now),
					  RNSC_ERR_NOTFOUND);
				break;
			case 2: {
				uint8_t ph[RNSC_HASHLEN];
				FUZZ_CODE(rnsc_transport_send(t, remote, data,
							      size > 64 ? 64 : size, ph, now),
					  RNSC_ERR_NOTFOUND, RNSC_ERR_KEYLEN, RNSC_ERR_LOW_ORDER);
				break;
			}
			default:
				if (!(op & 0x10)) {
					FUZZ_CODE(rnsc_transport_expire_path(t, remote),
						  RNSC_ERR_NOTFOUND);
				} else if (!have_link) {
					int rc = rnsc_transport_link_open(t, remote, lid, now);
					FUZZ_CODE(rc, RNSC_ERR_NOTFOUND, RNSC_ERR_KEYLEN,
						  RNSC_ERR_LOW_ORDER, RNSC_ERR_STATE);
					have_link = rc == 0;
				} else if (ifc == 0) {
					FUZZ_CODE(rnsc_transport_link_send(t, lid, data,
									   size > 64 ? 64 : size,
									   NULL, now),
						  RNSC_ERR_NOTFOUND, RNSC_ERR_STATE);
				} else {
					FUZZ_CODE(rnsc_transport_link_close(t, lid, now),
						  RNSC_ERR_NOTFOUND);
					have_link = 0;
				}
				break;
			}
			break;
		default:
			if (last_len && !unknown_if) {
				int rc = rnsc_transport_ingest(t, ifc, last, last_len, now);
				FUZZ_CODE(rc, RNSC_ERR_TOOBIG); /* only the 300-byte interface */
			}
			break;
		}
		if (op & 0x20) {
			uint64_t due = rnsc_transport_next_deadline(t);
			int trc = rnsc_transport_tick(t, now);
			if (trc)
				fprintf(stderr, "tick: %s\n", rnsc_err_name(trc));
			FUZZ_CHECK(trc == 0);
			/* Nothing due before the deadline it announced is left undone. */
			if (due != UINT64_MAX && now >= due)
				FUZZ_CHECK(rnsc_transport_next_deadline(t) > now ||
					   rnsc_transport_next_deadline(t) == UINT64_MAX);
		}
		check_outbox(t, last, &last_len);
		rnsc_transport_path path;
		if (rnsc_transport_path_get(t, remote, &path) == 0) {
			FUZZ_CHECK(path.hops >= 1 && path.hops <= RNSC_PATHFINDER_M);
			FUZZ_CHECK(path.iface <= 2);
			FUZZ_CHECK(path.n_random_blobs >= 1 &&
				   path.n_random_blobs <= RNSC_MAX_RANDOM_BLOBS);
		}
	}
	rnsc_transport_del(t);
	rnsc_identity_free(&tid);
	rnsc_identity_free(&did);
	return 0;
}
