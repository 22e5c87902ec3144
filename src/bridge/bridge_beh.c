/* SPDX-License-Identifier: MIT */
/*
 * The suite's behavioral family on rnsc's sans-I/O transport engine (transport.h): an engine
 * per handle, "mock interfaces" that are engine interface ids whose outgoing frames the
 * bridge keeps until drain_tx, inject as rnsc_transport_ingest(). Time is the wall clock in
 * milliseconds; the engine's timers run (rnsc_transport_tick) before every command reads or
 * drains, as a runtime's loop would have run them meanwhile.
 * Handles are 16 hex digits, interface ids 12; both are drawn from the context's randomness.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bridge.h"
#include "crypto.h"
#include "err.h"
#include "identity.h"
#include "ifac.h"
#include "destination.h"
#include "packet.h"
#include "transport.h"

#define E err, errcap
#define MAX_INSTANCES 16
#define MAX_IFACES 32
#define MAX_QUEUED 4096
#define SHARED_IFACE_ID 0xfffffff0u /* the hidden link to a shared instance (c_start) */

typedef struct beh_frame {
	uint8_t *p;
	size_t len;
} beh_frame;

typedef struct beh_iface {
	int used;
	uint32_t id;
	char hex[13];
	char name[64];
	beh_frame q[MAX_QUEUED];
	size_t nq;
	uint64_t dropped;           /* frames beyond MAX_QUEUED before a drain */
	uint8_t hash[RNSC_HASHLEN]; /* the interface hash: full_hash of its name */
	int has_ifac;
	rnsc_ifac ifac; /* access codes, applied to frames out and checked on frames in */
	rnsc_ifac_stats ifac_stats;
} beh_iface;

#define MAX_DELIVERIES 256

typedef struct beh_delivery {
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	uint8_t *p;
	size_t len;
} beh_delivery;

typedef struct beh_inst {
	int used;
	beh_delivery dl[MAX_DELIVERIES]; /* DATA delivered to registered destinations */
	size_t ndl;
	char handle[17];
	rnsc_transport *t;
	beh_iface ifs[MAX_IFACES];
	uint32_t next_id;
	long long bitrate;         /* for interfaces attached without one */
	uint64_t last_tick;        /* ms; 0 before the first */
	uint8_t pub[RNSC_KEYSIZE]; /* the transport identity's public key */
	json_t *knobs; /* behavioral_start's announce_* defaults for attached interfaces */
} beh_inst;

static beh_inst insts[MAX_INSTANCES];

/* Wall-clock ms, strictly increasing from one reading to the next: the reference's float
 * clock never gives two events the same instant, and the suite compares timestamps of
 * consecutive commands (a refreshed entry must be later than the one it replaced). */
static uint64_t now_ms(void)
{
	static uint64_t last;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	if (now <= last)
		now = last + 1;
	return last = now;
}

static void hexstr(char *out, const uint8_t *p, size_t n)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++)
		out[2 * i] = d[p[i] >> 4], out[2 * i + 1] = d[p[i] & 15];
	out[2 * n] = '\0';
}

static beh_inst *get_inst(json_t *params, char *err, size_t errcap)
{
	const char *h;
	if (rnsc_bridge_str(params, "handle", NULL, &h, E))
		return NULL;
	for (int i = 0; i < MAX_INSTANCES; i++)
		if (insts[i].used && strcmp(insts[i].handle, h) == 0)
			return &insts[i];
	snprintf(E, "Unknown handle: %.40s", h);
	return NULL;
}

static beh_iface *get_iface(beh_inst *in, json_t *params, char *err, size_t errcap)
{
	const char *id;
	if (rnsc_bridge_str(params, "iface_id", NULL, &id, E))
		return NULL;
	for (int i = 0; i < MAX_IFACES; i++)
		if (in->ifs[i].used && strcmp(in->ifs[i].hex, id) == 0)
			return &in->ifs[i];
	snprintf(E, "Unknown iface_id: %.40s", id);
	return NULL;
}

static beh_iface *iface_by_id(beh_inst *in, uint32_t id)
{
	for (int i = 0; i < MAX_IFACES; i++)
		if (in->ifs[i].used && in->ifs[i].id == id)
			return &in->ifs[i];
	return NULL;
}

/* Runs the engine's timers and moves its outbox onto the mock interfaces' queues. The
 * engine wants a tick at least every 250 ms (Transport.job_interval); between commands the
 * bridge runs none, so the missed ones are run now at their times (at most 10 s of them),
 * as a runtime's loop would have run them meanwhile. */
#define TICK_MS 250u
#define CATCH_UP_MAX 40u
static int pump(beh_inst *in)
{
	uint64_t now = now_ms(), t0 = in->last_tick;
	int rc = 0;
	if (t0 && now > t0 + TICK_MS) {
		if (now - t0 > (uint64_t)TICK_MS * CATCH_UP_MAX)
			t0 = now - (uint64_t)TICK_MS * CATCH_UP_MAX;
		for (uint64_t t = t0 + TICK_MS; t < now && rc == 0; t += TICK_MS)
			rc = rnsc_transport_tick(in->t, t);
	}
	if (rc == 0)
		rc = rnsc_transport_tick(in->t, now);
	in->last_tick = now;
	uint32_t iface;
	size_t len;
	const uint8_t *f;
	while ((f = rnsc_transport_outbox_take(in->t, &iface, &len))) {
		beh_iface *bi = iface_by_id(in, iface);
		size_t cap = len + (bi && bi->has_ifac ? bi->ifac.size : 0);
		if (bi && bi->nq < MAX_QUEUED && (bi->q[bi->nq].p = malloc(cap ? cap : 1))) {
			int n = (int)len;
			if (bi->has_ifac)
				n = rnsc_ifac_apply(&bi->ifac, bi->q[bi->nq].p, cap, f, len);
			else
				memcpy(bi->q[bi->nq].p, f, len);
			if (n >= 0) {
				bi->q[bi->nq++].len = (size_t)n;
			} else {
				free(bi->q[bi->nq].p);
				bi->dropped++;
			}
		} else if (bi) {
			bi->dropped++;
		}
		rnsc_transport_outbox_release(in->t, f);
	}
	return rc;
}

static void iface_clear(beh_iface *bi)
{
	for (size_t i = 0; i < bi->nq; i++)
		free(bi->q[i].p);
	if (bi->has_ifac)
		rnsc_ifac_free(&bi->ifac);
	memset(bi, 0, sizeof(*bi));
}

