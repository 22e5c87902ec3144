/* SPDX-License-Identifier: MIT */
/*
 * The RNode host protocol, sans I/O: the command frames the reference's RNodeInterface
 * (rns 1.5.4, RNS/Interfaces/RNodeInterface.py) sends to the firmware, and the reports
 * the firmware sends back, applied to a record of what the radio said. Frames are KISS
 * (include/rnsc/kiss.h): FEND cmd escape(payload) FEND, the whole type byte being the command.
 * Compiled into the rnode plugin and its fuzz target (plugins never link librnsc).
 *
 * Host -> device, byte for byte as the reference writes them:
 *   detect      C0 08 73 C0 50 00 C0 48 00 C0 49 00 C0   (DETECT, FW_VERSION, PLATFORM, MCU)
 *   radio set   FREQUENCY (4 bytes, big endian), BANDWIDTH (4), TXPOWER (1), SF (1),
 *               CR (1), ST_ALOCK and LT_ALOCK (percent x 100, 2 bytes; only when
 *               configured), RADIO_STATE 01; multi-byte values escaped
 *   detach      FB_EXT 00 (devices with a display), RADIO_STATE 00, LEAVE FF
 *
 * Device -> host reports (rnsc_rnode_apply): each applies when its payload has the bytes
 * the reference waits for (4 for FREQUENCY/BANDWIDTH/STAT_RX/STAT_TX, 2 for FW_VERSION,
 * the airtime locks and STAT_BAT, 11 for STAT_CHTM, 12 for STAT_PHYPRM, 3 for STAT_CSMA,
 * one for the rest) and is otherwise counted as short and ignored. Where the reference
 * reads one-byte reports byte by byte (the last byte wins) rnsc takes the first; the
 * reference's own STAT_RX/STAT_TX parsing raises on any input, rnsc decodes them.
 * Ownership: all caller storage; no allocation.
 */
#ifndef RNSC_RNODE_PROTO_H
#define RNSC_RNODE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define RNSC_RNODE_CMD_DATA 0x00
#define RNSC_RNODE_CMD_FREQUENCY 0x01
#define RNSC_RNODE_CMD_BANDWIDTH 0x02
#define RNSC_RNODE_CMD_TXPOWER 0x03
#define RNSC_RNODE_CMD_SF 0x04
#define RNSC_RNODE_CMD_CR 0x05
#define RNSC_RNODE_CMD_RADIO_STATE 0x06
#define RNSC_RNODE_CMD_RADIO_LOCK 0x07
#define RNSC_RNODE_CMD_DETECT 0x08
#define RNSC_RNODE_CMD_LEAVE 0x0A
#define RNSC_RNODE_CMD_ST_ALOCK 0x0B
#define RNSC_RNODE_CMD_LT_ALOCK 0x0C
#define RNSC_RNODE_CMD_READY 0x0F
#define RNSC_RNODE_CMD_STAT_RX 0x21
#define RNSC_RNODE_CMD_STAT_TX 0x22
#define RNSC_RNODE_CMD_STAT_RSSI 0x23
#define RNSC_RNODE_CMD_STAT_SNR 0x24
#define RNSC_RNODE_CMD_STAT_CHTM 0x25
#define RNSC_RNODE_CMD_STAT_PHYPRM 0x26
#define RNSC_RNODE_CMD_STAT_BAT 0x27
#define RNSC_RNODE_CMD_STAT_CSMA 0x28
#define RNSC_RNODE_CMD_STAT_TEMP 0x29
#define RNSC_RNODE_CMD_RANDOM 0x40
#define RNSC_RNODE_CMD_FB_EXT 0x41
#define RNSC_RNODE_CMD_PLATFORM 0x48
#define RNSC_RNODE_CMD_MCU 0x49
#define RNSC_RNODE_CMD_FW_VERSION 0x50
#define RNSC_RNODE_CMD_RESET 0x55
#define RNSC_RNODE_CMD_ERROR 0x90

