/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "node.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "destination.h"
#include "ifac.h"
#include "announce_cap.h"
#include "node_policy.h"
#include "node_rpc.h"
#include "node_ratchets.h"
#include "node_store.h"
#include "discovery_store.h"
#include "store.h"

/* Transport.mgmt_announce_interval and the 15 s start-up deferral (Transport.start). */
#define MGMT_FIRST_MS 15000u
#define MGMT_INTERVAL_MS (2u * 3600u * 1000u)
/* Known destinations are saved this often, and at shutdown. */
/* Upper bound on the tick timer, so a missed deadline never stalls the engine for long. */
#define TICK_MAX_MS 1000u

typedef struct node_if {
	struct node_if *next;
	rnsc_node *n;
	rnsc_iface *iface;
	uint32_t id;
	int mode;
	int mtu_capable; /* Interface.AUTOCONFIGURE_MTU or FIXED_MTU */
	int attached;
	/* IFAC settings as configured, kept so spawned children derive the same code. */
	char *netname, *passphrase;
	size_t ifac_size;
	int has_ifac;
	rnsc_ifac ifac;
	rnsc_ifac_stats ifac_stats;
	int local_role;   /* enum rnsc_transport_local_role */
	int local_server; /* the shared instance's listener: its children are local clients */
	rnsc_transport_iface_policy pol; /* announce policy (node_policy.h) */
	int wants_tunnel; /* a TCP/Backbone client: synthesizes a tunnel on every connect */
	/* Announce and path request counters of removed children: the reference's spawned
	 * interfaces count into their parent as they go, so a listener keeps them. */
	uint64_t carried[8];
} node_if;

/* Interface options read before rnsc_iface_host_open(); the ADDED event picks them up. */
typedef struct node_pending {
	int set;
	int mode;
	int mtu_capable;
	const char *netname, *passphrase;
	size_t ifac_size;
	int local_role;
	int local_server;
	int has_pol;
	rnsc_transport_iface_policy pol;
	int wants_tunnel;
} node_pending;

struct rnsc_node {
	rnsc_ctx *ctx;
	node_ratchet_files *ratchet_files; /* local destinations' ratchet files */
	rnsc_plugin_host *plugins;
	rnsc_config *cfg;
	rnsc_config_settings set;
	char dir[PATH_MAX];
	char storage[PATH_MAX];
	rnsc_loop *loop;
	rnsc_iface_host *ih;
	rnsc_transport *t;
	rnsc_timer *tick_timer, *mgmt_timer, *save_timer;
	node_store_cadence cadence; /* when save_cb writes (node_store.h) */
	node_store_hygiene hygiene; /* when save_cb cleans */
	int sigfd;
	rnsc_watch *sigw;
	sigset_t oldmask;
	int sig_blocked;
	atomic_int stopping;
	node_if *ifs;
	uint32_t next_id;
	node_pending pend;
	int has_probe;
	uint8_t probe_hash[RNSC_TRUNCATED_HASHLEN];
	rnsc_node_hooks hooks;
	rnsc_node_stats st;
	uint8_t *rxbuf, *ifacbuf;
	size_t rxcap, ifaccap;
	int flushing;
	int started;   /* set once start-up succeeded: only then are the tables saved */
	int shared;    /* this node is the shared instance (LocalServerInterface open) */
	int connected; /* this node is attached to another shared instance */
	rnsc_node_rpc *rpc;
	uint64_t started_ms;
};

static const char *WHO = "node";

uint64_t rnsc_node_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t rnsc_node_lowest_bitrate(rnsc_node *n)
{
	rnsc_iface_host *ih = rnsc_node_ifaces(n);
	uint64_t low = 0;
	for (size_t i = 0; i < rnsc_iface_host_count(ih); i++) {
		rnsc_iface_status st;
		if (rnsc_iface_status_get(rnsc_iface_host_at(ih, i), &st) == 0 && st.stats.online &&
		    st.stats.bitrate && (!low || st.stats.bitrate < low))
			low = st.stats.bitrate;
	}
	return low;
}

double rnsc_node_medium_path_timeout_s(rnsc_node *n)
{
	uint64_t low = rnsc_node_lowest_bitrate(n);
	if (!low)
		return 0;
	return 2.0 * (RNSC_MTU * 8.0 / (double)(low < 5 ? 5 : low)) +
	       RNSC_PER_HOP_TIMEOUT_MS / 1000.0;
}

static int grow(rnsc_ctx *ctx, uint8_t **buf, size_t *cap, size_t need)
{
	if (*cap >= need)
		return 0;
	size_t c = *cap ? *cap : 2048;
	while (c < need)
		c *= 2;
	uint8_t *b = rnsc_alloc(ctx, c);
	if (!b)
		return RNSC_ERR_NOMEM;
	rnsc_free(ctx, *buf);
	*buf = b;
	*cap = c;
	return 0;
}

static char *dupstr(rnsc_ctx *ctx, const char *s)
{
	if (!s || !*s)
		return NULL;
	size_t l = strlen(s) + 1;
	char *d = rnsc_alloc(ctx, l);
	if (d)
		memcpy(d, s, l);
	return d;
}

static void hexstr(char *out, const uint8_t *p, size_t len)
{
	static const char dg[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = dg[p[i] >> 4];
		out[2 * i + 1] = dg[p[i] & 15];
	}
	out[2 * len] = '\0';
}

static node_if *find_id(const rnsc_node *n, uint32_t id)
{
	for (node_if *r = n->ifs; r; r = r->next)
		if (r->id == id)
			return r;
	return NULL;
}

/* ---- engine <-> interfaces ---------------------------------------------------------------- */

static void tick_cb(rnsc_loop *loop, rnsc_timer *tm, void *ud);

static void arm_tick(rnsc_node *n)
{
	uint64_t now = rnsc_node_now_ms(), dl = rnsc_transport_next_deadline(n->t);
	uint64_t delay = dl == UINT64_MAX ? TICK_MAX_MS : dl > now ? dl - now : 0;
	if (delay > TICK_MAX_MS)
		delay = TICK_MAX_MS;
	if (n->tick_timer &&
	    rnsc_loop_timer_rearm(n->loop, n->tick_timer, delay * RNSC_NS_PER_MS, 0) == 0)
		return;
	n->tick_timer = NULL;
	if (rnsc_loop_timer_add(n->loop, delay * RNSC_NS_PER_MS, 0, tick_cb, n, &n->tick_timer))
		rnsc_log(n->ctx, RNSC_LOG_ERROR, WHO, "cannot arm the transport timer");
}

void rnsc_node_flush(rnsc_node *n)
{
	if (!n || n->flushing)
		return;
	n->flushing = 1;
	const uint8_t *frame;
	uint32_t id;
	size_t len;
	/* Frames are taken from the engine, not copied out: a relayed 32 KiB frame is then
	 * copied once less on its way to the interface. */
	while ((frame = rnsc_transport_outbox_take(n->t, &id, &len)) != NULL) {
		node_if *r = find_id(n, id);
		const uint8_t *out = frame;
		size_t olen = len;
		int ok = r && r->attached;
		if (ok && r->has_ifac) {
			int m = RNSC_ERR_NOMEM;
			if (grow(n->ctx, &n->ifacbuf, &n->ifaccap, olen + r->ifac.size) == 0)
				m = rnsc_ifac_apply(&r->ifac, n->ifacbuf, n->ifaccap, frame, olen);
			if (m < 0) {
				rnsc_log(n->ctx, RNSC_LOG_WARNING, WHO, "IFAC on %s failed: %s",
					 rnsc_iface_name(r->iface), rnsc_strerror(m));
				ok = 0;
			} else {
				out = n->ifacbuf;
				olen = (size_t)m;
			}
		}
		if (ok && rnsc_iface_send(r->iface, out, olen) == 0)
			n->st.tx_frames++;
		else
			n->st.tx_errors++;
		rnsc_transport_outbox_release(n->t, frame);
	}
	n->flushing = 0;
	arm_tick(n);
}

