/* SPDX-License-Identifier: MIT */
/*
 * The "auto" interface plugin: AutoInterface as the reference (rns 1.5.4,
 * RNS/Interfaces/AutoInterface.py) behaves on the wire.
 *
 *  - Adapters: every kernel interface with an IPv6 link-local (fe80::/10) address,
 *    minus "lo0" (the reference's ignore list on Linux), minus ignored_devices, and
 *    only those in devices when that list is given. The last link-local address listed
 *    for an adapter is the one used, as the reference's loop leaves it.
 *  - Discovery: each adapter joins the group ff<type><scope>:0:<hash words> derived
 *    from group_id (auto_disc.h) on discovery_port and every 1.6 s sends there the
 *    token SHA-256(group_id || own link-local address text). A second socket on
 *    discovery_port + 1, bound to the link-local address, takes the "reverse peering"
 *    tokens that peers unicast every 5.2 s. A valid token from a foreign address makes
 *    that address a peer; one from our own address is the multicast echo that shows
 *    the adapter's carrier is up (lost after 6.5 s without one: logged).
 *  - Peers: each becomes a spawned child interface (the reference's AutoInterfacePeer),
 *    keyed on the address alone. Data from a peer, or a token, refreshes it; after 22 s
 *    of silence (checked every 4 s) it is removed.
 *  - Data: one datagram per packet on data_port, bound per adapter to its link-local
 *    address; a child sends to its peer's address with the adapter's scope id. A frame
 *    heard again within 0.75 s (over another adapter) is dropped (auto_mif_dup).
 *  - Discovery tokens are ignored, and the interface stays offline, until 1.92 s after
 *    open (the reference's final_init wait). No adapter: a warning, offline for good.
 *  - HW_MTU 1196 (fixed); bitrate 10 Mbit/s unless configured_bitrate/bitrate (>= 5).
 *
 * Differences, on purpose: a device named in devices that does not exist fails the
 * open naming "devices" (the reference skips it silently); an unknown
 * discovery_scope fails the open (the reference crashes later); a data_port already
 * bound fails the open. The parent's send() is a no-op, as the reference's
 * process_outgoing: packets go out through the children. The "no multicast echoes"
 * error is logged once per adapter, not every 4 s. A link-local address that
 * changes while running is followed at the next peer job (every 4 s) and also moves
 * the unicast discovery socket, which the reference leaves on the old address.
 *
 * Threading and ownership: iface_abi.h. One auto_if per section owns its adapters'
 * sockets; each auto_peer child belongs to its parent and unlinks itself in close().
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auto_disc.h"
#include "iface_abi.h"

#define AUTO_HW_MTU 1196u
#define AUTO_BITRATE_GUESS 10000000u
#define AUTO_DEFAULT_IFAC_SIZE 16u
#define AUTO_DISCOVERY_PORT 29716
#define AUTO_DATA_PORT 42671
#define NS(x) ((uint64_t)((x)*1e9))
#define AUTO_PEERING_TIMEOUT NS(22.0)
#define AUTO_ANNOUNCE_INTERVAL NS(1.6)
#define AUTO_PEER_JOB_INTERVAL NS(4.0)
#define AUTO_MCAST_ECHO_TIMEOUT NS(6.5)
#define AUTO_REVERSE_INTERVAL NS(1.6 * 3.25)
#define AUTO_PEERING_WAIT NS(1.6 * 1.2)
#define RET_HEADER_MINSIZE 19u
#define RET_MINIMUM_BITRATE 5
#define MAX_ADAPTERS 32
#define RX_BURST 64

typedef struct auto_inst {
	const rnsc_host_api *api;
} auto_inst;

enum { KIND_PARENT = 1, KIND_PEER = 2 };

typedef struct auto_if auto_if;

typedef struct adapter {
	auto_if *a;
	char ifname[IF_NAMESIZE];
	unsigned ifindex;
	struct in6_addr ll;
	char ll_text[INET6_ADDRSTRLEN];
	int mc_fd, uc_fd, data_fd, ann_fd;
	rnsc_iface_watch *mc_w, *uc_w, *data_w;
	uint64_t last_echo;
	int echo_seen, timed_out, warned_no_echo;
} adapter;

typedef struct auto_peer {
	int kind;
	auto_if *a;
	auto_inst *inst;
	const rnsc_iface_host_api *host;
	struct auto_peer *next;
	adapter *ad;
	struct in6_addr addr;
	char addr_text[INET6_ADDRSTRLEN];
	uint64_t last_heard, last_out;
	int dead; /* timed out; removal requested */
	uint64_t rxb, txb, rxp, txp;
} auto_peer;

