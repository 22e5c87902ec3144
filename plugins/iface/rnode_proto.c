/* SPDX-License-Identifier: MIT */
/* The RNode host protocol (rnode_proto.h). */
#include <string.h>

#include "err.h"
#include "kiss.h"
#include "rnode_proto.h"

#define Q_SNR_MIN_BASE (-9.0)
#define Q_SNR_MAX 6.0
#define Q_SNR_STEP 2.0

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

int rnsc_rnode_fw_ok(const rnsc_rnode_radio *r)
{
	return r->fw_major > RNSC_RNODE_FW_MAJ ||
	       (r->fw_major == RNSC_RNODE_FW_MAJ && r->fw_minor >= RNSC_RNODE_FW_MIN);
}

uint64_t rnsc_rnode_bitrate(const rnsc_rnode_radio *r)
{
	unsigned need = RNSC_RNODE_HAVE_SF | RNSC_RNODE_HAVE_CR | RNSC_RNODE_HAVE_BW;
	if ((r->have & need) != need || r->sf <= 0 || r->cr <= 0 || r->bandwidth == 0 || r->sf > 30)
		return 0;
	/* sf * ((4 / cr) / (2^sf / (bw / 1000))) * 1000 */
	double b = r->sf * ((4.0 / r->cr) / ((double)(1ul << r->sf) / (r->bandwidth / 1000.0))) *
		   1000.0;
	return b > 0 ? (uint64_t)b : 0;
}

/* The reference's link quality estimate from SNR and SF. */
static double quality(const rnsc_rnode_radio *r)
{
	double sfs = r->sf - 7;
	double lo = Q_SNR_MIN_BASE - sfs * Q_SNR_STEP;
	double q = ((r->snr - lo) / (Q_SNR_MAX - lo)) * 100.0;
	q = q > 100.0 ? 100.0 : q < 0.0 ? 0.0 : q;
	return (double)(long)(q * 10.0 + 0.5) / 10.0; /* one decimal, as the reference rounds */
}

