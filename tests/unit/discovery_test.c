/* SPDX-License-Identifier: MIT */
/*
 * Interface discovery records for every type the reference announces (discovery.c): the
 * packed map of a TCP server, an I2P, an RNode, a Weave and a KISS interface decodes, and
 * the stored record carries the radio fields and the config entry the reference writes for
 * that type; maps the reference refuses (a missing radio parameter, wrong field types,
 * containers, an unknown type) are dropped as malformed, a type it announces but does not
 * store as NOSTORE.
 */
#include <string.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "discovery.h"
#include "discovery_store.h"
#include "msgpack.h"
#include "wire_test_util.h"

static const uint8_t TID[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

enum { F_RADIO = 1, F_WEAVE = 2, F_KISS = 4, F_TCP = 8, F_I2P = 16, F_IFAC = 32, F_OP = 64 };

/* The packed map of an announce of type `type` with the fields in flags; skip leaves one
 * key out (-1: none), bad_key gets a string where a number or bool belongs (-1: none). */
static size_t pack(uint8_t *buf, size_t cap, const char *type, int flags, int skip, int bad_key)
{
	int keys[32], n = 0;
	int base[] = {RNSC_DISC_K_INTERFACE_TYPE, RNSC_DISC_K_TRANSPORT, RNSC_DISC_K_NAME,
		      RNSC_DISC_K_LATITUDE,       RNSC_DISC_K_LONGITUDE, RNSC_DISC_K_HEIGHT,
		      RNSC_DISC_K_TRANSPORT_ID};
	for (size_t i = 0; i < sizeof base / sizeof *base; i++)
		keys[n++] = base[i];
	if (flags & (F_RADIO | F_WEAVE | F_KISS)) {
		keys[n++] = RNSC_DISC_K_FREQUENCY;
		keys[n++] = RNSC_DISC_K_BANDWIDTH;
	}
	if (flags & F_RADIO) {
		keys[n++] = RNSC_DISC_K_SPREADINGFACTOR;
		keys[n++] = RNSC_DISC_K_CODINGRATE;
	}
	if (flags & (F_WEAVE | F_KISS))
		keys[n++] = RNSC_DISC_K_MODULATION;
	if (flags & F_WEAVE)
		keys[n++] = RNSC_DISC_K_CHANNEL;
	if (flags & (F_TCP | F_I2P))
		keys[n++] = RNSC_DISC_K_REACHABLE_ON;
	if (flags & F_TCP)
		keys[n++] = RNSC_DISC_K_PORT;
	if (flags & F_IFAC) {
		keys[n++] = RNSC_DISC_K_IFAC_NETNAME;
		keys[n++] = RNSC_DISC_K_IFAC_NETKEY;
	}
	if (flags & F_OP)
		keys[n++] = RNSC_DISC_K_OP_ADDR;
	int m = 0;
	for (int i = 0; i < n; i++)
		m += keys[i] != skip;
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, buf, cap);
	rnsc_mp_write_map(&w, (size_t)m);
	for (int i = 0; i < n; i++) {
		int k = keys[i];
		if (k == skip)
			continue;
		rnsc_mp_write_uint(&w, (uint64_t)k);
		if (k == bad_key) {
			rnsc_mp_write_cstr(&w, "not this");
			continue;
		}
		switch (k) {
		case RNSC_DISC_K_INTERFACE_TYPE:
			rnsc_mp_write_cstr(&w, type);
			break;
		case RNSC_DISC_K_TRANSPORT:
			rnsc_mp_write_bool(&w, 1);
			break;
		case RNSC_DISC_K_NAME:
			rnsc_mp_write_cstr(&w, "Hill top");
			break;
		case RNSC_DISC_K_LATITUDE:
			rnsc_mp_write_double(&w, 55.5);
			break;
		case RNSC_DISC_K_LONGITUDE:
			rnsc_mp_write_double(&w, 12.25);
			break;
		case RNSC_DISC_K_HEIGHT:
			rnsc_mp_write_nil(&w);
			break;
		case RNSC_DISC_K_TRANSPORT_ID:
			rnsc_mp_write_bin(&w, TID, 16);
			break;
		case RNSC_DISC_K_FREQUENCY:
			rnsc_mp_write_uint(&w, 867200000);
			break;
		case RNSC_DISC_K_BANDWIDTH:
			rnsc_mp_write_uint(&w, 125000);
			break;
		case RNSC_DISC_K_SPREADINGFACTOR:
			rnsc_mp_write_uint(&w, 8);
			break;
		case RNSC_DISC_K_CODINGRATE:
			rnsc_mp_write_int(&w, -5);
			break;
		case RNSC_DISC_K_MODULATION:
			rnsc_mp_write_cstr(&w, "LoRa");
			break;
		case RNSC_DISC_K_CHANNEL:
			rnsc_mp_write_uint(&w, 3);
			break;
		case RNSC_DISC_K_REACHABLE_ON:
			rnsc_mp_write_cstr(&w, "node.example.net");
			break;
		case RNSC_DISC_K_PORT:
			rnsc_mp_write_uint(&w, 4242);
			break;
		case RNSC_DISC_K_IFAC_NETNAME:
			rnsc_mp_write_cstr(&w, "meshnet");
			break;
		case RNSC_DISC_K_IFAC_NETKEY:
			rnsc_mp_write_cstr(&w, "secret");
			break;
		case RNSC_DISC_K_OP_ADDR:
			rnsc_mp_write_bin(&w, TID, 16);
			break;
		}
	}
	int len = rnsc_mp_writer_finish(&w);
	CU_ASSERT_FATAL(len > 0);
	return (size_t)len;
}