struct auto_if {
	int kind;
	auto_inst *inst;
	const rnsc_iface_host_api *host;
	char name[160];
	uint8_t group[256];
	size_t glen;
	struct in6_addr mcast;
	char scope;
	uint16_t disc_port, data_port;
	adapter ad[MAX_ADAPTERS];
	unsigned nad;
	/* every link-local address of the adopted adapters (an adapter may have several,
	 * one adopted): a token from any of them is ours, never a peer */
	struct in6_addr own[MAX_ADAPTERS * 4];
	unsigned nown;
	auto_peer *peers;
	unsigned npeers;
	int tx_fd;
	rnsc_iface_timer *ann_t, *job_t, *init_t;
	int online, final_init_done;
	auto_mif mif;
	uint8_t buf[9000];
	size_t max_frame;
	uint64_t rxb, txb, rxp, txp, bitrate;
	size_t ifac_size;
};

static void *xalloc(auto_inst *inst, size_t n)
{
	void *p = inst->api->alloc(inst->api->host_ctx, n);
	if (p)
		memset(p, 0, n);
	return p;
}

static void xfree(auto_inst *inst, void *p)
{
	if (p)
		inst->api->free(inst->api->host_ctx, p);
}

__attribute__((format(printf, 3, 4))) static void alog(auto_if *a, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	a->host->log(a->host->hctx, level, msg);
}

static uint64_t now(auto_if *a)
{
	return a->host->now_ns(a->host->hctx);
}

static void sa6(struct sockaddr_in6 *s, const struct in6_addr *addr, uint16_t port, unsigned scope)
{
	memset(s, 0, sizeof(*s));
	s->sin6_family = AF_INET6;
	s->sin6_addr = *addr;
	s->sin6_port = htons(port);
	s->sin6_scope_id = scope;
}

/* ---- peers ----------------------------------------------------------------------------- */

static auto_peer *peer_find(auto_if *a, const struct in6_addr *addr)
{
	for (auto_peer *p = a->peers; p; p = p->next)
		if (!p->dead && memcmp(&p->addr, addr, sizeof(*addr)) == 0)
			return p;
	return NULL;
}

static void add_peer(auto_if *a, adapter *ad, const struct in6_addr *src, const char *text)
{
	uint64_t t = now(a);
	for (unsigned k = 0; k < a->nad; k++) {
		if (memcmp(&a->ad[k].ll, src, sizeof(*src)) == 0) {
			/* our own announce looped back: the adapter's carrier works */
			a->ad[k].last_echo = t;
			a->ad[k].echo_seen = 1;
			return;
		}
	}
	for (unsigned k = 0; k < a->nown; k++) {
		if (memcmp(&a->own[k], src, sizeof(*src)) == 0) {
			alog(a, RNSC_LOG_WARNING,
			     "AutoInterface[%s] received multicast echo on unexpected interface %s",
			     a->name, ad->ifname);
			return;
		}
	}
	auto_peer *p = peer_find(a, src);
	if (p) {
		p->last_heard = t;
		return;
	}
	p = xalloc(a->inst, sizeof(*p));
	if (!p) {
		alog(a, RNSC_LOG_ERROR, "AutoInterface[%s] out of memory adding peer %s", a->name,
		     text);
		return;
	}
	p->kind = KIND_PEER;
	p->a = a;
	p->inst = a->inst;
	p->ad = ad;
	p->addr = *src;
	snprintf(p->addr_text, sizeof(p->addr_text), "%s", text);
	p->last_heard = p->last_out = t;
	char name[96];
	snprintf(name, sizeof(name), "AutoInterfacePeer[%s/%s]", ad->ifname, text);
	if (a->host->spawn(a->host->hctx, p, name, &p->host) != 0) {
		alog(a, RNSC_LOG_ERROR, "AutoInterface[%s] cannot add peer %s", a->name, text);
		xfree(a->inst, p);
		return;
	}
	p->next = a->peers;
	a->peers = p;
	a->npeers++;
	p->host->set_online(p->host->hctx, 1);
	alog(a, RNSC_LOG_DEBUG, "AutoInterface[%s] added peer %s on %s", a->name, text, ad->ifname);
}

static void send_token(auto_if *a, adapter *ad, int fd, const struct sockaddr_in6 *to)
{
	uint8_t tok[AUTO_TOKEN_LEN];
	if (auto_token(a->group, a->glen, ad->ll_text, tok) != 0)
		return;
	if (sendto(fd, tok, sizeof(tok), MSG_NOSIGNAL | MSG_DONTWAIT, (const struct sockaddr *)to,
		   sizeof(*to)) < 0 &&
	    !ad->timed_out)
		alog(a, RNSC_LOG_WARNING,
		     "AutoInterface[%s] detected possible carrier loss on %s: %s", a->name,
		     ad->ifname, strerror(errno));
}