static int c_start(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	rnsc_identity id;
	uint8_t *seed = NULL, rnd[8];
	size_t n;
	int slot = -1;
	for (int i = 0; i < MAX_INSTANCES; i++)
		if (!insts[i].used) {
			slot = i;
			break;
		}
	if (slot < 0) {
		snprintf(E, "at most %d instances at a time", MAX_INSTANCES);
		return 1;
	}
	if (rnsc_bridge_hex(params, "identity_seed", 0, &seed, &n, E))
		return 1;
	int rc = n ? rnsc_identity_from_private(b->ctx, &id, seed, n)
		   : rnsc_identity_generate(b->ctx, &id);
	free(seed);
	if (rc)
		return rnsc_bridge_fail(
			E, n ? "identity_seed (64 bytes: 32 enc + 32 sig)" : "identity", rc);
	rnsc_transport_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.transport_enabled = rnsc_bridge_bool(params, "enable_transport", 1);
	cfg.use_implicit_proof = 1;
	beh_inst *in = &insts[slot];
	memset(in, 0, sizeof(*in));
	rc = rnsc_transport_new(b->ctx, &in->t, &id, &cfg);
	/* connected_to_shared_instance: an engine attached to a shared instance is one with a
	 * LOCAL_SHARED interface (no packet filter or hashlist of its own). The bridge adds
	 * that interface out of the test's sight; what goes out on it is discarded. */
	if (rc == 0 && rnsc_bridge_bool(params, "connected_to_shared_instance", 0)) {
		rc = rnsc_transport_iface_add(in->t, SHARED_IFACE_ID, RNSC_TRANSPORT_MODE_FULL,
					      1000000000u, 0);
		if (rc == 0)
			rc = rnsc_transport_iface_set_local(in->t, SHARED_IFACE_ID,
							    RNSC_TRANSPORT_LOCAL_SHARED);
	}
	if (rc == 0)
		rc = rnsc_random(b->ctx, rnd, sizeof(rnd));
	if (rc) {
		rnsc_transport_del(in->t);
		in->t = NULL;
		rnsc_identity_free(&id);
		return rnsc_bridge_fail(E, "transport", rc);
	}
	in->used = 1;
	in->next_id = 1;
	rnsc_identity_public_bytes(&id, in->pub);
	in->knobs = json_object();
	static const char *const knob_names[] = {"announce_rate_target", "announce_rate_grace",
						 "announce_rate_penalty", "announce_cap"};
	for (size_t k = 0; k < 4 && in->knobs; k++) {
		json_t *v = json_object_get(params, knob_names[k]);
		if (v)
			json_object_set(in->knobs, knob_names[k], v);
	}
	/* the suite's MockInterface runs at 10 Mbit/s unless told otherwise */
	if (rnsc_bridge_int(params, "bitrate", 10000000, &in->bitrate, E) || in->bitrate < 0) {
		rnsc_transport_del(in->t);
		memset(in, 0, sizeof(*in));
		rnsc_identity_free(&id);
		if (!err[0])
			snprintf(E, "bitrate must not be negative");
		return 1;
	}
	/* the engine's first tick at start, as a node's loop runs it: its periodic jobs (the
	 * announce check among them) then keep the phase of the start, not of the first frame */
	pump(in);
	hexstr(in->handle, rnd, sizeof(rnd));
	json_object_set_new(result, "handle", json_string(in->handle));
	rnsc_bridge_set_hex(result, "identity_hash", id.hash, sizeof(id.hash));
	rnsc_identity_free(&id);
	return 0;
}

static int c_stop(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	beh_inst *in = get_inst(params, E);
	if (!in) {
		err[0] = '\0';
		json_object_set_new(result, "stopped", json_false());
		return 0;
	}
	for (int i = 0; i < MAX_IFACES; i++)
		iface_clear(&in->ifs[i]);
	for (size_t i = 0; i < in->ndl; i++)
		free(in->dl[i].p);
	json_decref(in->knobs);
	rnsc_transport_del(in->t);
	memset(in, 0, sizeof(*in));
	json_object_set_new(result, "stopped", json_true());
	return 0;
}

static int mode_from_name(const char *m)
{
	static const struct {
		const char *name;
		int mode;
	} modes[] = {
		{"FULL", RNSC_TRANSPORT_MODE_FULL},
		{"POINT_TO_POINT", RNSC_TRANSPORT_MODE_POINT_TO_POINT},
		{"ACCESS_POINT", RNSC_TRANSPORT_MODE_ACCESS_POINT},
		{"ROAMING", RNSC_TRANSPORT_MODE_ROAMING},
		{"BOUNDARY", RNSC_TRANSPORT_MODE_BOUNDARY},
		{"GATEWAY", RNSC_TRANSPORT_MODE_GATEWAY},
	};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(modes[i].name, m) == 0)
			return modes[i].mode;
	return -1;
}

/* A knob of the attach request, else the instance's default from behavioral_start. */
static json_t *knob(beh_inst *in, json_t *params, const char *key)
{
	json_t *v = json_object_get(params, key);
	return v ? v : json_object_get(in->knobs, key);
}

/* The suite's MockInterface announce policy: no rate target unless one is given (the
 * reference's Interface default), grace and penalty as given, the cap as given or the
 * default; ingress control as rnsc's default interface. */
static int mock_policy(beh_inst *in, uint32_t id, json_t *params, char *err, size_t errcap)
{
	rnsc_transport_iface_policy pol;
	rnsc_transport_iface_policy_default(in->t, &pol);
	json_t *rt = knob(in, params, "announce_rate_target");
	json_t *rg = knob(in, params, "announce_rate_grace");
	json_t *rp = knob(in, params, "announce_rate_penalty");
	json_t *cap = knob(in, params, "announce_cap");
	pol.has_rate_target = rt && json_is_number(rt);
	pol.rate_target_s = pol.has_rate_target && json_number_value(rt) > 0
				    ? (uint64_t)json_number_value(rt)
				    : 0;
	pol.rate_grace = rg && json_is_number(rg) && json_number_value(rg) > 0
				 ? (uint64_t)json_number_value(rg)
				 : 0;
	pol.rate_penalty_s = rp && json_is_number(rp) && json_number_value(rp) > 0
				     ? (uint64_t)json_number_value(rp)
				     : 0;
	if (cap && json_is_number(cap))
		pol.announce_cap = json_number_value(cap);
	int rc = rnsc_transport_iface_set_policy(in->t, id, &pol, 0);
	return rc ? rnsc_bridge_fail(E, "interface policy", rc) : 0;
}

