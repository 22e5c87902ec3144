/* SPDX-License-Identifier: MIT */
/*
 * The "rnode" interface plugin: RNodeInterface, an RNode LoRa radio on a serial port, as
 * the reference (rns 1.5.4, RNS/Interfaces/RNodeInterface.py) drives it. The host
 * protocol itself is in rnode_proto.c; the port is opened like every serial interface
 * (serial_port.c: 115200 8N1, raw); frames are KISS (src/framing/kiss.c).
 *
 *  - Options, checked as the reference checks them (a bad value fails the interface):
 *    `port` (required; ble:// and tcp:// ports, the reference's Bluetooth and WiFi
 *    RNodes, are refused: rnsc has neither transport), `frequency` (137 MHz .. 3 GHz),
 *    `bandwidth` (7800 .. 1625000 Hz), `txpower` (0 .. 37 dBm), `spreadingfactor`
 *    (5 .. 12), `codingrate` (5 .. 8), `flow_control` (no), `airtime_limit_short`
 *    and `airtime_limit_long` (percent, 0 .. 100), `id_callsign` (at most 32 bytes of
 *    UTF-8) with `id_interval` (seconds; identification only when both are given). rnsc
 *    extension: `reconnect_wait` (seconds, default the reference's 5).
 *  - Start-up, the reference's configure_device: the port is opened (a port that cannot
 *    be opened is retried every reconnect_wait, as the reference does, the interface
 *    offline meanwhile); after 2 s the detect request (DETECT, FW_VERSION, PLATFORM, MCU)
 *    goes out; 0.2 s later a device that has not answered DETECT is logged and closed;
 *    one with firmware older than 1.52 is refused (the reference exits the whole program
 *    there; rnsc logs it as critical and keeps retrying the port, so other interfaces
 *    live on); otherwise the radio parameters and RADIO_STATE on are sent, and 0.25 s
 *    later the reported frequency (within 100 Hz), bandwidth, TX power, SF and radio
 *    state are compared with the configuration: a mismatch is logged and the port closed
 *    (and retried). 0.3 s after a match the interface is online.
 *  - Traffic: data frames in both directions (HW_MTU 508, runts counted as drops); with
 *    flow_control each frame waits for READY from the device (frames queue meanwhile,
 *    256 at most; the reference's queue is unbounded and has no time-out, nor does
 *    this one). The bitrate is the reference's formula on the reported SF, CR and
 *    bandwidth. A partial frame is forgotten after 100 ms without input.
 *  - Device reports (RSSI, SNR and link quality, channel time and load, PHY parameters,
 *    battery, temperature) are kept and logged at debug as the reference logs them.
 *    ERROR reports: memory low and modem time-out are logged; initialisation, TX
 *    failure and unknown codes are what the reference raises on: logged, the port is
 *    closed and reopened. A reset report from an ESP32 device while online does the same.
 *  - Port gone (read/write error, hang-up, or readable with no data): offline, logged,
 *    reopened every reconnect_wait and configured again; "Reconnected port" when back.
 *  - Close (the reference's detach): FB_EXT 00 for devices with a display (ESP32,
 *    nRF52), RADIO_STATE 00, LEAVE FF, written before the port is closed.
 *  - Station identification: id_interval seconds after the first data frame sent since
 *    the last identification, the callsign's bytes are sent as a data frame.
 *
 * Threading: the interface's loop thread only (iface_abi.h); no locks.
 * Ownership: the plugin owns the handle, the device fd and every queued frame.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iface_abi.h"
#include "iface_plugin.h"
#include "kiss.h"
#include "rnode_proto.h"
#include "serial_port.h"
#include "txq.h"

#define RN_HW_MTU 508u
#define RN_RX_MAX 1100u /* the longest report (DISP_READ, 1024 bytes) fits */
#define RN_CALLSIGN_MAX 32u
#define MIN_FRAME 19u /* HEADER_MINSIZE: shorter frames are runts */
#define NS_PER_MS UINT64_C(1000000)
#define NS_PER_S UINT64_C(1000000000)
#define RECONNECT_WAIT_NS (5 * NS_PER_S)
#define SETTLE_NS (2 * NS_PER_S)           /* configure_device: sleep(2.0) */
#define DETECT_WAIT_NS (200 * NS_PER_MS)   /* sleep(0.2) after detect() */
#define VALIDATE_WAIT_NS (250 * NS_PER_MS) /* validateRadioState: sleep(0.25) */
#define ONLINE_WAIT_NS (300 * NS_PER_MS)   /* sleep(0.3) before online */
#define FRAME_TIMEOUT_NS (100 * NS_PER_MS) /* self.timeout */
#define FCQ_MAX 256
#define TXQ_MAX ((size_t)256 << 10)
#define READ_CHUNK 4096