/* ---- sockets --------------------------------------------------------------------------- */

static void disc_cb(void *ud, int fd, unsigned events)
{
	adapter *ad = ud;
	auto_if *a = ad->a;
	uint8_t pkt[1024];
	(void)events;
	for (int k = 0; k < RX_BURST; k++) {
		struct sockaddr_in6 src;
		socklen_t sl = sizeof(src);
		ssize_t n =
			recvfrom(fd, pkt, sizeof(pkt), MSG_DONTWAIT, (struct sockaddr *)&src, &sl);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (!a->final_init_done || src.sin6_family != AF_INET6)
			continue;
		char text[INET6_ADDRSTRLEN];
		if (auto_disc_check(a->group, a->glen, &src.sin6_addr, pkt, (size_t)n, text))
			add_peer(a, ad, &src.sin6_addr, text);
		else
			alog(a, RNSC_LOG_DEBUG,
			     "AutoInterface[%s] received peering packet on %s from %s, but "
			     "authentication hash was incorrect.",
			     a->name, ad->ifname, text);
	}
}

static void data_cb(void *ud, int fd, unsigned events)
{
	adapter *ad = ud;
	auto_if *a = ad->a;
	(void)events;
	for (int k = 0; k < RX_BURST; k++) {
		struct sockaddr_in6 src;
		socklen_t sl = sizeof(src);
		ssize_t n = recvfrom(fd, a->buf, sizeof(a->buf), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&src, &sl);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		auto_peer *p = a->online ? peer_find(a, &src.sin6_addr) : NULL;
		if (!p)
			continue; /* the reference drops data from strangers */
		size_t len = (size_t)n;
		if (len <= RET_HEADER_MINSIZE) {
			p->host->drop(p->host->hctx, RNSC_IFACE_DROP_RUNT, 1);
			continue;
		}
		if (len > a->max_frame || len > sizeof(a->buf)) {
			p->host->drop(p->host->hctx, RNSC_IFACE_DROP_OVERSIZE, 1);
			continue;
		}
		if (auto_mif_dup(&a->mif, a->buf, len, now(a)))
			continue;
		p->last_heard = now(a);
		p->rxb += len;
		p->rxp++;
		a->rxb += len;
		a->rxp++;
		p->host->deliver(p->host->hctx, a->buf, len);
	}
}

static int reuse(int fd)
{
	int one = 1;
	return setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	       setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
}