/* The record of info as a string with its msgpack strings visible (non-printables as '.'). */
static const char *record_text(const rnsc_disc_info *info)
{
	static uint8_t rec[8192];
	static char txt[8193];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, rec, sizeof rec);
	int n = rnsc_discovery_record(&w, info, TID, 2, 1000.5, 1000.0, 1001.0, 3);
	CU_ASSERT_FATAL(n > 0);
	for (int i = 0; i < n; i++)
		txt[i] = rec[i] >= 0x20 && rec[i] < 0x7f ? (char)rec[i] : '.';
	txt[n] = 0;
	return txt;
}

static void decode_ok(const char *type, int flags, int expect, const char *const *want)
{
	uint8_t buf[1024];
	size_t len = pack(buf, sizeof buf, type, flags, -1, -1);
	rnsc_disc_info info;
	memset(&info, 0, sizeof info);
	CU_ASSERT_EQUAL_FATAL(rnsc_discovery_decode(C, &info, buf, len), expect);
	CU_ASSERT_STRING_EQUAL(info.type, type);
	CU_ASSERT_STRING_EQUAL(info.name, "Hill top");
	const char *t = record_text(&info);
	for (; *want; want++) {
		CU_ASSERT_PTR_NOT_NULL(strstr(t, *want));
		if (!strstr(t, *want))
			fprintf(stderr, "record of %s lacks \"%s\": %s\n", type, *want, t);
	}
}

static void t_types(void)
{
	static const char *const tcp[] = {"type = BackboneInterface",
					  "remote = node.example.net",
					  "target_port = 4242",
					  "network_name = meshnet",
					  "passphrase = secret",
					  "operator_lxmf_address",
					  NULL};
	decode_ok("TCPServerInterface", F_TCP | F_IFAC | F_OP, RNSC_DISC_OK, tcp);
	static const char *const i2p[] = {"type = I2PInterface", "peers = node.example.net", NULL};
	decode_ok("I2PInterface", F_I2P, RNSC_DISC_OK, i2p);
	static const char *const rnode[] = {"type = RNodeInterface",
					    "frequency = 867200000",
					    "bandwidth = 125000",
					    "spreadingfactor = 8",
					    "codingrate = -5",
					    "sf",
					    "cr",
					    NULL};
	decode_ok("RNodeInterface", F_RADIO | F_IFAC, RNSC_DISC_OK, rnode);
	static const char *const weave[] = {"type = WeaveInterface", "channel", "modulation", NULL};
	decode_ok("WeaveInterface", F_WEAVE, RNSC_DISC_OK, weave);
	static const char *const kiss[] = {"type = KISSInterface", "# Frequency: 867200000",
					   "# Modulation: LoRa", NULL};
	decode_ok("KISSInterface", F_KISS, RNSC_DISC_OK, kiss);
}

