/* SPDX-License-Identifier: MIT */
#include "discovery.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "err.h"

static const char *const STORED_TYPES[] = {"BackboneInterface", "TCPServerInterface",
					   "I2PInterface",      "RNodeInterface",
					   "WeaveInterface",    "KISSInterface"};
/* InterfaceAnnouncer.DISCOVERABLE_INTERFACE_TYPES adds TCPClientInterface, which passes
 * validation but InterfaceDiscovery never stores. */

static int is_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* Python's str.isspace() on ASCII. */
static int py_space(unsigned char c)
{
	return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
}

size_t rnsc_discovery_sanitize_name(char *out, size_t cap, const char *in, size_t len)
{
	if (!out || cap == 0)
		return 0;
	char tmp[RNSC_DISC_NAME_MAX];
	size_t n = 0;
	/* encode("ascii", "ignore"): every byte of a multi-byte UTF-8 sequence is >= 0x80. */
	for (size_t i = 0; i < len && n < sizeof tmp - 1; i++)
		if (!((unsigned char)in[i] & 0x80))
			tmp[n++] = in[i];
	size_t a = 0, b = n;
	while (a < b && py_space((unsigned char)tmp[a]))
		a++;
	while (b > a && py_space((unsigned char)tmp[b - 1]))
		b--;
	/* replace(" " * k, " ") for k = 5, 3, 2 in turn: non-overlapping, left to right. */
	char buf[RNSC_DISC_NAME_MAX];
	size_t m = b - a;
	memcpy(buf, tmp + a, m);
	static const size_t runs[] = {5, 3, 2};
	for (size_t r = 0; r < 3; r++) {
		size_t k = runs[r], o = 0;
		for (size_t i = 0; i < m;) {
			size_t j = 0;
			while (j < k && i + j < m && buf[i + j] == ' ')
				j++;
			if (j == k) {
				buf[o++] = ' ';
				i += k;
			} else {
				buf[o++] = buf[i++];
			}
		}
		m = o;
	}
	a = 0;
	b = m;
	while (a < b && !is_alnum((unsigned char)buf[a]))
		a++;
	while (b > a && !is_alnum((unsigned char)buf[b - 1]) && buf[b - 1] != ')')
		b--;
	size_t l = b - a;
	if (l > cap - 1)
		l = cap - 1;
	memcpy(out, buf + a, l);
	out[l] = 0;
	return l;
}

int rnsc_discovery_is_ip(const char *s, size_t len)
{
	char b[128];
	if (!s || len == 0 || len >= sizeof b || memchr(s, 0, len))
		return 0;
	memcpy(b, s, len);
	b[len] = 0;
	unsigned char bin[16];
	if (strchr(b, ':')) {
		/* ipaddress accepts a scope id after '%', non-empty and without another '%'. */
		char *pct = strchr(b, '%');
		if (pct) {
			if (!pct[1] || strchr(pct + 1, '%'))
				return 0;
			*pct = 0;
		}
		return inet_pton(AF_INET6, b, bin) == 1;
	}
	/* IPv4: four decimal octets, no leading zeros (ipaddress is that strict). */
	int parts = 0;
	const char *p = b;
	while (*p) {
		size_t d = 0;
		unsigned v = 0;
		while (p[d] >= '0' && p[d] <= '9' && d < 4)
			v = v * 10 + (unsigned)(p[d++] - '0');
		if (d == 0 || d > 3 || v > 255 || (d > 1 && p[0] == '0'))
			return 0;
		parts++;
		p += d;
		if (*p == '.') {
			p++;
			if (!*p)
				return 0;
		} else if (*p) {
			return 0;
		}
	}
	return parts == 4;
}

int rnsc_discovery_is_hostname(const char *s, size_t len)
{
	if (!s || len == 0)
		return 0;
	if (s[len - 1] == '.')
		len--;
	if (len > 253)
		return 0;
	size_t start = 0;
	int all_digits_last = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		size_t l = i - start;
		if (l < 1 || l > 63 || s[start] == '-' || s[i - 1] == '-')
			return 0;
		all_digits_last = 1;
		for (size_t j = start; j < i; j++) {
			unsigned char c = (unsigned char)s[j];
			if (!is_alnum(c) && c != '-')
				return 0;
			if (c < '0' || c > '9')
				all_digits_last = 0;
		}
		start = i + 1;
	}
	return !all_digits_last;
}

