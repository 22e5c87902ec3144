/* SPDX-License-Identifier: MIT */
#include "channel.h"

#include <string.h>

#include "linkport.h"
#include "packet.h"

#define RING_CAP 256 /* > the largest receive span + 1: the window / span bound both rings */

typedef struct env {
	uint16_t seq, msgtype;
	unsigned tries;
	uint64_t sent_at;
	double timeout; /* seconds, as the reference's receipt timeout */
	uint8_t hash[RNSC_HASHLEN];
	size_t len;
	uint8_t raw[];
} env;

typedef struct handler {
	rnsc_channel_handler fn;
	void *ud;
} handler;

struct rnsc_channel {
	rnsc_ctx *ctx;
	rnsc_linkport port;
	env *tx[RING_CAP], *rx[RING_CAP];
	size_t ntx, nrx;
	uint16_t next_seq, next_rx_seq;
	unsigned window, window_max, window_min, window_flexibility;
	unsigned fast_rate_rounds, medium_rate_rounds;
	uint16_t *types;
	size_t ntypes, cap_types;
	handler handlers[RNSC_CHANNEL_MAX_HANDLERS];
	size_t nhandlers;
	int shut;
	unsigned rx_span; /* sequences accepted beyond the next expected one */
};

int rnsc_channel_envelope_pack(uint8_t *out, size_t cap, uint16_t msgtype, uint16_t sequence,
			       const uint8_t *payload, size_t len)
{
	if (!out || (!payload && len) || len > 0xFFFF)
		return RNSC_ERR_INVAL;
	if (cap < RNSC_CHANNEL_ENVELOPE_HEADER + len)
		return RNSC_ERR_BUFSIZE;
	out[0] = (uint8_t)(msgtype >> 8);
	out[1] = (uint8_t)msgtype;
	out[2] = (uint8_t)(sequence >> 8);
	out[3] = (uint8_t)sequence;
	out[4] = (uint8_t)(len >> 8);
	out[5] = (uint8_t)len;
	if (len)
		memcpy(out + RNSC_CHANNEL_ENVELOPE_HEADER, payload, len);
	return (int)(RNSC_CHANNEL_ENVELOPE_HEADER + len);
}

int rnsc_channel_envelope_parse(const uint8_t *in, size_t len, uint16_t *msgtype,
				uint16_t *sequence, uint16_t *length, const uint8_t **payload,
				size_t *payload_len)
{
	if (!in && len)
		return RNSC_ERR_INVAL;
	if (len < RNSC_CHANNEL_ENVELOPE_HEADER)
		return RNSC_ERR_TRUNCATED;
	if (msgtype)
		*msgtype = (uint16_t)((in[0] << 8) | in[1]);
	if (sequence)
		*sequence = (uint16_t)((in[2] << 8) | in[3]);
	if (length)
		*length = (uint16_t)((in[4] << 8) | in[5]);
	if (payload)
		*payload = in + RNSC_CHANNEL_ENVELOPE_HEADER;
	if (payload_len)
		*payload_len = len - RNSC_CHANNEL_ENVELOPE_HEADER;
	return 0;
}

static void clear_rings(rnsc_channel *ch)
{
	for (size_t i = 0; i < ch->ntx; i++)
		rnsc_free(ch->ctx, ch->tx[i]);
	for (size_t i = 0; i < ch->nrx; i++)
		rnsc_free(ch->ctx, ch->rx[i]);
	ch->ntx = ch->nrx = 0;
}

/* Channel._shutdown: handlers and rings cleared. */
static void shutdown_channel(rnsc_channel *ch)
{
	ch->nhandlers = 0;
	clear_rings(ch);
	ch->shut = 1;
}

/* The link's state through the port; a link the engine has forgotten reads as closed. */
static int lstatus(const rnsc_channel *ch)
{
	const rnsc_link *l = ch->port.get(&ch->port);
	return l ? rnsc_link_status(l) : RNSC_LINK_CLOSED;
}

