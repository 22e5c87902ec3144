/* SPDX-License-Identifier: MIT */
/*
 * The "rnode_multi" interface plugin: RNodeMultiInterface, one RNode with several radios
 * on one serial port, as the reference (rns 1.5.4, RNS/Interfaces/RNodeMultiInterface.py)
 * drives it. The interface itself carries no traffic (the reference's process_outgoing
 * without a sub-interface does nothing); each enabled [[[subinterface]]] becomes a child
 * interface (host->spawn, named "<interface>[<subinterface>]" as the reference's
 * RNodeSubInterface prints itself) that sends and receives on one radio. Frames and
 * the per-radio select command: rnode_proto.h.
 *
 *  - Options of the interface: `port` (required; ble:// and tcp:// refused as for
 *    RNodeInterface), `id_callsign` with `id_interval`, rnsc's `reconnect_wait`.
 *    Options of each subinterface: `interface_enabled` (or the interface's `enabled`,
 *    which as in the reference enables every subinterface), `vport` (required),
 *    `frequency`, `bandwidth`, `txpower` (-9 .. 37), `spreadingfactor`, `codingrate`,
 *    `flow_control`, `airtime_limit_short`, `airtime_limit_long`, `outgoing` (no: the
 *    radio never transmits). No subsection, or none enabled, fails the interface with
 *    the reference's message. The reference checks the radio values only once the
 *    device has been detected (and then retries forever); rnsc checks the ones it can at
 *    open() and fails the interface there, and the frequency range, which depends on
 *    the chip the device reports for the port (SX126X/SX127X 137 MHz .. 1 GHz, SX128X
 *    2.2 .. 2.6 GHz), at configuration time, as the reference does.
 *  - Start-up, the reference's configure_device: open the port, 2 s, the detect request
 *    (with INTERFACES), 0.2 s; undetected: logged, port closed and retried; firmware
 *    older than 1.74: critical, port closed and retried (the reference exits the
 *    program). Then per subinterface in file order: its vport must be one the device
 *    listed (else logged, port closed, retried), 2 s, its radio parameters behind the
 *    select, 0.25 s, the reported values validated (frequency within 100 Hz, bandwidth,
 *    TX power, SF, radio state), 0.3 s, online. A subinterface whose radio does not
 *    validate is logged ("Aborting RNode startup") and stays offline, the others go on,
 *    as in the reference. The interface is online after the last one.
 *  - Reports apply to the radio last selected by the device (SEL_INT); FREQUENCY,
 *    BANDWIDTH, SF and CR update that subinterface's bitrate. Data goes to the selected
 *    subinterface. A report or data for a port with no subinterface is counted as a
 *    garbage drop (the reference raises and reconnects the device). CMD_ERROR (0x90) is
 *    the reference's CMD_INT5_DATA too and its parser never reaches the error branch:
 *    rnsc ignores it likewise. READY lets every subinterface send its next queued frame.
 *  - Port gone: every subinterface is closed (the reference's teardown_subinterfaces),
 *    the interface goes offline, and the port is reopened every reconnect_wait; the
 *    subinterfaces are created again when the device is configured again.
 *  - Close (detach): FB_EXT 00 for devices with a display, RADIO_STATE 00 for each
 *    radio, LEAVE FF.
 *  - Station identification: id_interval seconds after the first frame sent since the
 *    last identification, the callsign goes out on every online subinterface.
 *
 * Threading: the interface's loop thread only (children belong to the same loop).
 * Ownership: the plugin owns both handle kinds, the device fd and every queued frame;
 * a child is released in its own close(), which the runtime calls before the parent's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "iface_abi.h"
#include "iface_plugin.h"
#include "kiss.h"
#include "rnode_proto.h"
#include "serial_port.h"
#include "txq.h"

#define RM_HW_MTU 508u
#define RM_RX_MAX 1100u
#define RM_CALLSIGN_MAX 32u
#define MIN_FRAME 19u
#define NS_PER_MS UINT64_C(1000000)
#define NS_PER_S UINT64_C(1000000000)
#define RECONNECT_WAIT_NS (5 * NS_PER_S)
#define SETTLE_NS (2 * NS_PER_S)           /* configure_device and each sub: sleep(2.0) */
#define DETECT_WAIT_NS (200 * NS_PER_MS)   /* sleep(0.2) after detect() */
#define VALIDATE_WAIT_NS (250 * NS_PER_MS) /* validateRadioState: sleep(0.25) */
#define ONLINE_WAIT_NS (300 * NS_PER_MS)   /* sleep(0.3) before a sub is online */
#define FRAME_TIMEOUT_NS (100 * NS_PER_MS)
#define FCQ_MAX 256
#define TXQ_MAX ((size_t)256 << 10)
#define READ_CHUNK 4096
#define MAX_SUBCFG RNSC_IFACE_SUBS_MAX

enum { K_PARENT = 0x524d5031, K_SUB = 0x524d5332 };
enum { ST_CLOSED, ST_SETTLE, ST_DETECT, ST_SUB_SETTLE, ST_SUB_VALIDATE, ST_SUB_ONLINE, ST_ONLINE };

typedef struct fc_frame {
	size_t len;
	uint8_t data[];
} fc_frame;

typedef struct rm_subcfg {
	char name[96];
	int vport;
	rnsc_rnode_params want;
	int txpower; /* signed, -9 .. 37 */
	int flow_control;
	int outgoing;
} rm_subcfg;

