/* SPDX-License-Identifier: MIT */
/*
 * The "lossy" interface plugin, for tests: LossyInterface, a point-to-point datagram
 * interface that loses, duplicates and reorders packets on purpose, driven by a seeded RNG
 * so a run can be repeated. On the wire it is the reference's UDPInterface (one Reticulum
 * packet per datagram, no framing), so the other end may be the reference's own
 * UDPInterface: configure it with listen/forward ports crossed.
 *
 * Options:
 *   listen_ip, listen_port     where datagrams come in (required)
 *   forward_ip, forward_port   where datagrams go (required)
 *   drop = P                   per cent of packets lost (0..100, default 0)
 *   duplicate = P              per cent delivered twice
 *   reorder = P                per cent held back and released after the next packet in
 *                              the same direction, or after reorder_delay_ms (default 20)
 *   seed = N                   the RNG seed (default 1); tx and rx draw from one stream
 *   apply = both | tx | rx     which direction suffers (default both)
 *   latency_ms = N             every packet of a suffering direction is delayed N ms
 *                              (default 0; at most 256 packets in flight per direction,
 *                              more are dropped and counted as such)
 *   spare = none | setup       setup: announces, path requests (DATA to a PLAIN
 *                              destination), link requests, link proofs and the RTT and
 *                              identify packets pass unharmed and draw nothing, so a test
 *                              of what runs over a link meets loss only there, and the loss
 *                              sequence does not depend on how many setup packets went
 *                              first (default none)
 * Each packet draws once: below drop it is lost, below drop + duplicate it goes twice;
 * a packet that survives then draws again for reordering. HW_MTU 1064 and a 10 Mbit/s
 * bitrate, as UDPInterface. At close the counts (packets, dropped, duplicated, reordered per
 * direction) are logged as a warning (so a test sees them at its usual log level) and
 * describe() shows them.
 *
 * Threading and ownership: iface_abi.h. One lossy_if per section; it owns its sockets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "iface_abi.h"
#include "iface_plugin.h"

#define LOSSY_HW_MTU 1064u
#define LOSSY_BITRATE 10000000u
#define LOSSY_MAX_FRAME (LOSSY_HW_MTU + 64u)
#define RET_HEADER_MINSIZE 19u

typedef rnsc_iface_inst lossy_inst;

#define DELAY_SLOTS 256

typedef struct delayed {
	uint64_t due_ns;
	size_t len;
	uint8_t p[LOSSY_MAX_FRAME];
} delayed;

/* One direction's loss state: a packet held back for reordering, the delay line, and the
 * counts. */
typedef struct dir {
	int on;
	delayed *line; /* DELAY_SLOTS, a FIFO: equal delays keep the order */
	size_t head, n;
	uint8_t held[LOSSY_MAX_FRAME];
	size_t held_len;
	int holding;
	uint64_t packets, dropped, duplicated, reordered, spared;
} dir;

typedef struct lossy_if {
	lossy_inst *inst;
	const rnsc_iface_host_api *host;
	char name[160];
	int rx_fd, tx_fd;
	rnsc_iface_watch *w;
	struct sockaddr_in fwd;
	uint16_t bind_port, fwd_port;
	double drop, dup, reorder;
	int spare_setup;
	uint64_t rng;
	uint64_t delay_ns, latency_ns;
	rnsc_iface_timer *timer, *lat_timer;
	dir tx, rx;
	uint64_t rxb, txb, rxp, txp;
	uint8_t rxbuf[LOSSY_MAX_FRAME];
} lossy_if;