int rnsc_rnode_apply(rnsc_rnode_radio *r, uint8_t cmd, const uint8_t *p, size_t len, uint8_t *code)
{
	static const struct {
		uint8_t cmd;
		uint8_t need;
	} NEED[] = {
		{RNSC_RNODE_CMD_FREQUENCY, 4},  {RNSC_RNODE_CMD_BANDWIDTH, 4},
		{RNSC_RNODE_CMD_STAT_RX, 4},    {RNSC_RNODE_CMD_STAT_TX, 4},
		{RNSC_RNODE_CMD_FW_VERSION, 2}, {RNSC_RNODE_CMD_ST_ALOCK, 2},
		{RNSC_RNODE_CMD_LT_ALOCK, 2},   {RNSC_RNODE_CMD_STAT_BAT, 2},
		{RNSC_RNODE_CMD_STAT_CHTM, 11}, {RNSC_RNODE_CMD_STAT_PHYPRM, 12},
		{RNSC_RNODE_CMD_STAT_CSMA, 3},
	};
	size_t need = 1;
	for (size_t k = 0; k < sizeof(NEED) / sizeof(NEED[0]); k++)
		if (NEED[k].cmd == cmd)
			need = NEED[k].need;
	if (cmd == RNSC_RNODE_CMD_READY)
		return RNSC_RNODE_EV_READY; /* the reference acts on READY with or without a value */
	if (len < need || !p) {
		r->short_reports++;
		return RNSC_RNODE_EV_SHORT;
	}
	uint8_t b = p[0];
	switch (cmd) {
	case RNSC_RNODE_CMD_FREQUENCY:
		r->frequency = be32(p);
		r->have |= RNSC_RNODE_HAVE_FREQ;
		return RNSC_RNODE_EV_PARAM;
	case RNSC_RNODE_CMD_BANDWIDTH:
		r->bandwidth = be32(p);
		r->have |= RNSC_RNODE_HAVE_BW;
		return RNSC_RNODE_EV_PARAM;
	case RNSC_RNODE_CMD_TXPOWER:
		r->txpower = b;
		r->have |= RNSC_RNODE_HAVE_TXP;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_SF:
		r->sf = b;
		r->have |= RNSC_RNODE_HAVE_SF;
		return RNSC_RNODE_EV_PARAM;
	case RNSC_RNODE_CMD_CR:
		r->cr = b;
		r->have |= RNSC_RNODE_HAVE_CR;
		return RNSC_RNODE_EV_PARAM;
	case RNSC_RNODE_CMD_RADIO_STATE:
		r->state = b;
		r->have |= RNSC_RNODE_HAVE_STATE;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_RADIO_LOCK:
		r->lock = b;
		r->have |= RNSC_RNODE_HAVE_LOCK;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_DETECT:
		r->detected = b == RNSC_RNODE_DETECT_RESP;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_FW_VERSION:
		r->fw_major = p[0];
		r->fw_minor = p[1];
		r->have |= RNSC_RNODE_HAVE_FW;
		return RNSC_RNODE_EV_FW;
	case RNSC_RNODE_CMD_PLATFORM:
		r->platform = b;
		r->have |= RNSC_RNODE_HAVE_PLATFORM;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_MCU:
		r->mcu = b;
		r->have |= RNSC_RNODE_HAVE_MCU;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_STAT_RX:
	case RNSC_RNODE_CMD_STAT_TX:
		*(cmd == RNSC_RNODE_CMD_STAT_RX ? &r->stat_rx : &r->stat_tx) = be32(p);
		r->have |= RNSC_RNODE_HAVE_STAT_RXTX;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_STAT_RSSI:
		r->rssi = (int)b - RNSC_RNODE_RSSI_OFFSET;
		r->have |= RNSC_RNODE_HAVE_RSSI;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_STAT_SNR:
		r->snr = (int8_t)b * 0.25;
		r->have |= RNSC_RNODE_HAVE_SNR;
		if (r->have & RNSC_RNODE_HAVE_SF)
			r->quality = quality(r);
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_ST_ALOCK:
	case RNSC_RNODE_CMD_LT_ALOCK:
		if (cmd == RNSC_RNODE_CMD_ST_ALOCK) {
			r->st_alock = be16(p) / 100.0;
			r->have |= RNSC_RNODE_HAVE_ST_ALOCK;
		} else {
			r->lt_alock = be16(p) / 100.0;
			r->have |= RNSC_RNODE_HAVE_LT_ALOCK;
		}
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_STAT_CHTM:
		r->airtime_short = be16(p) / 100.0;
		r->airtime_long = be16(p + 2) / 100.0;
		r->load_short = be16(p + 4) / 100.0;
		r->load_long = be16(p + 6) / 100.0;
		r->current_rssi = (int)p[8] - RNSC_RNODE_RSSI_OFFSET;
		r->noise_floor = (int)p[9] - RNSC_RNODE_RSSI_OFFSET;
		r->have_interference = p[10] != 0xFF;
		r->interference = r->have_interference ? (int)p[10] - RNSC_RNODE_RSSI_OFFSET : 0;
		r->have |= RNSC_RNODE_HAVE_CHTM;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_STAT_PHYPRM:
		r->symbol_time_ms = be16(p) / 1000.0;
		r->symbol_rate = be16(p + 2);
		r->preamble_symbols = be16(p + 4);
		r->preamble_ms = be16(p + 6);
		r->csma_slot_ms = be16(p + 8);
		r->difs_ms = be16(p + 10);
		r->have |= RNSC_RNODE_HAVE_PHY;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_STAT_CSMA:
		r->cw_band = p[0];
		r->cw_min = p[1];
		r->cw_max = p[2];
		r->have |= RNSC_RNODE_HAVE_CSMA;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_STAT_BAT:
		r->battery_state = p[0];
		r->battery_percent = p[1] > 100 ? 100 : p[1];
		r->have |= RNSC_RNODE_HAVE_BAT;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_STAT_TEMP: {
		int t = (int)b - 120;
		r->have_temperature = t >= -30 && t <= 90;
		r->temperature = r->have_temperature ? t : 0;
		r->have |= RNSC_RNODE_HAVE_TEMP;
		return RNSC_RNODE_EV_NONE;
	}
	case RNSC_RNODE_CMD_RANDOM:
		r->random = b;
		return RNSC_RNODE_EV_NONE;
	case RNSC_RNODE_CMD_ERROR:
		*code = b;
		return b == RNSC_RNODE_ERR_MEMORY_LOW || b == RNSC_RNODE_ERR_MODEM_TIMEOUT
			       ? RNSC_RNODE_EV_ERROR_SOFT
			       : RNSC_RNODE_EV_ERROR_FATAL;
	case RNSC_RNODE_CMD_RESET:
		return b == 0xF8 ? RNSC_RNODE_EV_RESET : RNSC_RNODE_EV_NONE;
	default: /* display and framebuffer reads, blink, unknown: nothing for a host to act on */
		return RNSC_RNODE_EV_NONE;
	}
}