struct rm_if;

typedef struct rm_sub {
	int kind;
	struct rm_if *p; /* NULL once the parent has let go (port lost) */
	rnsc_iface_inst *inst;
	const rm_subcfg *cfg;
	const rnsc_iface_host_api *host;
	char name[300];
	int online, ready;
	rnsc_rnode_radio radio;
	uint64_t bitrate;
	fc_frame *fcq[FCQ_MAX];
	size_t fc_head, fc_n;
	uint64_t rxb, txb, rxp, txp;
} rm_sub;

typedef struct rm_if {
	int kind;
	rnsc_iface_inst *inst;
	const rnsc_iface_host_api *host;
	char name[160];
	char port[512];
	rm_subcfg cfg[MAX_SUBCFG];
	size_t ncfg;
	uint64_t reconnect_wait_ns;
	int64_t id_interval; /* < 0: no identification */
	uint8_t id_call[RM_CALLSIGN_MAX];
	size_t id_len;
	int id_pending;
	/* device */
	int fd;
	rnsc_iface_watch *w;
	unsigned interest;
	int state;
	size_t cur; /* the subinterface being configured */
	int display, ever_online;
	rnsc_iface_timer *timer, *id_timer;
	rnsc_rnode_radio dev; /* detect, firmware, platform, MCU */
	uint8_t types[RNSC_RNODE_MULTI_MAX];
	size_t ntypes;
	uint8_t selected;
	rm_sub *live[RNSC_RNODE_MULTI_MAX]; /* by vport */
	uint16_t configured;      /* vports given radio parameters since the port opened */
	rnsc_rnode_radio pending; /* reports for the radio being configured */
	uint64_t pending_bitrate;
	uint64_t last_rx_ns;
	rnsc_kiss_decoder kdec;
	rnsc_kiss_stats kseen;
	uint8_t rxbuf[RM_RX_MAX];
	uint8_t *tx;
	size_t tx_off, tx_len, tx_cap;
	uint64_t txb;
	uint32_t reconnects;
} rm_if;

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

__attribute__((format(printf, 3, 4))) static void rlog(rm_if *s, int level, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->host->log(s->host->hctx, level, msg);
}

static void io_cb(void *ud, int fd, unsigned events);
static void do_write(rm_if *s);
static int sub_transmit(rm_sub *c, const uint8_t *frame, size_t len);

/* ---- subinterfaces ------------------------------------------------------------------------ */

static void sub_fc_clear(rm_sub *c, rnsc_iface_inst *inst)
{
	while (c->fc_n) {
		xfree(inst, c->fcq[c->fc_head]);
		c->fcq[c->fc_head] = NULL;
		c->fc_head = (c->fc_head + 1) % FCQ_MAX;
		c->fc_n--;
		if (c->host)
			c->host->drop(c->host->hctx, RNSC_IFACE_DROP_OFFLINE, 1);
	}
	c->fc_head = 0;
}

/* The reference's teardown_subinterfaces: each child is removed from transport. */
static void teardown_subs(rm_if *s)
{
	for (size_t k = 0; k < RNSC_RNODE_MULTI_MAX; k++) {
		rm_sub *c = s->live[k];
		if (!c)
			continue;
		s->live[k] = NULL;
		sub_fc_clear(c, s->inst);
		c->p = NULL;
		if (c->online) {
			c->online = 0;
			c->host->set_online(c->host->hctx, 0);
		}
		c->host->request_close(c->host->hctx);
	}
}

/* The reference's updateBitrate, logged when the value changes. */
static void update_bitrate(rm_if *s, const char *name, const rnsc_rnode_radio *r, uint64_t *bitrate)
{
	uint64_t b = rnsc_rnode_bitrate(r);
	if (b && b != *bitrate) {
		*bitrate = b;
		rlog(s, RNSC_LOG_VERBOSE, "%s On-air bitrate is now %.2f kbps", name,
		     (double)b / 1000.0);
	}
}

/* ---- device life cycle -------------------------------------------------------------------- */

static int rx_mid_frame(const rm_if *s)
{
	return s->kdec.state == 2 && (s->kdec.len > 0 || s->kdec.esc);
}

static void close_device(rm_if *s)
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
	s->id_pending = 0;
	s->host->timer_stop(s->host->hctx, s->id_timer);
	teardown_subs(s);
}

static void drop_port(rm_if *s, const char *why)
{
	int was_online = s->state == ST_ONLINE;
	close_device(s);
	s->state = ST_CLOSED;
	if (was_online) {
		s->host->set_online(s->host->hctx, 0);
		rlog(s, RNSC_LOG_ERROR,
		     "A serial port error occurred on RNodeMultiInterface[%s] (%s); the interface "
		     "and its subinterfaces are offline, reopening %s every %.1f seconds",
		     s->name, why, s->port, (double)s->reconnect_wait_ns / 1e9);
	} else {
		rlog(s, RNSC_LOG_ERROR, "RNodeMultiInterface[%s]: %s; retrying %s in %.1f seconds",
		     s->name, why, s->port, (double)s->reconnect_wait_ns / 1e9);
	}
	s->host->timer_start(s->host->hctx, s->timer, s->reconnect_wait_ns, 0);
}

static void set_interest(rm_if *s, unsigned interest)
{
	if (s->w && s->interest != interest &&
	    s->host->watch_modify(s->host->hctx, s->w, interest) == 0)
		s->interest = interest;
}