static double lrtt(const rnsc_channel *ch)
{
	const rnsc_link *l = ch->port.get(&ch->port);
	return l ? rnsc_link_rtt(l) : 0.0;
}

static size_t lmdu(const rnsc_channel *ch)
{
	const rnsc_link *l = ch->port.get(&ch->port);
	return l ? rnsc_link_get_mdu(l) : 0;
}

static int link_gone(rnsc_channel *ch)
{
	if (!ch->shut && lstatus(ch) == RNSC_LINK_CLOSED)
		shutdown_channel(ch); /* Link.link_closed shuts its channel down */
	return ch->shut;
}

int rnsc_channel_new_port(rnsc_channel **out, rnsc_ctx *ctx, const rnsc_linkport *port)
{
	if (!out || !ctx || !port || !port->send || !port->get || !port->teardown ||
	    !port->set_channel)
		return RNSC_ERR_INVAL;
	*out = NULL;
	rnsc_channel *ch = rnsc_calloc(ctx, 1, sizeof(*ch));
	if (!ch)
		return RNSC_ERR_NOMEM;
	ch->ctx = ctx;
	ch->port = *port;
	ch->rx_span = RNSC_CHANNEL_WINDOW_MAX;
	if (lrtt(ch) > RNSC_CHANNEL_RTT_SLOW) {
		ch->window = ch->window_max = ch->window_min = ch->window_flexibility = 1;
	} else {
		ch->window = RNSC_CHANNEL_WINDOW;
		ch->window_max = RNSC_CHANNEL_WINDOW_MAX_SLOW;
		ch->window_min = RNSC_CHANNEL_WINDOW_MIN;
		ch->window_flexibility = RNSC_CHANNEL_WINDOW_FLEXIBILITY;
	}
	ch->port.set_channel(&ch->port, 1);
	*out = ch;
	return 0;
}

int rnsc_channel_new(rnsc_channel **out, rnsc_link *link)
{
	if (!out || !link)
		return RNSC_ERR_INVAL;
	rnsc_linkport port;
	rnsc_linkport_on_link(&port, link);
	/* the link's context: channels allocate where their link does */
	return rnsc_channel_new_port(out, rnsc_link_context(link), &port);
}

void rnsc_channel_del(rnsc_channel *ch)
{
	if (!ch)
		return;
	clear_rings(ch);
	ch->port.set_channel(&ch->port, 0);
	rnsc_free(ch->ctx, ch->types);
	rnsc_free(ch->ctx, ch);
}

int rnsc_channel_register_type(rnsc_channel *ch, uint16_t msgtype, int system)
{
	if (!ch)
		return RNSC_ERR_INVAL;
	if (msgtype >= RNSC_CHANNEL_SYSTEM_TYPES && !system)
		return RNSC_ERR_RANGE;
	for (size_t i = 0; i < ch->ntypes; i++)
		if (ch->types[i] == msgtype)
			return 0;
	if (ch->ntypes == ch->cap_types) {
		size_t cap = ch->cap_types ? 2 * ch->cap_types : 8;
		uint16_t *t = rnsc_alloc(ch->ctx, cap * sizeof(*t));
		if (!t)
			return RNSC_ERR_NOMEM;
		if (ch->ntypes)
			memcpy(t, ch->types, ch->ntypes * sizeof(*t));
		rnsc_free(ch->ctx, ch->types);
		ch->types = t;
		ch->cap_types = cap;
	}
	ch->types[ch->ntypes++] = msgtype;
	return 0;
}

static int registered(const rnsc_channel *ch, uint16_t msgtype)
{
	for (size_t i = 0; i < ch->ntypes; i++)
		if (ch->types[i] == msgtype)
			return 1;
	return 0;
}

