/* SPDX-License-Identifier: MIT */
/*
 * The "serial" interface plugin: SerialInterface (HDLC framing) and KISSInterface (KISS
 * framing towards a TNC) over a serial device, as the reference (rns 1.5.4,
 * RNS/Interfaces/SerialInterface.py and KISSInterface.py, pyserial underneath, set-up in
 * Reticulum.py) runs them.
 *
 *  - Port options and defaults: `port` (required), `speed` 9600, `databits` 8 (5..8),
 *    `parity` N (e/even, o/odd; anything else is none, as the reference), `stopbits` 1
 *    (1 or 2). The device is opened O_NOCTTY, set raw through termios the way pyserial
 *    does (no echo, no line editing or signals, no CR/LF mapping, no software or hardware
 *    flow control, CLOCAL|CREAD, VMIN = VTIME = 0), DTR and RTS raised (ignored where the
 *    device has no modem lines) and its input flushed. Only the standard termios speeds
 *    are accepted.
 *  - HW_MTU 564 (AUTOCONFIGURE_MTU is off, bitrate does not change it). SerialInterface's
 *    bitrate is its speed, KISSInterface's the 1200 bit/s guess, unless `bitrate` (>= 5)
 *    is configured. Frames of 20 .. 564 bytes are delivered; runts, oversized frames
 *    and bytes outside frames are dropped and counted (the reference truncates oversized
 *    frames and hands runts to Transport, which discards both). As the reference does, a
 *    partial frame is forgotten after 100 ms without input.
 *  - The reference's first open happens in its constructor and raises on failure; here
 *    open() fails naming `port`. After opening, the interface comes online after the
 *    reference's settling pause (0.5 s serial, 2 s KISS); a KISS interface then sends
 *    TXDELAY (preamble ms / 10), TXTAIL (txtail ms / 10), P (persistence), SLOTTIME
 *    (slottime ms / 10), each clamped to 0..255, and READY 0x01, in that order (defaults
 *    350, 20, 64, 20).
 *  - KISS flow control (`flow_control = yes`): after each data frame the interface waits
 *    for the TNC's READY (a command 0x0F frame with a value byte) before sending the next,
 *    queueing frames meanwhile (the reference's queue is unbounded; here 256 frames, then
 *    counted drops); after 5 s without READY it sends the next one anyway, as the
 *    reference does. Command frames other than READY (a TNC has no business sending
 *    them; mostly they are line noise) are dropped and counted as garbage.
 *  - Cable pull: a read or write error, a hang-up, or a readable device that returns no
 *    data (pyserial's "device disconnected") takes the interface offline and closes the
 *    device; reopening is tried every 5 s (the reference's reconnect loop), then the
 *    settling pause and, for KISS, the configuration again. rnsc extension:
 *    `reconnect_wait` (seconds) overrides the 5 s, for tests.
 *  - Byte counts follow the reference's rxb/txb: de-framed bytes in; out, SerialInterface
 *    counts framed bytes written, KISSInterface the data frames' payload bytes.
 *
 *  - KISS station identification (`id_interval` seconds, `id_callsign`): id_interval
 *    seconds after the first data frame sent since the last identification, the callsign
 *    (UTF-8, padded with zero bytes to 15) is sent as a data frame. As in the reference, a
 *    frame counts as the identification only when its escaped payload equals the
 *    callsign, so a callsign shorter than 15 bytes (whose padded frame never equals it)
 *    makes the identification repeat every id_interval seconds once traffic has started.
 *
 *  - AX25KISSInterface (RNS/Interfaces/AX25KISSInterface.py) is KISSInterface with an AX.25
 *    UI-frame header: `callsign` (3 to 6 ASCII characters, upper-cased) and `ssid` (0 ..
 *    15) are required; every packet goes out as a data frame of the 16-byte header (to
 *    APZRNS-0 from the callsign) and the packet; received frames lose their first 16 bytes
 *    unread, frames no longer than that are dropped as runts. The same TNC options,
 *    configuration commands, flow control and reconnection as KISSInterface; no station
 *    identification (the reference reads no id_* options for it). HW_MTU 564 for the
 *    packet; its rxb counts the header.
 *
 * Threading: everything runs on the interface's loop thread (iface_abi.h); no locks.
 * Ownership: the plugin owns the handle, the device fd and every queued frame.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "hdlc.h"
#include "hdlc_rx.h"
#include "iface_abi.h"
#include "iface_plugin.h"
#include "txq.h"
#include "kiss.h"
#include "serial_port.h"

#define SER_HW_MTU RNSC_HDLC_MTU_SERIAL /* SerialInterface / KISSInterface HW_MTU (564) */
#define KISS_BITRATE_GUESS 1200u        /* KISSInterface.BITRATE_GUESS */
#define RET_MINIMUM_BITRATE 5           /* Reticulum.MINIMUM_BITRATE */
#define MIN_FRAME RNSC_HDLC_REF_MIN_FRAME
#define NS_PER_MS UINT64_C(1000000)
#define NS_PER_S UINT64_C(1000000000)
#define RECONNECT_WAIT_NS (5 * NS_PER_S)
#define SERIAL_SETTLE_NS (500 * NS_PER_MS) /* SerialInterface.configure_device sleep */
#define KISS_SETTLE_NS (2 * NS_PER_S)      /* KISSInterface.configure_device sleep */
#define FRAME_TIMEOUT_NS (100 * NS_PER_MS) /* self.timeout: partial frames expire */
#define FLOW_TIMEOUT_NS (5 * NS_PER_S)     /* flow_control_timeout */
#define FCQ_MAX 256
#define TXQ_MAX ((size_t)256 << 10)
#define READ_CHUNK 4096