static void tick_cb(rnsc_loop *loop, rnsc_timer *tm, void *ud)
{
	(void)loop;
	(void)tm;
	rnsc_node *n = ud;
	n->tick_timer = NULL; /* a fired one-shot is freed when this returns */
	int rc = rnsc_transport_tick(n->t, rnsc_node_now_ms());
	if (rc)
		rnsc_log(n->ctx, RNSC_LOG_WARNING, WHO, "transport jobs: %s", rnsc_strerror(rc));
	rnsc_node_flush(n);
}

static void on_rx(void *ud, rnsc_iface *iface, const uint8_t *frame, size_t len, uint64_t now_ns)
{
	(void)now_ns;
	rnsc_node *n = ud;
	node_if *r = rnsc_iface_user(iface);
	n->st.rx_frames++;
	if (!r || !r->attached) {
		n->st.ingest_errors++;
		return;
	}
	if (grow(n->ctx, &n->rxbuf, &n->rxcap, len)) {
		n->st.ingest_errors++;
		return;
	}
	int plen = rnsc_ifac_check(r->has_ifac ? &r->ifac : NULL, &r->ifac_stats, n->rxbuf,
				   n->rxcap, frame, len);
	if (plen < 0) {
		n->st.ifac_dropped++;
		rnsc_log(n->ctx, RNSC_LOG_DEBUG, WHO, "dropped a frame on %s: %s",
			 rnsc_iface_name(iface), rnsc_strerror(plen));
		return;
	}
	int rc = rnsc_transport_ingest(n->t, r->id, n->rxbuf, (size_t)plen, rnsc_node_now_ms());
	if (rc) {
		n->st.ingest_errors++;
		rnsc_log(n->ctx, RNSC_LOG_DEBUG, WHO, "frame of %d bytes on %s refused: %s", plen,
			 rnsc_iface_name(iface), rnsc_strerror(rc));
	}
	rnsc_node_flush(n);
}

static void attach(rnsc_node *n, node_if *r)
{
	if (r->attached)
		return;
	rnsc_iface_status st;
	uint64_t bitrate = 0;
	size_t mtu = 0;
	if (rnsc_iface_status_get(r->iface, &st) == 0) {
		bitrate = st.stats.bitrate;
		mtu = st.stats.hw_mtu;
	}
	int rc = rnsc_transport_iface_add(n->t, r->id, r->mode, bitrate, mtu);
	if (rc) {
		rnsc_log(n->ctx, RNSC_LOG_ERROR, WHO, "cannot attach %s to transport: %s",
			 rnsc_iface_name(r->iface), rnsc_strerror(rc));
		return;
	}
	(void)rnsc_transport_iface_set_policy(n->t, r->id, &r->pol, rnsc_node_now_ms());
	if (r->mtu_capable)
		(void)rnsc_transport_iface_set_mtu_capable(n->t, r->id, 1);
	if (r->local_role)
		(void)rnsc_transport_iface_set_local(n->t, r->id, r->local_role);
	r->attached = 1;
	rnsc_log(n->ctx, RNSC_LOG_VERBOSE, WHO, "%s attached (mode %d, %llu bps, MTU %zu%s)",
		 rnsc_iface_name(r->iface), r->mode, (unsigned long long)bitrate, mtu,
		 r->has_ifac ? ", IFAC" : "");
}

static void detach(rnsc_node *n, node_if *r)
{
	if (!r->attached)
		return;
	rnsc_transport_iface_remove(n->t, r->id);
	r->attached = 0;
}

static void rec_free(rnsc_node *n, node_if *r)
{
	if (r->has_ifac)
		rnsc_ifac_free(&r->ifac);
	rnsc_free(n->ctx, r->netname);
	if (r->passphrase)
		rnsc_free_secret(n->ctx, r->passphrase, strlen(r->passphrase));
	rnsc_free(n->ctx, r);
}

static node_if *rec_new(rnsc_node *n, rnsc_iface *iface)
{
	node_if *r = rnsc_calloc(n->ctx, 1, sizeof(*r));
	if (!r)
		return NULL;
	r->n = n;
	r->iface = iface;
	r->id = ++n->next_id;
	r->mode = RNSC_TRANSPORT_MODE_FULL;
	r->ifac_size = RNSC_IFAC_DEFAULT_SIZE;
	const char *netname = NULL, *pass = NULL;
	rnsc_iface *parent = rnsc_iface_parent(iface);
	node_if *pr = parent ? rnsc_iface_user(parent) : NULL;
	rnsc_node_policy_base(&n->set, 0, &r->pol);
	if (pr) { /* spawned: the parent's mode and access code */
		/* and its ingress and rate settings, but never its announce cap */
		r->pol = pr->pol;
		r->pol.announce_cap = RNSC_ANNOUNCE_CAP_SPAWNED;
		if (pr->local_server) {
			r->local_role = RNSC_TRANSPORT_LOCAL_CLIENT;
			rnsc_node_policy_base(&n->set, 1, &r->pol); /* LocalClientInterface */
		}
		r->mode = pr->mode;
		r->mtu_capable = pr->mtu_capable;
		r->ifac_size = pr->ifac_size;
		netname = pr->netname;
		pass = pr->passphrase;
	} else if (n->pend.set) {
		if (n->pend.mode)
			r->mode = n->pend.mode;
		r->mtu_capable = n->pend.mtu_capable;
		if (n->pend.ifac_size)
			r->ifac_size = n->pend.ifac_size;
		netname = n->pend.netname;
		pass = n->pend.passphrase;
		r->local_role = n->pend.local_role;
		r->local_server = n->pend.local_server;
		r->wants_tunnel = n->pend.wants_tunnel;
		if (n->pend.has_pol)
			r->pol = n->pend.pol;
		else if (r->local_role || r->local_server)
			rnsc_node_policy_base(&n->set, 1, &r->pol);
	}
	if ((netname && *netname && !(r->netname = dupstr(n->ctx, netname))) ||
	    (pass && *pass && !(r->passphrase = dupstr(n->ctx, pass)))) {
		rec_free(n, r);
		return NULL;
	}
	if (r->netname || r->passphrase) {
		int rc = rnsc_ifac_init(&r->ifac, n->ctx, r->netname, r->passphrase, r->ifac_size);
		if (rc) {
			rnsc_log(n->ctx, RNSC_LOG_ERROR, WHO, "IFAC for %s: %s",
				 rnsc_iface_name(iface), rnsc_strerror(rc));
			rec_free(n, r);
			return NULL;
		}
		r->has_ifac = 1;
	}
	return r;
}

/* Transport.synthesize_tunnel for a client that (re)connected. The interface hash is
 * SHA-256 of its name as the reference prints it, so it stays the same across reconnects. */