int rnsc_channel_add_handler(rnsc_channel *ch, rnsc_channel_handler fn, void *ud)
{
	if (!ch || !fn)
		return RNSC_ERR_INVAL;
	for (size_t i = 0; i < ch->nhandlers; i++)
		if (ch->handlers[i].fn == fn && ch->handlers[i].ud == ud)
			return 0;
	if (ch->nhandlers == RNSC_CHANNEL_MAX_HANDLERS)
		return RNSC_ERR_RANGE;
	ch->handlers[ch->nhandlers++] = (handler){fn, ud};
	return 0;
}

int rnsc_channel_remove_handler(rnsc_channel *ch, rnsc_channel_handler fn, void *ud)
{
	if (!ch || !fn)
		return RNSC_ERR_INVAL;
	for (size_t i = 0; i < ch->nhandlers; i++) {
		if (ch->handlers[i].fn == fn && ch->handlers[i].ud == ud) {
			memmove(&ch->handlers[i], &ch->handlers[i + 1],
				(ch->nhandlers - i - 1) * sizeof(handler));
			ch->nhandlers--;
			return 0;
		}
	}
	return RNSC_ERR_NOTFOUND;
}

rnsc_ctx *rnsc_channel_context(const rnsc_channel *ch)
{
	return ch ? ch->ctx : NULL;
}

size_t rnsc_channel_mdu(const rnsc_channel *ch)
{
	if (!ch)
		return 0;
	size_t m = lmdu(ch);
	m = m > RNSC_CHANNEL_ENVELOPE_HEADER ? m - RNSC_CHANNEL_ENVELOPE_HEADER : 0;
	return m > 0xFFFF ? 0xFFFF : m;
}

/* How far the next sequence is ahead of the oldest undelivered envelope. */
static unsigned tx_span(const rnsc_channel *ch)
{
	unsigned span = 0;
	for (size_t i = 0; i < ch->ntx; i++) {
		unsigned d = (uint16_t)(ch->next_seq - ch->tx[i]->seq);
		span = d > span ? d : span;
	}
	return span;
}

int rnsc_channel_ready(const rnsc_channel *ch)
{
	/* every envelope in the tx ring is undelivered: delivered ones leave it at once. The
	 * span rule is rnsc's own (see channel.h): never send a sequence the receiver would
	 * refuse as beyond its window after proving it. */
	return ch && !ch->shut && ch->ntx < ch->window && tx_span(ch) < RNSC_CHANNEL_WINDOW_MAX;
}

int rnsc_channel_set_rx_span(rnsc_channel *ch, unsigned span)
{
	if (!ch || span < RNSC_CHANNEL_WINDOW_MAX || span >= RING_CAP - 1)
		return RNSC_ERR_RANGE;
	ch->rx_span = span;
	return 0;
}

/* Channel._emplace_envelope, with its ordering rule (including its use of the receive
 * sequence for either ring). 1 inserted, 0 duplicate, RNSC_ERR_RANGE when full. */
static int emplace(rnsc_channel *ch, env **ring, size_t *n, env *e)
{
	size_t i = 0;
	for (; i < *n; i++) {
		if (ring[i]->seq == e->seq)
			return 0;
		if (e->seq < ring[i]->seq &&
		    !((long)ch->next_rx_seq - (long)e->seq > RNSC_CHANNEL_SEQ_MAX / 2))
			break;
	}
	if (*n == RING_CAP)
		return RNSC_ERR_RANGE;
	memmove(&ring[i + 1], &ring[i], (*n - i) * sizeof(*ring));
	ring[i] = e;
	(*n)++;
	return 1;
}

static void ring_remove(env **ring, size_t *n, size_t i)
{
	memmove(&ring[i], &ring[i + 1], (*n - i - 1) * sizeof(*ring));
	(*n)--;
}