enum { ST_CLOSED, ST_SETTLE, ST_DETECT, ST_VALIDATE, ST_ONLINE_WAIT, ST_ONLINE };

typedef struct fc_frame {
	size_t len;
	uint8_t data[];
} fc_frame;

typedef struct rn_if {
	rnsc_iface_inst *inst;
	const rnsc_iface_host_api *host;
	char name[160];
	char port[512];
	rnsc_rnode_params want;
	int flow_control;
	uint64_t reconnect_wait_ns;
	int64_t id_interval; /* seconds; < 0: no identification */
	uint8_t id_call[RN_CALLSIGN_MAX];
	size_t id_len;
	int id_pending;
	uint64_t cfg_bitrate; /* `bitrate`, until the device reports new parameters */
	/* device */
	int fd;
	rnsc_iface_watch *w;
	unsigned interest;
	int state;
	int ready; /* the reference's interface_ready */
	int display;
	int ever_online;
	int bitrate_logged; /* once per configuration, not for each of the four reports */
	rnsc_iface_timer *timer;
	rnsc_iface_timer *id_timer;
	rnsc_rnode_radio radio;
	uint64_t last_rx_ns;
	rnsc_kiss_decoder kdec;
	rnsc_kiss_stats kseen;
	uint8_t rxbuf[RN_RX_MAX];
	uint8_t *tx;
	size_t tx_off, tx_len, tx_cap;
	fc_frame *fcq[FCQ_MAX];
	size_t fc_head, fc_n;
	uint64_t rxb, txb, rxp, txp, bitrate;
	uint32_t reconnects;
} rn_if;

static void *xalloc(rnsc_iface_inst *inst, size_t n)
{
	void *p = inst->api->alloc(inst->api->host_ctx, n);
	if (p)
		memset(p, 0, n);
	return p;
}

static void xfree(rnsc_iface_inst *inst, void *p)
{
	if (p)
		inst->api->free(inst->api->host_ctx, p);
}

__attribute__((format(printf, 3, 4))) static void rlog(rn_if *s, int level, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->host->log(s->host->hctx, level, msg);
}

/* ---- device life cycle ------------------------------------------------------------------ */

static void io_cb(void *ud, int fd, unsigned events);
static void do_write(rn_if *s);

static void fc_clear(rn_if *s)
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

static int rx_mid_frame(const rn_if *s)
{
	return s->kdec.state == 2 && (s->kdec.len > 0 || s->kdec.esc);
}

static void close_device(rn_if *s)
{
	if (rx_mid_frame(s))
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_PARTIAL, 1);
	rnsc_kiss_decoder_reset(&s->kdec);
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
	fc_clear(s);
	s->ready = 0;
	s->id_pending = 0;
	s->host->timer_stop(s->host->hctx, s->id_timer);
}

/* The port is closed (lost, not detected, misconfigured): offline, retried later. */
static void drop_port(rn_if *s, const char *why)
{
	int was_online = s->state == ST_ONLINE;
	close_device(s);
	s->state = ST_CLOSED;
	if (was_online) {
		s->host->set_online(s->host->hctx, 0);
		rlog(s, RNSC_LOG_ERROR,
		     "A serial port error occurred on RNodeInterface[%s] (%s); the interface is "
		     "offline, reopening %s every %.1f seconds",
		     s->name, why, s->port, (double)s->reconnect_wait_ns / 1e9);
	} else {
		rlog(s, RNSC_LOG_ERROR, "RNodeInterface[%s]: %s; retrying %s in %.1f seconds",
		     s->name, why, s->port, (double)s->reconnect_wait_ns / 1e9);
	}
	s->host->timer_start(s->host->hctx, s->timer, s->reconnect_wait_ns, 0);
}

static void set_interest(rn_if *s, unsigned interest)
{
	if (s->w && s->interest != interest &&
	    s->host->watch_modify(s->host->hctx, s->w, interest) == 0)
		s->interest = interest;
}