static void lg(lossy_if *u, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lg(lossy_if *u, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	u->host->log(u->host->hctx, level, msg);
}

/* xorshift64*: uniform in [0, 100) */
static double draw(lossy_if *u)
{
	u->rng ^= u->rng >> 12;
	u->rng ^= u->rng << 25;
	u->rng ^= u->rng >> 27;
	uint64_t r = u->rng * 2685821657736338717ull;
	return (double)(r >> 11) / (double)(1ull << 53) * 100.0;
}

/* The real transmit / deliver of one packet in a direction. */
static void wire_out(lossy_if *u, dir *d, const uint8_t *p, size_t len)
{
	if (d == &u->rx) {
		u->rxb += len;
		u->rxp++;
		u->host->deliver(u->host->hctx, p, len);
		return;
	}
	for (;;) {
		ssize_t n = sendto(u->tx_fd, p, len, MSG_NOSIGNAL, (struct sockaddr *)&u->fwd,
				   sizeof(u->fwd));
		if (n >= 0) {
			u->txb += (uint64_t)n;
			u->txp++;
			return;
		}
		if (errno != EINTR)
			break;
	}
	u->host->drop(u->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
}

static void arm_latency(lossy_if *u)
{
	uint64_t due = UINT64_MAX;
	dir *ds[2] = {&u->tx, &u->rx};
	for (int i = 0; i < 2; i++)
		if (ds[i]->n && ds[i]->line[ds[i]->head].due_ns < due)
			due = ds[i]->line[ds[i]->head].due_ns;
	if (due == UINT64_MAX)
		return;
	uint64_t now = u->host->now_ns(u->host->hctx);
	(void)u->host->timer_start(u->host->hctx, u->lat_timer, due > now ? due - now : 1, 0);
}

static void on_latency(void *ud)
{
	lossy_if *u = ud;
	uint64_t now = u->host->now_ns(u->host->hctx);
	dir *ds[2] = {&u->tx, &u->rx};
	for (int i = 0; i < 2; i++) {
		dir *d = ds[i];
		while (d->n && d->line[d->head].due_ns <= now) {
			delayed *e = &d->line[d->head];
			d->head = (d->head + 1) % DELAY_SLOTS;
			d->n--;
			wire_out(u, d, e->p, e->len);
		}
	}
	arm_latency(u);
}

/* Out through the delay line when the direction has latency. */
static void emit(lossy_if *u, dir *d, const uint8_t *p, size_t len)
{
	if (!d->line || !d->on) {
		wire_out(u, d, p, len);
		return;
	}
	if (d->n == DELAY_SLOTS) {
		d->dropped++;
		return;
	}
	delayed *e = &d->line[(d->head + d->n) % DELAY_SLOTS];
	e->due_ns = u->host->now_ns(u->host->hctx) + u->latency_ns;
	e->len = len;
	memcpy(e->p, p, len);
	d->n++;
	if (d->n == 1)
		arm_latency(u);
}

static void release(lossy_if *u, dir *d)
{
	if (!d->holding)
		return;
	d->holding = 0;
	emit(u, d, d->held, d->held_len);
}

static void on_timer(void *ud)
{
	lossy_if *u = ud;
	release(u, &u->tx);
	release(u, &u->rx);
}

/* Whether a packet belongs to path discovery or link set-up (spare = setup). Read from the
 * header alone: flags byte (IFAC bit 7, header type bit 6, destination type bits 2-3, packet
 * type bits 0-1), hops, one or two 16-byte addresses, context. With IFAC the header is
 * masked, so nothing is spared. */
static int is_setup(const uint8_t *p, size_t len)
{
	if (len < RET_HEADER_MINSIZE || (p[0] & 0x80))
		return 0;
	unsigned ptype = p[0] & 3u, dtype = (p[0] >> 2) & 3u;
	size_t cpos = 2 + ((p[0] & 0x40) ? 32u : 16u);
	if (len <= cpos)
		return 0;
	uint8_t ctx = p[cpos];
	switch (ptype) {
	case 1: /* ANNOUNCE */
	case 2: /* LINKREQUEST */
		return 1;
	case 3:                     /* PROOF */
		return ctx == 0xFF; /* LRPROOF */
	default:                    /* DATA */
		return dtype == 2 /* PLAIN: path requests */ || ctx == 0xFE /* LRRTT */ ||
		       ctx == 0xFB /* LINKIDENTIFY */;
	}
}

/* One packet through a direction's loss model. */
static void pass(lossy_if *u, dir *d, const uint8_t *p, size_t len)
{
	if (!d->on) {
		emit(u, d, p, len);
		return;
	}
	d->packets++;
	if (u->spare_setup && is_setup(p, len)) {
		d->spared++;
		emit(u, d, p, len);
		release(u, d);
		return;
	}
	double r = draw(u);
	if (r < u->drop) {
		d->dropped++;
		return;
	}
	int copies = 1;
	if (r < u->drop + u->dup) {
		d->duplicated++;
		copies = 2;
	}
	if (u->reorder > 0 && draw(u) < u->reorder && len <= sizeof(d->held)) {
		/* held back: the packet before it (if held) goes now, this one after the next */
		release(u, d);
		memcpy(d->held, p, len);
		d->held_len = len;
		d->holding = 1;
		d->reordered++;
		if (copies == 2)
			emit(u, d, p, len);
		if (u->timer)
			(void)u->host->timer_start(u->host->hctx, u->timer, u->delay_ns, 0);
		return;
	}
	for (int i = 0; i < copies; i++)
		emit(u, d, p, len);
	release(u, d); /* a held packet now arrives after this one */
}

static void rx_cb(void *ud, int fd, unsigned events)
{
	lossy_if *u = ud;
	(void)events;
	for (int k = 0; k < 64; k++) {
		ssize_t n = recv(fd, u->rxbuf, sizeof(u->rxbuf), MSG_TRUNC | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if ((size_t)n <= RET_HEADER_MINSIZE) {
			u->host->drop(u->host->hctx, RNSC_IFACE_DROP_RUNT, 1);
			continue;
		}
		if ((size_t)n > sizeof(u->rxbuf)) {
			u->host->drop(u->host->hctx, RNSC_IFACE_DROP_OVERSIZE, 1);
			continue;
		}
		pass(u, &u->rx, u->rxbuf, (size_t)n);
	}
}

static int resolve4(const char *host, uint16_t port, struct sockaddr_in *out)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *ai = NULL;
	char ps[8];
	snprintf(ps, sizeof(ps), "%u", (unsigned)port);
	if (getaddrinfo(host, ps, &hints, &ai) != 0 || !ai)
		return -1;
	memcpy(out, ai->ai_addr, sizeof(*out));
	freeaddrinfo(ai);
	return 0;
}

static int get_pct(const rnsc_iface_config *cfg, const char *key, double *out)
{
	int rc = cfg->get_float(cfg->cctx, key, out);
	if (rc == RNSC_ERR_NOTFOUND) {
		*out = 0;
		return 0;
	}
	if (rc)
		return rc;
	if (!(*out >= 0 && *out <= 100))
		return cfg->fail(cfg->cctx, key, RNSC_ERR_CONFIG_VALUE,
				 "a percentage between 0 and 100 is required");
	return 0;
}

static void free_if(lossy_if *u)
{
	if (u->timer)
		u->host->timer_del(u->host->hctx, u->timer);
	if (u->lat_timer)
		u->host->timer_del(u->host->hctx, u->lat_timer);
	if (u->tx.line)
		u->inst->api->free(u->inst->api->host_ctx, u->tx.line);
	if (u->rx.line)
		u->inst->api->free(u->inst->api->host_ctx, u->rx.line);
	if (u->w)
		u->host->watch_remove(u->host->hctx, u->w);
	if (u->rx_fd >= 0)
		close(u->rx_fd);
	if (u->tx_fd >= 0)
		close(u->tx_fd);
	u->inst->api->free(u->inst->api->host_ctx, u);
}

static int configure(lossy_if *u, const rnsc_iface_config *cfg)
{
	const char *lip, *fip, *apply = NULL;
	int64_t lport, fport, v;
	int rc;
	if ((rc = cfg->get_str(cfg->cctx, "listen_ip", &lip)))
		return rc == RNSC_ERR_NOTFOUND
			       ? cfg->fail(cfg->cctx, "listen_ip", RNSC_ERR_CONFIG_VALUE,
					   "listen_ip is required")
			       : rc;
	if ((rc = cfg->get_str(cfg->cctx, "forward_ip", &fip)))
		return rc == RNSC_ERR_NOTFOUND
			       ? cfg->fail(cfg->cctx, "forward_ip", RNSC_ERR_CONFIG_VALUE,
					   "forward_ip is required")
			       : rc;
	rc = cfg->get_int(cfg->cctx, "listen_port", &lport);
	if (rc && rc != RNSC_ERR_NOTFOUND)
		return rc;
	if (rc || lport < 0 || lport > 65535)
		return cfg->fail(cfg->cctx, "listen_port", RNSC_ERR_CONFIG_VALUE,
				 "listen_port (0..65535) is required");
	rc = cfg->get_int(cfg->cctx, "forward_port", &fport);
	if (rc && rc != RNSC_ERR_NOTFOUND)
		return rc;
	if (rc || fport < 1 || fport > 65535)
		return cfg->fail(cfg->cctx, "forward_port", RNSC_ERR_CONFIG_VALUE,
				 "forward_port (1..65535) is required");
	if ((rc = get_pct(cfg, "drop", &u->drop)) || (rc = get_pct(cfg, "duplicate", &u->dup)) ||
	    (rc = get_pct(cfg, "reorder", &u->reorder)))
		return rc;
	if (u->drop + u->dup > 100)
		return cfg->fail(cfg->cctx, "duplicate", RNSC_ERR_CONFIG_VALUE,
				 "drop + duplicate exceed 100 per cent");
	u->rng = 1;
	if ((rc = cfg->get_int(cfg->cctx, "seed", &v)) == 0)
		u->rng = (uint64_t)v;
	else if (rc != RNSC_ERR_NOTFOUND)
		return rc;
	u->rng = u->rng * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull; /* never zero in use */
	if (!u->rng)
		u->rng = 1;
	u->delay_ns = 20000000ull;
	if ((rc = cfg->get_int(cfg->cctx, "reorder_delay_ms", &v)) == 0) {
		if (v < 1 || v > 10000)
			return cfg->fail(cfg->cctx, "reorder_delay_ms", RNSC_ERR_CONFIG_VALUE,
					 "reorder_delay_ms must be 1..10000");
		u->delay_ns = (uint64_t)v * 1000000ull;
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	if ((rc = cfg->get_int(cfg->cctx, "latency_ms", &v)) == 0) {
		if (v < 0 || v > 10000)
			return cfg->fail(cfg->cctx, "latency_ms", RNSC_ERR_CONFIG_VALUE,
					 "latency_ms must be 0..10000");
		u->latency_ns = (uint64_t)v * 1000000ull;
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	const char *spare = NULL;
	if ((rc = cfg->get_str(cfg->cctx, "spare", &spare)) == 0) {
		if (strcmp(spare, "setup") == 0)
			u->spare_setup = 1;
		else if (strcmp(spare, "none") != 0)
			return cfg->fail(cfg->cctx, "spare", RNSC_ERR_CONFIG_VALUE,
					 "spare must be none or setup");
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	u->tx.on = u->rx.on = 1;
	if ((rc = cfg->get_str(cfg->cctx, "apply", &apply)) == 0) {
		if (strcmp(apply, "tx") == 0)
			u->rx.on = 0;
		else if (strcmp(apply, "rx") == 0)
			u->tx.on = 0;
		else if (strcmp(apply, "both") != 0)
			return cfg->fail(cfg->cctx, "apply", RNSC_ERR_CONFIG_VALUE,
					 "apply must be both, tx or rx");
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	struct sockaddr_in sa;
	if (resolve4(lip, (uint16_t)lport, &sa) != 0)
		return cfg->fail(cfg->cctx, "listen_ip", RNSC_ERR_CONFIG_VALUE, "cannot resolve");
	if (resolve4(fip, (uint16_t)fport, &u->fwd) != 0)
		return cfg->fail(cfg->cctx, "forward_ip", RNSC_ERR_CONFIG_VALUE, "cannot resolve");
	u->fwd_port = (uint16_t)fport;
	u->rx_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	u->tx_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->rx_fd < 0 || u->tx_fd < 0)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_SYS, "socket() failed");
	if (bind(u->rx_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return cfg->fail(cfg->cctx, "listen_port", RNSC_ERR_IO,
				 "cannot bind the listen port");
	socklen_t bl = sizeof(sa);
	if (getsockname(u->rx_fd, (struct sockaddr *)&sa, &bl) == 0)
		u->bind_port = ntohs(sa.sin_port);
	if ((rc = u->host->watch_add(u->host->hctx, u->rx_fd, RNSC_IFACE_EV_READ, rx_cb, u, &u->w)))
		return cfg->fail(cfg->cctx, NULL, rc, "cannot watch the socket");
	if (u->reorder > 0 && (rc = u->host->timer_new(u->host->hctx, on_timer, u, &u->timer)))
		return cfg->fail(cfg->cctx, NULL, rc, "cannot create the reorder timer");
	if (u->latency_ns) {
		dir *ds[2] = {&u->tx, &u->rx};
		for (int i = 0; i < 2; i++) {
			if (!ds[i]->on)
				continue;
			ds[i]->line = u->inst->api->alloc(u->inst->api->host_ctx,
							  DELAY_SLOTS * sizeof(delayed));
			if (!ds[i]->line)
				return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
		}
		if ((rc = u->host->timer_new(u->host->hctx, on_latency, u, &u->lat_timer)))
			return cfg->fail(cfg->cctx, NULL, rc, "cannot create the latency timer");
	}
	return 0;
}

static const char *const lossy_types[] = {"LossyInterface", NULL};

static int lossy_open(void *instp, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		      void **handle)
{
	lossy_inst *inst = instp;
	lossy_if *u = inst->api->alloc(inst->api->host_ctx, sizeof(*u));
	if (!u)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
	memset(u, 0, sizeof(*u));
	u->inst = inst;
	u->host = host;
	u->rx_fd = u->tx_fd = -1;
	snprintf(u->name, sizeof(u->name), "%s", cfg->name);
	int rc = configure(u, cfg);
	if (rc) {
		free_if(u);
		return rc;
	}
	host->set_online(host->hctx, 1);
	*handle = u;
	return 0;
}

static int lossy_send(void *handle, const uint8_t *frame, size_t len)
{
	lossy_if *u = handle;
	if (len > LOSSY_MAX_FRAME) {
		u->host->drop(u->host->hctx, RNSC_IFACE_DROP_OVERSIZE, 1);
		return RNSC_ERR_TOOBIG;
	}
	pass(u, &u->tx, frame, len);
	return 0;
}

static int lossy_stats(void *handle, rnsc_iface_stats *out)
{
	lossy_if *u = handle;
	out->rx_bytes = u->rxb;
	out->tx_bytes = u->txb;
	out->rx_packets = u->rxp;
	out->tx_packets = u->txp;
	out->online = 1;
	out->bitrate = LOSSY_BITRATE;
	out->hw_mtu = LOSSY_HW_MTU;
	out->local_port = u->bind_port;
	out->remote_port = u->fwd_port;
	return 0;
}

static int lossy_describe(void *handle, char *buf, size_t cap)
{
	lossy_if *u = handle;
	char sp[64] = "";
	if (u->spare_setup)
		snprintf(sp, sizeof(sp), " spared %llu/%llu", (unsigned long long)u->tx.spared,
			 (unsigned long long)u->rx.spared);
	return snprintf(
		buf, cap,
		"LossyInterface[%s/%u->%u tx %llu/-%llu/+%llu/~%llu rx %llu/-%llu/+%llu/~%llu%s]",
		u->name, (unsigned)u->bind_port, (unsigned)u->fwd_port,
		(unsigned long long)u->tx.packets, (unsigned long long)u->tx.dropped,
		(unsigned long long)u->tx.duplicated, (unsigned long long)u->tx.reordered,
		(unsigned long long)u->rx.packets, (unsigned long long)u->rx.dropped,
		(unsigned long long)u->rx.duplicated, (unsigned long long)u->rx.reordered, sp);
}

static void lossy_close(void *handle)
{
	lossy_if *u = handle;
	/* the longest description: a 159-byte name, ports and ten 20-digit counters */
	char d[512];
	lossy_describe(u, d, sizeof(d));
	lg(u, RNSC_LOG_WARNING, "%s closing (packets/-dropped/+duplicated/~reordered%s)", d,
	   u->spare_setup ? ", set-up packets spared tx/rx" : "");
	free_if(u);
}

RNSC_IFACE_PLUGIN("lossy",
		  "LossyInterface (test: UDP datagrams with seeded loss, duplication, reordering)",
		  lossy_types, lossy_open, lossy_send, lossy_stats, lossy_close, lossy_describe)