static void close_fd(auto_if *a, int *fd, rnsc_iface_watch **w)
{
	a->host->watch_remove(a->host->hctx, *w);
	*w = NULL;
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The sockets bound to the adapter's link-local address: unicast discovery (with
 * address reuse) and data (socketserver's default: none). Returns 0, or -1 with why
 * filled (and errno kept). */
static int local_open(auto_if *a, adapter *ad, char *why, size_t cap)
{
	struct sockaddr_in6 s;
	const int flags = SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC;
	const rnsc_iface_host_api *h = a->host;

	if ((ad->uc_fd = socket(AF_INET6, flags, 0)) < 0 || reuse(ad->uc_fd)) {
		snprintf(why, cap, "unicast discovery socket: %s", strerror(errno));
		return -1;
	}
	sa6(&s, &ad->ll, (uint16_t)(a->disc_port + 1), ad->ifindex);
	if (bind(ad->uc_fd, (struct sockaddr *)&s, sizeof(s)) != 0) {
		snprintf(why, cap, "cannot bind [%s%%%s]:%u: %s", ad->ll_text, ad->ifname,
			 (unsigned)(a->disc_port + 1), strerror(errno));
		return -1;
	}
	if ((ad->data_fd = socket(AF_INET6, flags, 0)) < 0) {
		snprintf(why, cap, "data socket: %s", strerror(errno));
		return -1;
	}
	sa6(&s, &ad->ll, a->data_port, ad->ifindex);
	if (bind(ad->data_fd, (struct sockaddr *)&s, sizeof(s)) != 0) {
		snprintf(why, cap, "cannot listen on [%s%%%s]:%u: %s", ad->ll_text, ad->ifname,
			 (unsigned)a->data_port, strerror(errno));
		return -1;
	}
	if (h->watch_add(h->hctx, ad->uc_fd, RNSC_IFACE_EV_READ, disc_cb, ad, &ad->uc_w) ||
	    h->watch_add(h->hctx, ad->data_fd, RNSC_IFACE_EV_READ, data_cb, ad, &ad->data_w)) {
		snprintf(why, cap, "cannot watch the sockets");
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Opens an adapter's sockets. Returns 0, or -1 with why filled (and errno kept). */
static int adapter_open(auto_if *a, adapter *ad, char *why, size_t cap)
{
	struct sockaddr_in6 s;
	unsigned idx = ad->ifindex;
	const int flags = SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC;

	struct ipv6_mreq mr = {.ipv6mr_multiaddr = a->mcast, .ipv6mr_interface = idx};
	if ((ad->mc_fd = socket(AF_INET6, flags, 0)) < 0 || reuse(ad->mc_fd) ||
	    setsockopt(ad->mc_fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &idx, sizeof(idx)) ||
	    setsockopt(ad->mc_fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mr, sizeof(mr))) {
		snprintf(why, cap, "multicast discovery socket: %s", strerror(errno));
		return -1;
	}
	/* Only the link scope names the adapter in the bind, as the reference. */
	sa6(&s, &a->mcast, a->disc_port, a->scope == '2' ? idx : 0);
	if (bind(ad->mc_fd, (struct sockaddr *)&s, sizeof(s)) != 0) {
		snprintf(why, cap, "cannot bind the discovery group port %u: %s",
			 (unsigned)a->disc_port, strerror(errno));
		return -1;
	}
	if ((ad->ann_fd = socket(AF_INET6, flags, 0)) < 0 ||
	    setsockopt(ad->ann_fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &idx, sizeof(idx))) {
		snprintf(why, cap, "announce socket: %s", strerror(errno));
		return -1;
	}
	const rnsc_iface_host_api *h = a->host;
	if (h->watch_add(h->hctx, ad->mc_fd, RNSC_IFACE_EV_READ, disc_cb, ad, &ad->mc_w)) {
		snprintf(why, cap, "cannot watch the sockets");
		errno = ENOMEM;
		return -1;
	}
	return local_open(a, ad, why, cap);
}

static void adapter_close(auto_if *a, adapter *ad)
{
	close_fd(a, &ad->mc_fd, &ad->mc_w);
	close_fd(a, &ad->uc_fd, &ad->uc_w);
	close_fd(a, &ad->data_fd, &ad->data_w);
	if (ad->ann_fd >= 0)
		close(ad->ann_fd);
	ad->ann_fd = -1;
}

/* The last link-local address the kernel lists for each adapter now (the same pick
 * as at open); found[k] says whether adapter k still has one. */
static void current_addresses(auto_if *a, struct in6_addr *cur, int *found)
{
	struct ifaddrs *ifa = NULL;
	memset(found, 0, sizeof(int) * a->nad);
	if (getifaddrs(&ifa) != 0)
		return;
	for (struct ifaddrs *e = ifa; e; e = e->ifa_next) {
		if (!e->ifa_addr || e->ifa_addr->sa_family != AF_INET6 || !e->ifa_name)
			continue;
		const struct sockaddr_in6 *s = (const void *)e->ifa_addr;
		if (s->sin6_addr.s6_addr[0] != 0xfe || s->sin6_addr.s6_addr[1] != 0x80 ||
		    s->sin6_addr.s6_addr[2] || s->sin6_addr.s6_addr[3])
			continue;
		for (unsigned k = 0; k < a->nad; k++) {
			if (strcmp(a->ad[k].ifname, e->ifa_name) == 0) {
				cur[k] = s->sin6_addr;
				found[k] = 1;
			}
		}
	}
	freeifaddrs(ifa);
}

/* A changed link-local address is adopted: tokens carry the new one and the
 * address-bound sockets move to it (the reference rebinds its data listener; rnsc
 * also moves the unicast discovery socket, so reverse peering keeps working). A bind
 * that fails (the address not usable yet) is retried at the next peer job. */
static void follow_addresses(auto_if *a)
{
	struct in6_addr cur[MAX_ADAPTERS];
	int found[MAX_ADAPTERS];
	char why[384];
	current_addresses(a, cur, found);
	for (unsigned k = 0; k < a->nad; k++) {
		adapter *ad = &a->ad[k];
		int changed = found[k] && memcmp(&cur[k], &ad->ll, sizeof(cur[k])) != 0;
		if (!changed && ad->data_fd >= 0)
			continue;
		if (changed) {
			char old[INET6_ADDRSTRLEN];
			snprintf(old, sizeof(old), "%s", ad->ll_text);
			ad->ll = cur[k];
			inet_ntop(AF_INET6, &ad->ll, ad->ll_text, sizeof(ad->ll_text));
			if (a->nown < sizeof(a->own) / sizeof(a->own[0]))
				a->own[a->nown++] = ad->ll;
			alog(a, RNSC_LOG_DEBUG, "Replacing link-local address %s for %s with %s",
			     old, ad->ifname, ad->ll_text);
		}
		close_fd(a, &ad->uc_fd, &ad->uc_w);
		close_fd(a, &ad->data_fd, &ad->data_w);
		if (local_open(a, ad, why, sizeof(why)) != 0) {
			close_fd(a, &ad->uc_fd, &ad->uc_w);
			close_fd(a, &ad->data_fd, &ad->data_w);
			alog(a, RNSC_LOG_WARNING,
			     "AutoInterface[%s] could not start a new UDP listener on %s: %s; retrying",
			     a->name, ad->ifname, why);
		}
	}
}

/* ---- timers ---------------------------------------------------------------------------- */

static void announce_cb(void *ud)
{
	auto_if *a = ud;
	struct sockaddr_in6 to;
	for (unsigned k = 0; k < a->nad; k++) {
		sa6(&to, &a->mcast, a->disc_port, a->scope == '2' ? a->ad[k].ifindex : 0);
		send_token(a, &a->ad[k], a->ad[k].ann_fd, &to);
	}
}

static void init_cb(void *ud)
{
	auto_if *a = ud;
	a->final_init_done = 1;
	a->online = 1;
	a->host->set_online(a->host->hctx, 1);
}

static void job_cb(void *ud)
{
	auto_if *a = ud;
	uint64_t t = now(a);
	for (auto_peer *p = a->peers; p; p = p->next) {
		if (p->dead)
			continue;
		if (t > p->last_heard + AUTO_PEERING_TIMEOUT) {
			p->dead = 1;
			p->host->set_online(p->host->hctx, 0);
			p->host->request_close(p->host->hctx);
			alog(a, RNSC_LOG_DEBUG, "AutoInterface[%s] removed peer %s on %s", a->name,
			     p->addr_text, p->ad->ifname);
			continue;
		}
		if (t > p->last_out + AUTO_REVERSE_INTERVAL) {
			struct sockaddr_in6 to;
			sa6(&to, &p->addr, (uint16_t)(a->disc_port + 1), p->ad->ifindex);
			send_token(a, p->ad, a->tx_fd, &to);
			p->last_out = t;
		}
	}
	follow_addresses(a);
	for (unsigned k = 0; k < a->nad; k++) {
		adapter *ad = &a->ad[k];
		int out = t > ad->last_echo + AUTO_MCAST_ECHO_TIMEOUT;
		if (out && !ad->timed_out)
			alog(a, RNSC_LOG_WARNING, "Multicast echo timeout for %s. Carrier lost.",
			     ad->ifname);
		else if (!out && ad->timed_out)
			alog(a, RNSC_LOG_WARNING, "AutoInterface[%s] Carrier recovered on %s",
			     a->name, ad->ifname);
		ad->timed_out = out;
		if (!ad->echo_seen && !ad->warned_no_echo) {
			ad->warned_no_echo = 1;
			alog(a, RNSC_LOG_ERROR,
			     "AutoInterface[%s] No multicast echoes received on %s. The networking "
			     "hardware or a firewall may be blocking multicast traffic.",
			     a->name, ad->ifname);
		}
	}
}

/* ---- config ---------------------------------------------------------------------------- */

typedef struct strlist {
	const char *const *v;
	size_t n;
	int set;
} strlist;

static int in_list(const strlist *l, const char *name)
{
	for (size_t k = 0; k < l->n; k++)
		if (strcmp(l->v[k], name) == 0)
			return 1;
	return 0;
}

/* A list option (devices, ignored_devices); a config view too old for lists gives
 * the single value. */
static int opt_list(const rnsc_iface_config *cfg, const char *key, strlist *out, const char **one)
{
	int rc;
	memset(out, 0, sizeof(*out));
	if (cfg->struct_size >= offsetof(rnsc_iface_config, get_list) + sizeof(cfg->get_list) &&
	    cfg->get_list)
		rc = cfg->get_list(cfg->cctx, key, &out->v, &out->n);
	else if ((rc = cfg->get_str(cfg->cctx, key, one)) == 0) {
		out->v = one;
		out->n = 1;
	}
	if (rc == RNSC_ERR_NOTFOUND)
		return 0;
	if (rc == 0)
		out->set = 1;
	return rc;
}

static int opt_str(const rnsc_iface_config *cfg, const char *key, const char **out)
{
	int rc = cfg->get_str(cfg->cctx, key, out);
	if (rc == RNSC_ERR_NOTFOUND) {
		*out = NULL;
		return 0;
	}
	return rc;
}

static int opt_port(const rnsc_iface_config *cfg, const char *key, int def, int max, uint16_t *out)
{
	int64_t v;
	int rc = cfg->get_int(cfg->cctx, key, &v);
	if (rc == RNSC_ERR_NOTFOUND) {
		*out = (uint16_t)def;
		return 0;
	}
	if (rc)
		return rc;
	if (v < 1 || v > max) {
		char m[96];
		snprintf(m, sizeof(m), "a port between 1 and %d is needed", max);
		return cfg->fail(cfg->cctx, key, RNSC_ERR_CONFIG_VALUE, m);
	}
	*out = (uint16_t)v;
	return 0;
}

static int lower_is(const char *s, const char *word)
{
	return strcasecmp(s, word) == 0;
}

/* Finds the adapters: kernel interfaces with a link-local address that pass the
 * filters. Keeps getifaddrs' order; the last fe80 address of an adapter wins. */
static int find_adapters(auto_if *a, const strlist *devices, const strlist *ignored)
{
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) != 0)
		return -1;
	for (struct ifaddrs *e = ifa; e; e = e->ifa_next) {
		if (!e->ifa_addr || e->ifa_addr->sa_family != AF_INET6 || !e->ifa_name)
			continue;
		const struct sockaddr_in6 *s = (const void *)e->ifa_addr;
		/* the reference's test is the text starting "fe80:" */
		if (s->sin6_addr.s6_addr[0] != 0xfe || s->sin6_addr.s6_addr[1] != 0x80 ||
		    s->sin6_addr.s6_addr[2] || s->sin6_addr.s6_addr[3])
			continue;
		if (strcmp(e->ifa_name, "lo0") == 0 || in_list(ignored, e->ifa_name) ||
		    (devices->n > 0 && !in_list(devices, e->ifa_name)))
			continue;
		adapter *ad = NULL;
		for (unsigned k = 0; k < a->nad; k++)
			if (strcmp(a->ad[k].ifname, e->ifa_name) == 0)
				ad = &a->ad[k];
		if (!ad) {
			if (a->nad == MAX_ADAPTERS || strlen(e->ifa_name) >= IF_NAMESIZE)
				continue;
			ad = &a->ad[a->nad++];
			ad->mc_fd = ad->uc_fd = ad->data_fd = ad->ann_fd = -1;
			snprintf(ad->ifname, sizeof(ad->ifname), "%s", e->ifa_name);
			ad->ifindex = if_nametoindex(e->ifa_name);
		}
		ad->ll = s->sin6_addr;
		inet_ntop(AF_INET6, &ad->ll, ad->ll_text, sizeof(ad->ll_text));
		if (a->nown < sizeof(a->own) / sizeof(a->own[0]))
			a->own[a->nown++] = s->sin6_addr;
	}
	freeifaddrs(ifa);
	return 0;
}

static int auto_configure(auto_if *a, const rnsc_iface_config *cfg)
{
	const char *group, *scope, *mtype, *one_dev = NULL, *one_ign = NULL;
	strlist devices, ignored;
	int64_t v;
	int rc;
	char msg[384];

	if ((rc = opt_str(cfg, "group_id", &group)) ||
	    (rc = opt_str(cfg, "discovery_scope", &scope)) ||
	    (rc = opt_str(cfg, "multicast_address_type", &mtype)) ||
	    (rc = opt_list(cfg, "devices", &devices, &one_dev)) ||
	    (rc = opt_list(cfg, "ignored_devices", &ignored, &one_ign)))
		return rc;
	/* the unicast discovery port is discovery_port + 1 */
	if ((rc = opt_port(cfg, "discovery_port", AUTO_DISCOVERY_PORT, 65534, &a->disc_port)) ||
	    (rc = opt_port(cfg, "data_port", AUTO_DATA_PORT, 65535, &a->data_port)))
		return rc;
	if (!group)
		group = "reticulum";
	if (strlen(group) >= sizeof(a->group))
		return cfg->fail(cfg->cctx, "group_id", RNSC_ERR_CONFIG_VALUE, "group_id too long");
	a->glen = strlen(group);
	memcpy(a->group, group, a->glen);

	a->scope = '2';
	if (scope) {
		static const char *const names[] = {"link", "admin", "site", "organisation",
						    "global"};
		static const char codes[] = {'2', '4', '5', '8', 'e'};
		a->scope = 0;
		for (unsigned k = 0; k < 5; k++)
			if (lower_is(scope, names[k]))
				a->scope = codes[k];
		if (!a->scope)
			return cfg->fail(
				cfg->cctx, "discovery_scope", RNSC_ERR_CONFIG_VALUE,
				"discovery_scope must be link, admin, site, organisation or "
				"global");
	}
	/* Anything but "permanent" means temporary, as the reference. */
	char type = mtype && lower_is(mtype, "permanent") ? '0' : '1';
	auto_group_address(a->group, a->glen, type, a->scope, &a->mcast);

	a->bitrate = AUTO_BITRATE_GUESS;
	const char *bkeys[] = {"configured_bitrate", "bitrate"};
	for (unsigned k = 0; k < 2; k++) {
		if ((rc = cfg->get_int(cfg->cctx, bkeys[k], &v)) == 0) {
			if (v >= RET_MINIMUM_BITRATE)
				a->bitrate = (uint64_t)v;
		} else if (rc != RNSC_ERR_NOTFOUND) {
			return rc;
		}
	}
	a->ifac_size = AUTO_DEFAULT_IFAC_SIZE;
	if ((rc = cfg->get_int(cfg->cctx, "ifac_size", &v)) == 0) {
		if (v > 8 * 512)
			return cfg->fail(cfg->cctx, "ifac_size", RNSC_ERR_CONFIG_VALUE,
					 "IFAC size beyond 4096 bits");
		if (v >= 8)
			a->ifac_size = (size_t)(v / 8);
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	a->max_frame = AUTO_HW_MTU + a->ifac_size;

	for (size_t k = 0; k < devices.n; k++) {
		if (if_nametoindex(devices.v[k]) == 0) {
			snprintf(msg, sizeof(msg), "no network device named \"%.64s\"",
				 devices.v[k]);
			return cfg->fail(cfg->cctx, "devices", RNSC_ERR_CONFIG_VALUE, msg);
		}
	}
	if (find_adapters(a, &devices, &ignored) != 0) {
		snprintf(msg, sizeof(msg), "cannot list network devices: %s", strerror(errno));
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_SYS, msg);
	}

	a->tx_fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (a->tx_fd < 0) {
		snprintf(msg, sizeof(msg), "socket() failed: %s", strerror(errno));
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_SYS, msg);
	}
	uint64_t t = now(a);
	for (unsigned k = 0; k < a->nad; k++) {
		adapter *ad = &a->ad[k];
		ad->a = a;
		ad->last_echo = t;
	}
	for (unsigned k = 0; k < a->nad; k++) {
		adapter *ad = &a->ad[k];
		if (adapter_open(a, ad, msg, sizeof(msg)) != 0) {
			int e = errno;
			char full[512];
			snprintf(full, sizeof(full), "%s: %s", ad->ifname, msg);
			return cfg->fail(cfg->cctx, e == EADDRINUSE ? "data_port" : NULL,
					 e == EADDRINUSE ? RNSC_ERR_IO : RNSC_ERR_SYS, full);
		}
		alog(a, RNSC_LOG_DEBUG, "AutoInterface[%s] using %s with link-local address %s",
		     a->name, ad->ifname, ad->ll_text);
	}
	if (a->nad == 0) {
		alog(a, RNSC_LOG_WARNING,
		     "AutoInterface[%s] could not autoconfigure: no usable network device with an "
		     "IPv6 link-local address%s. This interface currently provides no connectivity.",
		     a->name, devices.n ? " among devices" : "");
		return 0;
	}
	const rnsc_iface_host_api *h = a->host;
	if (h->timer_new(h->hctx, announce_cb, a, &a->ann_t) ||
	    h->timer_new(h->hctx, job_cb, a, &a->job_t) ||
	    h->timer_new(h->hctx, init_cb, a, &a->init_t) ||
	    h->timer_start(h->hctx, a->ann_t, 0, AUTO_ANNOUNCE_INTERVAL) ||
	    h->timer_start(h->hctx, a->job_t, AUTO_PEER_JOB_INTERVAL, AUTO_PEER_JOB_INTERVAL) ||
	    h->timer_start(h->hctx, a->init_t, AUTO_PEERING_WAIT, 0))
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "cannot start the timers");
	return 0;
}