static int queue_bytes(rn_if *s, const uint8_t *p, size_t n)
{
	if (s->fd < 0)
		return RNSC_ERR_STATE;
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

/* Opens the port; the settle timer runs. 0, or -1 with msg filled. */
static int try_open(rn_if *s, char *msg, size_t cap, int *err)
{
	rnsc_serial_line line = {.port = s->port, .databits = 8, .stopbits = 1, .parity = 'N'};
	(void)rnsc_serial_speed_code(115200, &line.speed);
	int fd = rnsc_serial_open(&line, msg, cap, err);
	if (fd < 0)
		return -1;
	s->fd = fd;
	s->interest = RNSC_IFACE_EV_READ;
	if ((*err = s->host->watch_add(s->host->hctx, fd, s->interest, io_cb, s, &s->w)) != 0) {
		snprintf(msg, cap, "cannot watch %s", s->port);
		close(fd);
		s->fd = -1;
		return -1;
	}
	rlog(s, RNSC_LOG_INFO, "Opening serial port %s...", s->port);
	memset(&s->radio, 0, sizeof(s->radio)); /* reset_radio_state */
	s->display = 0;
	s->bitrate_logged = 0;
	s->last_rx_ns = s->host->now_ns(s->host->hctx);
	s->state = ST_SETTLE;
	s->host->timer_start(s->host->hctx, s->timer, SETTLE_NS, 0);
	return 0;
}

static void log_mismatch(rn_if *s, unsigned bad)
{
	static const struct {
		unsigned bit;
		const char *what;
	} M[] = {{RNSC_RNODE_HAVE_FREQ, "Frequency mismatch"},
		 {RNSC_RNODE_HAVE_BW, "Bandwidth mismatch"},
		 {RNSC_RNODE_HAVE_TXP, "TX power mismatch"},
		 {RNSC_RNODE_HAVE_SF, "Spreading factor mismatch"},
		 {RNSC_RNODE_HAVE_STATE, "Radio state mismatch"}};
	for (size_t k = 0; k < sizeof(M) / sizeof(M[0]); k++)
		if (bad & M[k].bit)
			rlog(s, RNSC_LOG_ERROR, "%s", M[k].what);
	rlog(s, RNSC_LOG_ERROR,
	     "After configuring RNodeInterface[%s], the reported radio parameters did not match "
	     "your configuration.",
	     s->name);
	rlog(s, RNSC_LOG_ERROR,
	     "Make sure that your hardware actually supports the parameters "
	     "specified in the configuration");
}

static void timer_cb(void *ud)
{
	rn_if *s = ud;
	char msg[640];
	int err;
	uint8_t buf[128];
	int n;
	switch (s->state) {
	case ST_CLOSED:
		rlog(s, RNSC_LOG_VERBOSE,
		     "Attempting to reconnect serial port %s for RNodeInterface[%s]...", s->port,
		     s->name);
		if (try_open(s, msg, sizeof(msg), &err) != 0) {
			rlog(s, RNSC_LOG_DEBUG, "Error while reconnecting port: %s", msg);
			s->host->timer_start(s->host->hctx, s->timer, s->reconnect_wait_ns, 0);
		}
		return;
	case ST_SETTLE:
		n = rnsc_rnode_detect_frames(buf, sizeof(buf));
		s->state = ST_DETECT;
		if (n > 0 && queue_bytes(s, buf, (size_t)n) != 0)
			return; /* lost inside: already rescheduled */
		if (s->state == ST_DETECT)
			s->host->timer_start(s->host->hctx, s->timer, DETECT_WAIT_NS, 0);
		return;
	case ST_DETECT:
		if (!s->radio.detected) {
			snprintf(msg, sizeof(msg), "Could not detect device on %s", s->port);
			drop_port(s, msg);
			return;
		}
		if ((s->radio.have & RNSC_RNODE_HAVE_FW) && !rnsc_rnode_fw_ok(&s->radio)) {
			rlog(s, RNSC_LOG_CRITICAL,
			     "The firmware version of the connected RNode is %d.%d; this version of "
			     "Reticulum requires at least version %d.%d. Please update your RNode "
			     "firmware with rnodeconf",
			     s->radio.fw_major, s->radio.fw_minor, RNSC_RNODE_FW_MAJ,
			     RNSC_RNODE_FW_MIN);
			drop_port(s, "firmware too old");
			return;
		}
		s->display = (s->radio.have & RNSC_RNODE_HAVE_PLATFORM) &&
			     (s->radio.platform == RNSC_RNODE_PLATFORM_ESP32 ||
			      s->radio.platform == RNSC_RNODE_PLATFORM_NRF52);
		rlog(s, RNSC_LOG_VERBOSE, "Serial port %s is now open", s->port);
		rlog(s, RNSC_LOG_VERBOSE, "Configuring RNode interface...");
		n = rnsc_rnode_config_frames(&s->want, buf, sizeof(buf));
		s->state = ST_VALIDATE;
		if (n > 0 && queue_bytes(s, buf, (size_t)n) != 0)
			return;
		if (s->state != ST_VALIDATE)
			return;
		rlog(s, RNSC_LOG_VERBOSE,
		     "Waiting for radio configuration validation for RNodeInterface[%s]...",
		     s->name);
		s->host->timer_start(s->host->hctx, s->timer, VALIDATE_WAIT_NS, 0);
		return;
	case ST_VALIDATE: {
		unsigned bad = rnsc_rnode_mismatch(&s->want, &s->radio);
		if (bad) {
			log_mismatch(s, bad);
			drop_port(s, "Aborting RNode startup");
			return;
		}
		s->ready = 1;
		rlog(s, RNSC_LOG_NOTICE, "RNodeInterface[%s] is configured and powered up",
		     s->name);
		s->state = ST_ONLINE_WAIT;
		s->host->timer_start(s->host->hctx, s->timer, ONLINE_WAIT_NS, 0);
		return;
	}
	case ST_ONLINE_WAIT:
		s->state = ST_ONLINE;
		if (s->ever_online) {
			s->reconnects++;
			rlog(s, RNSC_LOG_NOTICE, "Reconnected port for RNodeInterface[%s]",
			     s->name);
		}
		s->ever_online = 1;
		s->host->set_online(s->host->hctx, 1);
		return;
	default:
		return;
	}
}

/* ---- receive ---------------------------------------------------------------------------- */

static void fc_release(rn_if *s);

static void update_bitrate(rn_if *s)
{
	uint64_t b = rnsc_rnode_bitrate(&s->radio);
	if (s->ever_online) /* reports after a reconnect overwrite a configured bitrate */
		s->cfg_bitrate = 0;
	if (b && (b != s->bitrate || !s->bitrate_logged)) {
		s->bitrate = b;
		s->bitrate_logged = 1;
		rlog(s, RNSC_LOG_VERBOSE, "RNodeInterface[%s] On-air bitrate is now %.2f kbps",
		     s->name, (double)b / 1000.0);
	}
}

static void on_report(rn_if *s, uint8_t cmd, const uint8_t *p, size_t len)
{
	uint8_t code = 0;
	const rnsc_rnode_radio *r = &s->radio;
	switch (rnsc_rnode_apply(&s->radio, cmd, p, len, &code)) {
	case RNSC_RNODE_EV_PARAM:
		if (cmd == RNSC_RNODE_CMD_FREQUENCY)
			rlog(s, RNSC_LOG_DEBUG,
			     "RNodeInterface[%s] Radio reporting frequency is %.6g MHz", s->name,
			     r->frequency / 1e6);
		else if (cmd == RNSC_RNODE_CMD_BANDWIDTH)
			rlog(s, RNSC_LOG_DEBUG,
			     "RNodeInterface[%s] Radio reporting bandwidth is %.6g KHz", s->name,
			     r->bandwidth / 1e3);
		else if (cmd == RNSC_RNODE_CMD_SF)
			rlog(s, RNSC_LOG_DEBUG,
			     "RNodeInterface[%s] Radio reporting spreading factor is %d", s->name,
			     r->sf);
		else
			rlog(s, RNSC_LOG_DEBUG,
			     "RNodeInterface[%s] Radio reporting coding rate is %d", s->name,
			     r->cr);
		update_bitrate(s);
		return;
	case RNSC_RNODE_EV_READY:
		fc_release(s);
		return;
	case RNSC_RNODE_EV_ERROR_SOFT:
		rlog(s, RNSC_LOG_ERROR, "RNodeInterface[%s] hardware error (code %02x): %s",
		     s->name, code,
		     code == RNSC_RNODE_ERR_MEMORY_LOW ? "Memory exhausted"
						       : "Modem communication timed out");
		return;
	case RNSC_RNODE_EV_ERROR_FATAL: {
		char why[128];
		snprintf(why, sizeof(why), "%s (code %02x)",
			 code == RNSC_RNODE_ERR_INITRADIO  ? "hardware initialisation error"
			 : code == RNSC_RNODE_ERR_TXFAILED ? "hardware TX error"
							   : "hardware error",
			 code);
		drop_port(s, why);
		return;
	}
	case RNSC_RNODE_EV_RESET:
		if (r->platform == RNSC_RNODE_PLATFORM_ESP32 && s->state == ST_ONLINE)
			drop_port(s,
				  "Detected reset while device was online, reinitialising device");
		return;
	case RNSC_RNODE_EV_SHORT:
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_GARBAGE, 2 + (uint64_t)len);
		return;
	default:
		if (cmd == RNSC_RNODE_CMD_TXPOWER)
			rlog(s, RNSC_LOG_DEBUG,
			     "RNodeInterface[%s] Radio reporting TX power is %d dBm", s->name,
			     r->txpower);
		else if (cmd == RNSC_RNODE_CMD_RADIO_STATE && !r->state)
			rlog(s, RNSC_LOG_DEBUG,
			     "RNodeInterface[%s] Radio reporting state is offline", s->name);
		else if (cmd == RNSC_RNODE_CMD_ST_ALOCK || cmd == RNSC_RNODE_CMD_LT_ALOCK)
			rlog(s, RNSC_LOG_DEBUG,
			     "RNodeInterface[%s] Radio reporting %s-term airtime limit is %.6g%%",
			     s->name, cmd == RNSC_RNODE_CMD_ST_ALOCK ? "short" : "long",
			     cmd == RNSC_RNODE_CMD_ST_ALOCK ? r->st_alock : r->lt_alock);
		else if (cmd == RNSC_RNODE_CMD_STAT_CHTM && r->have_interference)
			rlog(s, RNSC_LOG_DEBUG,
			     "RNodeInterface[%s] Radio detected interference at %d dBm", s->name,
			     r->interference);
		return;
	}
}