static void synthesize_tunnel(rnsc_node *n, node_if *r)
{
	char name[256];
	uint8_t h[RNSC_HASHLEN];
	int k = rnsc_iface_describe(r->iface, name, sizeof(name));
	int rc = k < 0 ? k
		       : rnsc_full_hash(n->ctx, h, (const uint8_t *)name,
					strnlen(name, sizeof(name)));
	if (rc == 0)
		rc = rnsc_transport_tunnel_synthesize(n->t, r->id, h, rnsc_node_now_ms());
	if (rc == 0)
		rnsc_node_flush(n);
	if (rc)
		rnsc_log(n->ctx, RNSC_LOG_ERROR, WHO, "could not synthesize tunnel for %s: %s",
			 rnsc_iface_name(r->iface), rnsc_strerror(rc));
	else
		rnsc_log(n->ctx, RNSC_LOG_DEBUG, WHO, "tunnel synthesized for %s", name);
}

/* Keeps a departing child's announce and path request counters on its parent. */
static void carry_to_parent(rnsc_node *n, rnsc_iface *iface, node_if *r)
{
	rnsc_iface *p = rnsc_iface_parent(iface);
	node_if *pr = p ? rnsc_iface_user(p) : NULL;
	rnsc_transport_iface_astats as;
	if (!pr || !r->attached ||
	    rnsc_transport_iface_astats_get(n->t, r->id, rnsc_node_now_ms(), &as) != 0)
		return;
	const uint64_t c[8] = {as.arxc, as.arxb, as.atxc, as.atxb,
			       as.prxc, as.prxb, as.ptxc, as.ptxb};
	for (int i = 0; i < 8; i++)
		pr->carried[i] += c[i] + r->carried[i];
}

static void on_event(void *ud, rnsc_iface *iface, int ev)
{
	rnsc_node *n = ud;
	node_if *r = rnsc_iface_user(iface);
	switch (ev) {
	case RNSC_IFACE_ADDED:
		if (r)
			return;
		if (!(r = rec_new(n, iface))) {
			rnsc_log(n->ctx, RNSC_LOG_ERROR, WHO, "cannot track %s; closing it",
				 rnsc_iface_name(iface));
			rnsc_iface_close(iface);
			return;
		}
		r->next = n->ifs;
		n->ifs = r;
		rnsc_iface_set_user(iface, r);
		/* Like Transport.interfaces: an interface belongs to the engine from the moment
		 * it exists, online or not, until it is removed; paths through a client that is
		 * reconnecting survive (and restored paths can name it before it connects). */
		attach(n, r);
		break;
	case RNSC_IFACE_ONLINE:
	case RNSC_IFACE_OFFLINE:
		if (r) {
			attach(n, r); /* no-op when attached; retries a failed attach */
			/* Interface.online: recursive path requests skip offline interfaces */
			(void)rnsc_transport_iface_set_online(n->t, r->id, ev == RNSC_IFACE_ONLINE);
			if (r->attached && r->wants_tunnel && ev == RNSC_IFACE_ONLINE)
				synthesize_tunnel(n, r);
		}
		break;
	case RNSC_IFACE_REMOVED:
		if (!r)
			return;
		carry_to_parent(n, iface, r);
		detach(n, r);
		for (node_if **pp = &n->ifs; *pp; pp = &(*pp)->next)
			if (*pp == r) {
				*pp = r->next;
				break;
			}
		rnsc_iface_set_user(iface, NULL);
		rec_free(n, r);
		break;
	default:
		break;
	}
}

/* ---- engine callbacks ------------------------------------------------------------------- */

static void cb_receipt(void *ud, const uint8_t packet_hash[RNSC_HASHLEN], int proved)
{
	rnsc_node *n = ud;
	if (n->hooks.on_receipt)
		n->hooks.on_receipt(n->hooks.ud, packet_hash, proved);
}

static void cb_data(void *ud, const uint8_t dest[RNSC_TRUNCATED_HASHLEN], const uint8_t *data,
		    size_t len, const uint8_t packet_hash[RNSC_HASHLEN], uint32_t iface)
{
	(void)packet_hash;
	rnsc_node *n = ud;
	if (n->hooks.on_data)
		n->hooks.on_data(n->hooks.ud, dest, data, len, iface);
}

static int cb_proof_requested(void *ud, const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
			      const uint8_t *data, size_t len,
			      const uint8_t packet_hash[RNSC_HASHLEN])
{
	rnsc_node *n = ud;
	return n->hooks.on_proof_requested
		       ? n->hooks.on_proof_requested(n->hooks.ud, dest, data, len, packet_hash)
		       : 0;
}

static void cb_ratchet(void *ud, const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
		       const uint8_t pub[RNSC_RATCHETSIZE], uint64_t received)
{
	rnsc_node *n = ud;
	node_ratchets_persist(n->ctx, n->storage, dest, pub, received);
}

static void cb_dest_ratchets(void *ud, const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
			     const uint8_t (*ratchets)[RNSC_RATCHETSIZE], size_t n_ratchets)
{
	rnsc_node *n = ud;
	node_ratchet_files_rotated(n->ctx, n->ratchet_files, dest, ratchets, n_ratchets);
}

int rnsc_node_dest_enable_ratchets(rnsc_node *n, const uint8_t dest[RNSC_TRUNCATED_HASHLEN],
				   const rnsc_identity *id, const char *path)
{
	if (!n)
		return RNSC_ERR_INVAL;
	return node_ratchet_files_enable(n->ctx, &n->ratchet_files, n->t, dest, id, path);
}

static void cb_announce(void *ud, const uint8_t dest[RNSC_TRUNCATED_HASHLEN], const uint8_t *app,
			size_t app_len, unsigned hops)
{
	rnsc_node *n = ud;
	/* InterfaceDiscovery's announce handler: shared or standalone instances only. */
	if (n->set.discover_interfaces && !n->connected) {
		int req = n->set.required_discovery_value.set
				  ? (int)n->set.required_discovery_value.v
				  : 0;
		int dr = rnsc_discovery_store_announce(
			n->ctx, n->storage, n->t, dest, app, app_len, hops, req,
			&n->set.interface_discovery_sources, (double)rnsc_node_now_ms() / 1000.0);
		if (dr < 0)
			rnsc_log(n->ctx, RNSC_LOG_ERROR, WHO,
				 "error while persisting discovered interface data: %s",
				 rnsc_strerror(dr));
		else if (dr == 1)
			rnsc_log(n->ctx, RNSC_LOG_DEBUG, WHO,
				 "stored a discovered interface (%u hop%s)", hops,
				 hops == 1 ? "" : "s");
		else if (dr > 1)
			rnsc_log(n->ctx, RNSC_LOG_DEBUG, WHO,
				 "ignored an interface discovery announce (reason %d)", dr - 1);
	}
	/* The reference logs new paths at LOG_DEBUG too ("is now N hops away via"). */
	if (rnsc_ctx_log_level(n->ctx) >= RNSC_LOG_DEBUG) {
		char hx[33];
		hexstr(hx, dest, RNSC_TRUNCATED_HASHLEN);
		rnsc_transport_path p;
		const char *via = "?";
		if (rnsc_transport_path_get(n->t, dest, &p) == 0) {
			const char *nm = rnsc_node_iface_name(n, p.iface);
			if (nm)
				via = nm;
		}
		rnsc_log(n->ctx, RNSC_LOG_DEBUG, WHO, "path to <%s> is %u hop%s via %s", hx, hops,
			 hops == 1 ? "" : "s", via);
	}
	if (n->hooks.on_announce)
		n->hooks.on_announce(n->hooks.ud, dest, hops);
}