static int queue_bytes(rm_if *s, const uint8_t *p, size_t n)
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

static int try_open(rm_if *s, char *msg, size_t cap, int *err)
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
	memset(&s->dev, 0, sizeof(s->dev));
	s->ntypes = 0;
	s->selected = 0;
	s->configured = 0;
	s->display = 0;
	s->last_rx_ns = s->host->now_ns(s->host->hctx);
	s->state = ST_SETTLE;
	s->host->timer_start(s->host->hctx, s->timer, SETTLE_NS, 0);
	return 0;
}

static void log_mismatch(rm_if *s, const rm_subcfg *sc, unsigned bad)
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
	     "After configuring %s[%s], the reported radio parameters did not match your "
	     "configuration.",
	     s->name, sc->name);
	rlog(s, RNSC_LOG_ERROR,
	     "Make sure that your hardware actually supports the parameters "
	     "specified in the configuration");
	rlog(s, RNSC_LOG_ERROR, "Aborting RNode startup");
}

/* Validation as validateRadioState, TX power signed as the multi reference reports it. */
static unsigned sub_mismatch(const rm_subcfg *sc, const rnsc_rnode_radio *r)
{
	rnsc_rnode_radio rr = *r;
	rnsc_rnode_params want = sc->want;
	if (rr.have & RNSC_RNODE_HAVE_TXP)
		rr.txpower = rr.txpower > 127 ? rr.txpower - 256 : rr.txpower;
	unsigned bad = rnsc_rnode_mismatch(&want, &rr);
	bad &= ~(unsigned)RNSC_RNODE_HAVE_TXP;
	if (!(rr.have & RNSC_RNODE_HAVE_TXP) || rr.txpower != sc->txpower)
		bad |= RNSC_RNODE_HAVE_TXP;
	return bad;
}

/* The next subinterface to configure (from s->cur), or the interface comes online. */
static void next_sub(rm_if *s)
{
	if (s->cur >= s->ncfg) {
		s->state = ST_ONLINE;
		if (s->ever_online) {
			s->reconnects++;
			rlog(s, RNSC_LOG_NOTICE,
			     "Reconnected serial port for RNodeMultiInterface[%s]", s->name);
		}
		s->ever_online = 1;
		s->host->set_online(s->host->hctx, 1);
		return;
	}
	const rm_subcfg *sc = &s->cfg[s->cur];
	if ((size_t)sc->vport >= s->ntypes) {
		char why[300];
		snprintf(why, sizeof(why),
			 "Virtual port \"%d\" for subinterface %s does not exist on %s", sc->vport,
			 sc->name, s->name);
		drop_port(s, why);
		return;
	}
	const char *chip = rnsc_rnode_chip_name(s->types[sc->vport]);
	uint32_t f = sc->want.frequency;
	int ok = strcmp(chip, "SX128X") == 0 ? (f >= 2200000000u && f <= 2600000000u)
					     : (f >= 137000000u && f <= 1000000000u);
	if (!ok) {
		char why[300];
		snprintf(
			why, sizeof(why),
			"Invalid frequency configured for %s[%s] (an %s radio); the configuration for "
			"it contains errors",
			s->name, sc->name, chip);
		drop_port(s, why);
		return;
	}
	memset(&s->pending, 0, sizeof(s->pending));
	s->pending_bitrate = 0;
	s->state = ST_SUB_SETTLE;
	s->host->timer_start(s->host->hctx, s->timer, SETTLE_NS, 0);
}

/* A subinterface is configured (valid or not): it joins transport as the reference's
 * constructor returning does. */
static void spawn_sub(rm_if *s, const rm_subcfg *sc, int valid)
{
	rm_sub *c = xalloc(s->inst, sizeof(*c));
	if (!c) {
		rlog(s, RNSC_LOG_ERROR, "RNodeMultiInterface[%s]: out of memory for %s", s->name,
		     sc->name);
		return;
	}
	c->kind = K_SUB;
	c->p = s;
	c->inst = s->inst;
	c->cfg = sc;
	c->radio = s->pending;
	c->bitrate = s->pending_bitrate;
	snprintf(c->name, sizeof(c->name), "%s[%s]", s->name, sc->name);
	if (s->host->spawn(s->host->hctx, c, c->name, &c->host) != 0) {
		rlog(s, RNSC_LOG_ERROR, "RNodeMultiInterface[%s]: cannot add %s", s->name, c->name);
		xfree(s->inst, c);
		return;
	}
	s->live[sc->vport] = c;
	s->configured |= (uint16_t)(1u << sc->vport);
	rlog(s, RNSC_LOG_VERBOSE, "Spawned new RNode subinterface: %s", c->name);
	if (valid) {
		c->ready = 1;
		c->online = 1;
		c->host->set_online(c->host->hctx, 1);
	}
}