/* A scalar field: nil, bool, int, float or str (what the reference can format). */
static int take_scalar(rnsc_disc_val *v, const rnsc_mp_token *t)
{
	memset(v, 0, sizeof *v);
	v->present = 1;
	v->type = t->type;
	switch (t->type) {
	case RNSC_MP_NIL:
		return 0;
	case RNSC_MP_BOOL:
		v->b = t->boolean;
		return 0;
	case RNSC_MP_UINT:
		v->u = t->u;
		return 0;
	case RNSC_MP_INT:
		v->i = t->i;
		return 0;
	case RNSC_MP_FLOAT32:
		v->type = RNSC_MP_FLOAT64; /* umsgpack hands back a Python float: written as f64 */
		v->d = t->f32;
		return 0;
	case RNSC_MP_FLOAT64:
		v->d = t->f64;
		return 0;
	case RNSC_MP_STR:
		v->s = (const char *)t->p;
		v->len = t->len;
		return 0;
	default:
		return -1;
	}
}

static int is_float_or_nil(const rnsc_disc_val *v)
{
	return v->type == RNSC_MP_NIL || v->type == RNSC_MP_FLOAT64;
}

/* str(value) as the config entry prints it. */
static int val_str(char *out, size_t cap, const rnsc_disc_val *v)
{
	switch (v->type) {
	case RNSC_MP_NIL:
		return snprintf(out, cap, "None");
	case RNSC_MP_BOOL:
		return snprintf(out, cap, "%s", v->b ? "True" : "False");
	case RNSC_MP_UINT:
		return snprintf(out, cap, "%llu", (unsigned long long)v->u);
	case RNSC_MP_INT:
		return snprintf(out, cap, "%lld", (long long)v->i);
	case RNSC_MP_STR:
		return snprintf(out, cap, "%.*s", (int)v->len, v->s);
	default:
		return -1;
	}
}

int rnsc_discovery_parse(rnsc_ctx *ctx, rnsc_disc_info *out, const uint8_t *app_data, size_t len,
			 int required_value)
{
	if (!ctx || !out)
		return RNSC_ERR_INVAL;
	memset(out, 0, sizeof *out);
	if (required_value <= 0)
		required_value = RNSC_DISC_DEFAULT_STAMP_VALUE;
	if (!app_data || len <= RNSC_STAMP_SIZE + 1)
		return RNSC_DISC_SHORT;
	uint8_t flags = app_data[0];
	if (flags & RNSC_DISC_FLAG_ENCRYPTED)
		return RNSC_DISC_ENCRYPTED;
	const uint8_t *packed = app_data + 1;
	size_t plen = len - 1 - RNSC_STAMP_SIZE;
	memcpy(out->stamp, packed + plen, RNSC_STAMP_SIZE);

	uint8_t infohash[32];
	int rc = rnsc_sha256(ctx, infohash, packed, plen);
	if (rc < 0)
		return rc;
	uint8_t wb[RNSC_STAMP_DISCOVERY_ROUNDS * RNSC_STAMP_WORKBLOCK_ROUND];
	if ((rc = rnsc_stamp_workblock(ctx, wb, sizeof wb, infohash, sizeof infohash,
				       RNSC_STAMP_DISCOVERY_ROUNDS)) < 0)
		return rc;
	int value = rnsc_stamp_value(ctx, wb, sizeof wb, out->stamp);
	if (value < 0)
		return value;
	int valid = rnsc_stamp_valid(ctx, out->stamp, required_value, wb, sizeof wb);
	if (valid < 0)
		return valid;
	out->value = value;
	/* Valid by the integer bound, yet below the value asked for: the reference drops it too. */
	if (!valid || value < required_value)
		return RNSC_DISC_STAMP;

	return rnsc_discovery_decode(ctx, out, packed, plen);
}