enum { K_SERIAL = 1, K_KISS = 2, K_AX25 = 3 };
#define IS_KISS(s) ((s)->kind != K_SERIAL) /* KISSInterface and AX25KISSInterface */
#define AX25_HEADER 16                     /* AX25.HEADER_SIZE: two addresses, control, PID */
enum { ST_CLOSED = 0, ST_SETTLING = 1, ST_ONLINE = 2 };

typedef rnsc_iface_inst ser_inst;

typedef struct fc_frame {
	size_t len;
	uint8_t data[];
} fc_frame;

typedef struct ser_if {
	ser_inst *inst;
	const rnsc_iface_host_api *host;
	int kind;
	char name[160];
	char port[512];
	/* line settings */
	speed_t speed;
	int64_t speed_bps;
	int databits, stopbits;
	char parity; /* 'N', 'E', 'O' */
	/* KISS settings */
	int64_t preamble, txtail, persistence, slottime;
	int flow_control;
	int ready; /* KISS: the TNC may take a frame */
	uint64_t reconnect_wait_ns;
	/* device */
	int fd;
	rnsc_iface_watch *w;
	unsigned interest;
	int state;
	rnsc_iface_timer *timer;    /* reconnect, then settle */
	rnsc_iface_timer *fc_timer; /* flow-control unlock */
	/* KISS identification beacon */
	rnsc_iface_timer *id_timer;
	int64_t id_interval; /* seconds; < 0: off */
	uint8_t id_call[128];
	size_t id_len;
	int id_pending; /* the reference's first_tx != None */
	uint64_t last_rx_ns;
	int ever_online;
	/* receive */
	rnsc_hdlc_decoder hdec;
	rnsc_hdlc_stats hseen;
	rnsc_kiss_decoder kdec;
	rnsc_kiss_stats kseen;
	uint8_t rxbuf[SER_HW_MTU + AX25_HEADER];
	/* AX25KISSInterface: the UI-frame header every packet carries, and a scratch frame */
	uint8_t ax25_hdr[AX25_HEADER];
	uint8_t ax25_buf[SER_HW_MTU + AX25_HEADER];
	/* transmit: bytes [tx_off, tx_len) pending */
	uint8_t *tx;
	size_t tx_off, tx_len, tx_cap;
	/* KISS flow control: frames waiting for READY, a ring */
	fc_frame *fcq[FCQ_MAX];
	size_t fc_head, fc_n;
	/* stats */
	uint64_t rxb, txb, rxp, txp, bitrate;
	uint32_t reconnects;
} ser_if;

static void *xalloc(ser_inst *inst, size_t n)
{
	void *p = inst->api->alloc(inst->api->host_ctx, n);
	if (p)
		memset(p, 0, n);
	return p;
}

static void xfree(ser_inst *inst, void *p)
{
	if (p)
		inst->api->free(inst->api->host_ctx, p);
}

__attribute__((format(printf, 3, 4))) static void slog(ser_if *s, int level, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->host->log(s->host->hctx, level, msg);
}

static const char *type_name(const ser_if *s)
{
	return s->kind == K_KISS   ? "KISSInterface"
	       : s->kind == K_AX25 ? "AX25KISSInterface"
				   : "SerialInterface";
}

/* Opens the port with the line settings (serial_port.c, shared with the rnode plugin). */
static int open_device(ser_if *s, char *msg, size_t cap, int *err)
{
	rnsc_serial_line line = {.port = s->port,
				 .speed = s->speed,
				 .databits = s->databits,
				 .stopbits = s->stopbits,
				 .parity = s->parity};
	return rnsc_serial_open(&line, msg, cap, err);
}

/* ---- device life cycle ------------------------------------------------------------------ */

static void io_cb(void *ud, int fd, unsigned events);
static void do_write(ser_if *s);

