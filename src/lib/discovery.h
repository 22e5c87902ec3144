/* SPDX-License-Identifier: MIT */
/*
 * Interface discovery announces (Discovery.py, rns 1.5.4/1.5.7): the app_data of an
 * announce for the destination "rnstransport.discovery.interface", and the record a
 * receiving node keeps for each discovered interface.
 *
 * app_data = flags (1 byte: 0x01 signed, 0x02 encrypted) || packed || stamp (32 bytes),
 * where packed is a msgpack map keyed by small integers (RNSC_DISC_K_*) and stamp is an
 * LXStamper stamp (stamper.h) over SHA-256(packed) with RNSC_STAMP_DISCOVERY_ROUNDS rounds.
 *
 * Where this parser is narrower than the reference (which accepts whatever Python can
 * format), it says so at the field: a value of a type the reference would only format
 * with str() (a port that is not an integer, a radio parameter that is a list ...) is a
 * counted drop here, never a crash.
 *
 * Sans-I/O. Ownership: the parsed view points into the caller's app_data and is valid
 * while those bytes are.
 */
#ifndef RNSC_DISCOVERY_H
#define RNSC_DISCOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "msgpack.h"
#include "stamper.h"

#define RNSC_DISC_APP_NAME "rnstransport"
#define RNSC_DISC_FULL_NAME "rnstransport.discovery.interface"
#define RNSC_DISC_DEFAULT_STAMP_VALUE 16
#define RNSC_DISC_FLAG_SIGNED 0x01
#define RNSC_DISC_FLAG_ENCRYPTED 0x02

enum {
	RNSC_DISC_K_INTERFACE_TYPE = 0x00,
	RNSC_DISC_K_TRANSPORT = 0x01,
	RNSC_DISC_K_REACHABLE_ON = 0x02,
	RNSC_DISC_K_LATITUDE = 0x03,
	RNSC_DISC_K_LONGITUDE = 0x04,
	RNSC_DISC_K_HEIGHT = 0x05,
	RNSC_DISC_K_PORT = 0x06,
	RNSC_DISC_K_IFAC_NETNAME = 0x07,
	RNSC_DISC_K_IFAC_NETKEY = 0x08,
	RNSC_DISC_K_FREQUENCY = 0x09,
	RNSC_DISC_K_BANDWIDTH = 0x0A,
	RNSC_DISC_K_SPREADINGFACTOR = 0x0B,
	RNSC_DISC_K_CODINGRATE = 0x0C,
	RNSC_DISC_K_MODULATION = 0x0D,
	RNSC_DISC_K_CHANNEL = 0x0E,
	RNSC_DISC_K_OP_ADDR = 0xF0,
	RNSC_DISC_K_TRANSPORT_VERS = 0xFC,
	RNSC_DISC_K_TRANSPORT_IMPL = 0xFD,
	RNSC_DISC_K_TRANSPORT_ID = 0xFE,
	RNSC_DISC_K_NAME = 0xFF,
};

/* A scalar as announced: what the record writes back and the config entry prints. */
typedef struct rnsc_disc_val {
	int present;
	rnsc_mp_type type; /* NIL, BOOL, INT, UINT, FLOAT32/64, STR */
	int64_t i;
	uint64_t u;
	double d;
	int b;
	const char *s;
	size_t len;
} rnsc_disc_val;

#define RNSC_DISC_NAME_MAX 512

typedef struct rnsc_disc_info {
	char type[32];
	int transport;
	char name[RNSC_DISC_NAME_MAX]; /* sanitized, or "Discovered <type>" */
	uint8_t stamp[RNSC_STAMP_SIZE];
	int value;
	uint8_t transport_id[16];
	rnsc_disc_val latitude, longitude, height;
	rnsc_disc_val reachable_on, port;
	rnsc_disc_val ifac_netname, ifac_netkey;
	rnsc_disc_val frequency, bandwidth, sf, cr, channel, modulation;
	int has_op_addr;
	uint8_t op_addr[16];
	uint8_t discovery_hash[32]; /* SHA-256(hex(transport_id) || name): the file name */
} rnsc_disc_info;