int rnsc_discovery_decode(rnsc_ctx *ctx, rnsc_disc_info *out, const uint8_t *packed, size_t plen)
{
	if (!ctx || !out || (!packed && plen))
		return RNSC_ERR_INVAL;
	int rc, keep_value = out->value;
	uint8_t keep_stamp[RNSC_STAMP_SIZE];
	memcpy(keep_stamp, out->stamp, sizeof keep_stamp);
	memset(out, 0, sizeof *out);
	out->value = keep_value;
	memcpy(out->stamp, keep_stamp, sizeof keep_stamp);
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, packed, plen);
	size_t pairs;
	if (rnsc_mp_read_map(&r, &pairs) < 0)
		return RNSC_DISC_MALFORMED;
	/* Later duplicates replace earlier ones, as in the reference's dict. */
	rnsc_mp_token ty = {0}, nm = {0}, tp = {0}, tid = {0};
	int have_ty = 0, have_nm = 0, have_tp = 0, have_tid = 0, have_op = 0;
	rnsc_mp_token op = {0};
	rnsc_disc_val lat = {0}, lon = {0}, hgt = {0};
	for (size_t i = 0; i < pairs; i++) {
		rnsc_mp_token k, v;
		if (rnsc_mp_next(&r, &k) < 0)
			return RNSC_DISC_MALFORMED;
		if (k.type == RNSC_MP_ARRAY || k.type == RNSC_MP_MAP)
			return RNSC_DISC_MALFORMED; /* unhashable in Python */
		if (rnsc_mp_peek(&r, &v) < 0)
			return RNSC_DISC_MALFORMED;
		int is_key = k.type == RNSC_MP_UINT && k.u <= 0xff;
		if (v.type == RNSC_MP_ARRAY || v.type == RNSC_MP_MAP || v.type == RNSC_MP_EXT) {
			if (rnsc_mp_skip(&r) < 0)
				return RNSC_DISC_MALFORMED;
			if (is_key)
				switch (k.u) {
				case RNSC_DISC_K_INTERFACE_TYPE:
				case RNSC_DISC_K_NAME:
				case RNSC_DISC_K_TRANSPORT:
				case RNSC_DISC_K_TRANSPORT_ID:
				case RNSC_DISC_K_LATITUDE:
				case RNSC_DISC_K_LONGITUDE:
				case RNSC_DISC_K_HEIGHT:
				case RNSC_DISC_K_OP_ADDR:
				case RNSC_DISC_K_REACHABLE_ON:
				case RNSC_DISC_K_PORT:
				case RNSC_DISC_K_IFAC_NETNAME:
				case RNSC_DISC_K_IFAC_NETKEY:
				case RNSC_DISC_K_FREQUENCY:
				case RNSC_DISC_K_BANDWIDTH:
				case RNSC_DISC_K_SPREADINGFACTOR:
				case RNSC_DISC_K_CODINGRATE:
				case RNSC_DISC_K_MODULATION:
				case RNSC_DISC_K_CHANNEL:
					/* Containers in the fields rnsc reads: narrower than the
					 * reference, which formats some of them with str(). */
					return RNSC_DISC_MALFORMED;
				}
			continue;
		}
		if (rnsc_mp_next(&r, &v) < 0)
			return RNSC_DISC_MALFORMED;
		if (!is_key)
			continue;
		rnsc_disc_val sv;
		int sc = take_scalar(&sv, &v);
		switch (k.u) {
		case RNSC_DISC_K_INTERFACE_TYPE:
			ty = v;
			have_ty = 1;
			break;
		case RNSC_DISC_K_NAME:
			nm = v;
			have_nm = 1;
			break;
		case RNSC_DISC_K_TRANSPORT:
			tp = v;
			have_tp = 1;
			break;
		case RNSC_DISC_K_TRANSPORT_ID:
			tid = v;
			have_tid = 1;
			break;
		case RNSC_DISC_K_OP_ADDR:
			op = v;
			have_op = 1;
			break;
		case RNSC_DISC_K_LATITUDE:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			lat = sv;
			break;
		case RNSC_DISC_K_LONGITUDE:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			lon = sv;
			break;
		case RNSC_DISC_K_HEIGHT:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			hgt = sv;
			break;
		case RNSC_DISC_K_REACHABLE_ON:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			out->reachable_on = sv;
			break;
		case RNSC_DISC_K_PORT:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			out->port = sv;
			break;
		case RNSC_DISC_K_IFAC_NETNAME:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			out->ifac_netname = sv;
			break;
		case RNSC_DISC_K_IFAC_NETKEY:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			out->ifac_netkey = sv;
			break;
		case RNSC_DISC_K_FREQUENCY:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			out->frequency = sv;
			break;
		case RNSC_DISC_K_BANDWIDTH:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			out->bandwidth = sv;
			break;
		case RNSC_DISC_K_SPREADINGFACTOR:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			out->sf = sv;
			break;
		case RNSC_DISC_K_CODINGRATE:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			out->cr = sv;
			break;
		case RNSC_DISC_K_MODULATION:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			out->modulation = sv;
			break;
		case RNSC_DISC_K_CHANNEL:
			if (sc < 0)
				return RNSC_DISC_MALFORMED;
			out->channel = sv;
			break;
		default:
			break;
		}
	}
	if (!have_ty)
		return RNSC_DISC_NOTYPE;
	/* The reference's order of checks; any KeyError or ValueError drops the announce. */
	if (!have_nm || !have_tp || !lat.present || !lon.present || !hgt.present || !have_tid)
		return RNSC_DISC_MALFORMED;
	if (ty.type != RNSC_MP_STR || ty.len >= sizeof out->type)
		return RNSC_DISC_MALFORMED;
	memcpy(out->type, ty.p, ty.len);
	out->type[ty.len] = 0;
	/* sanitize_name: falsy values are None, a str is cleaned, anything else raises. */
	int name_none = 0;
	if (nm.type == RNSC_MP_STR) {
		if (rnsc_discovery_sanitize_name(out->name, sizeof out->name, (const char *)nm.p,
						 nm.len) == 0)
			name_none = 1;
	} else if (nm.type == RNSC_MP_NIL || (nm.type == RNSC_MP_BOOL && !nm.boolean) ||
		   (nm.type == RNSC_MP_UINT && nm.u == 0) ||
		   (nm.type == RNSC_MP_FLOAT64 && nm.f64 == 0) ||
		   (nm.type == RNSC_MP_FLOAT32 && nm.f32 == 0) ||
		   (nm.type == RNSC_MP_BIN && nm.len == 0)) {
		name_none = 1;
	} else {
		return RNSC_DISC_MALFORMED;
	}
	if (tp.type != RNSC_MP_BOOL)
		return RNSC_DISC_MALFORMED;
	out->transport = tp.boolean;
	if (!is_float_or_nil(&lat) || !is_float_or_nil(&lon) || !is_float_or_nil(&hgt))
		return RNSC_DISC_MALFORMED;
	out->latitude = lat;
	out->longitude = lon;
	out->height = hgt;
	/* len() == 16: rnsc takes the bytes form only (a 16-char str or list fails later in
	 * the reference's hexrep or its file handling anyway). */
	if (tid.type != RNSC_MP_BIN || tid.len != 16)
		return RNSC_DISC_MALFORMED;
	memcpy(out->transport_id, tid.p, 16);
	int known = 0, stored = 0;
	static const char *const ANNOUNCED[] = {
		"BackboneInterface", "TCPServerInterface", "TCPClientInterface", "RNodeInterface",
		"WeaveInterface",    "I2PInterface",       "KISSInterface"};
	for (size_t i = 0; i < sizeof ANNOUNCED / sizeof *ANNOUNCED; i++)
		known |= !strcmp(out->type, ANNOUNCED[i]);
	if (!known)
		return RNSC_DISC_MALFORMED;
	if (out->reachable_on.present) {
		const rnsc_disc_val *ro = &out->reachable_on;
		if (ro->type != RNSC_MP_STR || memchr(ro->s, 0, ro->len) ||
		    !(rnsc_discovery_is_ip(ro->s, ro->len) ||
		      rnsc_discovery_is_hostname(ro->s, ro->len)))
			return RNSC_DISC_MALFORMED;
	}
	if (name_none)
		snprintf(out->name, sizeof out->name, "Discovered %s", out->type);
	for (size_t i = 0; i < sizeof STORED_TYPES / sizeof *STORED_TYPES; i++)
		stored |= !strcmp(out->type, STORED_TYPES[i]);
	if (out->ifac_netname.present && out->ifac_netname.type != RNSC_MP_STR)
		return RNSC_DISC_MALFORMED;
	if (out->ifac_netkey.present && out->ifac_netkey.type != RNSC_MP_STR)
		return RNSC_DISC_MALFORMED;
	int tcp =
		!strcmp(out->type, "BackboneInterface") || !strcmp(out->type, "TCPServerInterface");
	if (tcp && (!out->reachable_on.present || !out->port.present ||
		    (out->port.type != RNSC_MP_UINT && out->port.type != RNSC_MP_INT)))
		return RNSC_DISC_MALFORMED;
	if (!strcmp(out->type, "I2PInterface") && !out->reachable_on.present)
		return RNSC_DISC_MALFORMED;
	if (!strcmp(out->type, "RNodeInterface") &&
	    (!out->frequency.present || !out->bandwidth.present || !out->sf.present ||
	     !out->cr.present))
		return RNSC_DISC_MALFORMED;
	if (!strcmp(out->type, "WeaveInterface") &&
	    (!out->frequency.present || !out->bandwidth.present || !out->channel.present ||
	     !out->modulation.present))
		return RNSC_DISC_MALFORMED;
	if (!strcmp(out->type, "KISSInterface") &&
	    (!out->frequency.present || !out->bandwidth.present || !out->modulation.present))
		return RNSC_DISC_MALFORMED;
	if (have_op) {
		if (op.type != RNSC_MP_NIL && op.type != RNSC_MP_BIN)
			return RNSC_DISC_MALFORMED;
		if (op.type == RNSC_MP_BIN && op.len == 16) {
			out->has_op_addr = 1;
			memcpy(out->op_addr, op.p, 16);
		}
	}
	char mat[32 + RNSC_DISC_NAME_MAX];
	for (int i = 0; i < 16; i++)
		snprintf(mat + 2 * i, 3, "%02x", out->transport_id[i]);
	size_t nl = strlen(out->name);
	memcpy(mat + 32, out->name, nl);
	if ((rc = rnsc_sha256(ctx, out->discovery_hash, (const uint8_t *)mat, 32 + nl)) < 0)
		return rc;
	return stored ? RNSC_DISC_OK : RNSC_DISC_NOSTORE;
}

