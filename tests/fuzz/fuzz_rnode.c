/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the RNode host protocol (plugins/iface/rnode_proto.c) on the KISS
 * decoder, as the rnode plugin runs them on what a device sends.
 *
 * Input: the first 16 bytes choose radio parameters, the rest is a device's byte stream.
 * Checked beyond "no crash, no UB":
 *   - every report applied keeps the record within its ranges (battery 0..100 %, link
 *     quality 0..100, RSSI within the one-byte offset range, the bitrate formula finite);
 *   - the configuration frames for the chosen parameters decode back (KISS) to exactly
 *     the commands and values encoded, ending with RADIO_STATE on; reports of those values
 *     then validate with no mismatch;
 *   - the same for RNodeMultiInterface's select-prefixed streams (rnsc_rnode_multi_*).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kiss.h"
#include "rnode_proto.h"

typedef struct st {
	rnsc_rnode_radio r;
	uint8_t cmds[32];
	size_t n;
} st;

static int on_frame(void *ud, uint8_t type, const uint8_t *p, size_t len)
{
	st *s = ud;
	uint8_t code = 0;
	if (type == RNSC_RNODE_CMD_DATA)
		return 0;
	int ev = rnsc_rnode_apply(&s->r, type, p, len, &code);
	if (ev < RNSC_RNODE_EV_NONE || ev > RNSC_RNODE_EV_SHORT)
		abort();
	if (s->r.battery_percent < 0 || s->r.battery_percent > 100)
		abort();
	if (s->r.quality < 0.0 || s->r.quality > 100.0)
		abort();
	if (s->r.rssi < -RNSC_RNODE_RSSI_OFFSET || s->r.rssi > 255 - RNSC_RNODE_RSSI_OFFSET)
		abort();
	(void)rnsc_rnode_bitrate(&s->r);
	(void)rnsc_rnode_fw_ok(&s->r);
	return 0;
}

static int on_cfg(void *ud, uint8_t type, const uint8_t *p, size_t len)
{
	st *s = ud;
	uint8_t code = 0;
	if (s->n < sizeof(s->cmds))
		s->cmds[s->n++] = type;
	/* what a device holding these values reports is the same frame */
	(void)rnsc_rnode_apply(&s->r, type, p, len, &code);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t buf[1200], enc[256];
	rnsc_kiss_decoder dec;
	st s;
	memset(&s, 0, sizeof(s));
	if (size < 16)
		return 0;
	rnsc_rnode_params c;
	memset(&c, 0, sizeof(c));
	c.frequency = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 | (uint32_t)data[2] << 8 |
		      data[3];
	c.bandwidth = (uint32_t)data[4] << 24 | (uint32_t)data[5] << 16 | (uint32_t)data[6] << 8 |
		      data[7];
	c.txpower = data[8];
	c.sf = (uint8_t)(5 + data[9] % 8);
	c.cr = (uint8_t)(5 + data[10] % 4);
	c.has_st_alock = data[11] & 1;
	c.has_lt_alock = data[11] & 2;
	c.st_alock = data[12] % 101;
	c.lt_alock = (data[13] % 101) + (data[14] % 100) / 100.0;
	int n = rnsc_rnode_config_frames(&c, enc, sizeof(enc));
	if (n <= 0)
		abort();
	rnsc_kiss_decoder_init(&dec, buf, sizeof(buf));
	rnsc_kiss_decoder_feed(&dec, enc, (size_t)n, on_cfg, &s);
	size_t want = 6 + (c.has_st_alock ? 1 : 0) + (c.has_lt_alock ? 1 : 0);
	if (s.n != want || s.cmds[0] != RNSC_RNODE_CMD_FREQUENCY ||
	    s.cmds[s.n - 1] != RNSC_RNODE_CMD_RADIO_STATE)
		abort();
	if (s.r.frequency != c.frequency || s.r.bandwidth != c.bandwidth ||
	    s.r.txpower != c.txpower || s.r.sf != c.sf || s.r.cr != c.cr ||
	    rnsc_rnode_mismatch(&c, &s.r) != 0)
		abort();
	n = rnsc_rnode_detach_frames(data[15] & 1, enc, sizeof(enc));
	if (n != ((data[15] & 1) ? 12 : 8))
		abort();
	if (rnsc_rnode_detect_frames(enc, sizeof(enc)) != 13)
		abort();
	if (rnsc_rnode_multi_detect_frames(enc, sizeof(enc)) != 16)
		abort();

	/* RNodeMultiInterface: each command of the single-radio stream behind a select of the
	 * radio's index; the decoded commands alternate select / command and carry the same
	 * values. */
	uint8_t idx = (uint8_t)(data[15] % RNSC_RNODE_MULTI_MAX);
	memset(&s, 0, sizeof(s));
	n = rnsc_rnode_multi_config_frames(idx, &c, enc, sizeof(enc));
	if (n <= 0)
		abort();
	rnsc_kiss_decoder_init(&dec, buf, sizeof(buf));
	rnsc_kiss_decoder_feed(&dec, enc, (size_t)n, on_cfg, &s);
	if (s.n != 2 * want || rnsc_rnode_mismatch(&c, &s.r) != 0)
		abort();
	for (size_t k = 0; k < s.n; k += 2)
		if (s.cmds[k] != RNSC_RNODE_CMD_SEL_INT || s.cmds[k + 1] == RNSC_RNODE_CMD_SEL_INT)
			abort();
	uint8_t ids[RNSC_RNODE_MULTI_MAX];
	for (size_t k = 0; k < RNSC_RNODE_MULTI_MAX; k++)
		ids[k] = (uint8_t)k;
	n = rnsc_rnode_multi_detach_frames(data[15] & 1, ids, idx, enc, sizeof(enc));
	if (n != ((data[15] & 1) ? 4 : 0) + (int)idx * 8 + 4)
		abort();
	(void)rnsc_rnode_chip_name(data[14]);

	memset(&s, 0, sizeof(s));
	rnsc_kiss_decoder_init(&dec, buf, sizeof(buf));
	rnsc_kiss_decoder_feed(&dec, data + 16, size - 16, on_frame, &s);
	return 0;
}
