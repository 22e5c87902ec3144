/* SPDX-License-Identifier: MIT */
/* The bridge's request/response framing and parameter parsing (see bridge.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "err.h"

void rnsc_bridge_init(rnsc_bridge *b, rnsc_ctx *ctx)
{
	memset(b, 0, sizeof(*b));
	b->ctx = ctx;
}

int rnsc_bridge_open_backend(rnsc_bridge *b, const char *backend)
{
	if (b->alt_ctx && strcmp(b->alt_backend, backend) == 0)
		return 0;
	if (!b->open_backend || strlen(backend) >= sizeof(b->alt_backend))
		return -1;
	if (b->open_backend(b, backend))
		return -1;
	snprintf(b->alt_backend, sizeof(b->alt_backend), "%s", backend);
	return 0;
}

int rnsc_bridge_fail(char *err, size_t errcap, const char *what, int rc)
{
	snprintf(err, errcap, "%s: %s (%s)", what, rnsc_err_name(rc), rnsc_strerror(rc));
	return 1;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int rnsc_bridge_hex(json_t *params, const char *key, int required, uint8_t **out, size_t *len,
		    char *err, size_t errcap)
{
	json_t *v = json_object_get(params, key);
	*out = NULL;
	*len = 0;
	if (!v || json_is_null(v)) {
		if (required) {
			snprintf(err, errcap, "missing parameter '%s'", key);
			return 1;
		}
		*out = malloc(1);
		if (!*out) {
			snprintf(err, errcap, "out of memory");
			return 1;
		}
		return 0;
	}
	if (!json_is_string(v)) {
		snprintf(err, errcap, "parameter '%s' must be a hex string", key);
		return 1;
	}
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (n % 2) {
		snprintf(err, errcap, "parameter '%s': odd-length hex", key);
		return 1;
	}
	uint8_t *p = malloc(n / 2 + 1);
	if (!p) {
		snprintf(err, errcap, "out of memory");
		return 1;
	}
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			free(p);
			snprintf(err, errcap, "parameter '%s': not hex at offset %zu", key, 2 * i);
			return 1;
		}
		p[i] = (uint8_t)(hi << 4 | lo);
	}
	*out = p;
	*len = n / 2;
	return 0;
}

int rnsc_bridge_hex_fixed(json_t *params, const char *key, uint8_t *out, size_t n, char *err,
			  size_t errcap)
{
	uint8_t *p;
	size_t len;
	if (rnsc_bridge_hex(params, key, 1, &p, &len, err, errcap))
		return 1;
	if (len != n) {
		free(p);
		snprintf(err, errcap, "parameter '%s' must be %zu bytes, got %zu", key, n, len);
		return 1;
	}
	memcpy(out, p, n);
	free(p);
	return 0;
}

int rnsc_bridge_int(json_t *params, const char *key, long long def, long long *out, char *err,
		    size_t errcap)
{
	json_t *v = json_object_get(params, key);
	if (!v || json_is_null(v)) {
		*out = def;
		return 0;
	}
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return 0;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end;
		errno = 0;
		long long x = strtoll(s, &end, 10);
		if (*s && !*end && !errno) {
			*out = x;
			return 0;
		}
	}
	snprintf(err, errcap, "parameter '%s' must be an integer", key);
	return 1;
}

int rnsc_bridge_str(json_t *params, const char *key, const char *def, const char **out, char *err,
		    size_t errcap)
{
	json_t *v = json_object_get(params, key);
	if (!v || json_is_null(v)) {
		*out = def;
		if (!def) {
			snprintf(err, errcap, "missing parameter '%s'", key);
			return 1;
		}
		return 0;
	}
	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
		snprintf(err, errcap, "parameter '%s' must be a string without NUL", key);
		return 1;
	}
	*out = json_string_value(v);
	return 0;
}

int rnsc_bridge_bool(json_t *params, const char *key, int def)
{
	json_t *v = json_object_get(params, key);
	if (!v || json_is_null(v))
		return v ? 0 : def;
	if (json_is_boolean(v))
		return json_is_true(v);
	if (json_is_integer(v))
		return json_integer_value(v) != 0;
	if (json_is_real(v))
		return json_real_value(v) != 0.0;
	if (json_is_string(v))
		return json_string_length(v) != 0;
	if (json_is_array(v))
		return json_array_size(v) != 0;
	return json_object_size(v) != 0;
}

int rnsc_bridge_set_hex(json_t *result, const char *key, const uint8_t *p, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char *s = malloc(2 * len + 1);
	if (!s)
		return -1;
	for (size_t i = 0; i < len; i++) {
		s[2 * i] = digits[p[i] >> 4];
		s[2 * i + 1] = digits[p[i] & 15];
	}
	s[2 * len] = '\0';
	int rc = json_object_set_new(result, key, json_stringn(s, 2 * len));
	free(s);
	return rc;
}

static const rnsc_bridge_cmd *find_cmd(const rnsc_bridge *b, const char *name)
{
	const rnsc_bridge_cmd *const tables[] = {rnsc_bridge_prim_cmds, rnsc_bridge_beh_cmds,
						 b->extra_cmds};
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const rnsc_bridge_cmd *c = tables[t]; c && c->name; c++)
			if (strcmp(c->name, name) == 0)
				return c;
	return NULL;
}

/* An error message as a JSON string. A message that quotes the request (a config line, a
 * name) may carry invalid UTF-8, or be cut inside a character by the buffer's size; jansson
 * refuses such text, so its non-ASCII bytes are then shown as '?'. */