static int on_kiss(void *ud, uint8_t type, const uint8_t *payload, size_t len)
{
	rn_if *s = ud;
	if (type == RNSC_RNODE_CMD_DATA) {
		if (len > RN_HW_MTU) {
			s->host->drop(s->host->hctx, RNSC_IFACE_DROP_OVERSIZE, 1);
		} else if (len < MIN_FRAME) {
			s->host->drop(s->host->hctx, RNSC_IFACE_DROP_RUNT, 1);
		} else {
			s->rxb += len;
			s->rxp++;
			s->host->deliver(s->host->hctx, payload, len);
		}
	} else {
		on_report(s, type, payload, len);
	}
	return s->fd < 0 ? RNSC_ERR_STATE : 0;
}

static void account_rx_drops(rn_if *s)
{
	uint64_t over = s->kdec.stats.drop_oversize - s->kseen.drop_oversize;
	uint64_t garbage = s->kdec.stats.garbage - s->kseen.garbage;
	s->kseen = s->kdec.stats;
	if (over)
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_OVERSIZE, over);
	if (garbage)
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_GARBAGE, garbage);
}

static void do_read(rn_if *s)
{
	uint8_t buf[READ_CHUNK];
	for (int round = 0; round < 16 && s->fd >= 0; round++) {
		ssize_t n = read(s->fd, buf, sizeof(buf));
		if (n > 0) {
			uint64_t now = s->host->now_ns(s->host->hctx);
			if (now - s->last_rx_ns > FRAME_TIMEOUT_NS && rx_mid_frame(s)) {
				rlog(s, RNSC_LOG_WARNING,
				     "RNodeInterface[%s] device read timeout in command %u after 100 ms",
				     s->name, s->kdec.type);
				s->host->drop(s->host->hctx, RNSC_IFACE_DROP_PARTIAL, 1);
				rnsc_kiss_decoder_reset(&s->kdec);
			}
			s->last_rx_ns = now;
			(void)rnsc_kiss_decoder_feed(&s->kdec, buf, (size_t)n, on_kiss, s);
			account_rx_drops(s);
			if ((size_t)n < sizeof(buf))
				return;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		drop_port(s, n == 0 ? "device reports readiness to read but returned no data"
				    : strerror(errno));
		return;
	}
}

static void do_write(rn_if *s)
{
	while (s->fd >= 0 && s->tx_off < s->tx_len) {
		ssize_t n = write(s->fd, s->tx + s->tx_off, s->tx_len - s->tx_off);
		if (n > 0) {
			s->tx_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			set_interest(s, RNSC_IFACE_EV_READ | RNSC_IFACE_EV_WRITE);
			return;
		}
		drop_port(s, n < 0 ? strerror(errno) : "write returned 0");
		return;
	}
	s->tx_off = s->tx_len = 0;
	if (s->fd >= 0)
		set_interest(s, RNSC_IFACE_EV_READ);
}

static void io_cb(void *ud, int fd, unsigned events)
{
	rn_if *s = ud;
	(void)fd;
	if (events & (RNSC_IFACE_EV_READ | RNSC_IFACE_EV_ERROR))
		do_read(s);
	if (s->fd >= 0 && (events & RNSC_IFACE_EV_ERROR) && !(events & RNSC_IFACE_EV_READ))
		drop_port(s, "hang-up");
	if (s->fd >= 0 && (events & RNSC_IFACE_EV_WRITE))
		do_write(s);
}

/* ---- transmit --------------------------------------------------------------------------- */

/* The reference's process_outgoing for an online, ready interface. */
static int transmit(rn_if *s, const uint8_t *frame, size_t len)
{
	uint8_t enc[2 * RN_HW_MTU + 8];
	if (rnsc_kiss_encoded_max(len) > sizeof(enc))
		return RNSC_ERR_TOOBIG;
	int n = rnsc_kiss_encode(enc, sizeof(enc), frame, len);
	if (n < 0)
		return n;
	if (s->flow_control)
		s->ready = 0;
	int is_id = s->id_interval >= 0 && len == s->id_len && memcmp(frame, s->id_call, len) == 0;
	if (s->id_interval >= 0) {
		if (is_id) {
			s->id_pending = 0;
			s->host->timer_stop(s->host->hctx, s->id_timer);
		} else if (!s->id_pending) {
			s->id_pending = 1;
			s->host->timer_start(s->host->hctx, s->id_timer,
					     (uint64_t)s->id_interval * NS_PER_S, 0);
		}
	}
	int rc = queue_bytes(s, enc, (size_t)n);
	if (rc)
		return rc;
	s->txb += len;
	s->txp++;
	return 0;
}

static int enqueue(rn_if *s, const uint8_t *frame, size_t len)
{
	fc_frame *f;
	if (s->fc_n >= FCQ_MAX || !(f = xalloc(s->inst, sizeof(*f) + (len ? len : 1))))
		return s->fc_n >= FCQ_MAX ? RNSC_ERR_TOOBIG : RNSC_ERR_NOMEM;
	f->len = len;
	if (len)
		memcpy(f->data, frame, len);
	s->fcq[(s->fc_head + s->fc_n) % FCQ_MAX] = f;
	s->fc_n++;
	return 0;
}

/* READY from the device: the reference's process_queue. */
static void fc_release(rn_if *s)
{
	if (s->state != ST_ONLINE) {
		s->ready = s->state >= ST_ONLINE_WAIT;
		return;
	}
	s->ready = 1;
	if (!s->fc_n)
		return;
	fc_frame *f = s->fcq[s->fc_head];
	s->fcq[s->fc_head] = NULL;
	s->fc_head = (s->fc_head + 1) % FCQ_MAX;
	s->fc_n--;
	if (transmit(s, f->data, f->len) != 0)
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
	xfree(s->inst, f);
}

static int rn_send(void *handle, const uint8_t *frame, size_t len)
{
	rn_if *s = handle;
	if (s->state != ST_ONLINE || s->fd < 0) {
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_OFFLINE, 1);
		return RNSC_ERR_STATE;
	}
	int rc = s->ready ? transmit(s, frame, len) : enqueue(s, frame, len);
	if (rc)
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
	return rc;
}