/* Channel._get_packet_timeout_time in seconds. */
static double packet_timeout(const rnsc_channel *ch, unsigned tries)
{
	double f = 1.0;
	for (unsigned i = 1; i < tries; i++)
		f *= 1.5;
	double rtt = lrtt(ch) * 2.5;
	return f * (rtt > 0.025 ? rtt : 0.025) * ((double)ch->ntx + 1.5);
}

/* Channel._update_packet_timeouts: timeouts only grow. */
static void update_timeouts(rnsc_channel *ch)
{
	for (size_t i = 0; i < ch->ntx; i++) {
		double t = packet_timeout(ch, ch->tx[i]->tries);
		if (t > ch->tx[i]->timeout)
			ch->tx[i]->timeout = t;
	}
}

/* PacketReceipt.is_timed_out fires once sent_at + timeout < now: the first whole ms past it. */
static uint64_t deadline(const env *e)
{
	double ms = e->timeout * 1000.0;
	if (ms > 1e15)
		return UINT64_MAX;
	return e->sent_at + (uint64_t)ms + 1;
}

int rnsc_channel_send(rnsc_channel *ch, uint16_t msgtype, const uint8_t *payload, size_t len,
		      uint16_t *sequence, uint64_t now)
{
	if (!ch || (!payload && len))
		return RNSC_ERR_INVAL;
	if (link_gone(ch) || !rnsc_channel_ready(ch))
		return RNSC_ERR_STATE;
	if (lstatus(ch) != RNSC_LINK_ACTIVE)
		return RNSC_ERR_STATE;
	if (len > 0xFFFF || RNSC_CHANNEL_ENVELOPE_HEADER + len > lmdu(ch))
		return RNSC_ERR_TOOBIG;
	size_t n = RNSC_CHANNEL_ENVELOPE_HEADER + len;
	env *e = rnsc_calloc(ch->ctx, 1, sizeof(*e) + n);
	if (!e)
		return RNSC_ERR_NOMEM;
	e->seq = ch->next_seq;
	e->msgtype = msgtype;
	e->len = n;
	(void)rnsc_channel_envelope_pack(e->raw, n, msgtype, e->seq, payload, len);
	int rc = ch->port.send(&ch->port, RNSC_CTX_CHANNEL, e->raw, n, e->hash, now);
	if (rc < 0) {
		rnsc_free(ch->ctx, e);
		return rc;
	}
	rc = emplace(ch, ch->tx, &ch->ntx, e);
	if (rc != 1) { /* cannot happen while the window bounds the ring */
		rnsc_free(ch->ctx, e);
		return rc ? rc : RNSC_ERR_FATAL;
	}
	ch->next_seq = (uint16_t)(e->seq + 1);
	e->tries = 1;
	e->sent_at = now;
	e->timeout = packet_timeout(ch, e->tries);
	update_timeouts(ch);
	if (sequence)
		*sequence = e->seq;
	return 0;
}

static void run_handlers(rnsc_channel *ch, const env *e)
{
	const uint8_t *p;
	size_t pl;
	if (rnsc_channel_envelope_parse(e->raw, e->len, NULL, NULL, NULL, &p, &pl))
		return;
	/* a copy: a handler may add or remove handlers */
	handler hs[RNSC_CHANNEL_MAX_HANDLERS];
	size_t nh = ch->nhandlers;
	memcpy(hs, ch->handlers, nh * sizeof(handler));
	for (size_t i = 0; i < nh; i++)
		if (hs[i].fn(hs[i].ud, ch, e->msgtype, e->seq, p, pl))
			return;
}