static void timer_cb(void *ud)
{
	rm_if *s = ud;
	char msg[640];
	int err, n;
	uint8_t buf[256];
	switch (s->state) {
	case ST_CLOSED:
		rlog(s, RNSC_LOG_VERBOSE,
		     "Attempting to reconnect serial port %s for RNodeMultiInterface[%s]...",
		     s->port, s->name);
		if (try_open(s, msg, sizeof(msg), &err) != 0) {
			rlog(s, RNSC_LOG_ERROR, "Error while reconnecting port: %s", msg);
			s->host->timer_start(s->host->hctx, s->timer, s->reconnect_wait_ns, 0);
		}
		return;
	case ST_SETTLE:
		n = rnsc_rnode_multi_detect_frames(buf, sizeof(buf));
		s->state = ST_DETECT;
		if (n > 0 && queue_bytes(s, buf, (size_t)n) != 0)
			return;
		if (s->state == ST_DETECT)
			s->host->timer_start(s->host->hctx, s->timer, DETECT_WAIT_NS, 0);
		return;
	case ST_DETECT:
		if (!s->dev.detected) {
			snprintf(msg, sizeof(msg),
				 "Could not detect device for RNodeMultiInterface[%s]", s->name);
			drop_port(s, msg);
			return;
		}
		if ((s->dev.have & RNSC_RNODE_HAVE_FW) &&
		    !(s->dev.fw_major >= RNSC_RNODE_FW_MAJ &&
		      s->dev.fw_minor >= RNSC_RNODE_MULTI_FW_MIN)) {
			/* the reference's own test: the minor alone must reach 74 */
			rlog(s, RNSC_LOG_CRITICAL,
			     "The firmware version of the connected RNode is %d.%d; this version of "
			     "Reticulum requires at least version %d.%d. Please update your RNode "
			     "firmware with rnodeconf",
			     s->dev.fw_major, s->dev.fw_minor, RNSC_RNODE_FW_MAJ,
			     RNSC_RNODE_MULTI_FW_MIN);
			drop_port(s, "firmware too old");
			return;
		}
		s->display = (s->dev.have & RNSC_RNODE_HAVE_PLATFORM) &&
			     (s->dev.platform == RNSC_RNODE_PLATFORM_ESP32 ||
			      s->dev.platform == RNSC_RNODE_PLATFORM_NRF52);
		rlog(s, RNSC_LOG_INFO, "Serial port %s is now open", s->port);
		rlog(s, RNSC_LOG_VERBOSE, "Creating subinterfaces...");
		s->cur = 0;
		next_sub(s);
		return;
	case ST_SUB_SETTLE: {
		const rm_subcfg *sc = &s->cfg[s->cur];
		rlog(s, RNSC_LOG_VERBOSE, "Configuring RNode subinterface %s[%s]...", s->name,
		     sc->name);
		n = rnsc_rnode_multi_config_frames((uint8_t)sc->vport, &sc->want, buf, sizeof(buf));
		s->state = ST_SUB_VALIDATE;
		if (n > 0 && queue_bytes(s, buf, (size_t)n) != 0)
			return;
		if (s->state != ST_SUB_VALIDATE)
			return;
		rlog(s, RNSC_LOG_VERBOSE,
		     "Waiting for radio configuration validation for %s[%s]...", s->name, sc->name);
		s->host->timer_start(s->host->hctx, s->timer, VALIDATE_WAIT_NS, 0);
		return;
	}
	case ST_SUB_VALIDATE: {
		const rm_subcfg *sc = &s->cfg[s->cur];
		unsigned bad = sub_mismatch(sc, &s->pending);
		if (bad) {
			log_mismatch(s, sc, bad);
			spawn_sub(s, sc, 0);
			s->cur++;
			next_sub(s);
			return;
		}
		rlog(s, RNSC_LOG_NOTICE, "%s[%s] is configured and powered up", s->name, sc->name);
		s->state = ST_SUB_ONLINE;
		s->host->timer_start(s->host->hctx, s->timer, ONLINE_WAIT_NS, 0);
		return;
	}
	case ST_SUB_ONLINE:
		spawn_sub(s, &s->cfg[s->cur], 1);
		s->cur++;
		next_sub(s);
		return;
	default:
		return;
	}
}

/* ---- receive ------------------------------------------------------------------------------ */

static void sub_release(rm_sub *c);

/* The radio record the selected port's reports go to: a live subinterface's, or the
 * one being configured (the reference's sub registers itself before it configures). */
static rnsc_rnode_radio *selected_radio(rm_if *s, rm_sub **cp)
{
	*cp = s->selected < RNSC_RNODE_MULTI_MAX ? s->live[s->selected] : NULL;
	if (*cp)
		return &(*cp)->radio;
	if ((s->state == ST_SUB_VALIDATE || s->state == ST_SUB_SETTLE ||
	     s->state == ST_SUB_ONLINE) &&
	    s->cur < s->ncfg && s->cfg[s->cur].vport == s->selected)
		return &s->pending;
	return NULL;
}