static int c_attach(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	const char *name, *mode;
	long long mtu, bitrate;
	beh_inst *in = get_inst(params, E);
	if (!in)
		return 1;
	if (rnsc_bridge_str(params, "name", NULL, &name, E) ||
	    rnsc_bridge_str(params, "mode", "FULL", &mode, E) ||
	    rnsc_bridge_int(params, "mtu", RNSC_MTU, &mtu, E) ||
	    rnsc_bridge_int(params, "bitrate", in->bitrate, &bitrate, E))
		return 1;
	json_t *bv = json_object_get(params, "bitrate");
	if (bv && json_is_null(bv))
		bitrate = in->bitrate;
	const char *netname, *netkey;
	long long ifac_size;
	if (rnsc_bridge_str(params, "ifac_netname", "", &netname, E) ||
	    rnsc_bridge_str(params, "ifac_netkey", "", &netkey, E) ||
	    rnsc_bridge_int(params, "ifac_size", 16, &ifac_size, E))
		return 1;
	int local_client = rnsc_bridge_bool(params, "local_client", 0);
	int m = mode_from_name(mode);
	if (m < 0 || mtu < 1 || mtu > 1 << 24 || bitrate < 0) {
		snprintf(E, "bad mode '%.20s', mtu or bitrate", mode);
		return 1;
	}
	beh_iface *bi = NULL;
	for (int i = 0; i < MAX_IFACES; i++)
		if (!in->ifs[i].used) {
			bi = &in->ifs[i];
			break;
		}
	if (!bi) {
		snprintf(E, "at most %d interfaces per instance", MAX_IFACES);
		return 1;
	}
	uint8_t rnd[6];
	int rc = rnsc_random(b->ctx, rnd, sizeof(rnd));
	if (rc == 0)
		rc = rnsc_transport_iface_add(in->t, in->next_id, m, (uint64_t)bitrate,
					      (size_t)mtu);
	if (rc)
		return rnsc_bridge_fail(E, "attach interface", rc);
	if (mock_policy(in, in->next_id, params, E)) {
		rnsc_transport_iface_remove(in->t, in->next_id);
		return 1;
	}
	/* a local client: the interface a shared instance serves one attached program on */
	if (local_client && (rc = rnsc_transport_iface_set_local(in->t, in->next_id,
								 RNSC_TRANSPORT_LOCAL_CLIENT))) {
		rnsc_transport_iface_remove(in->t, in->next_id);
		return rnsc_bridge_fail(E, "local client", rc);
	}
	memset(bi, 0, sizeof(*bi));
	if (*netname || *netkey) {
		rc = ifac_size < 1 || ifac_size > 64 ? RNSC_ERR_RANGE
						     : rnsc_ifac_init(&bi->ifac, b->ctx, netname,
								      netkey, (size_t)ifac_size);
		if (rc) {
			rnsc_transport_iface_remove(in->t, in->next_id);
			return rnsc_bridge_fail(E, "IFAC", rc);
		}
		bi->has_ifac = 1;
	}
	bi->used = 1;
	bi->id = in->next_id++;
	hexstr(bi->hex, rnd, sizeof(rnd));
	snprintf(bi->name, sizeof(bi->name), "%s", name);
	/* the interface's hash: full_hash of its name, as the reference hashes str(interface) */
	rc = rnsc_full_hash(b->ctx, bi->hash, (const uint8_t *)name, strlen(name));
	if (rc)
		return rnsc_bridge_fail(E, "hash", rc);
	json_object_set_new(result, "iface_id", json_string(bi->hex));
	rnsc_bridge_set_hex(result, "interface_hash", bi->hash, sizeof(bi->hash));
	json_object_set_new(result, "ifac_size",
			    json_integer(bi->has_ifac ? (json_int_t)bi->ifac.size : 0));
	return 0;
}

static int c_detach(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	beh_inst *in = get_inst(params, E);
	beh_iface *bi = in ? get_iface(in, params, E) : NULL;
	if (!bi)
		return 1;
	int rc = rnsc_transport_iface_remove(in->t, bi->id);
	iface_clear(bi);
	json_object_set_new(result, "detached", json_boolean(rc == 0));
	return 0;
}

static int c_inject(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b, (void)result;
	uint8_t *raw = NULL;
	size_t n;
	beh_inst *in = get_inst(params, E);
	beh_iface *bi = in ? get_iface(in, params, E) : NULL;
	if (!bi || rnsc_bridge_hex(params, "raw", 1, &raw, &n, E))
		return 1;
	/* the interface layer's IFAC check, then the engine; what either drops it counts
	 * (ifac_stats, rnsc_transport_get_stats), as an interface would */
	pump(in); /* the timers that were due before this frame arrived */
	uint8_t *plain = malloc(n ? n : 1);
	int len = plain ? rnsc_ifac_check(bi->has_ifac ? &bi->ifac : NULL, &bi->ifac_stats, plain,
					  n, raw, n)
			: RNSC_ERR_NOMEM;
	if (len > 0)
		(void)rnsc_transport_ingest(in->t, bi->id, plain, (size_t)len, now_ms());
	free(raw), free(plain);
	pump(in);
	return 0;
}

/* Transport.packet_filter's verdict on a raw packet and, when accepted and remember (default
 * true), inbound's add_packet_hash, so an identical second packet meets the hashlist. */
static int c_packet_filter(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	uint8_t *raw = NULL, hash[RNSC_HASHLEN];
	size_t n;
	int accepted = 0, remembered = 0;
	beh_inst *in = get_inst(params, E);
	if (!in || rnsc_bridge_hex(params, "raw", 1, &raw, &n, E))
		return 1;
	pump(in);
	int rc = rnsc_transport_packet_filter(in->t, raw, n, &accepted, hash);
	free(raw);
	if (rc)
		return rnsc_bridge_fail(E, "packet failed to unpack", rc);
	if (accepted && rnsc_bridge_bool(params, "remember", 1)) {
		rc = rnsc_transport_hashlist_add(in->t, hash);
		if (rc)
			return rnsc_bridge_fail(E, "add_packet_hash", rc);
		remembered = 1;
	}
	json_object_set_new(result, "accepted", json_boolean(accepted));
	rnsc_bridge_set_hex(result, "packet_hash", hash, sizeof hash);
	json_object_set_new(result, "remembered", json_boolean(remembered));
	return 0;
}