static void fc_clear(ser_if *s)
{
	while (s->fc_n) {
		xfree(s->inst, s->fcq[s->fc_head]);
		s->fcq[s->fc_head] = NULL;
		s->fc_head = (s->fc_head + 1) % FCQ_MAX;
		s->fc_n--;
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_OFFLINE, 1);
	}
	s->fc_head = 0;
}

static int rx_mid_frame(const ser_if *s)
{
	if (IS_KISS(s))
		return s->kdec.state == 2 && (s->kdec.len > 0 || s->kdec.esc); /* KISS_FRAME */
	return rnsc_hdlc_rx_partial(&s->hdec);
}

static void rx_reset(ser_if *s)
{
	if (IS_KISS(s))
		rnsc_kiss_decoder_reset(&s->kdec);
	else
		rnsc_hdlc_decoder_reset(&s->hdec);
}

static void close_device(ser_if *s)
{
	if (rx_mid_frame(s))
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_PARTIAL, 1);
	rx_reset(s);
	if (s->w) {
		s->host->watch_remove(s->host->hctx, s->w);
		s->w = NULL;
	}
	if (s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
	s->tx_off = s->tx_len = 0;
	s->interest = 0;
	if (s->fc_timer)
		s->host->timer_stop(s->host->hctx, s->fc_timer);
	fc_clear(s);
	s->ready = 0;
}

/* The device went away: offline, closed, reopened every reconnect_wait. */
static void lost(ser_if *s, const char *why)
{
	int was_online = s->state == ST_ONLINE;
	close_device(s);
	s->state = ST_CLOSED;
	if (was_online) {
		s->host->set_online(s->host->hctx, 0);
		slog(s, RNSC_LOG_ERROR,
		     "A serial port error occurred on %s[%s] (%s); reopening %s every %.1f seconds",
		     type_name(s), s->name, why, s->port, (double)s->reconnect_wait_ns / 1e9);
	}
	s->host->timer_start(s->host->hctx, s->timer, s->reconnect_wait_ns, 0);
}

static void set_interest(ser_if *s, unsigned interest)
{
	if (s->w && s->interest != interest &&
	    s->host->watch_modify(s->host->hctx, s->w, interest) == 0)
		s->interest = interest;
}

/* Appends raw bytes to the write queue and starts writing. 0 or a negative code. */
static int queue_bytes(ser_if *s, const uint8_t *p, size_t n)
{
	int rc = rnsc_txq_reserve(s->inst, &s->tx, &s->tx_off, &s->tx_len, &s->tx_cap, n, TXQ_MAX,
				  2048);
	if (rc)
		return rc;
	memcpy(s->tx + s->tx_len, p, n);
	s->tx_len += n;
	if (!(s->interest & RNSC_IFACE_EV_WRITE))
		do_write(s);
	return 0;
}

static void kiss_configure(ser_if *s)
{
	static const uint8_t cmds[] = {RNSC_KISS_CMD_TXDELAY, RNSC_KISS_CMD_TXTAIL, RNSC_KISS_CMD_P,
				       RNSC_KISS_CMD_SLOTTIME, RNSC_KISS_CMD_READY};
	uint8_t vals[5], buf[8];
	vals[0] = rnsc_kiss_param_from_ms((long)s->preamble);
	vals[1] = rnsc_kiss_param_from_ms((long)s->txtail);
	vals[2] = (uint8_t)(s->persistence < 0 ? 0 : s->persistence > 255 ? 255 : s->persistence);
	vals[3] = rnsc_kiss_param_from_ms((long)s->slottime);
	vals[4] = 0x01;
	slog(s, RNSC_LOG_INFO, "Configuring %sKISS interface parameters...",
	     s->kind == K_AX25 ? "AX.25 " : "");
	for (int k = 0; k < 5 && s->fd >= 0; k++) {
		int n = rnsc_kiss_encode_command(buf, sizeof(buf), cmds[k], vals[k]);
		if (n > 0 && queue_bytes(s, buf, (size_t)n) != 0)
			break;
	}
	s->ready = 1;
	slog(s, RNSC_LOG_INFO, "%sKISS interface configured", s->kind == K_AX25 ? "AX.25 " : "");
}