static void cb_link_est(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			const uint8_t dest[RNSC_TRUNCATED_HASHLEN], int initiator)
{
	rnsc_node *n = ud;
	if (rnsc_ctx_log_level(n->ctx) >= RNSC_LOG_DEBUG) {
		char hx[33], hd[33];
		hexstr(hx, link_id, RNSC_TRUNCATED_HASHLEN);
		hexstr(hd, dest, RNSC_TRUNCATED_HASHLEN);
		rnsc_log(n->ctx, RNSC_LOG_DEBUG, WHO, "link <%s> to <%s> established (%s)", hx, hd,
			 initiator ? "initiator" : "responder");
	}
	if (n->hooks.on_link_established)
		n->hooks.on_link_established(n->hooks.ud, link_id, dest, initiator);
}

static void cb_link_closed(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN], int reason)
{
	rnsc_node *n = ud;
	if (n->hooks.on_link_closed)
		n->hooks.on_link_closed(n->hooks.ud, link_id, reason);
}

static void cb_link_data(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			 const uint8_t *data, size_t len, const uint8_t packet_hash[RNSC_HASHLEN])
{
	rnsc_node *n = ud;
	if (n->hooks.on_link_data)
		n->hooks.on_link_data(n->hooks.ud, link_id, data, len, packet_hash);
}

static void cb_link_proof(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			  const uint8_t packet_hash[RNSC_HASHLEN])
{
	rnsc_node *n = ud;
	if (n->hooks.on_link_proof)
		n->hooks.on_link_proof(n->hooks.ud, link_id, packet_hash);
}

static void cb_link_packet(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN], int packet_type,
			   int context, const uint8_t *data, size_t len,
			   const uint8_t packet_hash[RNSC_HASHLEN])
{
	rnsc_node *n = ud;
	if (n->hooks.on_link_packet)
		n->hooks.on_link_packet(n->hooks.ud, link_id, packet_type, context, data, len,
					packet_hash);
}

static void cb_link_identified(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			       const rnsc_identity *who)
{
	rnsc_node *n = ud;
	if (n->hooks.on_link_identified)
		n->hooks.on_link_identified(n->hooks.ud, link_id, who);
}

/* ---- persistence ------------------------------------------------------------------------ */

static int store_describe(void *ud, uint32_t id, char *buf, size_t cap)
{
	node_if *r = find_id(ud, id);
	if (!r)
		return -1;
	int len = rnsc_iface_describe(r->iface, buf, cap);
	return len > 0 && (size_t)len < cap ? 0 : -1;
}

static uint32_t store_find(void *ud, const uint8_t h[32])
{
	rnsc_node *n = ud;
	char desc[512];
	uint8_t dh[RNSC_HASHLEN];
	for (node_if *r = n->ifs; r; r = r->next) {
		if (!r->attached || store_describe(n, r->id, desc, sizeof(desc)) ||
		    rnsc_full_hash(n->ctx, dh, (const uint8_t *)desc, strlen(desc)))
			continue;
		if (memcmp(dh, h, RNSC_HASHLEN) == 0)
			return r->id;
	}
	return 0;
}

/* ---- timers and signals ----------------------------------------------------------------- */

static void mgmt_cb(rnsc_loop *loop, rnsc_timer *tm, void *ud)
{
	(void)loop;
	(void)tm;
	rnsc_node *n = ud;
	if (!n->has_probe)
		return;
	int rc = rnsc_transport_announce(n->t, n->probe_hash, NULL, 0, rnsc_node_now_ms());
	if (rc)
		rnsc_log(n->ctx, RNSC_LOG_WARNING, WHO, "probe announce failed: %s",
			 rnsc_strerror(rc));
	else
		rnsc_log(n->ctx, RNSC_LOG_DEBUG, WHO, "announced the probe destination");
	rnsc_node_flush(n);
}

static void save_cb(rnsc_loop *loop, rnsc_timer *tm, void *ud)
{
	(void)tm;
	rnsc_node *n = ud;
	uint64_t mono_ms = rnsc_loop_now(loop) / RNSC_NS_PER_MS;
	int clean = n->connected ? 0 : node_store_hygiene_due(&n->hygiene, mono_ms);
	if (clean & NODE_STORE_CLEAN_KNOWN) /* writes the file too */
		node_store_clean_known(n->ctx, n->t, n->storage, rnsc_node_now_ms());
	if (clean & NODE_STORE_CLEAN_CACHE)
		node_store_clean_cache(n->ctx, n->t, n->storage);
	int due = node_store_cadence_due(&n->cadence, n->t, mono_ms);
	if (due == NODE_STORE_ALL) {
		rnsc_node_save(n);
	} else if (due == NODE_STORE_TABLES) {
		node_store_ifaces si = {.ud = n, .describe = store_describe, .find = store_find};
		if (!n->connected) {
			node_store_save_known(n->ctx, n->t, n->storage);
			node_store_save_paths(n->ctx, n->t, n->storage, &si);
		}
	}
}

static void sig_cb(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned events, void *ud)
{
	(void)w;
	(void)events;
	rnsc_node *n = ud;
	struct signalfd_siginfo si;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		rnsc_log(n->ctx, RNSC_LOG_NOTICE, WHO, "signal %u received, shutting down",
			 si.ssi_signo);
		atomic_store(&n->stopping, 1);
		rnsc_loop_stop(loop);
	}
}

static int setup_signals(rnsc_node *n)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (pthread_sigmask(SIG_BLOCK, &set, &n->oldmask) != 0)
		return RNSC_ERR_SYS;
	/* A peer closing its socket must cost an interface, not the process (plugins should
	 * use MSG_NOSIGNAL; this covers any that do not). */
	signal(SIGPIPE, SIG_IGN);
	n->sig_blocked = 1;
	n->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (n->sigfd < 0)
		return RNSC_ERR_SYS;
	return rnsc_loop_watch_add(n->loop, n->sigfd, RNSC_EV_READ, sig_cb, n, &n->sigw);
}

/* ---- set-up ------------------------------------------------------------------------------- */

/* Fills err with a message (paths may be long: the message is cut, never overflowed). */
__attribute__((format(printf, 3, 4))) static int fail(rnsc_config_error *err, int code,
						      const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->code = code;
		err->line = 0;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

/* Reticulum.py: the stored identity is loaded or created; an unreadable one is replaced. */
static int load_identity(rnsc_node *n, rnsc_identity *id, rnsc_config_error *err)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/transport_identity", n->storage);
	int rc = rnsc_identity_load_file(n->ctx, id, path);
	if (rc == 0) {
		rnsc_log(n->ctx, RNSC_LOG_VERBOSE, WHO, "loaded transport identity from %s", path);
		return 0;
	}
	if (rc != RNSC_ERR_NOENT)
		rnsc_log(n->ctx, RNSC_LOG_ERROR, WHO,
			 "transport identity %s unusable (%s); creating "
			 "a new one",
			 path, rnsc_strerror(rc));
	if ((rc = rnsc_identity_generate(n->ctx, id)) || (rc = rnsc_identity_save_file(id, path)))
		return fail(err, rc, "cannot create the transport identity %s: %s", path,
			    rnsc_strerror(rc));
	rnsc_log(n->ctx, RNSC_LOG_VERBOSE, WHO, "created transport identity %s", path);
	return 0;
}