/* Appends one command frame; *at advances. RNSC_ERR_BUFSIZE when it does not fit. */
static int put(uint8_t *out, size_t cap, size_t *at, uint8_t cmd, const uint8_t *p, size_t n)
{
	int k = rnsc_kiss_encode_frame(out + *at, cap - *at, cmd, p, n);
	if (k < 0)
		return RNSC_ERR_BUFSIZE;
	*at += (size_t)k;
	return 0;
}

int rnsc_rnode_detect_frames(uint8_t *out, size_t cap)
{
	/* One write in the reference: the four requests share their FENDs. */
	static const uint8_t D[] = {0xC0, RNSC_RNODE_CMD_DETECT,     RNSC_RNODE_DETECT_REQ,
				    0xC0, RNSC_RNODE_CMD_FW_VERSION, 0x00,
				    0xC0, RNSC_RNODE_CMD_PLATFORM,   0x00,
				    0xC0, RNSC_RNODE_CMD_MCU,        0x00,
				    0xC0};
	if (!out || cap < sizeof(D))
		return RNSC_ERR_BUFSIZE;
	memcpy(out, D, sizeof(D));
	return (int)sizeof(D);
}

static int put_lock(uint8_t *out, size_t cap, size_t *at, uint8_t cmd, double pct)
{
	unsigned v = (unsigned)(int)(pct * 100); /* int(x*100), 0..10000 */
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	return put(out, cap, at, cmd, b, 2);
}

int rnsc_rnode_config_frames(const rnsc_rnode_params *c, uint8_t *out, size_t cap)
{
	size_t at = 0;
	uint8_t f[4] = {(uint8_t)(c->frequency >> 24), (uint8_t)(c->frequency >> 16),
			(uint8_t)(c->frequency >> 8), (uint8_t)c->frequency};
	uint8_t w[4] = {(uint8_t)(c->bandwidth >> 24), (uint8_t)(c->bandwidth >> 16),
			(uint8_t)(c->bandwidth >> 8), (uint8_t)c->bandwidth};
	uint8_t on = 0x01;
	if (!out || put(out, cap, &at, RNSC_RNODE_CMD_FREQUENCY, f, 4) ||
	    put(out, cap, &at, RNSC_RNODE_CMD_BANDWIDTH, w, 4) ||
	    put(out, cap, &at, RNSC_RNODE_CMD_TXPOWER, &c->txpower, 1) ||
	    put(out, cap, &at, RNSC_RNODE_CMD_SF, &c->sf, 1) ||
	    put(out, cap, &at, RNSC_RNODE_CMD_CR, &c->cr, 1) ||
	    (c->has_st_alock && put_lock(out, cap, &at, RNSC_RNODE_CMD_ST_ALOCK, c->st_alock)) ||
	    (c->has_lt_alock && put_lock(out, cap, &at, RNSC_RNODE_CMD_LT_ALOCK, c->lt_alock)) ||
	    put(out, cap, &at, RNSC_RNODE_CMD_RADIO_STATE, &on, 1))
		return RNSC_ERR_BUFSIZE;
	return (int)at;
}

int rnsc_rnode_detach_frames(int display, uint8_t *out, size_t cap)
{
	size_t at = 0;
	uint8_t zero = 0x00, ff = 0xFF;
	if (!out || (display && put(out, cap, &at, RNSC_RNODE_CMD_FB_EXT, &zero, 1)) ||
	    put(out, cap, &at, RNSC_RNODE_CMD_RADIO_STATE, &zero, 1) ||
	    put(out, cap, &at, RNSC_RNODE_CMD_LEAVE, &ff, 1))
		return RNSC_ERR_BUFSIZE;
	return (int)at;
}