/* Why an announce was not accepted (the reference logs these and drops the announce). */
enum rnsc_disc_drop {
	RNSC_DISC_OK = 0,
	RNSC_DISC_SHORT,     /* no app_data or not longer than stamp + flags */
	RNSC_DISC_ENCRYPTED, /* needs the network identity, which rnsc does not have */
	RNSC_DISC_STAMP,     /* stamp not valid for the required value */
	RNSC_DISC_MALFORMED, /* msgpack or a field the reference refuses */
	RNSC_DISC_NOTYPE,    /* no interface type: the reference stores nothing */
	RNSC_DISC_NOSTORE,   /* a valid type the reference announces but never stores */
};

/* Validates and decodes one discovery announce's app_data (InterfaceAnnounceHandler.
 * received_announce + InterfaceDiscovery.interface_discovered's type check).
 * required_value <= 0 means RNSC_DISC_DEFAULT_STAMP_VALUE. Returns an rnsc_disc_drop
 * (RNSC_DISC_OK with *out filled) or a negative crypto/memory error. */
RNSC_API int rnsc_discovery_parse(rnsc_ctx *ctx, rnsc_disc_info *out, const uint8_t *app_data,
				  size_t len, int required_value);

/* The part of rnsc_discovery_parse() after the stamp check: decodes and validates the
 * packed map alone (out->stamp and out->value are left as the caller set them). Same
 * returns. */
RNSC_API int rnsc_discovery_decode(rnsc_ctx *ctx, rnsc_disc_info *out, const uint8_t *packed,
				   size_t len);

/* Writes the stored record (the msgpack map the reference keeps in
 * <storage>/discovery/interfaces/<hex discovery_hash>), in the reference's key order.
 * network_id is the announcing identity's hash; received/discovered/last_heard are
 * UNIX times. Returns the writer's result (a length, or RNSC_ERR_BUFSIZE). */
RNSC_API int rnsc_discovery_record(rnsc_mp_writer *w, const rnsc_disc_info *info,
				   const uint8_t network_id[16], unsigned hops, double received,
				   double discovered, double last_heard, int64_t heard_count);

/* What an announcing interface publishes (InterfaceAnnouncer.get_interface_announce_data);
 * strings are NUL-terminated and already sanitized; NULL leaves an optional field out.
 * latitude/longitude/height of type RNSC_MP_NIL (or not present) are written as nil. */
typedef struct rnsc_disc_announce {
	const char *type; /* as announced: TCPClientInterface with KISS framing is KISSInterface */
	int transport;
	uint8_t transport_id[16];
	const char *impl, *version; /* TRANSPORT_IMPL / TRANSPORT_VERS */
	const char *name;           /* NULL: nil */
	rnsc_disc_val latitude, longitude, height;
	const uint8_t *op_addr; /* 16 bytes or NULL */
	const char *reachable_on;
	int64_t port;                           /* with reachable_on for Backbone / TCPServer */
	const char *ifac_netname, *ifac_netkey; /* publish_ifac */
} rnsc_disc_announce;

/* Writes flags (0: neither signed nor encrypted) || packed || stamp into out, the map in
 * the reference's key order, the stamp drawn for cost (<= 0: RNSC_DISC_DEFAULT_STAMP_VALUE)
 * over RNSC_STAMP_DISCOVERY_ROUNDS. packed_len (may be NULL) receives the map's length.
 * Returns the total length, RNSC_ERR_INVAL, RNSC_ERR_BUFSIZE, or crypto errors. Radio
 * types (RNode, Weave, KISS) are not built here: RNSC_ERR_INVAL. */
RNSC_API int rnsc_discovery_announce_data(rnsc_ctx *ctx, uint8_t *out, size_t cap,
					  const rnsc_disc_announce *a, int cost,
					  size_t *packed_len);

/* Discovery.py's is_ip_address / is_hostname on a string (not NUL-terminated). */
RNSC_API int rnsc_discovery_is_ip(const char *s, size_t len);
RNSC_API int rnsc_discovery_is_hostname(const char *s, size_t len);
/* InterfaceAnnounceHandler.sanitize_name into out (NUL-terminated); an empty result
 * means None. Returns the length. */
RNSC_API size_t rnsc_discovery_sanitize_name(char *out, size_t cap, const char *in, size_t len);

#endif