static void t_refused(void)
{
	uint8_t buf[1024];
	rnsc_disc_info info;
	struct {
		const char *type;
		int flags, skip, bad;
		int expect;
	} cases[] = {
		{"RNodeInterface", F_RADIO, RNSC_DISC_K_CODINGRATE, -1, RNSC_DISC_MALFORMED},
		{"WeaveInterface", F_WEAVE, RNSC_DISC_K_CHANNEL, -1, RNSC_DISC_MALFORMED},
		{"KISSInterface", F_KISS, RNSC_DISC_K_MODULATION, -1, RNSC_DISC_MALFORMED},
		{"I2PInterface", F_I2P, RNSC_DISC_K_REACHABLE_ON, -1, RNSC_DISC_MALFORMED},
		{"TCPServerInterface", F_TCP, RNSC_DISC_K_PORT, -1, RNSC_DISC_MALFORMED},
		{"TCPServerInterface", F_TCP, -1, RNSC_DISC_K_PORT, RNSC_DISC_MALFORMED},
		{"RNodeInterface", F_RADIO, -1, RNSC_DISC_K_TRANSPORT, RNSC_DISC_MALFORMED},
		{"RNodeInterface", F_RADIO, -1, RNSC_DISC_K_LATITUDE, RNSC_DISC_MALFORMED},
		{"RNodeInterface", F_RADIO, -1, RNSC_DISC_K_TRANSPORT_ID, RNSC_DISC_MALFORMED},
		{"RNodeInterface", F_RADIO | F_IFAC, -1, -1, RNSC_DISC_OK},
		{"RNodeInterface", F_RADIO, RNSC_DISC_K_TRANSPORT_ID, -1, RNSC_DISC_MALFORMED},
		{"RNodeInterface", F_RADIO, RNSC_DISC_K_INTERFACE_TYPE, -1, RNSC_DISC_NOTYPE},
		{"FancyInterface", 0, -1, -1, RNSC_DISC_MALFORMED},
		{"TCPServerInterface", F_TCP | F_OP, -1, RNSC_DISC_K_OP_ADDR, RNSC_DISC_MALFORMED},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		size_t len = pack(buf, sizeof buf, cases[i].type, cases[i].flags, cases[i].skip,
				  cases[i].bad);
		memset(&info, 0, sizeof info);
		int rc = rnsc_discovery_decode(C, &info, buf, len);
		CU_ASSERT_EQUAL(rc, cases[i].expect);
		if (rc != cases[i].expect)
			fprintf(stderr, "case %zu (%s): %d, want %d\n", i, cases[i].type, rc,
				cases[i].expect);
	}
	/* a container where the reference would format a value: narrower, dropped */
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, buf, sizeof buf);
	rnsc_mp_write_map(&w, 1);
	rnsc_mp_write_uint(&w, RNSC_DISC_K_FREQUENCY);
	rnsc_mp_write_map(&w, 0);
	int len = rnsc_mp_writer_finish(&w);
	CU_ASSERT_EQUAL(rnsc_discovery_decode(C, &info, buf, (size_t)len), RNSC_DISC_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_discovery_decode(C, &info, buf, 0), RNSC_DISC_MALFORMED);
	CU_ASSERT_EQUAL(rnsc_discovery_decode(C, NULL, buf, 1), RNSC_ERR_INVAL);
	/* a TCPClientInterface is announced by the reference and never stored */
	size_t n = pack(buf, sizeof buf, "TCPClientInterface", 0, -1, -1);
	CU_ASSERT_EQUAL(rnsc_discovery_decode(C, &info, buf, n), RNSC_DISC_NOSTORE);
}

/* The util's hex helpers: the record's transport id is hexrep of TID. */
static void t_hex(void)
{
	uint8_t b[16];
	CU_ASSERT_EQUAL(unhex(b, "0102030405060708090a0b0c0d0e0f10"), 16);
	CU_ASSERT(eqhex(b, 16, "0102030405060708090a0b0c0d0e0f10"));
	CU_ASSERT_EQUAL(memcmp(b, TID, 16), 0);
}

/* Writes the record of an announce of type into dir/<name> as heard delta seconds before
 * now. */
static void put_record(const char *dir, const char *file, const char *type, int flags, double now,
		       double delta)
{
	uint8_t buf[1024], rec[4096];
	size_t len = pack(buf, sizeof buf, type, flags, -1, -1);
	rnsc_disc_info info;
	memset(&info, 0, sizeof info);
	info.value = 20;
	int rc = rnsc_discovery_decode(C, &info, buf, len);
	CU_ASSERT(rc == RNSC_DISC_OK || rc == RNSC_DISC_NOSTORE);
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, rec, sizeof rec);
	int n = rnsc_discovery_record(&w, &info, TID, 1, now - delta, now - delta, now - delta, 1);
	CU_ASSERT_FATAL(n > 0);
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	FILE *f = fopen(path, "wb");
	CU_ASSERT_FATAL(f != NULL);
	fwrite(rec, 1, (size_t)n, f);
	fclose(f);
}

static int exists(const char *dir, const char *file)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	return access(path, F_OK) == 0;
}

/* InterfaceDiscovery.list_discovered_interfaces over records of every stored type and age:
 * available, unknown and stale ones listed in that order, a week-old one and a type that is
 * never stored deleted, an unreadable file left alone; with a sources list that does not
 * name the announcing network, everything goes. */