static int read_iface_opts(rnsc_node *n, const rnsc_config_section *s, rnsc_config_error *err)
{
	memset(&n->pend, 0, sizeof(n->pend));
	n->pend.set = 1;
	const char *v;
	int rc = rnsc_node_policy_read(&n->set, s, &n->pend.pol, err);
	if (rc)
		return rc;
	n->pend.has_pol = 1;
	/* The reference's TCP and Backbone clients synthesize a tunnel on every connect
	 * (wants_tunnel); a BackboneInterface is a client when it names a target. */
	/* Not with kiss_framing: the reference's KISS TCP client synthesizes none. */
	int kiss = 0;
	if (rnsc_config_has(s, "kiss_framing") &&
	    rnsc_config_get_bool(s, "kiss_framing", &kiss, err))
		kiss = 0; /* a bad value is the interface's to report */
	if (rnsc_config_has(s, "type") && rnsc_config_get_str(s, "type", &v, err) == 0)
		n->pend.wants_tunnel =
			(strcmp(v, "TCPClientInterface") == 0 && !kiss) ||
			strcmp(v, "BackboneClientInterface") == 0 ||
			(strcmp(v, "BackboneInterface") == 0 &&
			 (rnsc_config_has(s, "target_host") || rnsc_config_has(s, "remote")));
	/* interface_mode wins over mode, as in Reticulum._synthesize_interface. */
	if (rnsc_config_has(s, "interface_mode") || rnsc_config_has(s, "mode")) {
		int m;
		if ((rc = rnsc_node_iface_mode_read(s, &m, err)))
			return rc;
		n->pend.mode = m;
	}
	/* Later spellings override earlier ones; empty values count as unset. */
	static const char *const names[] = {"networkname", "network_name"};
	static const char *const passes[] = {"passphrase", "pass_phrase"};
	for (int i = 0; i < 2; i++) {
		if (rnsc_config_has(s, names[i])) {
			if ((rc = rnsc_config_get_str(s, names[i], &v, err)))
				return rc;
			if (*v)
				n->pend.netname = v;
		}
		if (rnsc_config_has(s, passes[i])) {
			if ((rc = rnsc_config_get_str(s, passes[i], &v, err)))
				return rc;
			if (*v)
				n->pend.passphrase = v;
		}
	}
	int64_t bits;
	if (rnsc_config_has(s, "ifac_size")) {
		if ((rc = rnsc_config_get_int(s, "ifac_size", &bits, err)))
			return rc;
		size_t sz = rnsc_ifac_size_from_bits((long)(bits > 8 * 512 ? 8 * 512 + 8 : bits));
		if (sz > RNSC_IFAC_MAX_SIZE) {
			char p[128];
			rnsc_config_section_path(s, p, sizeof(p));
			return fail(err, RNSC_ERR_CONFIG_VALUE,
				    "%s ifac_size: %lld bits is beyond the 512-bit maximum", p,
				    (long long)bits);
		}
		n->pend.ifac_size = sz;
	}
	return 0;
}

/* The interface classes whose AUTOCONFIGURE_MTU or FIXED_MTU is set in the reference
 * (links over them may use the hardware MTU). */
static int type_mtu_capable(const char *type)
{
	static const char *const caps[] = {"TCPClientInterface", "TCPServerInterface",
					   "BackboneInterface",  "BackboneClientInterface",
					   "LocalInterface",     "AutoInterface",
					   "WeaveInterface"};
	for (size_t i = 0; type && i < sizeof(caps) / sizeof(caps[0]); i++)
		if (strcmp(type, caps[i]) == 0)
			return 1;
	return 0;
}

/* ---- the shared instance (Reticulum.__start_local_interface) ------------------------------ */

/* Whether a shared instance answers at the configured address (an abstract Unix socket
 * "\0rns/<instance_name>" or TCP 127.0.0.1:shared_instance_port). */
static int shared_running(const rnsc_config_settings *set)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	memset(&ss, 0, sizeof(ss));
	if (set->shared_instance_unix && set->local_socket_path) {
		struct sockaddr_un *un = (struct sockaddr_un *)&ss;
		int l = snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1, "rns/%s",
				 set->local_socket_path);
		if (l < 0 || (size_t)l >= sizeof(un->sun_path) - 1)
			return 0;
		un->sun_family = AF_UNIX;
		sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)l);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)set->shared_instance_port);
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*in);
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int ok = connect(fd, (struct sockaddr *)&ss, sl) == 0;
	close(fd);
	return ok;
}

/* Opens the shared instance's listener, or (client = 1) the connection to a running one,
 * through the "local" plugin with a section built from [reticulum]'s options. */
static int open_local(rnsc_node *n, int client, rnsc_config_error *err)
{
	char text[512];
	if (n->set.shared_instance_unix && n->set.local_socket_path)
		/* quoted, so an instance name with '#' or ',' stays one value */
		snprintf(text, sizeof(text),
			 strchr(n->set.local_socket_path, '"')
				 ? "[interfaces]\n  [[local]]\n    socket_path = %.300s\n"
				 : "[interfaces]\n  [[local]]\n    socket_path = \"%.300s\"\n",
			 n->set.local_socket_path);
	else
		snprintf(text, sizeof(text), "[interfaces]\n  [[local]]\n    port = %lld\n",
			 (long long)n->set.shared_instance_port);
	rnsc_config *c = NULL;
	int rc = rnsc_config_parse(n->ctx, text, strlen(text), "[reticulum]", &c, err);
	if (rc)
		return rc;
	const rnsc_config_section *s = rnsc_config_section_get(
		rnsc_config_section_get(rnsc_config_root(c), "interfaces"), "local");
	memset(&n->pend, 0, sizeof(n->pend));
	n->pend.set = 1;
	n->pend.mtu_capable = 1; /* LocalInterface.AUTOCONFIGURE_MTU */
	n->pend.local_role = client ? RNSC_TRANSPORT_LOCAL_SHARED : RNSC_TRANSPORT_LOCAL_NONE;
	n->pend.local_server = !client;
	rc = rnsc_iface_host_open(n->ih, s, client ? "Local shared instance" : "Shared Instance",
				  client ? "LocalClientInterface" : "LocalServerInterface", NULL,
				  err);
	memset(&n->pend, 0, sizeof(n->pend));
	rnsc_config_del(c);
	return rc;
}

static int start_local(rnsc_node *n, rnsc_config_error *err)
{
	int rc = 0;
	if (!n->connected) {
		rc = open_local(n, 0, err);
		if (rc == 0) {
			n->shared = 1;
			rnsc_log(n->ctx, RNSC_LOG_VERBOSE, WHO,
				 "started the shared instance interface");
			int rrc = rnsc_node_rpc_start(n, n->ctx, &n->rpc);
			if (rrc)
				rnsc_log(n->ctx, RNSC_LOG_ERROR, WHO,
					 "cannot start the shared instance "
					 "RPC: %s (status tools will not work)",
					 rnsc_strerror(rrc));
			return 0;
		}
		if (rc != RNSC_ERR_IO)
			goto standalone;
		if (err)
			memset(err, 0, sizeof(*err));
	}
	rc = open_local(n, 1, err);
	if (rc == 0) {
		n->connected = 1;
		rnsc_log(n->ctx, RNSC_LOG_VERBOSE, WHO,
			 "connected to the locally available Reticulum instance");
		return 0;
	}
standalone:
	rnsc_log(n->ctx, RNSC_LOG_WARNING, WHO,
		 "no shared instance interface (%s): running as a "
		 "standalone instance",
		 err && err->msg[0] ? err->msg : rnsc_strerror(rc));
	if (err)
		memset(err, 0, sizeof(*err));
	n->connected = 0;
	return 0;
}