static json_t *error_string(const char *err)
{
	json_t *s = json_string(err);
	if (s)
		return s;
	char safe[512];
	size_t n = 0;
	for (; err[n] && n < sizeof(safe) - 1; n++)
		safe[n] = (unsigned char)err[n] < 0x80 ? err[n] : '?';
	safe[n] = 0;
	return json_string(safe);
}

static char *respond(json_t *id, int ok, json_t *result, const char *err)
{
	json_t *r = json_object();
	char *out = NULL;
	if (!r)
		goto done;
	if (id)
		json_object_set(r, "id", id);
	else
		json_object_set_new(r, "id", json_string("unknown"));
	json_object_set_new(r, "success", json_boolean(ok));
	if (ok)
		json_object_set(r, "result", result);
	else
		json_object_set_new(r, "error", error_string(err ? err : "error"));
	out = json_dumps(r, JSON_COMPACT | JSON_ENSURE_ASCII);
done:
	json_decref(r);
	return out;
}

char *rnsc_bridge_handle(rnsc_bridge *b, const char *line, size_t len)
{
	char err[512] = "";
	b->requests++;
	if (len > RNSC_BRIDGE_MAX_LINE) {
		snprintf(err, sizeof(err), "request line of %zu bytes exceeds the %u-byte limit",
			 len, RNSC_BRIDGE_MAX_LINE);
		json_t *id = json_string("parse_error");
		char *o = respond(id, 0, NULL, err);
		json_decref(id);
		return o;
	}
	json_error_t je;
	json_t *req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!req) {
		snprintf(err, sizeof(err), "JSON parse error: %s (line %d, column %d)", je.text,
			 je.line, je.column);
		json_t *id = json_string("parse_error");
		char *o = respond(id, 0, NULL, err);
		json_decref(id);
		return o;
	}
	char *out = NULL;
	json_t *id = json_is_object(req) ? json_object_get(req, "id") : NULL;
	json_t *cmd = json_is_object(req) ? json_object_get(req, "command") : NULL;
	json_t *params = json_is_object(req) ? json_object_get(req, "params") : NULL;
	if (!json_is_object(req)) {
		out = respond(NULL, 0, NULL, "request must be a JSON object");
		goto done;
	}
	if (!json_is_string(cmd) || strlen(json_string_value(cmd)) != json_string_length(cmd)) {
		out = respond(id, 0, NULL, "request has no 'command' string");
		goto done;
	}
	if (params && json_is_null(params))
		params = NULL;
	if (params && !json_is_object(params)) {
		out = respond(id, 0, NULL, "'params' must be an object");
		goto done;
	}
	const rnsc_bridge_cmd *c = find_cmd(b, json_string_value(cmd));
	if (!c) {
		snprintf(err, sizeof(err), "Unknown command: %.200s", json_string_value(cmd));
		out = respond(id, 0, NULL, err);
		goto done;
	}
	json_t *empty = params ? NULL : json_object();
	json_t *result = json_object();
	if (!result || (!params && !empty)) {
		json_decref(empty);
		json_decref(result);
		goto done;
	}
	if (b->lock)
		b->lock();
	int rc = c->fn(b, params ? params : empty, result, err, sizeof(err));
	if (b->unlock)
		b->unlock();
	out = respond(id, rc == 0, result, err[0] ? err : "command failed");
	json_decref(result);
	json_decref(empty);
done:
	json_decref(req);
	return out;
}