int rnsc_channel_receive(rnsc_channel *ch, const uint8_t *pt, size_t len, uint64_t now)
{
	(void)now;
	if (!ch || (!pt && len))
		return RNSC_ERR_INVAL;
	if (link_gone(ch))
		return RNSC_ERR_STATE;
	uint16_t msgtype, seq;
	int rc = rnsc_channel_envelope_parse(pt, len, &msgtype, &seq, NULL, NULL, NULL);
	if (rc)
		return rc;
	if (!registered(ch, msgtype))
		return RNSC_ERR_NOTFOUND;
	uint32_t next = ch->next_rx_seq;
	if (seq < next) {
		uint32_t overflow = (next + ch->rx_span) % RNSC_CHANNEL_SEQ_MODULUS;
		if (overflow >= next || seq > overflow)
			return RNSC_ERR_RANGE;
	} else if (seq > next + ch->rx_span) {
		return RNSC_ERR_RANGE;
	}
	env *e = rnsc_calloc(ch->ctx, 1, sizeof(*e) + len);
	if (!e)
		return RNSC_ERR_NOMEM;
	e->seq = seq;
	e->msgtype = msgtype;
	e->len = len;
	memcpy(e->raw, pt, len);
	rc = emplace(ch, ch->rx, &ch->nrx, e);
	if (rc != 1) {
		rnsc_free(ch->ctx, e);
		return rc ? rc : RNSC_ERR_RANGE;
	}
	/* the contiguous run from the next expected sequence, as the reference collects it */
	env *run[RING_CAP];
	size_t nrun = 0;
	for (size_t i = 0; i < ch->nrx; i++) {
		if (ch->rx[i]->seq != ch->next_rx_seq)
			continue;
		run[nrun++] = ch->rx[i];
		ch->next_rx_seq = (uint16_t)(ch->next_rx_seq + 1);
		if (ch->next_rx_seq == 0) {
			for (size_t j = 0; j < ch->nrx && nrun < RING_CAP; j++) {
				if (ch->rx[j]->seq == ch->next_rx_seq) {
					run[nrun++] = ch->rx[j];
					ch->next_rx_seq = (uint16_t)(ch->next_rx_seq + 1);
				}
			}
		}
	}
	for (size_t k = 0; k < nrun; k++) {
		for (size_t i = 0; i < ch->nrx; i++) {
			if (ch->rx[i] == run[k]) {
				ring_remove(ch->rx, &ch->nrx, i);
				break;
			}
		}
	}
	for (size_t k = 0; k < nrun; k++) {
		if (!ch->shut)
			run_handlers(ch, run[k]);
		rnsc_free(ch->ctx, run[k]);
	}
	return 0;
}

/* Channel._packet_tx_op for a delivery. */
static void delivered(rnsc_channel *ch, size_t i)
{
	rnsc_free(ch->ctx, ch->tx[i]);
	ring_remove(ch->tx, &ch->ntx, i);
	if (ch->window < ch->window_max)
		ch->window++;
	double rtt = lrtt(ch);
	if (rtt == 0)
		return;
	if (rtt > RNSC_CHANNEL_RTT_FAST) {
		ch->fast_rate_rounds = 0;
		if (rtt > RNSC_CHANNEL_RTT_MEDIUM) {
			ch->medium_rate_rounds = 0;
		} else {
			ch->medium_rate_rounds++;
			if (ch->window_max < RNSC_CHANNEL_WINDOW_MAX_MEDIUM &&
			    ch->medium_rate_rounds == RNSC_CHANNEL_FAST_RATE_THRESHOLD) {
				ch->window_max = RNSC_CHANNEL_WINDOW_MAX_MEDIUM;
				ch->window_min = RNSC_CHANNEL_WINDOW_MIN_LIMIT_MEDIUM;
			}
		}
	} else {
		ch->fast_rate_rounds++;
		if (ch->window_max < RNSC_CHANNEL_WINDOW_MAX_FAST &&
		    ch->fast_rate_rounds == RNSC_CHANNEL_FAST_RATE_THRESHOLD) {
			ch->window_max = RNSC_CHANNEL_WINDOW_MAX_FAST;
			ch->window_min = RNSC_CHANNEL_WINDOW_MIN_LIMIT_FAST;
		}
	}
}