/* Why rnsc ships no plugin for a type the reference serves (appended to the skip message). */
static const char *unserved_why(const char *type)
{
	if (strcmp(type, "I2PInterface") == 0)
		return " (rnsc has no I2PInterface: it needs an I2P router's SAM bridge, and none has "
		       "been available to test one against the reference)";
	if (strcmp(type, "WeaveInterface") == 0)
		return " (rnsc has no WeaveInterface: there is no Weave device, nor a simulator of its "
		       "protocol, to test one against the reference)";
	return "";
}

/* The reference's classes that keep trying to open their device (reconnect_port). */
static int type_retries(const char *type)
{
	return strcmp(type, "RNodeInterface") == 0 || strcmp(type, "RNodeMultiInterface") == 0 ||
	       strcmp(type, "WeaveInterface") == 0;
}

static int retry_prepare(void *ud, const rnsc_config_section *s, const char *type)
{
	rnsc_node *n = ud;
	rnsc_config_error e;
	int rc = read_iface_opts(n, s, &e);
	n->pend.mtu_capable = type_mtu_capable(type);
	return rc;
}

static void retry_done(void *ud, rnsc_iface *iface, const rnsc_config_section *s, const char *type)
{
	(void)iface;
	rnsc_node *n = ud;
	n->pend.set = 0;
	rnsc_config_audit_iface(s, type);
}

static int open_ifaces(rnsc_node *n, rnsc_config_error *err)
{
	size_t cnt = rnsc_config_iface_count(n->cfg);
	int opened = 0, failed = 0;
	rnsc_iface_host_set_retry_hooks(n->ih, retry_prepare, retry_done, n);
	for (size_t k = 0; k < cnt; k++) {
		rnsc_config_iface ci;
		int rc = rnsc_config_iface_at(n->cfg, k, &ci, err);
		if (rc)
			return rc;
		if (!ci.enabled)
			continue;
		if (!rnsc_iface_host_serves(n->ih, ci.type)) {
			/* rnsd logs an interface it cannot create and runs the others. */
			char p[200];
			rnsc_config_section_path(ci.section, p, sizeof(p));
			rnsc_log(n->ctx, RNSC_LOG_ERROR, WHO,
				 "%s option \"type\": no loaded interface "
				 "plugin serves type \"%s\"; interface skipped, the others keep "
				 "running%s",
				 p, ci.type, unserved_why(ci.type));
			failed++;
			continue;
		}
		if ((rc = read_iface_opts(n, ci.section, err)))
			return rc;
		n->pend.mtu_capable = type_mtu_capable(ci.type);
		rc = rnsc_iface_host_open_retry(n->ih, ci.section, ci.name, ci.type,
						type_retries(ci.type) ? RNSC_IFACE_RETRY_MS : 0,
						NULL, err);
		n->pend.set = 0;
		int retried = type_retries(ci.type) && rnsc_iface_open_failure_retryable(rc);
		if (rc && (retried || (rnsc_iface_open_failed_on_resource(rc) &&
				       !n->set.panic_on_interface_error))) {
			/* A missing device, command or address, or a port in use: the interface
			 * host logged one clear error for it and the others keep working (the
			 * reference panics here, except for the types that retry;
			 * panic_on_interface_error = yes restores that). */
			if (err)
				memset(err, 0, sizeof(*err));
			failed++;
			continue;
		}
		if (rc)
			return rc;
		rnsc_config_audit_iface(ci.section, ci.type);
		opened++;
	}
	rnsc_log(n->ctx, RNSC_LOG_VERBOSE, WHO, "%d interface%s opened", opened,
		 opened == 1 ? "" : "s");
	if (failed)
		rnsc_log(n->ctx, RNSC_LOG_WARNING, WHO, "%d interface%s could not be started",
			 failed, failed == 1 ? "" : "s");
	return 0;
}