static void on_report(rm_if *s, uint8_t cmd, const uint8_t *p, size_t len)
{
	uint8_t code = 0;
	switch (cmd) {
	case RNSC_RNODE_CMD_SEL_INT:
		if (len >= 1)
			s->selected = p[0];
		return;
	case RNSC_RNODE_CMD_INTERFACES:
		/* (index, type) pairs, appended in the order given */
		for (size_t k = 0; k + 1 < len; k += 2)
			if (s->ntypes < RNSC_RNODE_MULTI_MAX)
				s->types[s->ntypes++] = p[k + 1];
		return;
	case RNSC_RNODE_CMD_ERROR: /* the reference's CMD_INT5_DATA: never parsed as an error */
		return;
	case RNSC_RNODE_CMD_DETECT:
	case RNSC_RNODE_CMD_FW_VERSION:
	case RNSC_RNODE_CMD_PLATFORM:
	case RNSC_RNODE_CMD_MCU:
	case RNSC_RNODE_CMD_RANDOM:
		if (rnsc_rnode_apply(&s->dev, cmd, p, len, &code) == RNSC_RNODE_EV_SHORT)
			s->host->drop(s->host->hctx, RNSC_IFACE_DROP_GARBAGE, 2 + (uint64_t)len);
		return;
	case RNSC_RNODE_CMD_READY:
		for (size_t k = 0; k < RNSC_RNODE_MULTI_MAX; k++)
			if (s->live[k])
				sub_release(s->live[k]);
		return;
	case RNSC_RNODE_CMD_RESET:
		if (len >= 1 && p[0] == 0xF8 && s->dev.platform == RNSC_RNODE_PLATFORM_ESP32 &&
		    s->state == ST_ONLINE)
			drop_port(s,
				  "Detected reset while device was online, reinitialising device");
		return;
	default:
		break;
	}
	rm_sub *c;
	rnsc_rnode_radio *r = selected_radio(s, &c);
	if (!r) {
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_GARBAGE, 2 + (uint64_t)len);
		return;
	}
	int ev = rnsc_rnode_apply(r, cmd, p, len, &code);
	if (ev == RNSC_RNODE_EV_SHORT) {
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_GARBAGE, 2 + (uint64_t)len);
		return;
	}
	char pname[300];
	if (!c)
		snprintf(pname, sizeof(pname), "%s[%s]", s->name, s->cfg[s->cur].name);
	const char *nm = c ? c->name : pname;
	if (cmd == RNSC_RNODE_CMD_FREQUENCY)
		rlog(s, RNSC_LOG_DEBUG, "%s Radio reporting frequency is %.6g MHz", nm,
		     r->frequency / 1e6);
	else if (cmd == RNSC_RNODE_CMD_BANDWIDTH)
		rlog(s, RNSC_LOG_DEBUG, "%s Radio reporting bandwidth is %.6g KHz", nm,
		     r->bandwidth / 1e3);
	else if (cmd == RNSC_RNODE_CMD_TXPOWER)
		rlog(s, RNSC_LOG_DEBUG, "%s Radio reporting TX power is %d dBm", nm,
		     r->txpower > 127 ? r->txpower - 256 : r->txpower);
	else if (cmd == RNSC_RNODE_CMD_SF)
		rlog(s, RNSC_LOG_DEBUG, "%s Radio reporting spreading factor is %d", nm, r->sf);
	else if (cmd == RNSC_RNODE_CMD_CR)
		rlog(s, RNSC_LOG_DEBUG, "%s Radio reporting coding rate is %d", nm, r->cr);
	if (ev == RNSC_RNODE_EV_PARAM)
		update_bitrate(s, nm, r, c ? &c->bitrate : &s->pending_bitrate);
}

static int on_kiss(void *ud, uint8_t type, const uint8_t *payload, size_t len)
{
	rm_if *s = ud;
	if (type == RNSC_RNODE_CMD_DATA) {
		rm_sub *c = s->selected < RNSC_RNODE_MULTI_MAX ? s->live[s->selected] : NULL;
		const rnsc_iface_host_api *h = c ? c->host : s->host;
		if (!c)
			s->host->drop(s->host->hctx, RNSC_IFACE_DROP_GARBAGE, 2 + (uint64_t)len);
		else if (len > RM_HW_MTU)
			h->drop(h->hctx, RNSC_IFACE_DROP_OVERSIZE, 1);
		else if (len < MIN_FRAME)
			h->drop(h->hctx, RNSC_IFACE_DROP_RUNT, 1);
		else {
			c->rxb += len;
			c->rxp++;
			h->deliver(h->hctx, payload, len);
		}
	} else {
		on_report(s, type, payload, len);
	}
	return s->fd < 0 ? RNSC_ERR_STATE : 0;
}

static void account_rx_drops(rm_if *s)
{
	uint64_t over = s->kdec.stats.drop_oversize - s->kseen.drop_oversize;
	uint64_t garbage = s->kdec.stats.garbage - s->kseen.garbage;
	s->kseen = s->kdec.stats;
	if (over)
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_OVERSIZE, over);
	if (garbage)
		s->host->drop(s->host->hctx, RNSC_IFACE_DROP_GARBAGE, garbage);
}