static int c_drain_tx(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	beh_inst *in = get_inst(params, E);
	beh_iface *bi = in ? get_iface(in, params, E) : NULL;
	if (!bi)
		return 1;
	pump(in);
	json_t *a = json_array();
	for (size_t i = 0; i < bi->nq; i++) {
		json_t *w = json_object();
		rnsc_bridge_set_hex(w, "f", bi->q[i].p, bi->q[i].len);
		json_array_append(a, json_object_get(w, "f"));
		json_decref(w);
		free(bi->q[i].p);
	}
	bi->nq = 0;
	json_object_set_new(result, "packets", a);
	return 0;
}

static int c_read_path_table(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			     size_t errcap)
{
	(void)b;
	uint8_t dest[RNSC_TRUNCATED_HASHLEN], blobs[RNSC_MAX_RANDOM_BLOBS][10];
	beh_inst *in = get_inst(params, E);
	if (!in || rnsc_bridge_hex_fixed(params, "dest", dest, sizeof(dest), E))
		return 1;
	pump(in);
	rnsc_transport_path p;
	if (rnsc_transport_path_get(in->t, dest, &p) != 0) {
		json_object_set_new(result, "found", json_false());
		return 0;
	}
	size_t nb = RNSC_MAX_RANDOM_BLOBS;
	const uint8_t *raw;
	size_t rl;
	if (rnsc_transport_path_detail(in->t, dest, blobs, &nb, &raw, &rl) != 0)
		nb = 0;
	json_object_set_new(result, "found", json_true());
	json_object_set_new(result, "hops", json_integer(p.hops));
	rnsc_bridge_set_hex(result, "next_hop", p.next_hop, sizeof(p.next_hop));
	json_object_set_new(result, "timestamp", json_real((double)p.timestamp / 1000.0));
	json_object_set_new(result, "expires", json_real((double)p.expires / 1000.0));
	json_t *a = json_array();
	for (size_t i = 0; i < nb; i++) {
		json_t *w = json_object();
		rnsc_bridge_set_hex(w, "f", blobs[i], 10);
		json_array_append(a, json_object_get(w, "f"));
		json_decref(w);
	}
	json_object_set_new(result, "random_blobs", a);
	beh_iface *bi = iface_by_id(in, p.iface);
	json_object_set_new(result, "receiving_interface", json_string(bi ? bi->name : ""));
	if (bi)
		rnsc_bridge_set_hex(result, "receiving_interface_hash", bi->hash, sizeof(bi->hash));
	else
		json_object_set_new(result, "receiving_interface_hash", json_null());
	rnsc_bridge_set_hex(result, "packet_hash", p.packet_hash, sizeof(p.packet_hash));
	return 0;
}

/* ms as the engine keeps them from a computed double: clamped to 0 .. UINT64_MAX */
static uint64_t ms_clamp(double d)
{
	return !(d > 0.0) ? 0u : d >= 1.8e19 ? UINT64_MAX : (uint64_t)d;
}

/* A JSON number of seconds (the reference's time.time() floats) as engine ms; 0 when absent
 * or null, 1 with *set when present, -1 with err when not a number. Past the epoch clamps. */
static int seconds_param(json_t *params, const char *key, uint64_t *out, char *err, size_t errcap)
{
	json_t *v = json_object_get(params, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v)) {
		snprintf(E, "%s: a number of seconds is required", key);
		return -1;
	}
	*out = ms_clamp(json_number_value(v) * 1000.0);
	return 1;
}

/* Transport.announce_table[dest]: the rebroadcast and retransmit state. */
static int c_read_announce_table(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				 size_t errcap)
{
	(void)b;
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	beh_inst *in = get_inst(params, E);
	if (!in || rnsc_bridge_hex_fixed(params, "dest", dest, sizeof(dest), E))
		return 1;
	pump(in);
	rnsc_transport_announce_entry e;
	int rc = rnsc_transport_announce_get(in->t, dest, &e);
	if (rc == RNSC_ERR_NOTFOUND) {
		json_object_set_new(result, "found", json_false());
		return 0;
	}
	if (rc)
		return rnsc_bridge_fail(E, "announce_table", rc);
	json_object_set_new(result, "found", json_true());
	json_object_set_new(result, "retries", json_integer(e.retries));
	json_object_set_new(result, "hops", json_integer(e.hops));
	json_object_set_new(result, "timestamp", json_real((double)e.timestamp / 1000.0));
	json_object_set_new(result, "retransmit_timeout",
			    json_real((double)e.retransmit_timeout / 1000.0));
	json_object_set_new(result, "local_rebroadcasts", json_integer(e.local_rebroadcasts));
	json_object_set_new(result, "block_rebroadcasts", json_boolean(e.block_rebroadcasts));
	rnsc_bridge_set_hex(result, "received_from", e.received_from, sizeof(e.received_from));
	beh_iface *bi = e.has_attached ? iface_by_id(in, e.attached) : NULL;
	json_object_set_new(result, "attached_interface", bi ? json_string(bi->hex) : json_null());
	rnsc_bridge_set_hex(result, "packet_hash", e.packet_hash, sizeof(e.packet_hash));
	return 0;
}

/* Rewrites an announce_table entry's retransmit_timeout and/or timestamp (seconds). */
static int c_set_announce_timestamp(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				    size_t errcap)
{
	(void)b;
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	uint64_t ts = 0, tmo = 0;
	beh_inst *in = get_inst(params, E);
	if (!in || rnsc_bridge_hex_fixed(params, "dest", dest, sizeof(dest), E))
		return 1;
	int has_tmo = seconds_param(params, "retransmit_timeout", &tmo, E);
	int has_ts = has_tmo < 0 ? -1 : seconds_param(params, "timestamp", &ts, E);
	if (has_tmo < 0 || has_ts < 0)
		return 1;
	pump(in);
	int rc = rnsc_transport_announce_set_times(in->t, dest, has_ts ? &ts : NULL,
						   has_tmo ? &tmo : NULL);
	if (rc && rc != RNSC_ERR_NOTFOUND)
		return rnsc_bridge_fail(E, "announce_table", rc);
	json_object_set_new(result, "set", json_boolean(rc == 0));
	return 0;
}

/* Transport.request_path(dest, on_interface, tag): the engine builds and queues the request;
 * without a tag the bridge draws one (RNS.Identity.get_random_hash) so it can report it. */