int rnsc_node_new(rnsc_ctx *ctx, rnsc_plugin_host *plugins, const rnsc_node_options *opt,
		  rnsc_node **out, rnsc_config_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (!ctx || !plugins || !out)
		return RNSC_ERR_INVAL;
	*out = NULL;
	rnsc_node_options defaults = {0};
	if (!opt)
		opt = &defaults;
	rnsc_node *n = rnsc_calloc(ctx, 1, sizeof(*n));
	if (!n)
		return RNSC_ERR_NOMEM;
	n->ctx = ctx;
	n->plugins = plugins;
	n->sigfd = -1;
	n->started_ms = rnsc_node_now_ms();
	atomic_init(&n->stopping, 0);
	rnsc_identity stored, ident;
	memset(&stored, 0, sizeof(stored));
	memset(&ident, 0, sizeof(ident));
	int created = 0, rc;
	if ((rc = rnsc_config_open(ctx, opt->config_dir, n->dir, sizeof(n->dir), &created, &n->cfg,
				   err)))
		goto out;
	if ((rc = rnsc_config_read_settings(n->cfg, &n->set, err)))
		goto out;
	if (opt->apply_loglevel) {
		int64_t lv = n->set.loglevel_raw + opt->verbosity;
		if (!n->set.loglevel_set)
			lv = n->set.loglevel + opt->verbosity;
		rnsc_ctx_set_log_level(ctx, lv < 0 ? 0 : lv > 8 ? 8 : (int)lv);
	}
	if (opt->logtimestamps)
		*opt->logtimestamps = n->set.logtimestamps;
	if (created)
		rnsc_log(ctx, RNSC_LOG_NOTICE, WHO, "created a default configuration in %s/config",
			 n->dir);
	rnsc_config_audit_settings(n->cfg); /* refused and unknown options, aloud */
	/* A program finding a shared instance attaches to it: it routes nothing and opens
	 * no interfaces of its own (Reticulum.__start_local_interface). */
	if (n->set.share_instance && shared_running(&n->set)) {
		n->connected = 1;
		n->set.enable_transport = 0;
		n->set.respond_to_probes = 0;
	}
	snprintf(n->storage, sizeof(n->storage), "%.*s/storage", (int)(sizeof(n->storage) - 9),
		 n->dir);
	if ((rc = rnsc_store_mkdirs(n->storage))) {
		rc = fail(err, rc, "cannot create the storage folder %s: %s", n->storage,
			  rnsc_strerror(rc));
		goto out;
	}
	if ((rc = load_identity(n, &stored, err)))
		goto out;
	/* Transport.start: a node that does not route uses a throw-away identity. */
	if (!n->set.enable_transport && !n->set.static_transport_identity) {
		if ((rc = rnsc_identity_generate(ctx, &ident))) {
			rc = fail(err, rc, "cannot create an ephemeral transport identity: %s",
				  rnsc_strerror(rc));
			goto out;
		}
	} else {
		ident = stored;
	}
	rnsc_transport_config tc = {
		.transport_enabled = n->set.enable_transport,
		.use_implicit_proof = n->set.use_implicit_proof,
		.link_mtu_discovery_off = !n->set.link_mtu_discovery,
		.local_hops_delta = n->set.local_hops_delta,
		.qlen_in_il = n->set.qlen_in_il.set && n->set.qlen_in_il.v > 0
				      ? (size_t)n->set.qlen_in_il.v
				      : 0,
	};
	if ((rc = rnsc_transport_new(ctx, &n->t, &ident, &tc))) {
		rc = fail(err, rc, "cannot start the transport engine: %s", rnsc_strerror(rc));
		goto out;
	}
	rnsc_transport_callbacks cb = {.ud = n,
				       .on_receipt = cb_receipt,
				       .on_announce = cb_announce,
				       .on_data = cb_data,
				       .on_link_established = cb_link_est,
				       .on_link_closed = cb_link_closed,
				       .on_link_data = cb_link_data,
				       .on_link_proof = cb_link_proof,
				       .on_link_packet = cb_link_packet,
				       .on_link_identified = cb_link_identified,
				       .on_ratchet = cb_ratchet,
				       .on_proof_requested = cb_proof_requested,
				       .on_dest_ratchets = cb_dest_ratchets};
	rnsc_transport_set_callbacks(n->t, &cb);
	node_store_load_known(n->ctx, n->t, n->storage);

	if (n->set.enable_transport && n->set.respond_to_probes) {
		/* Transport.start: rnstransport.probe on the stored identity, PROVE_ALL. */
		static const char *const aspects[] = {"probe"};
		if ((rc = rnsc_transport_dest_add(n->t, RNSC_DEST_SINGLE, &stored, "rnstransport",
						  aspects, 1, 1, n->probe_hash))) {
			rc = fail(err, rc, "cannot register the probe destination: %s",
				  rnsc_strerror(rc));
			goto out;
		}
		n->has_probe = 1;
		char hx[33];
		hexstr(hx, n->probe_hash, RNSC_TRUNCATED_HASHLEN);
		rnsc_log(ctx, RNSC_LOG_NOTICE, WHO,
			 "transport instance will respond to probe requests on <%s>", hx);
	}

	if ((rc = rnsc_loop_new(ctx, &n->loop))) {
		rc = fail(err, rc, "cannot create the event loop: %s", rnsc_strerror(rc));
		goto out;
	}
	if (opt->handle_signals && (rc = setup_signals(n))) {
		rc = fail(err, rc, "cannot set up signal handling: %s (%s)", rnsc_strerror(rc),
			  strerror(errno));
		goto out;
	}
	if ((rc = rnsc_iface_host_new(ctx, plugins, n->loop, &n->ih))) {
		rc = fail(err, rc, "cannot create the interface host: %s", rnsc_strerror(rc));
		goto out;
	}
	rnsc_iface_host_set_rx(n->ih, on_rx, n);
	rnsc_iface_host_set_event(n->ih, on_event, n);
	if (n->set.share_instance && (rc = start_local(n, err)))
		goto out;
	if (!n->connected && (rc = open_ifaces(n, err)))
		goto out;
	if (n->set.enable_transport &&
	    !n->connected) { /* Transport.start loads these only when routing */
		node_store_ifaces si = {.ud = n, .describe = store_describe, .find = store_find};
		node_store_load_hashlist(ctx, n->t, n->storage);
		node_store_load_paths(ctx, n->t, n->storage, &si);
		node_store_load_tunnels(ctx, n->t, n->storage);
	}
	/* Identity._clean_ratchets (not when attached: the shared instance owns the folder);
	 * the reference reads the files lazily in get_ratchet, rnsc at start. */
	node_ratchets_load(ctx, n->t, n->storage, !n->connected, rnsc_node_now_ms());
	if (!n->connected) /* Transport.reload_blackhole; drops paths of listed identities */
		node_store_load_blackhole(ctx, n->t, n->storage, n->set.blackhole_sources.h,
					  n->set.blackhole_sources.n, rnsc_node_now_ms());
	if ((rc = rnsc_loop_timer_add(n->loop, MGMT_FIRST_MS * RNSC_NS_PER_MS,
				      (uint64_t)MGMT_INTERVAL_MS * RNSC_NS_PER_MS, mgmt_cb, n,
				      &n->mgmt_timer)) ||
	    (rc = rnsc_loop_timer_add(n->loop, 0, (uint64_t)NODE_STORE_CHECK_MS * RNSC_NS_PER_MS,
				      save_cb, n, &n->save_timer)))
		goto out;
	rnsc_node_flush(n);
	char hx[33];
	hexstr(hx, rnsc_transport_id(n->t), RNSC_TRUNCATED_HASHLEN);
	rnsc_log(ctx, RNSC_LOG_VERBOSE, WHO, "transport instance <%s> started from %s", hx, n->dir);
	n->started = 1;
out:
	if (ident.has_private && memcmp(&ident, &stored, sizeof(ident)) != 0)
		rnsc_identity_free(&ident);
	rnsc_identity_free(&stored);
	if (rc) {
		if (err && !err->code)
			fail(err, rc, "node start-up failed: %s", rnsc_strerror(rc));
		rnsc_node_del(n);
		return rc;
	}
	*out = n;
	return 0;
}

void rnsc_node_del(rnsc_node *n)
{
	if (!n)
		return;
	if (n->started)
		rnsc_node_save(n);
	rnsc_node_rpc_stop(n->rpc);
	n->rpc = NULL;
	/* Interfaces first: their REMOVED events detach them from the engine. */
	rnsc_iface_host_del(n->ih);
	n->ih = NULL;
	while (n->ifs) { /* records of interfaces removed without an event */
		node_if *r = n->ifs;
		n->ifs = r->next;
		rec_free(n, r);
	}
	if (n->loop) {
		if (n->sigw)
			rnsc_loop_watch_remove(n->loop, n->sigw);
		rnsc_loop_del(n->loop);
	}
	if (n->sigfd >= 0)
		close(n->sigfd);
	if (n->sig_blocked)
		pthread_sigmask(SIG_SETMASK, &n->oldmask, NULL);
	rnsc_transport_del(n->t);
	node_ratchet_files_free(n->ctx, n->ratchet_files);
	n->ratchet_files = NULL;
	rnsc_config_del(n->cfg);
	rnsc_free(n->ctx, n->rxbuf);
	rnsc_free(n->ctx, n->ifacbuf);
	rnsc_free(n->ctx, n);
}

int rnsc_node_run(rnsc_node *n)
{
	if (!n)
		return RNSC_ERR_INVAL;
	if (atomic_load(&n->stopping))
		return 0;
	return rnsc_loop_run(n->loop);
}

int rnsc_node_run_once(rnsc_node *n, int timeout_ms)
{
	return n ? rnsc_loop_run_once(n->loop, timeout_ms) : RNSC_ERR_INVAL;
}

void rnsc_node_stop(rnsc_node *n)
{
	if (!n)
		return;
	atomic_store(&n->stopping, 1);
	rnsc_loop_stop(n->loop);
}

int rnsc_node_stopping(const rnsc_node *n)
{
	return n ? atomic_load(&((rnsc_node *)n)->stopping) : 0;
}

void rnsc_node_set_hooks(rnsc_node *n, const rnsc_node_hooks *hooks)
{
	if (!n)
		return;
	if (hooks)
		n->hooks = *hooks;
	else
		memset(&n->hooks, 0, sizeof(n->hooks));
}

rnsc_transport *rnsc_node_transport(rnsc_node *n)
{
	return n ? n->t : NULL;
}

rnsc_iface_host *rnsc_node_ifaces(rnsc_node *n)
{
	return n ? n->ih : NULL;
}

rnsc_loop *rnsc_node_loop(rnsc_node *n)
{
	return n ? n->loop : NULL;
}

const rnsc_config_settings *rnsc_node_settings(const rnsc_node *n)
{
	return n ? &n->set : NULL;
}

const char *rnsc_node_config_dir(const rnsc_node *n)
{
	return n ? n->dir : NULL;
}

const rnsc_config *rnsc_node_config(const rnsc_node *n)
{
	return n ? n->cfg : NULL;
}

rnsc_ctx *rnsc_node_ctx(const rnsc_node *n)
{
	return n ? n->ctx : NULL;
}

uint64_t rnsc_node_started_ms(const rnsc_node *n)
{
	return n ? n->started_ms : 0;
}