unsigned rnsc_rnode_mismatch(const rnsc_rnode_params *c, const rnsc_rnode_radio *r)
{
	unsigned bad = 0;
	if ((r->have & RNSC_RNODE_HAVE_FREQ) &&
	    (r->frequency > c->frequency ? r->frequency - c->frequency
					 : c->frequency - r->frequency) > 100)
		bad |= RNSC_RNODE_HAVE_FREQ;
	if (!(r->have & RNSC_RNODE_HAVE_BW) || r->bandwidth != c->bandwidth)
		bad |= RNSC_RNODE_HAVE_BW;
	if (!(r->have & RNSC_RNODE_HAVE_TXP) || r->txpower != c->txpower)
		bad |= RNSC_RNODE_HAVE_TXP;
	if (!(r->have & RNSC_RNODE_HAVE_SF) || r->sf != c->sf)
		bad |= RNSC_RNODE_HAVE_SF;
	if (!(r->have & RNSC_RNODE_HAVE_STATE) || r->state != 0x01)
		bad |= RNSC_RNODE_HAVE_STATE;
	return bad;
}

/* ---- RNodeMultiInterface ------------------------------------------------------------------ */

int rnsc_rnode_multi_detect_frames(uint8_t *out, size_t cap)
{
	int n = rnsc_rnode_detect_frames(out, cap);
	static const uint8_t I[] = {RNSC_RNODE_CMD_INTERFACES, 0x00, 0xC0};
	if (n < 0 || cap < (size_t)n + sizeof(I))
		return RNSC_ERR_BUFSIZE;
	memcpy(out + n, I, sizeof(I));
	return n + (int)sizeof(I);
}

int rnsc_rnode_multi_select(uint8_t index, uint8_t *out, size_t cap)
{
	if (!out || cap < 4)
		return RNSC_ERR_BUFSIZE;
	out[0] = 0xC0;
	out[1] = RNSC_RNODE_CMD_SEL_INT;
	out[2] = index; /* raw: the reference does not escape it (indexes stay below 11) */
	out[3] = 0xC0;
	return 4;
}

int rnsc_rnode_multi_config_frames(uint8_t index, const rnsc_rnode_params *c, uint8_t *out,
				   size_t cap)
{
	/* The single-radio stream, cut at its frames, each frame behind a select. */
	uint8_t single[128];
	int n = rnsc_rnode_config_frames(c, single, sizeof(single));
	size_t at = 0;
	if (n < 0 || !out)
		return RNSC_ERR_BUFSIZE;
	for (int i = 0; i < n;) {
		int j = i + 1;
		while (j < n && single[j] != 0xC0)
			j++;
		size_t flen = (size_t)(j - i + 1); /* C0 ... C0 */
		if (cap - at < 4 + flen)
			return RNSC_ERR_BUFSIZE;
		(void)rnsc_rnode_multi_select(index, out + at, 4);
		at += 4;
		memcpy(out + at, single + i, flen);
		at += flen;
		i = j + 1;
	}
	return (int)at;
}

int rnsc_rnode_multi_detach_frames(int display, const uint8_t *indexes, size_t n, uint8_t *out,
				   size_t cap)
{
	size_t at = 0;
	uint8_t zero = 0x00, ff = 0xFF;
	if (!out || (display && put(out, cap, &at, RNSC_RNODE_CMD_FB_EXT, &zero, 1)))
		return RNSC_ERR_BUFSIZE;
	for (size_t k = 0; k < n; k++) {
		if (cap - at < 4)
			return RNSC_ERR_BUFSIZE;
		at += (size_t)rnsc_rnode_multi_select(indexes[k], out + at, 4);
		if (put(out, cap, &at, RNSC_RNODE_CMD_RADIO_STATE, &zero, 1))
			return RNSC_ERR_BUFSIZE;
	}
	if (put(out, cap, &at, RNSC_RNODE_CMD_LEAVE, &ff, 1))
		return RNSC_ERR_BUFSIZE;
	return (int)at;
}

const char *rnsc_rnode_chip_name(uint8_t type)
{
	if (type == 0x10 || type == 0x11)
		return "SX126X";
	if (type == 0x20 || type == 0x21)
		return "SX128X";
	return "SX127X";
}