static int c_request_path(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	uint8_t dest[RNSC_TRUNCATED_HASHLEN], rnd[RNSC_TRUNCATED_HASHLEN], *tag = NULL;
	size_t tl = 0;
	beh_inst *in = get_inst(params, E);
	beh_iface *bi = in ? get_iface(in, params, E) : NULL;
	if (!bi || rnsc_bridge_hex_fixed(params, "dest", dest, sizeof(dest), E) ||
	    rnsc_bridge_hex(params, "tag", 0, &tag, &tl, E))
		return 1;
	int rc = 0;
	if (tl == 0)
		rc = rnsc_random_hash(b->ctx, rnd);
	pump(in);
	if (rc == 0)
		rc = rnsc_transport_request_path_tagged(in->t, dest, 1, bi->id, tl ? tag : rnd,
							tl ? tl : sizeof(rnd), now_ms());
	if (rc == 0)
		rnsc_bridge_set_hex(result, "tag", tl ? tag : rnd, tl ? tl : sizeof(rnd));
	free(tag);
	if (rc)
		return rnsc_bridge_fail(E, "request_path", rc);
	pump(in);
	return 0;
}

/* Rewrites a path_table entry's timestamp (key "timestamp") or expiry ("expires"). */
static int set_path_time(json_t *params, json_t *result, const char *key, char *err, size_t errcap)
{
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	uint64_t v = 0;
	beh_inst *in = get_inst(params, E);
	if (!in || rnsc_bridge_hex_fixed(params, "dest", dest, sizeof(dest), E))
		return 1;
	int has = seconds_param(params, key, &v, E);
	if (has <= 0) {
		if (has == 0)
			snprintf(E, "%s is required", key);
		return 1;
	}
	pump(in);
	int ts = strcmp(key, "timestamp") == 0;
	int rc = rnsc_transport_path_set_times(in->t, dest, ts ? &v : NULL, ts ? NULL : &v);
	if (rc && rc != RNSC_ERR_NOTFOUND)
		return rnsc_bridge_fail(E, "path_table", rc);
	json_object_set_new(result, "set", json_boolean(rc == 0));
	return 0;
}

static int c_set_path_timestamp(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				size_t errcap)
{
	(void)b;
	return set_path_time(params, result, "timestamp", E);
}

static int c_set_path_expires(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			      size_t errcap)
{
	(void)b;
	return set_path_time(params, result, "expires", E);
}

/* The suite's interface descriptor fields (prefix_if, prefix_if_hash[, prefix_if_name]) of an
 * engine interface id, null for one that is gone. */
static void iface_fields(beh_inst *in, json_t *o, const char *prefix, uint32_t id, int name)
{
	char k[48];
	beh_iface *bi = iface_by_id(in, id);
	snprintf(k, sizeof k, "%s_if", prefix);
	json_object_set_new(o, k, bi ? json_string(bi->hex) : json_null());
	snprintf(k, sizeof k, "%s_if_hash", prefix);
	if (bi)
		rnsc_bridge_set_hex(o, k, bi->hash, sizeof(bi->hash));
	else
		json_object_set_new(o, k, json_null());
	if (name) {
		snprintf(k, sizeof k, "%s_if_name", prefix);
		json_object_set_new(o, k, bi ? json_string(bi->name) : json_null());
	}
}

static json_t *lte_json(beh_inst *in, const rnsc_transport_link_entry *e)
{
	json_t *o = json_object();
	rnsc_bridge_set_hex(o, "link_id", e->link_id, sizeof(e->link_id));
	json_object_set_new(o, "timestamp", json_real((double)e->timestamp / 1000.0));
	rnsc_bridge_set_hex(o, "next_hop_transport_id", e->next_hop_transport_id,
			    sizeof(e->next_hop_transport_id));
	iface_fields(in, o, "next_hop", e->next_hop_iface, 0);
	json_object_set_new(o, "remaining_hops", json_integer(e->remaining_hops));
	iface_fields(in, o, "received", e->received_iface, 0);
	json_object_set_new(o, "hops", json_integer(e->hops));
	rnsc_bridge_set_hex(o, "destination_hash", e->dest_hash, sizeof(e->dest_hash));
	json_object_set_new(o, "validated", json_boolean(e->validated));
	json_object_set_new(o, "proof_timeout", json_real((double)e->proof_timeout / 1000.0));
	return o;
}

/* Transport.link_table: one entry by link_id, or all of them. */
static int c_read_link_table(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			     size_t errcap)
{
	(void)b;
	uint8_t id[RNSC_TRUNCATED_HASHLEN];
	rnsc_transport_link_entry e;
	beh_inst *in = get_inst(params, E);
	if (!in)
		return 1;
	json_t *v = json_object_get(params, "link_id");
	int one = v && !json_is_null(v);
	if (one && rnsc_bridge_hex_fixed(params, "link_id", id, sizeof(id), E))
		return 1;
	pump(in);
	if (one) {
		if (rnsc_transport_link_entry_get(in->t, id, &e) != 0) {
			json_object_set_new(result, "found", json_false());
			return 0;
		}
		json_t *o = lte_json(in, &e);
		json_object_update(result, o);
		json_decref(o);
		json_object_set_new(result, "found", json_true());
		return 0;
	}
	json_t *a = json_array();
	size_t cur = 0;
	while (rnsc_transport_link_entry_next(in->t, &cur, &e))
		json_array_append_new(a, lte_json(in, &e));
	json_object_set_new(result, "entries", a);
	return 0;
}

/* A link_table entry as the suite seeds it: next hop transport id none (zeros here),
 * rem_hops and hops 99 unless given, aged by timestamp_age_s, validated unless told not,
 * proof_timeout_in_s from now (60 s unless given). */