static void timer_cb(void *ud)
{
	ser_if *s = ud;
	char msg[640];
	if (s->state == ST_SETTLING) {
		s->state = ST_ONLINE;
		if (s->ever_online) {
			s->reconnects++;
			slog(s, RNSC_LOG_INFO, "Reconnected serial port for %s[%s]", type_name(s),
			     s->name);
		}
		s->ever_online = 1;
		slog(s, RNSC_LOG_VERBOSE, "Serial port %s is now open", s->port);
		/* The reference starts its read loop only after the settling pause: what
		 * arrived meanwhile waits in the device and is read now. Reading it earlier
		 * handed Transport an announce while sends were still dropped as offline, so
		 * a peer that answered at once (a path just learned) lost its first packets. */
		set_interest(s, RNSC_IFACE_EV_READ);
		s->host->set_online(s->host->hctx, 1);
		if (IS_KISS(s) && s->state == ST_ONLINE)
			kiss_configure(s);
		return;
	}
	if (s->state != ST_CLOSED)
		return;
	slog(s, RNSC_LOG_VERBOSE, "Attempting to reconnect serial port %s for %s[%s]...", s->port,
	     type_name(s), s->name);
	int err;
	int fd = open_device(s, msg, sizeof(msg), &err);
	if (fd < 0) {
		slog(s, RNSC_LOG_DEBUG, "Error while reconnecting port: %s", msg);
		s->host->timer_start(s->host->hctx, s->timer, s->reconnect_wait_ns, 0);
		return;
	}
	s->fd = fd;
	s->interest = 0; /* nothing is read while settling (timer_cb) */
	if (s->host->watch_add(s->host->hctx, fd, s->interest, io_cb, s, &s->w) != 0) {
		close(fd);
		s->fd = -1;
		s->host->timer_start(s->host->hctx, s->timer, s->reconnect_wait_ns, 0);
		return;
	}
	s->last_rx_ns = s->host->now_ns(s->host->hctx);
	s->state = ST_SETTLING;
	s->host->timer_start(s->host->hctx, s->timer,
			     IS_KISS(s) ? KISS_SETTLE_NS : SERIAL_SETTLE_NS, 0);
}

/* ---- receive ---------------------------------------------------------------------------- */

static void deliver(ser_if *s, const uint8_t *p, size_t len)
{
	if (len < MIN_FRAME) {
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_RUNT, 1);
		return;
	}
	s->rxb += len;
	s->rxp++;
	s->host->deliver(s->host->hctx, p, len);
}

static int on_hdlc(void *ud, const uint8_t *frame, size_t len)
{
	ser_if *s = ud;
	deliver(s, frame, len);
	return s->fd < 0 ? RNSC_ERR_STATE : 0;
}

static void fc_release(ser_if *s);

static int on_kiss(void *ud, uint8_t type, const uint8_t *payload, size_t len)
{
	ser_if *s = ud;
	uint8_t cmd = RNSC_KISS_CMD(type); /* the port nibble is ignored, as the reference */
	if (cmd == RNSC_KISS_CMD_DATA && s->kind == K_AX25) {
		/* The reference strips the AX.25 header unread; frames no longer than it are
		 * dropped there (runts here). Its rxb counts the header. */
		if (len > AX25_HEADER) {
			s->rxb += AX25_HEADER;
			deliver(s, payload + AX25_HEADER, len - AX25_HEADER);
		} else {
			s->host->drop(s->host->hctx, RNSC_IFACE_DROP_RUNT, 1);
		}
	} else if (cmd == RNSC_KISS_CMD_DATA)
		deliver(s, payload, len);
	else if (cmd == RNSC_KISS_CMD_READY && len > 0)
		fc_release(s);
	else /* nothing else a TNC sends means anything to the host: line noise, mostly */
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_GARBAGE, 1 + (uint64_t)len);
	return s->fd < 0 ? RNSC_ERR_STATE : 0;
}

static void account_rx_drops(ser_if *s)
{
	uint64_t over, garbage;
	if (IS_KISS(s)) {
		over = s->kdec.stats.drop_oversize - s->kseen.drop_oversize;
		garbage = s->kdec.stats.garbage - s->kseen.garbage;
		s->kseen = s->kdec.stats;
	} else {
		/* Runts never reach the decoder's own limit (min_frame is 1): deliver() counts them. */
		over = s->hdec.stats.drop_oversize - s->hseen.drop_oversize;
		garbage = s->hdec.stats.garbage - s->hseen.garbage;
		s->hseen = s->hdec.stats;
	}
	if (over)
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_OVERSIZE, over);
	if (garbage)
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_GARBAGE, garbage);
}