static void do_read(rm_if *s)
{
	uint8_t buf[READ_CHUNK];
	for (int round = 0; round < 16 && s->fd >= 0; round++) {
		ssize_t n = read(s->fd, buf, sizeof(buf));
		if (n > 0) {
			uint64_t now = s->host->now_ns(s->host->hctx);
			if (now - s->last_rx_ns > FRAME_TIMEOUT_NS && rx_mid_frame(s)) {
				rlog(s, RNSC_LOG_WARNING,
				     "RNodeMultiInterface[%s] serial read timeout in command %u",
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

static void do_write(rm_if *s)
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
	rm_if *s = ud;
	(void)fd;
	if (events & (RNSC_IFACE_EV_READ | RNSC_IFACE_EV_ERROR))
		do_read(s);
	if (s->fd >= 0 && (events & RNSC_IFACE_EV_ERROR) && !(events & RNSC_IFACE_EV_READ))
		drop_port(s, "hang-up");
	if (s->fd >= 0 && (events & RNSC_IFACE_EV_WRITE))
		do_write(s);
}

/* ---- transmit ----------------------------------------------------------------------------- */

/* The reference's RNodeSubInterface.process_outgoing for an online, ready radio. */
static int sub_transmit(rm_sub *c, const uint8_t *frame, size_t len)
{
	rm_if *s = c->p;
	uint8_t enc[4 + 2 * RM_HW_MTU + 8];
	if (!s || rnsc_kiss_encoded_max(len) + 4 > sizeof(enc))
		return RNSC_ERR_TOOBIG;
	(void)rnsc_rnode_multi_select((uint8_t)c->cfg->vport, enc, 4);
	int n = rnsc_kiss_encode(enc + 4, sizeof(enc) - 4, frame, len);
	if (n < 0)
		return n;
	if (c->cfg->flow_control)
		c->ready = 0;
	if (s->id_interval >= 0) {
		int is_id = len == s->id_len && memcmp(frame, s->id_call, len) == 0;
		if (is_id) {
			s->id_pending = 0;
			s->host->timer_stop(s->host->hctx, s->id_timer);
		} else if (!s->id_pending) {
			s->id_pending = 1;
			s->host->timer_start(s->host->hctx, s->id_timer,
					     (uint64_t)s->id_interval * NS_PER_S, 0);
		}
	}
	int rc = queue_bytes(s, enc, (size_t)n + 4);
	if (rc)
		return rc;
	c->txb += len;
	c->txp++;
	s->txb += (size_t)n - 3; /* the reference's parent counts the escaped packet */
	return 0;
}

static int sub_enqueue(rm_sub *c, rnsc_iface_inst *inst, const uint8_t *frame, size_t len)
{
	fc_frame *f;
	if (c->fc_n >= FCQ_MAX || !(f = xalloc(inst, sizeof(*f) + (len ? len : 1))))
		return c->fc_n >= FCQ_MAX ? RNSC_ERR_TOOBIG : RNSC_ERR_NOMEM;
	f->len = len;
	if (len)
		memcpy(f->data, frame, len);
	c->fcq[(c->fc_head + c->fc_n) % FCQ_MAX] = f;
	c->fc_n++;
	return 0;
}

/* READY: the reference's RNodeSubInterface.process_queue. */
static void sub_release(rm_sub *c)
{
	c->ready = 1;
	if (!c->fc_n || !c->p)
		return;
	rnsc_iface_inst *inst = c->p->inst;
	fc_frame *f = c->fcq[c->fc_head];
	c->fcq[c->fc_head] = NULL;
	c->fc_head = (c->fc_head + 1) % FCQ_MAX;
	c->fc_n--;
	if (sub_transmit(c, f->data, f->len) != 0)
		c->host->drop(c->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
	xfree(inst, f);
}

static int rm_send(void *handle, const uint8_t *frame, size_t len)
{
	rm_sub *c = handle;
	if (c->kind == K_PARENT)
		return 0; /* the reference's process_outgoing(data, None) does nothing */
	if (!c->cfg->outgoing)
		return 0; /* outgoing = no: transport never sends here in the reference */
	if (!c->online || !c->p || c->p->fd < 0) {
		c->host->drop(c->host->hctx, RNSC_IFACE_DROP_OFFLINE, 1);
		return RNSC_ERR_STATE;
	}
	int rc = c->ready ? sub_transmit(c, frame, len) : sub_enqueue(c, c->p->inst, frame, len);
	if (rc)
		c->host->drop(c->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
	return rc;
}

static void id_timer_cb(void *ud)
{
	rm_if *s = ud;
	if (!s->id_pending || s->state != ST_ONLINE)
		return;
	int any = 0;
	for (size_t k = 0; k < RNSC_RNODE_MULTI_MAX; k++) {
		rm_sub *c = s->live[k];
		if (c && c->online) {
			any = 1;
			(void)rm_send(c, s->id_call, s->id_len);
		}
	}
	if (any)
		rlog(s, RNSC_LOG_DEBUG,
		     "Interface RNodeMultiInterface[%s] is transmitting beacon data on all "
		     "subinterfaces: %.*s",
		     s->name, (int)s->id_len, (const char *)s->id_call);
}

/* ---- configuration ------------------------------------------------------------------------ */

static int get_int(const rnsc_iface_config *cfg, const char *key, int64_t *v, int *has)
{
	int rc = cfg->get_int(cfg->cctx, key, v);
	*has = rc == 0;
	return rc == RNSC_ERR_NOTFOUND ? 0 : rc;
}

static int check(const rnsc_iface_config *sub, const char *parent, const char *key, int ok,
		 const char *what)
{
	char msg[320];
	if (ok)
		return 0;
	snprintf(msg, sizeof(msg),
		 "Invalid %s configured for %s[%s]; the configuration contains errors, interface "
		 "is offline",
		 what, parent, sub->name);
	return sub->fail(sub->cctx, key, RNSC_ERR_CONFIG_VALUE, msg);
}

static int read_lock(const rnsc_iface_config *sub, const char *parent, const char *key,
		     const char *what, int *has, double *out)
{
	double d;
	int rc = sub->get_float(sub->cctx, key, &d);
	if (rc == RNSC_ERR_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	/* the reference tests `if st_alock and ...`: 0 passes, and sends 0 */
	if ((rc = check(sub, parent, key, d == 0.0 || (d >= 0.0 && d <= 100.0), what)))
		return rc;
	*has = 1;
	*out = d;
	return 0;
}

static int read_sub(rm_if *s, const rnsc_iface_config *sub, rm_subcfg *sc)
{
	int64_t v[6] = {0};
	static const char *const keys[] = {"vport",   "frequency",       "bandwidth",
					   "txpower", "spreadingfactor", "codingrate"};
	int has, rc;
	snprintf(sc->name, sizeof(sc->name), "%s", sub->name);
	for (size_t k = 0; k < 6; k++) {
		if ((rc = get_int(sub, keys[k], &v[k], &has)))
			return rc;
		if (!has) {
			char msg[200];
			snprintf(msg, sizeof(msg), "%s[%s] needs a %s", s->name, sub->name,
				 keys[k]);
			return sub->fail(sub->cctx, keys[k], RNSC_ERR_CONFIG_VALUE, msg);
		}
	}
	if ((rc = check(sub, s->name, "vport", v[0] >= 0 && v[0] < RNSC_RNODE_MULTI_MAX,
			"virtual port")) ||
	    (rc = check(sub, s->name, "frequency", v[1] >= 137000000 && v[1] <= 2600000000LL,
			"frequency")) ||
	    (rc = check(sub, s->name, "bandwidth", v[2] >= 7800 && v[2] <= 1625000, "bandwidth")) ||
	    (rc = check(sub, s->name, "txpower", v[3] >= -9 && v[3] <= 37, "TX power")) ||
	    (rc = check(sub, s->name, "spreadingfactor", v[4] >= 5 && v[4] <= 12,
			"spreading factor")) ||
	    (rc = check(sub, s->name, "codingrate", v[5] >= 5 && v[5] <= 8, "coding rate")))
		return rc;
	sc->vport = (int)v[0];
	sc->want.frequency = (uint32_t)v[1];
	sc->want.bandwidth = (uint32_t)v[2];
	sc->txpower = (int)v[3];
	sc->want.txpower = (uint8_t)(int8_t)v[3];
	sc->want.sf = (uint8_t)v[4];
	sc->want.cr = (uint8_t)v[5];
	if ((rc = read_lock(sub, s->name, "airtime_limit_short", "short-term airtime limit",
			    &sc->want.has_st_alock, &sc->want.st_alock)) ||
	    (rc = read_lock(sub, s->name, "airtime_limit_long", "long-term airtime limit",
			    &sc->want.has_lt_alock, &sc->want.lt_alock)))
		return rc;
	if ((rc = sub->get_bool(sub->cctx, "flow_control", &sc->flow_control)) &&
	    rc != RNSC_ERR_NOTFOUND)
		return rc;
	int out = 1;
	if ((rc = sub->get_bool(sub->cctx, "outgoing", &out)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	sc->outgoing = out;
	for (size_t k = 0; k < s->ncfg; k++)
		if (s->cfg[k].vport == sc->vport)
			return check(sub, s->name, "vport", 0, "virtual port (used twice)");
	return 0;
}

static int read_config(rm_if *s, const rnsc_iface_config *cfg)
{
	int rc;
	const char *port = NULL;
	if (!RNSC_OPS_HAS(cfg, rnsc_iface_config, sub_at))
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_ABI,
				 "this runtime gives interface plugins no subsections");
	size_t count = cfg->sub_count(cfg->cctx);
	int all_enabled = 0;
	if ((rc = cfg->get_bool(cfg->cctx, "enabled", &all_enabled)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	char msg[300];
	if (count == 0) {
		snprintf(msg, sizeof(msg), "No subinterfaces configured for %s", s->name);
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_CONFIG_VALUE, msg);
	}
	for (size_t i = 0; i < count; i++) {
		rnsc_iface_config sub;
		if ((rc = cfg->sub_at(cfg->cctx, i, &sub)))
			return rc;
		int en = 0;
		if ((rc = sub.get_bool(sub.cctx, "interface_enabled", &en)) &&
		    rc != RNSC_ERR_NOTFOUND)
			return rc;
		if (!en && !all_enabled)
			continue;
		if (s->ncfg >= RNSC_RNODE_MULTI_MAX)
			return sub.fail(sub.cctx, NULL, RNSC_ERR_CONFIG_VALUE,
					"more enabled subinterfaces than an RNode has ports (11)");
		if ((rc = read_sub(s, &sub, &s->cfg[s->ncfg])))
			return rc;
		s->ncfg++;
	}
	if (s->ncfg == 0) {
		snprintf(msg, sizeof(msg), "No subinterfaces enabled for %s", s->name);
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_CONFIG_VALUE, msg);
	}
	rc = cfg->get_str(cfg->cctx, "port", &port);
	if (rc == RNSC_ERR_NOTFOUND) {
		snprintf(msg, sizeof(msg), "No port specified for %s", s->name);
		return cfg->fail(cfg->cctx, "port", RNSC_ERR_CONFIG_VALUE, msg);
	}
	if (rc)
		return rc;
	if (strncasecmp(port, "ble://", 6) == 0 || strncasecmp(port, "tcp://", 6) == 0)
		return cfg->fail(cfg->cctx, "port", RNSC_ERR_CONFIG_VALUE,
				 "RNodes over Bluetooth (ble://) or TCP (tcp://) are not supported "
				 "by rnsc; use the device's serial port");
	if (strlen(port) >= sizeof(s->port))
		return cfg->fail(cfg->cctx, "port", RNSC_ERR_CONFIG_VALUE, "path too long");
	snprintf(s->port, sizeof(s->port), "%s", port);
	int64_t interval = -1;
	int has_interval;
	const char *call = NULL;
	if ((rc = get_int(cfg, "id_interval", &interval, &has_interval)))
		return rc;
	if ((rc = cfg->get_str(cfg->cctx, "id_callsign", &call)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	s->id_interval = -1;
	if (has_interval && call) {
		if (strlen(call) > RM_CALLSIGN_MAX) {
			snprintf(
				msg, sizeof(msg),
				"The encoded ID callsign for RNodeMultiInterface[%s] exceeds the max "
				"length of %u bytes.",
				s->name, RM_CALLSIGN_MAX);
			return cfg->fail(cfg->cctx, "id_callsign", RNSC_ERR_CONFIG_VALUE, msg);
		}
		if (interval < 0 || interval > 86400LL * 365)
			return cfg->fail(cfg->cctx, "id_interval", RNSC_ERR_CONFIG_VALUE,
					 "identification interval out of range");
		s->id_interval = interval;
		s->id_len = strlen(call);
		memcpy(s->id_call, call, s->id_len);
	}
	s->reconnect_wait_ns = RECONNECT_WAIT_NS;
	double d;
	if ((rc = cfg->get_float(cfg->cctx, "reconnect_wait", &d)) == 0) {
		if (!(d > 0 && d <= 3600))
			return cfg->fail(cfg->cctx, "reconnect_wait", RNSC_ERR_CONFIG_VALUE,
					 "must be between 0 and 3600 seconds");
		s->reconnect_wait_ns = (uint64_t)(d * 1e9);
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	return 0;
}

/* ---- ops ---------------------------------------------------------------------------------- */

static const char *const rm_types[] = {"RNodeMultiInterface", NULL};

static void rm_close(void *handle)
{
	rm_sub *c = handle;
	if (c->kind == K_SUB) {
		rm_if *p = c->p;
		if (p)
			for (size_t k = 0; k < RNSC_RNODE_MULTI_MAX; k++)
				if (p->live[k] == c)
					p->live[k] = NULL;
		sub_fc_clear(c, c->inst);
		xfree(c->inst, c);
		return;
	}
	rm_if *s = handle;
	if (s->fd >= 0 && s->state >= ST_SUB_SETTLE) {
		uint8_t idx[RNSC_RNODE_MULTI_MAX], buf[96];
		size_t n = 0;
		for (size_t k = 0; k < RNSC_RNODE_MULTI_MAX; k++)
			if (s->configured & (1u << k))
				idx[n++] = (uint8_t)k;
		int len = rnsc_rnode_multi_detach_frames(s->display, idx, n, buf, sizeof(buf));
		do_write(s);
		if (len > 0 && s->fd >= 0 && write(s->fd, buf, (size_t)len) != len)
			rlog(s, RNSC_LOG_ERROR,
			     "An error occurred while detaching RNodeMultiInterface[%s]", s->name);
	}
	close_device(s);
	s->host->timer_del(s->host->hctx, s->timer);
	s->host->timer_del(s->host->hctx, s->id_timer);
	xfree(s->inst, s->tx);
	xfree(s->inst, s);
}

static int rm_open(void *instp, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		   void **handle)
{
	rnsc_iface_inst *inst = instp;
	int rc;
	if (strcmp(cfg->type, "RNodeMultiInterface") != 0)
		return cfg->fail(cfg->cctx, "type", RNSC_ERR_NOTFOUND,
				 "not an RNodeMultiInterface");
	rm_if *s = xalloc(inst, sizeof(*s));
	if (!s)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
	s->kind = K_PARENT;
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
		rlog(s, RNSC_LOG_ERROR,
		     "Could not open serial port for interface RNodeMultiInterface[%s]: %s",
		     s->name, msg);
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

static int rm_stats(void *handle, rnsc_iface_stats *out)
{
	rm_sub *c = handle;
	if (c->kind == K_SUB) {
		out->rx_bytes = c->rxb;
		out->tx_bytes = c->txb;
		out->rx_packets = c->rxp;
		out->tx_packets = c->txp;
		out->online = c->online && c->p;
		out->bitrate = c->bitrate;
		out->hw_mtu = RM_HW_MTU;
		return 0;
	}
	rm_if *s = handle;
	uint32_t n = 0;
	for (size_t k = 0; k < RNSC_RNODE_MULTI_MAX; k++)
		n += s->live[k] != NULL;
	out->tx_bytes = s->txb;
	out->online = s->state == ST_ONLINE;
	out->hw_mtu = RM_HW_MTU;
	out->children = n;
	out->reconnects = s->reconnects;
	return 0;
}

static int rm_describe(void *handle, char *buf, size_t cap)
{
	rm_sub *c = handle;
	if (c->kind == K_SUB)
		return snprintf(buf, cap, "%s", c->name);
	return snprintf(buf, cap, "RNodeMultiInterface[%s]", ((rm_if *)handle)->name);
}

RNSC_IFACE_PLUGIN("rnode_multi",
		  "RNodeMultiInterface (multi-radio RNodes over a serial port, a subinterface "
		  "per radio)",
		  rm_types, rm_open, rm_send, rm_stats, rm_close, rm_describe)