static void free_if(auto_if *a)
{
	const rnsc_iface_host_api *h = a->host;
	h->timer_del(h->hctx, a->ann_t);
	h->timer_del(h->hctx, a->job_t);
	h->timer_del(h->hctx, a->init_t);
	for (unsigned k = 0; k < a->nad; k++)
		adapter_close(a, &a->ad[k]);
	if (a->tx_fd >= 0)
		close(a->tx_fd);
	/* Children are closed by the runtime first; any left here were never spawned. */
	for (auto_peer *p = a->peers; p; p = p->next)
		p->a = NULL;
	xfree(a->inst, a);
}

/* ---- ops ------------------------------------------------------------------------------- */

static const char *const auto_types[] = {"AutoInterface", NULL};

static int auto_open(void *instp, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		     void **handle)
{
	auto_inst *inst = instp;
	if (strcmp(cfg->type, "AutoInterface") != 0)
		return cfg->fail(cfg->cctx, "type", RNSC_ERR_NOTFOUND, "not an AutoInterface type");
	auto_if *a = xalloc(inst, sizeof(*a));
	if (!a)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
	a->kind = KIND_PARENT;
	a->inst = inst;
	a->host = host;
	a->tx_fd = -1;
	snprintf(a->name, sizeof(a->name), "%s", cfg->name);
	int rc = auto_configure(a, cfg);
	if (rc) {
		free_if(a);
		return rc;
	}
	*handle = a;
	return 0;
}