static int c_seed_link_table(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			     size_t errcap)
{
	(void)b;
	rnsc_transport_link_entry e;
	memset(&e, 0, sizeof e);
	long long rem, hops;
	beh_inst *in = get_inst(params, E);
	if (!in || rnsc_bridge_hex_fixed(params, "dest", e.link_id, sizeof(e.link_id), E))
		return 1;
	const char *nh, *rc_if;
	if (rnsc_bridge_str(params, "nh_iface_id", NULL, &nh, E) ||
	    rnsc_bridge_str(params, "rcvd_iface_id", NULL, &rc_if, E) ||
	    rnsc_bridge_int(params, "rem_hops", 99, &rem, E) ||
	    rnsc_bridge_int(params, "hops", 99, &hops, E))
		return 1;
	if (rem < 0 || rem > 255 || hops < 0 || hops > 255) {
		snprintf(E, "rem_hops and hops must be 0..255");
		return 1;
	}
	beh_iface *nbi = NULL, *rbi = NULL;
	for (int i = 0; i < MAX_IFACES; i++) {
		if (in->ifs[i].used && strcmp(in->ifs[i].hex, nh) == 0)
			nbi = &in->ifs[i];
		if (in->ifs[i].used && strcmp(in->ifs[i].hex, rc_if) == 0)
			rbi = &in->ifs[i];
	}
	if (!nbi || !rbi) {
		snprintf(E, "nh_iface_id / rcvd_iface_id must reference attached interfaces");
		return 1;
	}
	json_t *age = json_object_get(params, "timestamp_age_s");
	json_t *ptmo = json_object_get(params, "proof_timeout_in_s");
	if ((age && !json_is_null(age) && !json_is_number(age)) ||
	    (ptmo && !json_is_null(ptmo) && !json_is_number(ptmo))) {
		snprintf(E, "timestamp_age_s and proof_timeout_in_s are numbers of seconds");
		return 1;
	}
	pump(in);
	double now = (double)now_ms();
	double ts = now - (age && json_is_number(age) ? json_number_value(age) * 1000.0 : 0.0);
	double pt =
		now + (ptmo && json_is_number(ptmo) ? json_number_value(ptmo) * 1000.0 : 60000.0);
	e.timestamp = ms_clamp(ts);
	e.proof_timeout = ms_clamp(pt);
	e.next_hop_iface = nbi->id;
	e.received_iface = rbi->id;
	e.remaining_hops = (unsigned)rem;
	e.hops = (unsigned)hops;
	memcpy(e.dest_hash, e.link_id, sizeof(e.dest_hash));
	e.validated = rnsc_bridge_bool(params, "validated", 1);
	int rc = rnsc_transport_link_entry_put(in->t, &e);
	if (rc)
		return rnsc_bridge_fail(E, "link_table", rc);
	json_object_set_new(result, "seeded", json_true());
	rnsc_bridge_set_hex(result, "dest", e.link_id, sizeof(e.link_id));
	return 0;
}

static json_t *rev_json(beh_inst *in, const rnsc_transport_reverse_entry *r)
{
	json_t *o = json_object();
	rnsc_bridge_set_hex(o, "key", r->key, sizeof(r->key));
	iface_fields(in, o, "received", r->received_iface, 1);
	iface_fields(in, o, "outbound", r->outbound_iface, 1);
	json_object_set_new(o, "timestamp", json_real((double)r->timestamp / 1000.0));
	return o;
}

/* Transport.reverse_table: one entry by key ("dest"), or all of them. */
static int c_read_reverse_table(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				size_t errcap)
{
	(void)b;
	uint8_t key[RNSC_TRUNCATED_HASHLEN];
	rnsc_transport_reverse_entry r;
	beh_inst *in = get_inst(params, E);
	if (!in)
		return 1;
	json_t *v = json_object_get(params, "dest");
	int one = v && !json_is_null(v);
	if (one && rnsc_bridge_hex_fixed(params, "dest", key, sizeof(key), E))
		return 1;
	pump(in);
	json_t *a = one ? NULL : json_array();
	size_t cur = 0;
	while (rnsc_transport_reverse_next(in->t, &cur, &r)) {
		if (!one) {
			json_array_append_new(a, rev_json(in, &r));
		} else if (memcmp(r.key, key, sizeof(key)) == 0) {
			json_t *o = rev_json(in, &r);
			json_object_update(result, o);
			json_decref(o);
			json_object_set_new(result, "found", json_true());
			return 0;
		}
	}
	if (one)
		json_object_set_new(result, "found", json_false());
	else
		json_object_set_new(result, "entries", a);
	return 0;
}

static int c_seed_reverse_table(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				size_t errcap)
{
	(void)b;
	rnsc_transport_reverse_entry r;
	memset(&r, 0, sizeof r);
	beh_inst *in = get_inst(params, E);
	if (!in || rnsc_bridge_hex_fixed(params, "key", r.key, sizeof(r.key), E))
		return 1;
	const char *ri, *oi;
	if (rnsc_bridge_str(params, "rcvd_iface_id", NULL, &ri, E) ||
	    rnsc_bridge_str(params, "outb_iface_id", NULL, &oi, E))
		return 1;
	beh_iface *rbi = NULL, *obi = NULL;
	for (int i = 0; i < MAX_IFACES; i++) {
		if (in->ifs[i].used && strcmp(in->ifs[i].hex, ri) == 0)
			rbi = &in->ifs[i];
		if (in->ifs[i].used && strcmp(in->ifs[i].hex, oi) == 0)
			obi = &in->ifs[i];
	}
	if (!rbi || !obi) {
		snprintf(E, "rcvd_iface_id / outb_iface_id must reference attached interfaces");
		return 1;
	}
	json_t *age = json_object_get(params, "timestamp_age_s");
	if (age && !json_is_null(age) && !json_is_number(age)) {
		snprintf(E, "timestamp_age_s is a number of seconds");
		return 1;
	}
	pump(in);
	double ts = (double)now_ms() -
		    (age && json_is_number(age) ? json_number_value(age) * 1000.0 : 0.0);
	r.timestamp = ms_clamp(ts);
	r.received_iface = rbi->id;
	r.outbound_iface = obi->id;
	int rc = rnsc_transport_reverse_put(in->t, &r);
	if (rc)
		return rnsc_bridge_fail(E, "reverse_table", rc);
	json_object_set_new(result, "seeded", json_true());
	rnsc_bridge_set_hex(result, "key", r.key, sizeof(r.key));
	return 0;
}

/* Transport.announce_rate_table[dest]: the rebroadcast rate state of a destination. */
static int c_read_announce_rate(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				size_t errcap)
{
	(void)b;
	uint8_t dest[RNSC_TRUNCATED_HASHLEN], d[RNSC_TRUNCATED_HASHLEN];
	beh_inst *in = get_inst(params, E);
	if (!in || rnsc_bridge_hex_fixed(params, "dest", dest, sizeof(dest), E))
		return 1;
	pump(in);
	rnsc_arate r;
	size_t cur = 0;
	while (rnsc_transport_rate_next(in->t, &cur, d, &r)) {
		if (memcmp(d, dest, sizeof(d)) != 0)
			continue;
		json_object_set_new(result, "found", json_true());
		json_object_set_new(result, "last", json_real((double)r.last / 1000.0));
		json_object_set_new(result, "rate_violations",
				    json_integer((json_int_t)r.rate_violations));
		json_object_set_new(result, "blocked_until",
				    json_real((double)r.blocked_until / 1000.0));
		json_t *a = json_array();
		for (unsigned i = 0; i < r.n_timestamps && i < RNSC_MAX_RATE_TIMESTAMPS; i++)
			json_array_append_new(a, json_real((double)r.timestamps[i] / 1000.0));
		json_object_set_new(result, "timestamps", a);
		return 0;
	}
	json_object_set_new(result, "found", json_false());
	return 0;
}