static void id_timer_cb(void *ud)
{
	rn_if *s = ud;
	if (!s->id_pending || s->state != ST_ONLINE)
		return;
	rlog(s, RNSC_LOG_DEBUG, "Interface RNodeInterface[%s] is transmitting beacon data: %.*s",
	     s->name, (int)s->id_len, (const char *)s->id_call);
	(void)rn_send(s, s->id_call, s->id_len);
}

/* ---- ops -------------------------------------------------------------------------------- */

static const char *const rn_types[] = {"RNodeInterface", NULL};

static void rn_close(void *handle)
{
	rn_if *s = handle;
	if (s->fd >= 0 && s->state >= ST_VALIDATE) {
		/* detach: straight to the fd, best effort; the port is closed next */
		uint8_t buf[32];
		int n = rnsc_rnode_detach_frames(s->display, buf, sizeof(buf));
		do_write(s);
		if (n > 0 && s->fd >= 0 && write(s->fd, buf, (size_t)n) != n)
			rlog(s, RNSC_LOG_ERROR,
			     "An error occurred while detaching RNodeInterface[%s]", s->name);
	}
	close_device(s);
	s->host->timer_del(s->host->hctx, s->timer);
	s->host->timer_del(s->host->hctx, s->id_timer);
	xfree(s->inst, s->tx);
	xfree(s->inst, s);
}