static void t_store_list(void)
{
	char storage[] = "/tmp/rnsc-disc-store-XXXXXX";
	CU_ASSERT_FATAL(mkdtemp(storage) != NULL);
	char dir[256];
	snprintf(dir, sizeof dir, "%s/discovery", storage);
	mkdir(dir, 0700);
	snprintf(dir, sizeof dir, "%s/discovery/interfaces", storage);
	CU_ASSERT_FATAL(mkdir(dir, 0700) == 0);
	double now = 1.7e9, day = 86400;
	put_record(dir, "a", "WeaveInterface", F_WEAVE, now, 4 * day);
	put_record(dir, "b", "RNodeInterface", F_RADIO, now, 3600);
	put_record(dir, "c", "KISSInterface", F_KISS, now, 2 * day);
	put_record(dir, "d", "TCPServerInterface", F_TCP, now, 8 * day);
	put_record(dir, "e", "TCPClientInterface", 0, now, 3600);
	char gp[512];
	snprintf(gp, sizeof gp, "%s/f", dir);
	FILE *g = fopen(gp, "wb");
	fputs("not msgpack", g);
	fclose(g);
	uint8_t *out = NULL;
	size_t out_len = 0, count = 0;
	CU_ASSERT_EQUAL_FATAL(
		rnsc_discovery_store_list(C, storage, now, NULL, &out, &out_len, &count), 0);
	CU_ASSERT_EQUAL(count, 3);
	char *txt = malloc(out_len + 1);
	for (size_t i = 0; i < out_len; i++)
		txt[i] = out[i] >= 0x20 && out[i] < 0x7f ? (char)out[i] : '.';
	txt[out_len] = 0;
	char *av = strstr(txt, "available"), *un = strstr(txt, "unknown"),
	     *st = strstr(txt, "stale");
	CU_ASSERT(av && un && st && av < un && un < st);
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "RNodeInterface"));
	free(txt);
	free(out);
	CU_ASSERT(!exists(dir, "d")); /* a week old */
	CU_ASSERT(!exists(dir, "e")); /* never stored by the reference */
	CU_ASSERT(exists(dir, "a") && exists(dir, "b") && exists(dir, "c"));
	/* the record's keys, read back */
	uint8_t rec[4096];
	snprintf(gp, sizeof gp, "%s/b", dir);
	g = fopen(gp, "rb");
	size_t rl = fread(rec, 1, sizeof rec, g);
	fclose(g);
	rnsc_mp_token v;
	CU_ASSERT(rnsc_discovery_rec_get(rec, rl, "type", &v) && v.type == RNSC_MP_STR);
	CU_ASSERT(!rnsc_discovery_rec_get(rec, rl, "no such key", &v));
	CU_ASSERT(!rnsc_discovery_rec_get((const uint8_t *)"x", 1, "type", &v));

	static const uint8_t other[1][16] = {{0xEE}};
	rnsc_hash_list src = {.h = other, .n = 1};
	out = NULL;
	CU_ASSERT_EQUAL(rnsc_discovery_store_list(C, storage, now, &src, &out, &out_len, &count),
			0);
	CU_ASSERT_EQUAL(count, 0);
	free(out);
	CU_ASSERT(!exists(dir, "a") && !exists(dir, "b") && !exists(dir, "c"));
	/* an absent folder lists nothing */
	out = NULL;
	CU_ASSERT_EQUAL(rnsc_discovery_store_list(C, "/nonexistent/rnsc", now, NULL, &out, &out_len,
						  &count),
			0);
	CU_ASSERT_EQUAL(count, 0);
	free(out);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", storage);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* A workblock of more rounds than a one-byte msgpack integer holds: each round depends only on
 * the material and its index, so its first rounds are the shorter workblock's; and the stamp
 * value computed with and without the shared prefix hash agrees. */
static void t_long_workblock(void)
{
	static uint8_t wb300[300 * RNSC_STAMP_WORKBLOCK_ROUND],
		wb20[20 * RNSC_STAMP_WORKBLOCK_ROUND];
	const uint8_t mat[32] = {9, 8, 7};
	CU_ASSERT_EQUAL_FATAL(rnsc_stamp_workblock(C, wb300, sizeof wb300, mat, 32, 300), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_stamp_workblock(C, wb20, sizeof wb20, mat, 32, 20), 0);
	CU_ASSERT_EQUAL(memcmp(wb300, wb20, sizeof wb20), 0);
	uint8_t stamp[RNSC_STAMP_SIZE] = {1};
	int v = rnsc_stamp_value(C, wb300, sizeof wb300, stamp);
	CU_ASSERT(v >= 0 && v <= 256);
	CU_ASSERT(rnsc_stamp_valid(C, stamp, 0, wb300, sizeof wb300) >= 0);
}

int main(void)
{
	static const wt_test t[] = {
		{"records of every announced type", t_types},
		{"maps the reference refuses", t_refused},
		{"transport id hex", t_hex},
		{"the store lists, ages and deletes", t_store_list},
		{"a workblock of 300 rounds", t_long_workblock},
	};
	return wt_main("discovery", t, sizeof t / sizeof *t);
}