static int c_force_cull(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	beh_inst *in = get_inst(params, E);
	if (!in)
		return 1;
	pump(in); /* the timers due so far at their times, then the forced pass now */
	rnsc_transport_jobs_due(in->t);
	pump(in);
	json_object_set_new(result, "culled", json_true());
	return 0;
}

/* Blackholes (Transport.blackhole_identity and friends) on the engine's own table. */
static int c_blackhole(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	uint8_t idh[RNSC_TRUNCATED_HASHLEN];
	beh_inst *in = get_inst(params, E);
	if (!in || rnsc_bridge_hex_fixed(params, "identity_hash", idh, sizeof(idh), E))
		return 1;
	rnsc_blackhole_entry e;
	memset(&e, 0, sizeof(e));
	json_t *u = json_object_get(params, "until");
	if (u && json_is_number(u)) {
		e.until = json_number_value(u);
		e.until_int = json_is_integer(u);
	} else if (u && !json_is_null(u)) {
		snprintf(E, "until must be a number or null");
		return 1;
	}
	json_t *r = json_object_get(params, "reason");
	if (r && json_is_string(r)) {
		e.reason = json_string_value(r);
		e.reason_len = json_string_length(r);
	}
	int rc = rnsc_transport_blackhole_add(in->t, idh, &e);
	if (rc < 0)
		return rnsc_bridge_fail(E, "blackhole", rc);
	json_object_set_new(result, "blackholed", json_boolean(rc == 1));
	return 0;
}

static int c_unblackhole(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	uint8_t idh[RNSC_TRUNCATED_HASHLEN];
	beh_inst *in = get_inst(params, E);
	if (!in || rnsc_bridge_hex_fixed(params, "identity_hash", idh, sizeof(idh), E))
		return 1;
	int rc = rnsc_transport_blackhole_remove(in->t, idh);
	if (rc < 0)
		return rnsc_bridge_fail(E, "unblackhole", rc);
	json_object_set_new(result, "lifted", json_boolean(rc == 1));
	return 0;
}

static int c_read_blackhole_table(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				  size_t errcap)
{
	(void)b;
	beh_inst *in = get_inst(params, E);
	if (!in)
		return 1;
	pump(in);
	json_t *a = json_array();
	size_t cur = 0;
	uint8_t idh[RNSC_TRUNCATED_HASHLEN];
	rnsc_blackhole_entry e;
	while (rnsc_transport_blackhole_next(in->t, &cur, idh, &e) == 1) {
		json_t *o = json_object();
		rnsc_bridge_set_hex(o, "identity_hash", idh, sizeof(idh));
		/* a local entry's source is this transport's identity */
		rnsc_bridge_set_hex(o, "source", e.has_source ? e.source : rnsc_transport_id(in->t),
				    RNSC_TRUNCATED_HASHLEN);
		if (e.until == 0)
			json_object_set_new(o, "until", json_null());
		else if (e.until_int)
			json_object_set_new(o, "until", json_integer((json_int_t)e.until));
		else
			json_object_set_new(o, "until", json_real(e.until));
		json_object_set_new(o, "reason",
				    e.reason ? json_stringn(e.reason, e.reason_len) : json_null());
		json_array_append_new(a, o);
	}
	json_object_set_new(result, "count", json_integer((json_int_t)json_array_size(a)));
	json_object_set_new(result, "entries", a);
	return 0;
}

/* The frame as this interface would send it: with its access code, masked. */
static int c_ifac_mask(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	uint8_t *raw = NULL, *out = NULL;
	size_t n;
	beh_inst *in = get_inst(params, E);
	beh_iface *bi = in ? get_iface(in, params, E) : NULL;
	if (!bi)
		return 1;
	if (!bi->has_ifac) {
		snprintf(E, "interface has no IFAC identity configured");
		return 1;
	}
	if (rnsc_bridge_hex(params, "raw", 1, &raw, &n, E))
		return 1;
	out = malloc(n + bi->ifac.size);
	int len = out ? rnsc_ifac_apply(&bi->ifac, out, n + bi->ifac.size, raw, n) : RNSC_ERR_NOMEM;
	if (len >= 0)
		rnsc_bridge_set_hex(result, "masked", out, (size_t)len);
	free(raw), free(out);
	return len < 0 ? rnsc_bridge_fail(E, "IFAC mask", len) : 0;
}

static void on_data(void *ud, const uint8_t dest[RNSC_TRUNCATED_HASHLEN], const uint8_t *data,
		    size_t len, const uint8_t packet_hash[RNSC_HASHLEN], uint32_t iface)
{
	(void)packet_hash, (void)iface;
	beh_inst *in = ud;
	if (in->ndl == MAX_DELIVERIES)
		return; /* bounded: later deliveries are not recorded */
	beh_delivery *d = &in->dl[in->ndl];
	d->p = malloc(len ? len : 1);
	if (!d->p)
		return;
	memcpy(d->p, data, len);
	memcpy(d->dest, dest, sizeof(d->dest));
	d->len = len;
	in->ndl++;
}

/* A local IN destination on the engine; what it receives is kept for
 * read_destination_deliveries. */
static int c_register_destination(rnsc_bridge *b, json_t *params, json_t *result, char *err,
				  size_t errcap)
{
	const char *app, *type, *strategy;
	beh_inst *in = get_inst(params, E);
	if (!in || rnsc_bridge_str(params, "app_name", NULL, &app, E) ||
	    rnsc_bridge_str(params, "type", "single", &type, E) ||
	    rnsc_bridge_str(params, "proof_strategy", "none", &strategy, E))
		return 1;
	json_t *av = json_object_get(params, "aspects");
	const char *asp[16];
	size_t na = 0;
	if (av && !json_is_null(av)) {
		if (!json_is_array(av) || json_array_size(av) > 16) {
			snprintf(E, "aspects must be a list of at most 16 strings");
			return 1;
		}
		for (size_t i = 0; i < json_array_size(av); i++) {
			json_t *x = json_array_get(av, i);
			if (!json_is_string(x)) {
				snprintf(E, "aspects must be strings");
				return 1;
			}
			asp[na++] = json_string_value(x);
		}
	}
	int dt = !strcmp(type, "single")  ? RNSC_DEST_SINGLE
		 : !strcmp(type, "plain") ? RNSC_DEST_PLAIN
		 : !strcmp(type, "group") ? RNSC_DEST_GROUP
					  : -1;
	if (dt < 0 || dt == RNSC_DEST_GROUP) {
		snprintf(E, "destination type '%.20s' %s", type,
			 dt < 0 ? "is unknown" : "is not bridged (GROUP keys)");
		return 1;
	}
	rnsc_identity id;
	int have_id = 0, rc;
	if (dt != RNSC_DEST_PLAIN) {
		uint8_t *seed = NULL;
		size_t n;
		if (rnsc_bridge_hex(params, "identity_seed", 1, &seed, &n, E))
			return 1;
		rc = rnsc_identity_from_private(b->ctx, &id, seed, n);
		free(seed);
		if (rc)
			return rnsc_bridge_fail(E, "identity_seed (64 bytes)", rc);
		have_id = 1;
	}
	uint8_t h[RNSC_TRUNCATED_HASHLEN];
	rnsc_transport_callbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.ud = in;
	cb.on_data = on_data;
	rnsc_transport_set_callbacks(in->t, &cb);
	rc = rnsc_transport_dest_add(in->t, dt, have_id ? &id : NULL, app, asp, na,
				     !strcmp(strategy, "all"), h);
	if (have_id)
		rnsc_identity_free(&id);
	if (rc)
		return rnsc_bridge_fail(E, "register destination", rc);
	rnsc_bridge_set_hex(result, "destination_hash", h, sizeof(h));
	return 0;
}

