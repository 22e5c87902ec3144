/* SPDX-License-Identifier: MIT */
/*
 * rnsc-conformance-bridge: the line protocol of the third-party reticulum-conformance suite
 * (github.com/torlando-tech/reticulum-conformance) over rnsc's own library.
 *
 * Protocol: the bridge prints READY, then reads one JSON request per line,
 *   {"id": ..., "command": "name", "params": {...}}
 * and writes exactly one JSON response line per request line:
 *   {"id": ..., "success": true, "result": {...}}   or
 *   {"id": ..., "success": false, "error": "why"}
 * Bytes travel as hex (lowercase out, either case in). A line that is not JSON, not an object,
 * names no command or carries a bad parameter gets success:false, never a crash: every
 * handler works on bounded, validated input.
 *
 * Every command is answered by rnsc's code (src/lib): the reference is never consulted.
 * Commands that mirror Python-only internals are refused with a reason.
 *
 * Ownership: rnsc_bridge_handle() returns a malloc'd NUL-terminated line (no newline) that
 * the caller frees. The bridge borrows ctx, which must outlive it.
 * Threading: one thread drives a bridge.
 */
#ifndef RNSC_BRIDGE_H
#define RNSC_BRIDGE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

/* Longest request line accepted (bytes). Longer lines are answered with an error. */
#define RNSC_BRIDGE_MAX_LINE (16u * 1024u * 1024u)

typedef struct rnsc_bridge {
	rnsc_ctx *ctx;
	unsigned long requests;
	char tmpdir[256]; /* where identity_to_file writes; "" = $TMPDIR or /tmp */
	/* crypto_provider_op: a second context restricted to one backend, opened on demand
	 * by the program that owns the bridge (NULL: not available) */
	rnsc_ctx *alt_ctx;
	char alt_backend[32];
	int (*open_backend)(struct rnsc_bridge *b, const char *backend);
	void *owner;
	/* A further command table the owner plugs in (the program: wire_*), with a lock held
	 * around every command; NULL when absent (the fuzz target starts no live nodes). */
	const struct rnsc_bridge_cmd *extra_cmds;
	void (*lock)(void);
	void (*unlock)(void);
} rnsc_bridge;

/* A command's handler: reads params (an object), fills result (an object) and returns 0, or
 * writes a reason into err and returns non-zero. */
typedef int (*rnsc_bridge_fn)(rnsc_bridge *b, json_t *params, json_t *result, char *err,
			      size_t errcap);

typedef struct rnsc_bridge_cmd {
	const char *name;
	rnsc_bridge_fn fn;
} rnsc_bridge_cmd;

void rnsc_bridge_init(rnsc_bridge *b, rnsc_ctx *ctx);
/* Answers one request line (len bytes, no newline needed). Never NULL unless out of memory. */
char *rnsc_bridge_handle(rnsc_bridge *b, const char *line, size_t len);

/* The command tables, NULL-name terminated. */
extern const rnsc_bridge_cmd rnsc_bridge_prim_cmds[];
/* behavioral_*: transport engines with mock interfaces (bridge_beh.c). */
extern const rnsc_bridge_cmd rnsc_bridge_beh_cmds[];

/* wire_*: live rnsc nodes on loopback TCP (bridge_wire.c). The nodes run on a driver thread;
 * the program sets extra_cmds to this table and lock/unlock to rnsc_bridge_wire_lock/unlock,
 * which rnsc_bridge_handle holds around every command so that nothing else touches the
 * context meanwhile. set_plugins gives the host the nodes load interfaces from
 * (borrowed); shutdown stops every instance. */
extern const rnsc_bridge_cmd rnsc_bridge_wire_cmds[];
void rnsc_bridge_wire_lock(void);
void rnsc_bridge_wire_unlock(void);
struct rnsc_plugin_host;
void rnsc_bridge_wire_set_plugins(struct rnsc_plugin_host *host);
void rnsc_bridge_wire_shutdown(void);

/* Points b->alt_ctx at a context whose crypto order is just backend. 0 or non-zero. */
int rnsc_bridge_open_backend(rnsc_bridge *b, const char *backend);

/* Parameter helpers (bridge.c). Each returns 0, or non-zero after writing the reason. */
/* Hex string param key into a malloc'd buffer (*out, freed by the caller; never NULL on
 * success, even for zero bytes). Absent or null: error when required, else *out = empty. */
int rnsc_bridge_hex(json_t *params, const char *key, int required, uint8_t **out, size_t *len,
		    char *err, size_t errcap);
/* Hex param that must be exactly n bytes, into caller storage. */
int rnsc_bridge_hex_fixed(json_t *params, const char *key, uint8_t *out, size_t n, char *err,
			  size_t errcap);
/* Integer param (JSON integer, or a decimal string); def when absent or null. */
int rnsc_bridge_int(json_t *params, const char *key, long long def, long long *out, char *err,
		    size_t errcap);
/* String param; def when absent or null (def may be NULL). */
int rnsc_bridge_str(json_t *params, const char *key, const char *def, const char **out, char *err,
		    size_t errcap);
/* Truthiness of a param as Python's bool() for JSON values; def when absent. */
int rnsc_bridge_bool(json_t *params, const char *key, int def);
/* Sets result[key] to the lowercase hex of p. */
int rnsc_bridge_set_hex(json_t *result, const char *key, const uint8_t *p, size_t len);
/* err = "what: rnsc error name (message)". Returns 1. */
int rnsc_bridge_fail(char *err, size_t errcap, const char *what, int rc);

#endif