int rnsc_channel_proof(rnsc_channel *ch, const uint8_t *proof, size_t len, uint64_t now)
{
	if (!ch || (!proof && len))
		return RNSC_ERR_INVAL;
	if (link_gone(ch) || len < RNSC_HASHLEN)
		return RNSC_ERR_NOTFOUND;
	for (size_t i = 0; i < ch->ntx; i++) {
		if (memcmp(ch->tx[i]->hash, proof, RNSC_HASHLEN) != 0)
			continue;
		if (!ch->port.link)
			return RNSC_ERR_STATE; /* the engine checks proofs itself: use _delivered */
		int rc = rnsc_link_validate_proof(ch->port.link, ch->tx[i]->hash, proof, len, now);
		if (rc)
			return rc;
		delivered(ch, i);
		return 0;
	}
	return RNSC_ERR_NOTFOUND;
}

int rnsc_channel_delivered(rnsc_channel *ch, const uint8_t packet_hash[RNSC_HASHLEN], uint64_t now)
{
	(void)now;
	if (!ch || !packet_hash)
		return RNSC_ERR_INVAL;
	if (link_gone(ch))
		return RNSC_ERR_NOTFOUND;
	for (size_t i = 0; i < ch->ntx; i++) {
		if (memcmp(ch->tx[i]->hash, packet_hash, RNSC_HASHLEN) == 0) {
			delivered(ch, i);
			return 0;
		}
	}
	return RNSC_ERR_NOTFOUND;
}

int rnsc_channel_tick(rnsc_channel *ch, uint64_t now)
{
	if (!ch)
		return RNSC_ERR_INVAL;
	if (link_gone(ch))
		return 0;
	int rc = 0;
	for (size_t i = 0; i < ch->ntx; i++) {
		env *e = ch->tx[i];
		if (now < deadline(e))
			continue;
		if (e->tries >= RNSC_CHANNEL_MAX_TRIES) {
			shutdown_channel(ch);
			return ch->port.teardown(&ch->port, now);
		}
		e->tries++;
		if (ch->window > ch->window_min) {
			ch->window--;
			if (ch->window_max > ch->window_min + ch->window_flexibility)
				ch->window_max--;
		}
		/* Packet.resend packs again: a fresh IV, so a new packet hash to be proved */
		int sr = ch->port.send(&ch->port, RNSC_CTX_CHANNEL, e->raw, e->len, e->hash, now);
		if (sr < 0 && rc == 0)
			rc = sr;
		e->sent_at = now;
		e->timeout = packet_timeout(ch, e->tries);
		update_timeouts(ch);
	}
	return rc;
}

uint64_t rnsc_channel_next_deadline(const rnsc_channel *ch)
{
	uint64_t t = UINT64_MAX;
	if (!ch || ch->shut)
		return t;
	for (size_t i = 0; i < ch->ntx; i++) {
		uint64_t d = deadline(ch->tx[i]);
		if (d < t)
			t = d;
	}
	return t;
}

unsigned rnsc_channel_window(const rnsc_channel *ch)
{
	return ch ? ch->window : 0;
}

unsigned rnsc_channel_window_max(const rnsc_channel *ch)
{
	return ch ? ch->window_max : 0;
}

unsigned rnsc_channel_window_min(const rnsc_channel *ch)
{
	return ch ? ch->window_min : 0;
}

size_t rnsc_channel_outstanding(const rnsc_channel *ch)
{
	return ch ? ch->ntx : 0;
}

size_t rnsc_channel_held(const rnsc_channel *ch)
{
	return ch ? ch->nrx : 0;
}

uint16_t rnsc_channel_next_sequence(const rnsc_channel *ch)
{
	return ch ? ch->next_seq : 0;
}

uint16_t rnsc_channel_next_rx_sequence(const rnsc_channel *ch)
{
	return ch ? ch->next_rx_seq : 0;
}

int rnsc_channel_is_shut_down(const rnsc_channel *ch)
{
	return ch ? ch->shut : 1;
}