struct rnsc_node_rpc *rnsc_node_rpc_server(const rnsc_node *n)
{
	return n ? n->rpc : NULL;
}

int rnsc_node_iface_mode(const rnsc_node *n, const rnsc_iface *f, const char **netname,
			 size_t *ifac_size)
{
	(void)n;
	const node_if *r = f ? rnsc_iface_user(f) : NULL;
	if (netname)
		*netname = r ? r->netname : NULL;
	if (ifac_size)
		*ifac_size = r ? r->ifac_size : 0;
	return r ? r->mode : RNSC_TRANSPORT_MODE_FULL;
}

int rnsc_node_iface_ifac(const rnsc_node *n, const rnsc_iface *f, const uint8_t **signature,
			 size_t *ifac_size, uint64_t *violations)
{
	(void)n;
	const node_if *r = f ? rnsc_iface_user(f) : NULL;
	if (violations)
		*violations = r ? r->ifac_stats.violations : 0;
	if (!r || !r->has_ifac)
		return 0;
	if (signature)
		*signature = r->ifac.signature;
	if (ifac_size)
		*ifac_size = r->ifac.size;
	return 1;
}

int rnsc_node_iface_astats(rnsc_node *n, const rnsc_iface *f, uint64_t now,
			   rnsc_transport_iface_astats *out)
{
	node_if *r = f ? rnsc_iface_user(f) : NULL;
	if (!n || !r)
		return RNSC_ERR_NOTFOUND;
	int rc = RNSC_ERR_NOTFOUND;
	if (r->attached)
		rc = rnsc_transport_iface_astats_get(n->t, r->id, now, out);
	else if (out)
		memset(out, 0, sizeof(*out));
	if (out && (rc == 0 || !r->attached)) {
		uint64_t *c[8] = {&out->arxc, &out->arxb, &out->atxc, &out->atxb,
				  &out->prxc, &out->prxb, &out->ptxc, &out->ptxb};
		for (int i = 0; i < 8; i++)
			*c[i] += r->carried[i];
	}
	return rc;
}

rnsc_iface *rnsc_node_iface_by_id(const rnsc_node *n, uint32_t id)
{
	node_if *r = n ? find_id(n, id) : NULL;
	return r ? r->iface : NULL;
}

int rnsc_node_is_shared_instance(const rnsc_node *n)
{
	return n && n->shared;
}

int rnsc_node_connected_to_shared(const rnsc_node *n)
{
	return n && n->connected;
}

const uint8_t *rnsc_node_probe_hash(const rnsc_node *n)
{
	return n && n->has_probe ? n->probe_hash : NULL;
}

const char *rnsc_node_iface_name(const rnsc_node *n, uint32_t id)
{
	node_if *r = n ? find_id(n, id) : NULL;
	return r ? rnsc_iface_name(r->iface) : NULL;
}

void rnsc_node_stats_get(const rnsc_node *n, rnsc_node_stats *out)
{
	if (n && out)
		*out = n->st;
}

void rnsc_node_log_stats(rnsc_node *n)
{
	if (!n)
		return;
	const rnsc_transport_stats *ts = rnsc_transport_get_stats(n->t);
	rnsc_log(n->ctx, RNSC_LOG_NOTICE, WHO,
		 "stats: rx %llu frames (%llu IFAC drops, %llu refused by transport: %llu "
		 "malformed), tx %llu (%llu failed), %zu paths, %zu known destinations, "
		 "%llu delivered, %llu proofs sent",
		 (unsigned long long)n->st.rx_frames, (unsigned long long)n->st.ifac_dropped,
		 (unsigned long long)n->st.ingest_errors, (unsigned long long)ts->malformed,
		 (unsigned long long)n->st.tx_frames, (unsigned long long)n->st.tx_errors,
		 rnsc_transport_path_count(n->t), rnsc_transport_known_count(n->t),
		 (unsigned long long)ts->delivered, (unsigned long long)ts->proofs_sent);
	for (size_t i = 0; i < rnsc_iface_host_count(n->ih); i++) {
		rnsc_iface_status st;
		rnsc_iface *f = rnsc_iface_host_at(n->ih, i);
		if (rnsc_iface_status_get(f, &st))
			continue;
		rnsc_log(n->ctx, RNSC_LOG_NOTICE, WHO,
			 "stats: %s: rx %llu tx %llu packets, drops: runt %llu oversize %llu "
			 "garbage %llu bytes, partial %llu",
			 st.name, (unsigned long long)st.stats.rx_packets,
			 (unsigned long long)st.stats.tx_packets,
			 (unsigned long long)st.drops[RNSC_IFACE_DROP_RUNT],
			 (unsigned long long)st.drops[RNSC_IFACE_DROP_OVERSIZE],
			 (unsigned long long)st.drops[RNSC_IFACE_DROP_GARBAGE],
			 (unsigned long long)st.drops[RNSC_IFACE_DROP_PARTIAL]);
	}
}

int rnsc_node_save(rnsc_node *n)
{
	if (!n || !n->t)
		return RNSC_ERR_INVAL;
	node_store_ifaces si = {.ud = n, .describe = store_describe, .find = store_find};
	/* A program attached to a shared instance leaves the tables to the instance
	 * (Identity.save_known_destinations and Transport.persist_data return early there): a
	 * client writing known_destinations would overwrite what the instance learnt since. */
	int rc = n->connected ? 0 : node_store_save_known(n->ctx, n->t, n->storage);
	int rc2 = n->connected ? 0 : node_store_save_paths(n->ctx, n->t, n->storage, &si);
	int rc3 = n->set.enable_transport && !n->connected
			  ? node_store_save_hashlist(n->ctx, n->t, n->storage)
			  : 0;
	/* Transport.persist_data: the tunnel table with the hashlist and the path table */
	int rc4 = !n->connected ? node_store_save_tunnels(n->ctx, n->t, n->storage, &si) : 0;
	if (!rc3)
		rc3 = rc4;
	return rc ? rc : rc2 ? rc2 : rc3;
}

int rnsc_node_blackhole(rnsc_node *n, const uint8_t identity_hash[16], double until, int until_int,
			const char *reason, size_t reason_len)
{
	if (!n || !n->t || !identity_hash)
		return RNSC_ERR_INVAL;
	rnsc_blackhole_entry e = {
		.until = until, .until_int = until_int, .reason = reason, .reason_len = reason_len};
	int rc = rnsc_transport_blackhole_add(n->t, identity_hash, &e);
	if (rc == 1) {
		int src = node_store_save_blackhole(n->ctx, n->t, n->storage);
		char hx[33];
		hexstr(hx, identity_hash, 16);
		rnsc_log(n->ctx, RNSC_LOG_INFO, WHO, "blackholed identity <%s>", hx);
		(void)src; /* logged; the table holds it anyway, as persist_blackhole's errors */
	}
	return rc;
}

int rnsc_node_unblackhole(rnsc_node *n, const uint8_t identity_hash[16])
{
	if (!n || !n->t || !identity_hash)
		return RNSC_ERR_INVAL;
	int rc = rnsc_transport_blackhole_remove(n->t, identity_hash);
	if (rc == 1) {
		int src = node_store_save_blackhole(n->ctx, n->t, n->storage);
		char hx[33];
		hexstr(hx, identity_hash, 16);
		rnsc_log(n->ctx, RNSC_LOG_INFO, WHO, "lifted blackhole for identity <%s>", hx);
		(void)src;
	}
	return rc;
}