#define RNSC_RNODE_DETECT_REQ 0x73
#define RNSC_RNODE_DETECT_RESP 0x46
#define RNSC_RNODE_RSSI_OFFSET 157
#define RNSC_RNODE_PLATFORM_NRF52 0x70
#define RNSC_RNODE_PLATFORM_ESP32 0x80
#define RNSC_RNODE_FW_MAJ 1  /* REQUIRED_FW_VER_MAJ */
#define RNSC_RNODE_FW_MIN 52 /* REQUIRED_FW_VER_MIN */

#define RNSC_RNODE_ERR_INITRADIO 0x01
#define RNSC_RNODE_ERR_TXFAILED 0x02
#define RNSC_RNODE_ERR_MEMORY_LOW 0x05
#define RNSC_RNODE_ERR_MODEM_TIMEOUT 0x06

/* Bits of rnsc_rnode_radio.have: which values the device has reported. */
enum {
	RNSC_RNODE_HAVE_FREQ = 1u << 0,
	RNSC_RNODE_HAVE_BW = 1u << 1,
	RNSC_RNODE_HAVE_TXP = 1u << 2,
	RNSC_RNODE_HAVE_SF = 1u << 3,
	RNSC_RNODE_HAVE_CR = 1u << 4,
	RNSC_RNODE_HAVE_STATE = 1u << 5,
	RNSC_RNODE_HAVE_LOCK = 1u << 6,
	RNSC_RNODE_HAVE_FW = 1u << 7,
	RNSC_RNODE_HAVE_PLATFORM = 1u << 8,
	RNSC_RNODE_HAVE_MCU = 1u << 9,
	RNSC_RNODE_HAVE_RSSI = 1u << 10,
	RNSC_RNODE_HAVE_SNR = 1u << 11,
	RNSC_RNODE_HAVE_CHTM = 1u << 12,
	RNSC_RNODE_HAVE_PHY = 1u << 13,
	RNSC_RNODE_HAVE_BAT = 1u << 14,
	RNSC_RNODE_HAVE_TEMP = 1u << 15,
	RNSC_RNODE_HAVE_ST_ALOCK = 1u << 16,
	RNSC_RNODE_HAVE_LT_ALOCK = 1u << 17,
	RNSC_RNODE_HAVE_STAT_RXTX = 1u << 18,
	RNSC_RNODE_HAVE_CSMA = 1u << 19,
};

/* What the device reported. Zeroed = nothing known. */
typedef struct rnsc_rnode_radio {
	uint32_t have;
	int detected;
	uint32_t frequency, bandwidth;
	int txpower, sf, cr, state, lock;
	int fw_major, fw_minor, platform, mcu;
	double st_alock, lt_alock; /* percent */
	uint32_t stat_rx, stat_tx;
	int rssi;                           /* dBm of the last packet */
	double snr, quality;                /* dB; 0..100 */
	double airtime_short, airtime_long; /* percent */
	double load_short, load_long;       /* percent */
	int current_rssi, noise_floor, interference, have_interference;
	double symbol_time_ms;
	unsigned symbol_rate, preamble_symbols, preamble_ms, csma_slot_ms, difs_ms;
	unsigned cw_band, cw_min, cw_max;
	int battery_state, battery_percent;
	int temperature, have_temperature;
	int random;
	uint64_t short_reports; /* reports without the bytes they need */
} rnsc_rnode_radio;

/* What a report means to the interface. */
enum rnsc_rnode_event {
	RNSC_RNODE_EV_NONE = 0,    /* recorded (or ignored) */
	RNSC_RNODE_EV_PARAM,       /* frequency, bandwidth, SF or CR: the bitrate may change */
	RNSC_RNODE_EV_FW,          /* firmware version: check rnsc_rnode_fw_ok() */
	RNSC_RNODE_EV_READY,       /* flow control: the device takes the next frame */
	RNSC_RNODE_EV_ERROR_FATAL, /* the reference raises: the port is closed and reopened */
	RNSC_RNODE_EV_ERROR_SOFT,  /* logged and remembered (memory low, modem time-out) */
	RNSC_RNODE_EV_RESET,       /* the device reset itself (RESET F8) */
	RNSC_RNODE_EV_SHORT,       /* a report without the bytes it needs */
};