static int c_read_deliveries(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			     size_t errcap)
{
	(void)b;
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	beh_inst *in = get_inst(params, E);
	if (!in || rnsc_bridge_hex_fixed(params, "dest", dest, sizeof(dest), E))
		return 1;
	pump(in);
	json_t *a = json_array();
	for (size_t i = 0; i < in->ndl; i++) {
		if (memcmp(in->dl[i].dest, dest, sizeof(dest)) != 0)
			continue;
		json_t *w = json_object();
		rnsc_bridge_set_hex(w, "f", in->dl[i].p, in->dl[i].len);
		json_array_append(a, json_object_get(w, "f"));
		json_decref(w);
	}
	json_object_set_new(result, "count", json_integer((json_int_t)json_array_size(a)));
	json_object_set_new(result, "deliveries", a);
	return 0;
}

/* Transport.synthesize_tunnel on one interface; the tunnel id is
 * full_hash(transport public key || interface hash), the id the peer will file it under. */
static int c_synthesize_tunnel(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			       size_t errcap)
{
	beh_inst *in = get_inst(params, E);
	beh_iface *bi = in ? get_iface(in, params, E) : NULL;
	if (!bi)
		return 1;
	int rc = rnsc_transport_tunnel_synthesize(in->t, bi->id, bi->hash, now_ms());
	if (rc)
		return rnsc_bridge_fail(E, "synthesize tunnel", rc);
	pump(in);
	uint8_t buf[RNSC_KEYSIZE + RNSC_HASHLEN], tid[RNSC_HASHLEN];
	memcpy(buf, in->pub, RNSC_KEYSIZE);
	memcpy(buf + RNSC_KEYSIZE, bi->hash, RNSC_HASHLEN);
	rc = rnsc_full_hash(b->ctx, tid, buf, sizeof(buf));
	if (rc)
		return rnsc_bridge_fail(E, "hash", rc);
	json_object_set_new(result, "iface_id", json_string(bi->hex));
	rnsc_bridge_set_hex(result, "tunnel_id", tid, sizeof(tid));
	return 0;
}

/* The tunnels established on the attached interfaces (rnsc_transport_iface_tunnel); a tunnel
 * whose interface went away is not listed, since the engine offers no iteration. */
static int c_read_tunnels(rnsc_bridge *b, json_t *params, json_t *result, char *err, size_t errcap)
{
	(void)b;
	beh_inst *in = get_inst(params, E);
	if (!in)
		return 1;
	pump(in);
	json_t *a = json_array();
	for (int i = 0; i < MAX_IFACES; i++) {
		beh_iface *bi = &in->ifs[i];
		uint8_t tid[RNSC_HASHLEN];
		rnsc_transport_tunnel tu;
		if (!bi->used || rnsc_transport_iface_tunnel(in->t, bi->id, tid) != 0 ||
		    rnsc_transport_tunnel_get(in->t, tid, &tu) != 0)
			continue;
		json_t *o = json_object();
		rnsc_bridge_set_hex(o, "tunnel_id", tid, sizeof(tid));
		rnsc_bridge_set_hex(o, "interface_hash", bi->hash, sizeof(bi->hash));
		json_object_set_new(o, "interface_id", json_string(bi->hex));
		json_object_set_new(o, "expires", json_real((double)tu.expires / 1000.0));
		json_object_set_new(o, "num_paths", json_integer((json_int_t)tu.n_paths));
		json_array_append_new(a, o);
	}
	json_object_set_new(result, "tunnels", a);
	return 0;
}

const rnsc_bridge_cmd rnsc_bridge_beh_cmds[] = {
	{"behavioral_start", c_start},
	{"behavioral_stop", c_stop},
	{"behavioral_attach_mock_interface", c_attach},
	{"behavioral_detach_interface", c_detach},
	{"behavioral_inject", c_inject},
	{"behavioral_drain_tx", c_drain_tx},
	{"behavioral_packet_filter", c_packet_filter},
	{"behavioral_read_path_table", c_read_path_table},
	{"behavioral_force_cull", c_force_cull},
	{"behavioral_read_announce_rate", c_read_announce_rate},
	{"behavioral_read_link_table", c_read_link_table},
	{"behavioral_seed_link_table", c_seed_link_table},
	{"behavioral_read_reverse_table", c_read_reverse_table},
	{"behavioral_seed_reverse_table", c_seed_reverse_table},
	{"behavioral_set_path_timestamp", c_set_path_timestamp},
	{"behavioral_set_path_expires", c_set_path_expires},
	{"behavioral_request_path", c_request_path},
	{"behavioral_read_announce_table", c_read_announce_table},
	{"behavioral_set_announce_timestamp", c_set_announce_timestamp},
	{"behavioral_synthesize_tunnel", c_synthesize_tunnel},
	{"behavioral_read_tunnels", c_read_tunnels},
	{"behavioral_register_destination", c_register_destination},
	{"behavioral_read_destination_deliveries", c_read_deliveries},
	{"behavioral_ifac_mask", c_ifac_mask},
	{"behavioral_blackhole_identity", c_blackhole},
	{"behavioral_unblackhole_identity", c_unblackhole},
	{"behavioral_read_blackhole_table", c_read_blackhole_table},
	{NULL, NULL},
};