static int get_int(const rnsc_iface_config *cfg, const char *key, int64_t *v, int *has)
{
	int rc = cfg->get_int(cfg->cctx, key, v);
	*has = rc == 0;
	return rc == RNSC_ERR_NOTFOUND ? 0 : rc;
}

/* A range check as the reference's: the message names the interface as its log does. */
static int check(const rnsc_iface_config *cfg, const char *key, int ok, const char *what)
{
	char msg[256];
	if (ok)
		return 0;
	snprintf(msg, sizeof(msg),
		 "Invalid %s configured for RNodeInterface[%s]; the configuration contains "
		 "errors, interface is offline",
		 what, cfg->name);
	return cfg->fail(cfg->cctx, key, RNSC_ERR_CONFIG_VALUE, msg);
}

static int read_config(rn_if *s, const rnsc_iface_config *cfg)
{
	int64_t freq = 0, bw = 0, txp = 0, sf = 0, cr = 0, v;
	int has, rc;
	const char *port = NULL;
	rc = cfg->get_str(cfg->cctx, "port", &port);
	if (rc == RNSC_ERR_NOTFOUND)
		return cfg->fail(cfg->cctx, "port", RNSC_ERR_CONFIG_VALUE,
				 "No port specified for RNode interface");
	if (rc)
		return rc;
	if (strncasecmp(port, "ble://", 6) == 0 || strncasecmp(port, "tcp://", 6) == 0)
		return cfg->fail(cfg->cctx, "port", RNSC_ERR_CONFIG_VALUE,
				 "RNodes over Bluetooth (ble://) or TCP (tcp://) are not supported "
				 "by rnsc; use the device's serial port");
	if (strlen(port) >= sizeof(s->port))
		return cfg->fail(cfg->cctx, "port", RNSC_ERR_CONFIG_VALUE, "path too long");
	snprintf(s->port, sizeof(s->port), "%s", port);
	if ((rc = get_int(cfg, "frequency", &freq, &has)) ||
	    (rc = get_int(cfg, "bandwidth", &bw, &has)) ||
	    (rc = get_int(cfg, "txpower", &txp, &has)) ||
	    (rc = get_int(cfg, "spreadingfactor", &sf, &has)) ||
	    (rc = get_int(cfg, "codingrate", &cr, &has)))
		return rc;
	if ((rc = check(cfg, "frequency", freq >= 137000000 && freq <= 3000000000LL,
			"frequency")) ||
	    (rc = check(cfg, "txpower", txp >= 0 && txp <= 37, "TX power")) ||
	    (rc = check(cfg, "bandwidth", bw >= 7800 && bw <= 1625000, "bandwidth")) ||
	    (rc = check(cfg, "spreadingfactor", sf >= 5 && sf <= 12, "spreading factor")) ||
	    (rc = check(cfg, "codingrate", cr >= 5 && cr <= 8, "coding rate")))
		return rc;
	s->want.frequency = (uint32_t)freq;
	s->want.bandwidth = (uint32_t)bw;
	s->want.txpower = (uint8_t)txp;
	s->want.sf = (uint8_t)sf;
	s->want.cr = (uint8_t)cr;
	double d;
	if ((rc = cfg->get_float(cfg->cctx, "airtime_limit_short", &d)) == 0) {
		if ((rc = check(cfg, "airtime_limit_short", d >= 0.0 && d <= 100.0,
				"short-term airtime limit")))
			return rc;
		s->want.has_st_alock = 1;
		s->want.st_alock = d;
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	if ((rc = cfg->get_float(cfg->cctx, "airtime_limit_long", &d)) == 0) {
		if ((rc = check(cfg, "airtime_limit_long", d >= 0.0 && d <= 100.0,
				"long-term airtime limit")))
			return rc;
		s->want.has_lt_alock = 1;
		s->want.lt_alock = d;
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	if ((rc = cfg->get_bool(cfg->cctx, "flow_control", &s->flow_control)) &&
	    rc != RNSC_ERR_NOTFOUND)
		return rc;
	int64_t interval = -1;
	int has_interval;
	const char *call = NULL;
	if ((rc = get_int(cfg, "id_interval", &interval, &has_interval)))
		return rc;
	if ((rc = cfg->get_str(cfg->cctx, "id_callsign", &call)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	s->id_interval = -1;
	if (has_interval && call) {
		if (strlen(call) > RN_CALLSIGN_MAX) {
			char msg[200];
			snprintf(
				msg, sizeof(msg),
				"The encoded ID callsign for RNodeInterface[%s] exceeds the max length "
				"of %u bytes.",
				cfg->name, RN_CALLSIGN_MAX);
			return cfg->fail(cfg->cctx, "id_callsign", RNSC_ERR_CONFIG_VALUE, msg);
		}
		if ((rc = check(cfg, "id_interval", interval >= 0 && interval <= 86400LL * 365,
				"identification interval")))
			return rc;
		s->id_interval = interval;
		s->id_len = strlen(call);
		memcpy(s->id_call, call, s->id_len);
	}
	s->reconnect_wait_ns = RECONNECT_WAIT_NS;
	if ((rc = cfg->get_float(cfg->cctx, "reconnect_wait", &d)) == 0) {
		if (!(d > 0 && d <= 3600))
			return cfg->fail(cfg->cctx, "reconnect_wait", RNSC_ERR_CONFIG_VALUE,
					 "must be between 0 and 3600 seconds");
		s->reconnect_wait_ns = (uint64_t)(d * 1e9);
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	/* Until the device reports, the formula on the configured values (which validation
	 * makes the reported ones): transport takes the bitrate when the interface attaches. */
	rnsc_rnode_radio r = {.have = RNSC_RNODE_HAVE_SF | RNSC_RNODE_HAVE_CR | RNSC_RNODE_HAVE_BW,
			      .sf = (int)sf,
			      .cr = (int)cr,
			      .bandwidth = (uint32_t)bw};
	s->bitrate = rnsc_rnode_bitrate(&r);
	if ((rc = get_int(cfg, "bitrate", &v, &has)))
		return rc;
	if (has && v >= 5)
		s->cfg_bitrate = (uint64_t)v;
	return 0;
}

static int rn_open(void *instp, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		   void **handle)
{
	rnsc_iface_inst *inst = instp;
	int rc;
	if (strcmp(cfg->type, "RNodeInterface") != 0)
		return cfg->fail(cfg->cctx, "type", RNSC_ERR_NOTFOUND,
				 "not an RNode interface type");
	rn_if *s = xalloc(inst, sizeof(*s));
	if (!s)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
	s->inst = inst;
	s->host = host;
	s->fd = -1;
	snprintf(s->name, sizeof(s->name), "%s", cfg->name);
	(void)rnsc_kiss_decoder_init(&s->kdec, s->rxbuf, sizeof(s->rxbuf));
	if ((rc = read_config(s, cfg)))
		goto fail;
	if ((rc = host->timer_new(host->hctx, timer_cb, s, &s->timer)) ||
	    (rc = host->timer_new(host->hctx, id_timer_cb, s, &s->id_timer))) {
		rc = cfg->fail(cfg->cctx, NULL, rc, "cannot create a timer");
		goto fail;
	}
	char msg[640];
	int err;
	if (try_open(s, msg, sizeof(msg), &err) != 0) {
		/* As the reference: logged, retried periodically, the interface offline. */
		rlog(s, RNSC_LOG_ERROR,
		     "Could not open serial port for interface RNodeInterface[%s]: %s", s->name,
		     msg);
		rlog(s, RNSC_LOG_ERROR,
		     "Reticulum will attempt to bring up this interface periodically");
		s->state = ST_CLOSED;
		host->timer_start(host->hctx, s->timer, s->reconnect_wait_ns, 0);
	}
	*handle = s;
	return 0;
fail:
	host->timer_del(host->hctx, s->timer);
	host->timer_del(host->hctx, s->id_timer);
	xfree(inst, s);
	return rc;
}

static int rn_stats(void *handle, rnsc_iface_stats *out)
{
	rn_if *s = handle;
	out->rx_bytes = s->rxb;
	out->tx_bytes = s->txb;
	out->rx_packets = s->rxp;
	out->tx_packets = s->txp;
	out->online = s->state == ST_ONLINE;
	out->bitrate = s->cfg_bitrate ? s->cfg_bitrate : s->bitrate;
	out->hw_mtu = RN_HW_MTU;
	out->reconnects = s->reconnects;
	return 0;
}

static int rn_describe(void *handle, char *buf, size_t cap)
{
	rn_if *s = handle;
	return snprintf(buf, cap, "RNodeInterface[%s]", s->name);
}

RNSC_IFACE_PLUGIN("rnode", "RNodeInterface (RNode LoRa radios over a serial port)", rn_types,
		  rn_open, rn_send, rn_stats, rn_close, rn_describe)