static int w_val(rnsc_mp_writer *w, const rnsc_disc_val *v)
{
	switch (v->type) {
	case RNSC_MP_BOOL:
		return rnsc_mp_write_bool(w, v->b);
	case RNSC_MP_UINT:
		return rnsc_mp_write_uint(w, v->u);
	case RNSC_MP_INT:
		return rnsc_mp_write_int(w, v->i);
	case RNSC_MP_FLOAT64:
		return rnsc_mp_write_double(w, v->d);
	case RNSC_MP_STR:
		return rnsc_mp_write_str(w, v->s, v->len);
	default:
		return rnsc_mp_write_nil(w);
	}
}

static void hex16(char out[33], const uint8_t b[16])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The config entry text (Discovery.py's f-strings, byte for byte). */
static int config_entry(char *out, size_t cap, const rnsc_disc_info *in)
{
	char tid[33], nn[600] = "", nk[600] = "", a[300], b[300], c[300], d[300];
	hex16(tid, in->transport_id);
	if (in->ifac_netname.present && in->ifac_netname.len)
		snprintf(nn, sizeof nn, "\n  network_name = %.*s", (int)in->ifac_netname.len,
			 in->ifac_netname.s);
	if (in->ifac_netkey.present && in->ifac_netkey.len)
		snprintf(nk, sizeof nk, "\n  passphrase = %.*s", (int)in->ifac_netkey.len,
			 in->ifac_netkey.s);
	const char *t = in->type;
	if (!strcmp(t, "BackboneInterface") || !strcmp(t, "TCPServerInterface")) {
		/* Linux has the Backbone interface: the entry always names it. */
		val_str(a, sizeof a, &in->reachable_on);
		val_str(b, sizeof b, &in->port);
		return snprintf(
			out, cap,
			"[[%s]]\n  type = BackboneInterface\n  enabled = yes\n  remote = %s\n"
			"  target_port = %s\n  transport_identity = %s%s%s",
			in->name, a, b, tid, nn, nk);
	}
	if (!strcmp(t, "I2PInterface")) {
		val_str(a, sizeof a, &in->reachable_on);
		return snprintf(out, cap,
				"[[%s]]\n  type = I2PInterface\n  enabled = yes\n  peers = %s\n"
				"  transport_identity = %s%s%s",
				in->name, a, tid, nn, nk);
	}
	if (!strcmp(t, "RNodeInterface")) {
		val_str(a, sizeof a, &in->frequency);
		val_str(b, sizeof b, &in->bandwidth);
		val_str(c, sizeof c, &in->sf);
		val_str(d, sizeof d, &in->cr);
		return snprintf(out, cap,
				"[[%s]]\n  type = RNodeInterface\n  enabled = yes\n  port = \n"
				"  frequency = %s\n  bandwidth = %s\n  spreadingfactor = %s\n"
				"  codingrate = %s\n  txpower = %s%s",
				in->name, a, b, c, d, nn, nk);
	}
	if (!strcmp(t, "WeaveInterface"))
		return snprintf(out, cap,
				"[[%s]]\n  type = WeaveInterface\n  enabled = yes\n  port = %s%s",
				in->name, nn, nk);
	if (!strcmp(t, "KISSInterface")) {
		val_str(a, sizeof a, &in->frequency);
		val_str(b, sizeof b, &in->bandwidth);
		val_str(c, sizeof c, &in->modulation);
		return snprintf(out, cap,
				"[[%s]]\n  type = KISSInterface\n  enabled = yes\n  port = \n"
				"  # Frequency: %s\n  # Bandwidth: %s\n  # Modulation: %s\n"
				"  transport_identity = %s%s%s",
				in->name, a, b, c, tid, nn, nk);
	}
	return -1;
}

int rnsc_discovery_record(rnsc_mp_writer *w, const rnsc_disc_info *in, const uint8_t network_id[16],
			  unsigned hops, double received, double discovered, double last_heard,
			  int64_t heard_count)
{
	if (!w || !in || !network_id)
		return RNSC_ERR_INVAL;
	char tid[33], nid[33], ce[4096], op[33];
	hex16(tid, in->transport_id);
	hex16(nid, network_id);
	int ce_len = config_entry(ce, sizeof ce, in);
	if (ce_len >= (int)sizeof ce)
		return RNSC_ERR_TOOBIG;
	int tcp = !strcmp(in->type, "BackboneInterface") || !strcmp(in->type, "TCPServerInterface");
	int i2p = !strcmp(in->type, "I2PInterface");
	int rnode = !strcmp(in->type, "RNodeInterface");
	int weave = !strcmp(in->type, "WeaveInterface");
	int kiss = !strcmp(in->type, "KISSInterface");
	size_t n = 12 + 4 /* discovery_hash, discovered, last_heard, heard_count */;
	n += in->ifac_netname.present + in->ifac_netkey.present;
	n += tcp ? 3 : i2p ? 2 : rnode ? 5 : weave ? 5 : kiss ? 4 : 0;
	n += in->has_op_addr;
	rnsc_mp_write_map(w, n);
	rnsc_mp_write_cstr(w, "type");
	rnsc_mp_write_cstr(w, in->type);
	rnsc_mp_write_cstr(w, "transport");
	rnsc_mp_write_bool(w, in->transport);
	rnsc_mp_write_cstr(w, "name");
	rnsc_mp_write_cstr(w, in->name);
	rnsc_mp_write_cstr(w, "received");
	rnsc_mp_write_double(w, received);
	rnsc_mp_write_cstr(w, "stamp");
	rnsc_mp_write_bin(w, in->stamp, RNSC_STAMP_SIZE);
	rnsc_mp_write_cstr(w, "value");
	rnsc_mp_write_uint(w, (uint64_t)in->value);
	rnsc_mp_write_cstr(w, "transport_id");
	rnsc_mp_write_cstr(w, tid);
	rnsc_mp_write_cstr(w, "network_id");
	rnsc_mp_write_cstr(w, nid);
	rnsc_mp_write_cstr(w, "hops");
	rnsc_mp_write_uint(w, hops);
	rnsc_mp_write_cstr(w, "latitude");
	w_val(w, &in->latitude);
	rnsc_mp_write_cstr(w, "longitude");
	w_val(w, &in->longitude);
	rnsc_mp_write_cstr(w, "height");
	w_val(w, &in->height);
	if (in->ifac_netname.present) {
		rnsc_mp_write_cstr(w, "ifac_netname");
		w_val(w, &in->ifac_netname);
	}
	if (in->ifac_netkey.present) {
		rnsc_mp_write_cstr(w, "ifac_netkey");
		w_val(w, &in->ifac_netkey);
	}
	if (tcp) {
		rnsc_mp_write_cstr(w, "reachable_on");
		w_val(w, &in->reachable_on);
		rnsc_mp_write_cstr(w, "port");
		w_val(w, &in->port);
	}
	if (i2p) {
		rnsc_mp_write_cstr(w, "reachable_on");
		w_val(w, &in->reachable_on);
	}
	if (rnode) {
		rnsc_mp_write_cstr(w, "frequency");
		w_val(w, &in->frequency);
		rnsc_mp_write_cstr(w, "bandwidth");
		w_val(w, &in->bandwidth);
		rnsc_mp_write_cstr(w, "sf");
		w_val(w, &in->sf);
		rnsc_mp_write_cstr(w, "cr");
		w_val(w, &in->cr);
	}
	if (weave) {
		rnsc_mp_write_cstr(w, "frequency");
		w_val(w, &in->frequency);
		rnsc_mp_write_cstr(w, "bandwidth");
		w_val(w, &in->bandwidth);
		rnsc_mp_write_cstr(w, "channel");
		w_val(w, &in->channel);
		rnsc_mp_write_cstr(w, "modulation");
		w_val(w, &in->modulation);
	}
	if (kiss) {
		rnsc_mp_write_cstr(w, "frequency");
		w_val(w, &in->frequency);
		rnsc_mp_write_cstr(w, "bandwidth");
		w_val(w, &in->bandwidth);
		rnsc_mp_write_cstr(w, "modulation");
		w_val(w, &in->modulation);
	}
	if (tcp || i2p || rnode || weave || kiss) {
		rnsc_mp_write_cstr(w, "config_entry");
		rnsc_mp_write_str(w, ce, ce_len > 0 ? (size_t)ce_len : 0);
	}
	rnsc_mp_write_cstr(w, "discovery_hash");
	rnsc_mp_write_bin(w, in->discovery_hash, 32);
	if (in->has_op_addr) {
		hex16(op, in->op_addr);
		rnsc_mp_write_cstr(w, "operator_lxmf_address");
		rnsc_mp_write_cstr(w, op);
	}
	rnsc_mp_write_cstr(w, "discovered");
	rnsc_mp_write_double(w, discovered);
	rnsc_mp_write_cstr(w, "last_heard");
	rnsc_mp_write_double(w, last_heard);
	rnsc_mp_write_cstr(w, "heard_count");
	rnsc_mp_write_int(w, heard_count);
	return rnsc_mp_writer_finish(w);
}

int rnsc_discovery_announce_data(rnsc_ctx *ctx, uint8_t *out, size_t cap,
				 const rnsc_disc_announce *a, int cost, size_t *packed_len)
{
	if (!ctx || !out || !a || !a->type || !a->impl || !a->version || cap < 1 + RNSC_STAMP_SIZE)
		return RNSC_ERR_INVAL;
	int tcp = !strcmp(a->type, "BackboneInterface") || !strcmp(a->type, "TCPServerInterface");
	if ((!tcp && strcmp(a->type, "I2PInterface")) || (tcp && !a->reachable_on))
		return RNSC_ERR_INVAL; /* the reference aborts a TCP announce without reachable_on */
	if (cost <= 0)
		cost = RNSC_DISC_DEFAULT_STAMP_VALUE;
	size_t n = 9 + (a->op_addr != NULL) + (a->reachable_on ? (tcp ? 2 : 1) : 0) +
		   (a->ifac_netname != NULL) + (a->ifac_netkey != NULL);
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, out + 1, cap - 1 - RNSC_STAMP_SIZE);
	rnsc_mp_write_map(&w, n);
	rnsc_mp_write_uint(&w, RNSC_DISC_K_INTERFACE_TYPE);
	rnsc_mp_write_cstr(&w, a->type);
	rnsc_mp_write_uint(&w, RNSC_DISC_K_TRANSPORT);
	rnsc_mp_write_bool(&w, a->transport);
	rnsc_mp_write_uint(&w, RNSC_DISC_K_TRANSPORT_ID);
	rnsc_mp_write_bin(&w, a->transport_id, 16);
	rnsc_mp_write_uint(&w, RNSC_DISC_K_TRANSPORT_IMPL);
	rnsc_mp_write_cstr(&w, a->impl);
	rnsc_mp_write_uint(&w, RNSC_DISC_K_TRANSPORT_VERS);
	rnsc_mp_write_cstr(&w, a->version);
	rnsc_mp_write_uint(&w, RNSC_DISC_K_NAME);
	if (a->name)
		rnsc_mp_write_cstr(&w, a->name);
	else
		rnsc_mp_write_nil(&w);
	rnsc_mp_write_uint(&w, RNSC_DISC_K_LATITUDE);
	w_val(&w, &a->latitude);
	rnsc_mp_write_uint(&w, RNSC_DISC_K_LONGITUDE);
	w_val(&w, &a->longitude);
	rnsc_mp_write_uint(&w, RNSC_DISC_K_HEIGHT);
	w_val(&w, &a->height);
	if (a->op_addr) {
		rnsc_mp_write_uint(&w, RNSC_DISC_K_OP_ADDR);
		rnsc_mp_write_bin(&w, a->op_addr, 16);
	}
	if (a->reachable_on) {
		rnsc_mp_write_uint(&w, RNSC_DISC_K_REACHABLE_ON);
		rnsc_mp_write_cstr(&w, a->reachable_on);
		if (tcp) {
			rnsc_mp_write_uint(&w, RNSC_DISC_K_PORT);
			rnsc_mp_write_int(&w, a->port);
		}
	}
	if (a->ifac_netname) {
		rnsc_mp_write_uint(&w, RNSC_DISC_K_IFAC_NETNAME);
		rnsc_mp_write_cstr(&w, a->ifac_netname);
	}
	if (a->ifac_netkey) {
		rnsc_mp_write_uint(&w, RNSC_DISC_K_IFAC_NETKEY);
		rnsc_mp_write_cstr(&w, a->ifac_netkey);
	}
	int pl = rnsc_mp_writer_finish(&w);
	if (pl < 0)
		return pl;
	uint8_t ih[32];
	int rc = rnsc_sha256(ctx, ih, out + 1, (size_t)pl);
	if (rc < 0)
		return rc;
	uint8_t *wb = malloc(RNSC_STAMP_DISCOVERY_ROUNDS * RNSC_STAMP_WORKBLOCK_ROUND);
	if (!wb)
		return RNSC_ERR_NOMEM;
	rc = rnsc_stamp_workblock(ctx, wb, RNSC_STAMP_DISCOVERY_ROUNDS * RNSC_STAMP_WORKBLOCK_ROUND,
				  ih, sizeof ih, RNSC_STAMP_DISCOVERY_ROUNDS);
	if (rc == 0)
		rc = rnsc_stamp_generate(ctx, out + 1 + pl, wb,
					 RNSC_STAMP_DISCOVERY_ROUNDS * RNSC_STAMP_WORKBLOCK_ROUND,
					 cost, 0);
	free(wb);
	if (rc < 0)
		return rc;
	out[0] = 0;
	if (packed_len)
		*packed_len = (size_t)pl;
	return 1 + pl + RNSC_STAMP_SIZE;
}