static int auto_send(void *handle, const uint8_t *frame, size_t len)
{
	if (*(int *)handle == KIND_PARENT)
		return 0; /* the reference's AutoInterface.process_outgoing does nothing */
	auto_peer *p = handle;
	auto_if *a = p->a;
	if (!a || p->dead) {
		p->host->drop(p->host->hctx, RNSC_IFACE_DROP_OFFLINE, 1);
		return RNSC_ERR_STATE;
	}
	struct sockaddr_in6 to;
	sa6(&to, &p->addr, a->data_port, p->ad->ifindex);
	ssize_t n;
	do
		n = sendto(a->tx_fd, frame, len, MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof(to));
	while (n < 0 && errno == EINTR);
	if (n >= 0) {
		p->txb += (uint64_t)n;
		p->txp++;
		a->txb += (uint64_t)n;
		a->txp++;
		return 0;
	}
	int e = errno;
	p->host->drop(p->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
	if (e != EAGAIN && e != EWOULDBLOCK && e != ENOBUFS)
		alog(a, RNSC_LOG_ERROR, "Could not transmit on AutoInterfacePeer[%s/%s]: %s",
		     p->ad->ifname, p->addr_text, strerror(e));
	return e == EMSGSIZE ? RNSC_ERR_TOOBIG : RNSC_ERR_IO;
}

static int auto_stats(void *handle, rnsc_iface_stats *out)
{
	out->hw_mtu = AUTO_HW_MTU;
	out->reconnects = 0;
	out->remote_port = 0;
	if (*(int *)handle == KIND_PARENT) {
		auto_if *a = handle;
		out->rx_bytes = a->rxb;
		out->tx_bytes = a->txb;
		out->rx_packets = a->rxp;
		out->tx_packets = a->txp;
		out->online = a->online;
		out->bitrate = a->bitrate;
		out->children = a->npeers;
		out->local_port = a->nad ? a->data_port : 0;
		return 0;
	}
	auto_peer *p = handle;
	out->rx_bytes = p->rxb;
	out->tx_bytes = p->txb;
	out->rx_packets = p->rxp;
	out->tx_packets = p->txp;
	out->online = p->a && !p->dead;
	out->bitrate = p->a ? p->a->bitrate : AUTO_BITRATE_GUESS;
	out->children = 0;
	out->local_port = p->a ? p->a->data_port : 0;
	out->remote_port = p->a ? p->a->data_port : 0;
	return 0;
}

static void auto_close(void *handle)
{
	if (*(int *)handle == KIND_PARENT) {
		free_if(handle);
		return;
	}
	auto_peer *p = handle;
	auto_if *a = p->a;
	if (a) {
		for (auto_peer **pp = &a->peers; *pp; pp = &(*pp)->next) {
			if (*pp == p) {
				*pp = p->next;
				a->npeers--;
				break;
			}
		}
	}
	xfree(p->inst, p);
}

static int auto_describe(void *handle, char *buf, size_t cap)
{
	if (*(int *)handle == KIND_PARENT)
		return snprintf(buf, cap, "AutoInterface[%s]", ((auto_if *)handle)->name);
	auto_peer *p = handle;
	return snprintf(buf, cap, "AutoInterfacePeer[%s/%s]", p->ad->ifname, p->addr_text);
}

static const rnsc_iface_ops auto_ops = {
	.struct_size = sizeof(rnsc_iface_ops),
	.types = auto_types,
	.open = auto_open,
	.send = auto_send,
	.stats = auto_stats,
	.close = auto_close,
	.describe = auto_describe,
};

static int auto_init(void *instp, const rnsc_host_api *host)
{
	auto_inst *inst = instp;
	if (!host || host->struct_size < offsetof(rnsc_host_api, free) + sizeof(host->free) ||
	    !host->alloc || !host->free)
		return RNSC_ERR_ABI;
	inst->api = host;
	return 0;
}

static const rnsc_plugin_desc auto_desc = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_IFACE,
	.name = "auto",
	.version = "0.1.0",
	.description = "AutoInterface (IPv6 link-local multicast discovery, one child per peer)",
	.caps = 0,
	.inst_size = sizeof(auto_inst),
	.ops = &auto_ops,
	.init = auto_init,
	.fini = NULL,
};

__attribute__((visibility("default"))) int rnsc_plugin_init(const rnsc_host_api *host,
							    const rnsc_plugin_desc **out);
__attribute__((visibility("default"))) int rnsc_plugin_init(const rnsc_host_api *host,
							    const rnsc_plugin_desc **out)
{
	(void)host;
	if (!out)
		return RNSC_ERR_INVAL;
	*out = &auto_desc;
	return 0;
}