static void do_read(ser_if *s)
{
	uint8_t buf[READ_CHUNK];
	for (int round = 0; round < 16 && s->fd >= 0; round++) {
		ssize_t n = read(s->fd, buf, sizeof(buf));
		if (n > 0) {
			uint64_t now = s->host->now_ns(s->host->hctx);
			if (now - s->last_rx_ns > FRAME_TIMEOUT_NS && rx_mid_frame(s)) {
				s->host->drop(s->host->hctx, RNSC_IFACE_DROP_PARTIAL, 1);
				rx_reset(s);
			}
			s->last_rx_ns = now;
			if (IS_KISS(s))
				(void)rnsc_kiss_decoder_feed(&s->kdec, buf, (size_t)n, on_kiss, s);
			else
				(void)rnsc_hdlc_decoder_feed(&s->hdec, buf, (size_t)n, on_hdlc, s);
			account_rx_drops(s);
			if ((size_t)n < sizeof(buf))
				return;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		/* 0 after a readiness report: pyserial's "device disconnected". */
		lost(s, n == 0 ? "device reports readiness to read but returned no data"
			       : strerror(errno));
		return;
	}
}

static void do_write(ser_if *s)
{
	while (s->fd >= 0 && s->tx_off < s->tx_len) {
		ssize_t n = write(s->fd, s->tx + s->tx_off, s->tx_len - s->tx_off);
		if (n > 0) {
			s->tx_off += (size_t)n;
			if (s->kind == K_SERIAL)
				s->txb += (uint64_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			set_interest(s, RNSC_IFACE_EV_READ | RNSC_IFACE_EV_WRITE);
			return;
		}
		lost(s, n < 0 ? strerror(errno) : "write returned 0");
		return;
	}
	s->tx_off = s->tx_len = 0;
	if (s->fd >= 0)
		set_interest(s, RNSC_IFACE_EV_READ);
}

static void io_cb(void *ud, int fd, unsigned events)
{
	ser_if *s = ud;
	(void)fd;
	if (events & (RNSC_IFACE_EV_READ | RNSC_IFACE_EV_ERROR))
		do_read(s); /* a hang-up reads as an error or as no data */
	if (s->fd >= 0 && (events & RNSC_IFACE_EV_ERROR) && !(events & RNSC_IFACE_EV_READ))
		lost(s, "hang-up");
	if (s->fd >= 0 && (events & RNSC_IFACE_EV_WRITE))
		do_write(s);
}

/* ---- transmit --------------------------------------------------------------------------- */

/* Frames and writes one packet. 0 or a negative code (not counted here). */
static int transmit(ser_if *s, const uint8_t *frame, size_t len)
{
	uint8_t enc[2 * (SER_HW_MTU + AX25_HEADER) + 8], *big = NULL, *out = enc;
	const uint8_t *payload = frame;
	size_t plen = len;
	if (s->kind == K_AX25) { /* header and packet framed together, as the reference */
		if (len > SER_HW_MTU)
			return RNSC_ERR_TOOBIG;
		memcpy(s->ax25_buf, s->ax25_hdr, AX25_HEADER);
		if (len)
			memcpy(s->ax25_buf + AX25_HEADER, frame, len);
		payload = s->ax25_buf;
		plen = len + AX25_HEADER;
	}
	size_t max = IS_KISS(s) ? rnsc_kiss_encoded_max(plen) : rnsc_hdlc_encoded_max(len);
	if (max > sizeof(enc)) {
		if (max > TXQ_MAX)
			return RNSC_ERR_TOOBIG;
		if (!(big = xalloc(s->inst, max)))
			return RNSC_ERR_NOMEM;
		out = big;
	}
	int n = IS_KISS(s) ? rnsc_kiss_encode(out, max, payload, plen)
			   : rnsc_hdlc_encode(out, max, frame, len);
	int rc = n < 0 ? n : queue_bytes(s, out, (size_t)n);
	/* The reference compares the escaped payload (FEND 00 <escaped> FEND) with the
	 * callsign to tell its identification from traffic. */
	int is_id = rc == 0 && s->kind == K_KISS && (size_t)n - 3 == s->id_len &&
		    memcmp(out + 2, s->id_call, s->id_len) == 0;
	xfree(s->inst, big);
	if (rc)
		return rc;
	if (s->kind == K_KISS && s->id_interval >= 0) {
		if (is_id) {
			s->id_pending = 0;
			s->host->timer_stop(s->host->hctx, s->id_timer);
		} else if (!s->id_pending) {
			s->id_pending = 1;
			s->host->timer_start(s->host->hctx, s->id_timer,
					     (uint64_t)s->id_interval * NS_PER_S, 0);
		}
	}
	s->txp++;
	if (IS_KISS(s)) {
		s->txb += len;
		if (s->flow_control) {
			s->ready = 0;
			s->host->timer_start(s->host->hctx, s->fc_timer, FLOW_TIMEOUT_NS, 0);
		}
	}
	return 0;
}

/* READY from the TNC (or the unlock time-out): the next queued frame, if any. */
static void fc_release(ser_if *s)
{
	if (!s->flow_control || s->state != ST_ONLINE)
		return; /* the reference's process_queue: harmless without flow control */
	s->host->timer_stop(s->host->hctx, s->fc_timer);
	s->ready = 1;
	while (s->fc_n && s->ready && s->state == ST_ONLINE) {
		fc_frame *f = s->fcq[s->fc_head];
		s->fcq[s->fc_head] = NULL;
		s->fc_head = (s->fc_head + 1) % FCQ_MAX;
		s->fc_n--;
		if (transmit(s, f->data, f->len) != 0)
			s->host->drop(s->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
		xfree(s->inst, f);
	}
}

static void fc_timer_cb(void *ud)
{
	ser_if *s = ud;
	if (s->ready || s->state != ST_ONLINE)
		return;
	slog(s, RNSC_LOG_WARNING,
	     "Interface %s[%s] is unlocking flow control due to time-out. Your hardware "
	     "might have missed a flow-control READY command, or maybe it does not support "
	     "flow-control.",
	     type_name(s), s->name);
	fc_release(s);
}

static int ser_send(void *handle, const uint8_t *frame, size_t len);

static void id_timer_cb(void *ud)
{
	ser_if *s = ud;
	if (!s->id_pending)
		return;
	s->id_pending = 0;
	uint8_t frame[sizeof(s->id_call) > 15 ? sizeof(s->id_call) : 15];
	size_t n = s->id_len;
	memcpy(frame, s->id_call, n);
	while (n < 15) /* padded to the 15 bytes the reference sends at least */
		frame[n++] = 0x00;
	slog(s, RNSC_LOG_DEBUG, "Interface KISSInterface[%s] is transmitting beacon data: %.*s",
	     s->name, (int)s->id_len, (const char *)s->id_call);
	(void)ser_send(s, frame, n);
}

/* ---- ops -------------------------------------------------------------------------------- */

static const char *const ser_types[] = {"SerialInterface", "KISSInterface", "AX25KISSInterface",
					NULL};

/* AX25KISSInterface's `callsign` (3 to 6 characters, upper-cased) and `ssid` (0 .. 15,
 * required): the header to APZRNS-0 from them, each address character shifted left, the
 * source SSID byte marking the last address, then UI control and "no layer 3" PID. */
static int ax25_config(ser_if *s, const rnsc_iface_config *cfg)
{
	const char *call = "";
	int64_t ssid = -1;
	char msg[200];
	int rc;
	static const char dst[] = "APZRNS";
	if ((rc = cfg->get_str(cfg->cctx, "callsign", &call)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	if ((rc = cfg->get_int(cfg->cctx, "ssid", &ssid)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	size_t n = strlen(call);
	for (size_t k = 0; k < n; k++)
		if ((unsigned char)call[k] > 0x7F)
			n = 0; /* not ASCII: the reference's encode("ascii") raises */
	if (n < 3 || n > 6) {
		snprintf(msg, sizeof(msg), "Invalid callsign for AX25KISSInterface[%s]", cfg->name);
		return cfg->fail(cfg->cctx, "callsign", RNSC_ERR_CONFIG_VALUE, msg);
	}
	if (ssid < 0 || ssid > 15) {
		snprintf(msg, sizeof(msg), "Invalid SSID for AX25KISSInterface[%s]", cfg->name);
		return cfg->fail(cfg->cctx, "ssid", RNSC_ERR_CONFIG_VALUE, msg);
	}
	for (size_t k = 0; k < 6; k++) {
		s->ax25_hdr[k] = (uint8_t)(dst[k] << 1);
		s->ax25_hdr[7 + k] = k < n ? (uint8_t)(toupper((unsigned char)call[k]) << 1) : 0x20;
	}
	s->ax25_hdr[6] = 0x60; /* destination SSID 0 */
	s->ax25_hdr[13] = (uint8_t)(0x60 | (ssid << 1) | 0x01);
	s->ax25_hdr[14] = 0x03; /* CTRL_UI */
	s->ax25_hdr[15] = 0xF0; /* PID_NOLAYER3 */
	return 0;
}

static int opt_int(const rnsc_iface_config *cfg, const char *key, int64_t *v, int64_t def)
{
	int rc = cfg->get_int(cfg->cctx, key, v);
	if (rc == RNSC_ERR_NOTFOUND) {
		*v = def;
		return 0;
	}
	return rc;
}

static void free_if(ser_if *s)
{
	xfree(s->inst, s->tx);
	xfree(s->inst, s);
}

static void ser_close(void *handle)
{
	ser_if *s = handle;
	close_device(s);
	if (s->timer)
		s->host->timer_del(s->host->hctx, s->timer);
	if (s->fc_timer)
		s->host->timer_del(s->host->hctx, s->fc_timer);
	if (s->id_timer)
		s->host->timer_del(s->host->hctx, s->id_timer);
	free_if(s);
}

static int ser_open(void *instp, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		    void **handle)
{
	ser_inst *inst = instp;
	int kind, rc;
	if (strcmp(cfg->type, "SerialInterface") == 0)
		kind = K_SERIAL;
	else if (strcmp(cfg->type, "KISSInterface") == 0)
		kind = K_KISS;
	else if (strcmp(cfg->type, "AX25KISSInterface") == 0)
		kind = K_AX25;
	else
		return cfg->fail(cfg->cctx, "type", RNSC_ERR_NOTFOUND,
				 "not a serial interface type");
	const char *port = NULL, *parity = "N";
	rc = cfg->get_str(cfg->cctx, "port", &port);
	if (rc == RNSC_ERR_NOTFOUND)
		return cfg->fail(cfg->cctx, "port", RNSC_ERR_CONFIG_VALUE,
				 "No port specified for serial interface");
	if (rc)
		return rc;
	ser_if *s = xalloc(inst, sizeof(*s));
	if (!s)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
	s->inst = inst;
	s->host = host;
	s->kind = kind;
	s->fd = -1;
	snprintf(s->name, sizeof(s->name), "%s", cfg->name);
	if (strlen(port) >= sizeof(s->port)) {
		rc = cfg->fail(cfg->cctx, "port", RNSC_ERR_CONFIG_VALUE, "path too long");
		goto fail;
	}
	snprintf(s->port, sizeof(s->port), "%s", port);

	int64_t v;
	if ((rc = opt_int(cfg, "speed", &s->speed_bps, 9600)))
		goto fail;
	if (rnsc_serial_speed_code(s->speed_bps, &s->speed) != 0) {
		rc = cfg->fail(cfg->cctx, "speed", RNSC_ERR_CONFIG_VALUE,
			       "not a standard serial speed (50 .. 4000000 baud)");
		goto fail;
	}
	if ((rc = opt_int(cfg, "databits", &v, 8)))
		goto fail;
	if (v < 5 || v > 8) {
		rc = cfg->fail(cfg->cctx, "databits", RNSC_ERR_CONFIG_VALUE,
			       "must be 5, 6, 7 or 8");
		goto fail;
	}
	s->databits = (int)v;
	if ((rc = opt_int(cfg, "stopbits", &v, 1)))
		goto fail;
	if (v != 1 && v != 2) {
		rc = cfg->fail(cfg->cctx, "stopbits", RNSC_ERR_CONFIG_VALUE, "must be 1 or 2");
		goto fail;
	}
	s->stopbits = (int)v;
	if ((rc = cfg->get_str(cfg->cctx, "parity", &parity)) && rc != RNSC_ERR_NOTFOUND)
		goto fail;
	s->parity = 'N';
	if (strcasecmp(parity, "e") == 0 || strcasecmp(parity, "even") == 0)
		s->parity = 'E';
	else if (strcasecmp(parity, "o") == 0 || strcasecmp(parity, "odd") == 0)
		s->parity = 'O';

	s->bitrate = kind != K_SERIAL ? KISS_BITRATE_GUESS : (uint64_t)s->speed_bps;
	if ((rc = cfg->get_int(cfg->cctx, "bitrate", &v)) == 0) {
		if (v >= RET_MINIMUM_BITRATE)
			s->bitrate = (uint64_t)v;
	} else if (rc != RNSC_ERR_NOTFOUND) {
		goto fail;
	}
	s->id_interval = -1;
	if (kind == K_AX25 && (rc = ax25_config(s, cfg)))
		goto fail;
	if (kind != K_SERIAL) {
		if ((rc = opt_int(cfg, "preamble", &s->preamble, 350)) ||
		    (rc = opt_int(cfg, "txtail", &s->txtail, 20)) ||
		    (rc = opt_int(cfg, "persistence", &s->persistence, 64)) ||
		    (rc = opt_int(cfg, "slottime", &s->slottime, 20)))
			goto fail;
		if ((rc = cfg->get_bool(cfg->cctx, "flow_control", &s->flow_control)) &&
		    rc != RNSC_ERR_NOTFOUND)
			goto fail;
	}
	if (kind == K_KISS) {
		if ((rc = cfg->get_int(cfg->cctx, "id_interval", &s->id_interval)) == 0) {
			if (s->id_interval < 0 || s->id_interval > 86400 * 365) {
				rc = cfg->fail(cfg->cctx, "id_interval", RNSC_ERR_CONFIG_VALUE,
					       "must be between 0 and 31536000 seconds");
				goto fail;
			}
		} else if (rc != RNSC_ERR_NOTFOUND) {
			goto fail;
		}
		const char *call = "";
		if ((rc = cfg->get_str(cfg->cctx, "id_callsign", &call)) && rc != RNSC_ERR_NOTFOUND)
			goto fail;
		if (strlen(call) > sizeof(s->id_call)) {
			rc = cfg->fail(cfg->cctx, "id_callsign", RNSC_ERR_CONFIG_VALUE,
				       "longer than 128 bytes");
			goto fail;
		}
		s->id_len = strlen(call);
		memcpy(s->id_call, call, s->id_len);
	}
	s->reconnect_wait_ns = RECONNECT_WAIT_NS;
	double wait;
	if ((rc = cfg->get_float(cfg->cctx, "reconnect_wait", &wait)) == 0) {
		if (!(wait > 0 && wait <= 3600)) {
			rc = cfg->fail(cfg->cctx, "reconnect_wait", RNSC_ERR_CONFIG_VALUE,
				       "must be between 0 and 3600 seconds");
			goto fail;
		}
		s->reconnect_wait_ns = (uint64_t)(wait * 1e9);
	} else if (rc != RNSC_ERR_NOTFOUND) {
		goto fail;
	}
	if (kind != K_SERIAL) /* AX.25: room for the header too, as the reference reads it */
		rnsc_kiss_decoder_init(&s->kdec, s->rxbuf,
				       kind == K_AX25 ? sizeof(s->rxbuf) : SER_HW_MTU);
	else
		rnsc_hdlc_decoder_init(&s->hdec, s->rxbuf, sizeof(s->rxbuf));
	if ((rc = host->timer_new(host->hctx, timer_cb, s, &s->timer)) ||
	    (rc = host->timer_new(host->hctx, fc_timer_cb, s, &s->fc_timer)) ||
	    (rc = host->timer_new(host->hctx, id_timer_cb, s, &s->id_timer))) {
		rc = cfg->fail(cfg->cctx, NULL, rc, "cannot create a timer");
		goto fail;
	}
	/* The reference opens the port in its constructor and fails if it cannot. */
	char msg[640];
	int err;
	int fd = open_device(s, msg, sizeof(msg), &err);
	if (fd < 0) {
		rc = cfg->fail(cfg->cctx, "port", err, msg);
		goto fail;
	}
	s->fd = fd;
	s->interest = 0; /* nothing is read while settling */
	if ((rc = host->watch_add(host->hctx, fd, s->interest, io_cb, s, &s->w))) {
		rc = cfg->fail(cfg->cctx, NULL, rc, "cannot watch the serial port");
		goto fail;
	}
	s->last_rx_ns = host->now_ns(host->hctx);
	s->state = ST_SETTLING;
	host->timer_start(host->hctx, s->timer,
			  kind != K_SERIAL ? KISS_SETTLE_NS : SERIAL_SETTLE_NS, 0);
	*handle = s;
	return 0;
fail:
	close_device(s);
	if (s->timer)
		host->timer_del(host->hctx, s->timer);
	if (s->fc_timer)
		host->timer_del(host->hctx, s->fc_timer);
	if (s->id_timer)
		host->timer_del(host->hctx, s->id_timer);
	free_if(s);
	return rc;
}

static int ser_send(void *handle, const uint8_t *frame, size_t len)
{
	ser_if *s = handle;
	if (s->state != ST_ONLINE || s->fd < 0) {
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_OFFLINE, 1);
		return RNSC_ERR_STATE;
	}
	if (IS_KISS(s) && s->flow_control && !s->ready) {
		fc_frame *f;
		if (s->fc_n >= FCQ_MAX || !(f = xalloc(s->inst, sizeof(*f) + (len ? len : 1)))) {
			s->host->drop(s->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
			return s->fc_n >= FCQ_MAX ? RNSC_ERR_TOOBIG : RNSC_ERR_NOMEM;
		}
		f->len = len;
		if (len)
			memcpy(f->data, frame, len);
		s->fcq[(s->fc_head + s->fc_n) % FCQ_MAX] = f;
		s->fc_n++;
		return 0;
	}
	int rc = transmit(s, frame, len);
	if (rc)
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
	return rc;
}

static int ser_stats(void *handle, rnsc_iface_stats *out)
{
	ser_if *s = handle;
	out->rx_bytes = s->rxb;
	out->tx_bytes = s->txb;
	out->rx_packets = s->rxp;
	out->tx_packets = s->txp;
	out->online = s->state == ST_ONLINE;
	out->bitrate = s->bitrate;
	out->hw_mtu = SER_HW_MTU;
	out->reconnects = s->reconnects;
	return 0;
}

static int ser_describe(void *handle, char *buf, size_t cap)
{
	ser_if *s = handle;
	return snprintf(buf, cap, "%s[%s]", type_name(s), s->name);
}

RNSC_IFACE_PLUGIN(
	"serial",
	"SerialInterface (HDLC), KISSInterface and AX25KISSInterface (KISS TNCs) over serial ports",
	ser_types, ser_open, ser_send, ser_stats, ser_close, ser_describe)