/* Applies one non-data frame (cmd = the KISS type byte) to r. *code gets the error code
 * for the error events. Returns an rnsc_rnode_event. */
int rnsc_rnode_apply(rnsc_rnode_radio *r, uint8_t cmd, const uint8_t *p, size_t len, uint8_t *code);

/* The firmware version check of the reference (at least 1.52). */
int rnsc_rnode_fw_ok(const rnsc_rnode_radio *r);

/* The reference's updateBitrate from the reported SF, CR and bandwidth, in bit/s
 * (truncated); 0 when one of them is missing or zero. */
uint64_t rnsc_rnode_bitrate(const rnsc_rnode_radio *r);

/* The configuration an RNodeInterface sends. */
typedef struct rnsc_rnode_params {
	uint32_t frequency, bandwidth;
	uint8_t txpower, sf, cr;
	int has_st_alock, has_lt_alock;
	double st_alock, lt_alock; /* percent */
} rnsc_rnode_params;

/* The byte streams above into out. Return the length, or RNSC_ERR_BUFSIZE. */
int rnsc_rnode_detect_frames(uint8_t *out, size_t cap);
int rnsc_rnode_config_frames(const rnsc_rnode_params *c, uint8_t *out, size_t cap);
int rnsc_rnode_detach_frames(int display, uint8_t *out, size_t cap);

/*
 * RNodeMultiInterface (rns 1.5.4, RNS/Interfaces/RNodeMultiInterface.py): one device with
 * several radios. Every per-radio command is preceded by the interface-select frame
 * C0 1F <index> C0 (index raw, as the reference writes it), and the device precedes its
 * per-radio reports and received data the same way. The detect request adds
 * INTERFACES (C0 71 00 C0), which the device answers with (index, chip type) pairs.
 * Host -> device, byte for byte as the reference writes them:
 *   detect      the four requests above, then 71 00, sharing their FENDs
 *   radio set   for each command of rnsc_rnode_config_frames: select, then the command
 *   data        select, then C0 00 escape(packet) C0
 *   detach      FB_EXT 00 (display), select + RADIO_STATE 00 per radio, LEAVE FF
 */
#define RNSC_RNODE_CMD_SEL_INT 0x1F
#define RNSC_RNODE_CMD_INTERFACES 0x71
#define RNSC_RNODE_MULTI_FW_MIN 74 /* RNodeMultiInterface's REQUIRED_FW_VER_MIN */
#define RNSC_RNODE_MULTI_MAX 11    /* MAX_SUBINTERFACES */

int rnsc_rnode_multi_detect_frames(uint8_t *out, size_t cap);
int rnsc_rnode_multi_select(uint8_t index, uint8_t *out, size_t cap);
int rnsc_rnode_multi_config_frames(uint8_t index, const rnsc_rnode_params *c, uint8_t *out,
				   size_t cap);
/* indexes[0..n) are the radios to switch off. */
int rnsc_rnode_multi_detach_frames(int display, const uint8_t *indexes, size_t n, uint8_t *out,
				   size_t cap);
/* The reference's interface_type_to_str: "SX126X", "SX127X" (also for unknown codes) or
 * "SX128X". */
const char *rnsc_rnode_chip_name(uint8_t type);

/* The reference's validateRadioState: 0 when the device holds what c asked for (the
 * frequency within 100 Hz, when reported), else a bit per mismatch (RNSC_RNODE_HAVE_FREQ,
 * _BW, _TXP, _SF, _STATE). */
unsigned rnsc_rnode_mismatch(const rnsc_rnode_params *c, const rnsc_rnode_radio *r);

#endif
