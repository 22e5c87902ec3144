/* SPDX-License-Identifier: MIT */
/*
 * Tests of src/runtime/cfgfile.c and cfg_*.c against the reference.
 *
 * tests/data/config_cases.txt holds expectations produced by the pinned rns itself
 * (tests/data/config_cases.py): ConfigObj's parse of corner cases and of the
 * reference's own default and example files, Python's int()/float()/as_bool(),
 * the settings Reticulum.__init__ derives, and which interfaces it enables. Its
 * format, one record per line:
 *   case NAME / settings NAME / ifaces NAME   start a block
 *   in TEXT        one input line (%XX escapes), ended by '\n' ...
 *   noeol          ... except the last one when this follows it
 *   out DUMP       one expected dump line (see dump_section)
 *   set FIELD VAL  one expected setting; set-error OPTION: the reference refused it
 *   iface NAME ENABLED TYPE / iface-error NAME
 *   end            closes the block
 *   conv STR BOOL INT FLOAT   one conversion (E: rejected, R: beyond int64)
 *
 * `config_test --dump FILE...` prints the dump of each file; tests/data/config_diff.py
 * uses it to compare rnsc with ConfigObj on random inputs.
 */
#define _GNU_SOURCE /* nftw, mkdtemp */
#include <CUnit/Basic.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The runtime's config-file reader. */
#include "cfgfile.h"
#include "cu_run.h"
#include "store.h"

/* ---- dump ---------------------------------------------------------------------------- */

typedef struct sbuf {
	char *p;
	size_t len, cap;
} sbuf;

static void sb_putc(sbuf *b, char c)
{
	if (b->len + 2 > b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	b->p[b->len++] = c;
	b->p[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s)
{
	if (!b->p) { /* an empty string is still a string, not NULL */
		sb_putc(b, 'x');
		b->len = 0;
		b->p[0] = '\0';
	}
	while (*s)
		sb_putc(b, *s++);
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	sb_puts(b, tmp);
}

static void sb_esc(sbuf *b, const char *s)
{
	if (!*s) {
		sb_putc(b, '%');
		return;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p > 0x20 && *p < 0x7f && *p != '%' && *p != '/')
			sb_putc(b, (char)*p);
		else
			sb_printf(b, "%%%02X", *p);
	}
}

/* One line per option (V value, L list, I interpolation failure) and per section (S),
 * options before subsections, as ConfigObj iterates. */
static void dump_section(const rnsc_config_section *s, const char *path, sbuf *out)
{
	for (size_t i = 0; i < rnsc_config_option_count(s); i++) {
		const char *k = rnsc_config_option_name(s, i);
		if (rnsc_config_is_list(s, k) == 1) {
			const char *const *it;
			size_t n;
			if (rnsc_config_get_list(s, k, &it, &n, NULL) != 0) {
				sb_printf(out, "I %s ", path);
				sb_esc(out, k);
				sb_putc(out, '\n');
				continue;
			}
			sb_printf(out, "L %s ", path);
			sb_esc(out, k);
			sb_printf(out, " %zu", n);
			for (size_t j = 0; j < n; j++) {
				sb_putc(out, ' ');
				sb_esc(out, it[j]);
			}
			sb_putc(out, '\n');
		} else {
			const char *v;
			if (rnsc_config_get_str(s, k, &v, NULL) != 0) {
				sb_printf(out, "I %s ", path);
				sb_esc(out, k);
				sb_putc(out, '\n');
				continue;
			}
			sb_printf(out, "V %s ", path);
			sb_esc(out, k);
			sb_putc(out, ' ');
			sb_esc(out, v);
			sb_putc(out, '\n');
		}
	}
	for (size_t i = 0; i < rnsc_config_section_count(s); i++) {
		const rnsc_config_section *c = rnsc_config_section_at(s, i);
		sbuf p = {0};
		sb_puts(&p, strcmp(path, "/") == 0 ? "" : path);
		sb_putc(&p, '/');
		sb_esc(&p, rnsc_config_section_name(c));
		sb_printf(out, "S %s\n", p.p);
		dump_section(c, p.p, out);
		free(p.p);
	}
}

/* Parses text and dumps it, or "E <code> <line>". Caller frees. */
static char *dump_text(const char *text, size_t len)
{
	sbuf out = {0};
	rnsc_config *cfg;
	rnsc_config_error err;
	int rc = rnsc_config_parse(NULL, text, len, NULL, &cfg, &err);
	if (rc) {
		sb_printf(&out, "E %s %u\n", rnsc_err_name(rc), err.line);
	} else {
		dump_section(rnsc_config_root(cfg), "/", &out);
		rnsc_config_del(cfg);
	}
	if (!out.p)
		sb_puts(&out, "");
	return out.p;
}

/* ---- the data file ------------------------------------------------------------------- */

static const char *srcdir(void)
{
	const char *s = getenv("RNSC_SRCDIR");
	return s && *s ? s : RNSC_SRCDIR;
}

static char *cases_text;
static size_t cases_len;

static int load_cases(void)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/tests/data/config_cases.txt", srcdir());
	int rc = rnsc_store_read_file(NULL, path, 1 << 22, (uint8_t **)&cases_text, &cases_len);
	if (rc)
		fprintf(stderr, "cannot read %s: %s\n", path, rnsc_strerror(rc));
	return rc;
}

static int hexdig(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* %XX escapes of the data file back to bytes; returns the length (out gets a NUL). */
static size_t unescape(const char *s, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexdig(s[i + 1]) >= 0 && hexdig(s[i + 2]) >= 0) {
			out[o++] = (char)(hexdig(s[i + 1]) << 4 | hexdig(s[i + 2]));
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return o;
}

/* A block of the data file: its kind, name, input and the other lines verbatim. */
typedef struct block {
	char kind[16];
	char name[96];
	sbuf input;
	sbuf expect; /* the non-input lines, '\n' separated */
} block;

/* Iterates blocks; *pos is the cursor into cases_text. Returns 0 at the end. */
static int next_block(size_t *pos, block *b)
{
	memset(b, 0, sizeof(*b));
	int in_block = 0, noeol = 0;
	while (*pos < cases_len) {
		const char *l = cases_text + *pos;
		const char *nl = memchr(l, '\n', cases_len - *pos);
		size_t n = nl ? (size_t)(nl - l) : cases_len - *pos;
		*pos += n + (nl ? 1 : 0);
		if (!in_block) {
			if (n > 5 &&
			    (strncmp(l, "case ", 5) == 0 || strncmp(l, "settings ", 9) == 0 ||
			     strncmp(l, "ifaces ", 7) == 0)) {
				const char *sp = memchr(l, ' ', n);
				snprintf(b->kind, sizeof(b->kind), "%.*s", (int)(sp - l), l);
				snprintf(b->name, sizeof(b->name), "%.*s", (int)(l + n - sp - 1),
					 sp + 1);
				in_block = 1;
			}
			continue;
		}
		if (n >= 3 && strncmp(l, "in ", 3) == 0) {
			char *tmp = malloc(n + 1);
			size_t m = unescape(l + 3, n - 3, tmp);
			for (size_t i = 0; i < m; i++)
				sb_putc(&b->input, tmp[i]);
			sb_putc(&b->input, '\n');
			free(tmp);
		} else if (n == 2 && strncmp(l, "in", 2) == 0) {
			sb_putc(&b->input, '\n');
		} else if (n == 5 && strncmp(l, "noeol", 5) == 0) {
			noeol = 1;
		} else if (n == 3 && strncmp(l, "end", 3) == 0) {
			if (noeol && b->input.len)
				b->input.p[--b->input.len] = '\0';
			if (!b->input.p)
				sb_puts(&b->input, "");
			if (!b->expect.p)
				sb_puts(&b->expect, "");
			return 1;
		} else {
			for (size_t i = 0; i < n; i++)
				sb_putc(&b->expect, l[i]);
			sb_putc(&b->expect, '\n');
		}
	}
	return 0;
}

static void block_free(block *b)
{
	free(b->input.p);
	free(b->expect.p);
}

/* ---- grammar cases --------------------------------------------------------------------- */

static void test_reference_grammar(void)
{
	size_t pos = 0, n = 0, bad = 0;
	block b;
	while (next_block(&pos, &b)) {
		if (strcmp(b.kind, "case") == 0) {
			sbuf want = {0};
			for (char *l = b.expect.p; *l;) {
				char *e = strchr(l, '\n');
				if (strncmp(l, "out ", 4) == 0)
					for (char *c = l + 4; c < e; c++)
						sb_putc(&want, *c);
				if (strncmp(l, "out ", 4) == 0)
					sb_putc(&want, '\n');
				l = e + 1;
			}
			char *got = dump_text(b.input.p, b.input.len);
			const char *w = want.p ? want.p : "";
			if (strcmp(got, w) != 0) {
				bad++;
				fprintf(stderr, "\ncase %s:\n--- reference\n%s--- rnsc\n%s", b.name,
					w, got);
			}
			n++;
			free(got);
			free(want.p);
		}
		block_free(&b);
	}
	CU_ASSERT(n >= 50);
	CU_ASSERT_EQUAL(bad, 0);
}

/* The reference's default file straight from the pinned Reticulum.py (when the venv is
 * there) must give exactly what the committed expectations say. */
static void test_live_reference_default(void)
{
	const char *venv = getenv("RNSC_VENV");
	char path[1024];
	uint8_t *src = NULL;
	size_t len = 0;
	const char *pys[] = {"3.11", "3.12", "3.13", "3.10", "3.9"};
	for (size_t i = 0; venv && *venv && i < 5 && !src; i++) {
		snprintf(path, sizeof(path), "%s/lib/python%s/site-packages/RNS/Reticulum.py", venv,
			 pys[i]);
		if (rnsc_store_read_file(NULL, path, 1 << 22, &src, &len) != 0)
			src = NULL;
	}
	if (!src) {
		fprintf(stderr,
			"\n  (no venv with Reticulum.py: live default-config check skipped)\n");
		return;
	}
	const char *start = strstr((char *)src, "__default_rns_config__ = '''");
	CU_ASSERT_PTR_NOT_NULL_FATAL(start);
	start += strlen("__default_rns_config__ = '''");
	const char *end = strstr(start, "'''");
	CU_ASSERT_PTR_NOT_NULL_FATAL(end);
	char *got = dump_text(start, (size_t)(end - start));
	size_t pos = 0;
	block b;
	int found = 0;
	while (next_block(&pos, &b)) {
		if (strcmp(b.kind, "case") == 0 && strcmp(b.name, "reference-default") == 0) {
			sbuf want = {0};
			for (char *l = b.expect.p; *l;) {
				char *e = strchr(l, '\n');
				*e = '\0';
				sb_printf(&want, "%s\n", l + 4);
				l = e + 1;
			}
			CU_ASSERT_STRING_EQUAL(got, want.p);
			free(want.p);
			found = 1;
		}
		block_free(&b);
	}
	CU_ASSERT(found);
	free(got);
	free(src);
}

/* rnsc writes its own default text: same keys and values as the reference's. */
static void test_default_text_matches_reference(void)
{
	size_t len;
	const char *text = rnsc_config_default_text(&len);
	CU_ASSERT_EQUAL(len, strlen(text));
	char *got = dump_text(text, len);
	size_t pos = 0;
	block b;
	int found = 0;
	while (next_block(&pos, &b)) {
		if (strcmp(b.kind, "case") == 0 && strcmp(b.name, "reference-default") == 0) {
			sbuf want = {0};
			for (char *l = b.expect.p; *l;) {
				char *e = strchr(l, '\n');
				*e = '\0';
				sb_printf(&want, "%s\n", l + 4);
				l = e + 1;
			}
			CU_ASSERT_STRING_EQUAL(got, want.p);
			free(want.p);
			found = 1;
		}
		block_free(&b);
	}
	CU_ASSERT(found);
	free(got);
}

/* ---- conversions ----------------------------------------------------------------------- */

static void test_conversions(void)
{
	size_t pos = 0, n = 0;
	while (pos < cases_len) {
		const char *l = cases_text + pos;
		const char *nl = memchr(l, '\n', cases_len - pos);
		size_t len = nl ? (size_t)(nl - l) : cases_len - pos;
		pos += len + 1;
		if (len < 5 || strncmp(l, "conv ", 5) != 0)
			continue;
		char line[512], tok[4][256], raw[256];
		snprintf(line, sizeof(line), "%.*s", (int)len, l);
		if (sscanf(line + 5, "%255s %255s %255s %255s", tok[0], tok[1], tok[2], tok[3]) !=
		    4) {
			CU_FAIL("bad conv line");
			continue;
		}
		if (strcmp(tok[0], "%") == 0)
			raw[0] = '\0';
		else
			unescape(tok[0], strlen(tok[0]), raw);
		int b, rc = rnsc_config_parse_bool(raw, &b);
		char got[64];
		snprintf(got, sizeof(got), "%s", rc ? "E" : b ? "1" : "0");
		if (strcmp(got, tok[1]) != 0)
			fprintf(stderr, "\nbool(%s): reference %s, rnsc %s\n", tok[0], tok[1], got);
		CU_ASSERT_STRING_EQUAL(got, tok[1]);
		int64_t iv;
		rc = rnsc_config_parse_int(raw, &iv);
		if (rc == RNSC_ERR_RANGE)
			snprintf(got, sizeof(got), "R");
		else if (rc)
			snprintf(got, sizeof(got), "E");
		else
			snprintf(got, sizeof(got), "%lld", (long long)iv);
		if (strcmp(got, tok[2]) != 0)
			fprintf(stderr, "\nint(%s): reference %s, rnsc %s\n", tok[0], tok[2], got);
		CU_ASSERT_STRING_EQUAL(got, tok[2]);
		double fv;
		rc = rnsc_config_parse_float(raw, &fv);
		if (strcmp(tok[3], "E") == 0) {
			CU_ASSERT_EQUAL(rc, RNSC_ERR_CONFIG_VALUE);
		} else if (strcmp(tok[3], "nan") == 0) {
			CU_ASSERT(rc == 0 && isnan(fv));
		} else {
			double want = strtod(tok[3], NULL);
			if (rc != 0 || memcmp(&want, &fv, sizeof(fv)) != 0)
				fprintf(stderr, "\nfloat(%s): reference %s, rnsc %a (rc %d)\n",
					tok[0], tok[3], fv, rc);
			CU_ASSERT(rc == 0 && memcmp(&want, &fv, sizeof(fv)) == 0);
		}
		n++;
	}
	CU_ASSERT(n >= 80);
}

/* ---- settings -------------------------------------------------------------------------- */

static void hex_of(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = '\0';
}

static void hashes_of(const rnsc_hash_list *l, char *out, size_t cap)
{
	if (!l->n) {
		snprintf(out, cap, "-");
		return;
	}
	size_t o = 0;
	for (size_t i = 0; i < l->n && o + 34 < cap; i++) {
		if (i)
			out[o++] = ',';
		hex_of(l->h[i], 16, out + o);
		o += 32;
	}
	out[o] = '\0';
}

static void opt_int_of(rnsc_opt_int v, char *out, size_t cap)
{
	if (v.set)
		snprintf(out, cap, "%lld", (long long)v.v);
	else
		snprintf(out, cap, "-");
}

/* Canonical text of one field (floats: *is_float set and *fv the value). */
static int setting_text(const rnsc_config_settings *s, const char *name, char *out, size_t cap,
			int *is_float, double *fv, int *fset)
{
	*is_float = 0;
	*fset = 1;
#define B(f)                                                                                       \
	if (strcmp(name, #f) == 0) {                                                               \
		snprintf(out, cap, "%d", s->f ? 1 : 0);                                            \
		return 1;                                                                          \
	}
#define I(f)                                                                                       \
	if (strcmp(name, #f) == 0) {                                                               \
		snprintf(out, cap, "%lld", (long long)s->f);                                       \
		return 1;                                                                          \
	}
#define OI(f)                                                                                      \
	if (strcmp(name, #f) == 0) {                                                               \
		opt_int_of(s->f, out, cap);                                                        \
		return 1;                                                                          \
	}
#define OF(f)                                                                                      \
	if (strcmp(name, #f) == 0) {                                                               \
		*is_float = 1;                                                                     \
		*fset = s->f.set;                                                                  \
		*fv = s->f.v;                                                                      \
		return 1;                                                                          \
	}
#define H(f)                                                                                       \
	if (strcmp(name, #f) == 0) {                                                               \
		hashes_of(&s->f, out, cap);                                                        \
		return 1;                                                                          \
	}
	I(loglevel)
	B(logtimestamps)
	B(enable_transport)
	B(share_instance)
	I(shared_instance_port)
	I(instance_control_port)
	B(shared_instance_unix)
	B(static_transport_identity)
	B(local_hops_delta)
	B(link_mtu_discovery)
	B(enable_remote_management)
	H(remote_management_allowed)
	B(respond_to_probes)
	OI(force_shared_instance_bitrate)
	B(panic_on_interface_error)
	B(use_implicit_proof)
	OI(default_gravity)
	B(discover_interfaces)
	OI(required_discovery_value)
	B(publish_blackhole)
	H(blackhole_sources)
	H(interface_discovery_sources)
	I(autoconnect_discovered_interfaces)
	OI(autoconnect_interface_gravity)
	OI(default_ar_target)
	OI(default_ar_penalty)
	OI(default_ar_grace)
	OI(ic_max_held_announces)
	OF(ic_burst_hold)
	OF(ic_burst_freq_new)
	OF(ic_burst_freq)
	OF(ic_pr_burst_freq_new)
	OF(ic_pr_burst_freq)
	OF(ec_pr_freq)
	OF(ic_new_time)
	OF(ic_burst_penalty)
	OF(ic_held_release_interval)
	OI(qlen_in_data)
	OI(qlen_in_announce)
	OI(qlen_in_pr)
	OI(qlen_in_il)
#undef B
#undef I
#undef OI
#undef OF
#undef H
	if (strcmp(name, "blackhole_update_interval") == 0) {
		*is_float = 1;
		*fv = s->blackhole_update_interval;
		return 1;
	}
	if (strcmp(name, "shared_instance_type") == 0) {
		snprintf(out, cap, "%s",
			 s->shared_instance_type == RNSC_SHARED_TCP    ? "tcp"
			 : s->shared_instance_type == RNSC_SHARED_UNIX ? "unix"
								       : "-");
		return 1;
	}
	if (strcmp(name, "local_socket_path") == 0 || strcmp(name, "instance_name") == 0) {
		const char *v = name[0] == 'l' ? s->local_socket_path : s->instance_name;
		if (!v) {
			snprintf(out, cap, "-");
		} else {
			sbuf b = {0};
			sb_esc(&b, v);
			snprintf(out, cap, "%s", b.p);
			free(b.p);
		}
		return 1;
	}
	if (strcmp(name, "rpc_key") == 0) {
		if (!s->rpc_key)
			snprintf(out, cap, "-");
		else if (!s->rpc_key_len)
			snprintf(out, cap, "%%");
		else
			hex_of(s->rpc_key, s->rpc_key_len, out);
		return 1;
	}
	if (strcmp(name, "autoconnect_interface_mode") == 0) {
		if (s->autoconnect_interface_mode)
			snprintf(out, cap, "%d", s->autoconnect_interface_mode);
		else
			snprintf(out, cap, "-");
		return 1;
	}
	if (strcmp(name, "autoconnect_announces_to_internal") == 0 ||
	    strcmp(name, "egress_control") == 0) {
		int v = name[0] == 'a' ? s->autoconnect_announces_to_internal : s->egress_control;
		snprintf(out, cap, "%s", v < 0 ? "-" : v ? "1" : "0");
		return 1;
	}
	return 0;
}

static void test_reference_settings(void)
{
	size_t pos = 0, blocks = 0;
	block b;
	while (next_block(&pos, &b)) {
		if (strcmp(b.kind, "settings") != 0) {
			block_free(&b);
			continue;
		}
		blocks++;
		rnsc_config *cfg;
		rnsc_config_error err;
		int rc = rnsc_config_parse(NULL, b.input.p, b.input.len, NULL, &cfg, &err);
		CU_ASSERT_EQUAL_FATAL(rc, 0);
		rnsc_config_settings st;
		rc = rnsc_config_read_settings(cfg, &st, &err);
		size_t fields = 0;
		for (char *l = b.expect.p; *l;) {
			char *e = strchr(l, '\n');
			*e = '\0';
			char name[64], val[600];
			if (strncmp(l, "set-error ", 10) == 0) {
				char want[80];
				snprintf(want, sizeof(want), "%s:", l + 10);
				if (rc == 0 || !strstr(err.msg, want))
					fprintf(stderr,
						"\nsettings %s: expected an error naming %s, got %d '%s'\n",
						b.name, l + 10, rc, err.msg);
				CU_ASSERT(rc == RNSC_ERR_CONFIG_VALUE ||
					  rc == RNSC_ERR_CONFIG_INTERP);
				CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
			} else if (sscanf(l, "set %63s %599s", name, val) == 2) {
				char got[600] = "";
				int is_float, fset;
				double fv = 0;
				fields++;
				if (rc != 0) {
					fprintf(stderr, "\nsettings %s: unexpected error %s\n",
						b.name, err.msg);
					CU_FAIL("read_settings failed");
					break;
				}
				if (!setting_text(&st, name, got, sizeof(got), &is_float, &fv,
						  &fset)) {
					fprintf(stderr, "\nsettings: unknown field %s\n", name);
					CU_FAIL("unknown field");
				} else if (is_float) {
					int ok = strcmp(val, "-") == 0 ? !fset
						 : strcmp(val, "nan") == 0
							 ? fset && isnan(fv)
							 : fset && strtod(val, NULL) == fv;
					if (!ok)
						fprintf(stderr,
							"\nsettings %s: %s reference %s, rnsc %a (set %d)\n",
							b.name, name, val, fv, fset);
					CU_ASSERT(ok);
				} else {
					if (strcmp(got, val) != 0)
						fprintf(stderr,
							"\nsettings %s: %s reference %s, rnsc %s\n",
							b.name, name, val, got);
					CU_ASSERT_STRING_EQUAL(got, val);
				}
			}
			l = e + 1;
		}
		/* Every field of rnsc_config_settings is covered by the reference's record. */
		if (rc == 0) {
			CU_ASSERT_EQUAL(fields, 48);
		}
		rnsc_config_del(cfg);
		block_free(&b);
	}
	CU_ASSERT(blocks >= 20);
}

static void test_reference_ifaces(void)
{
	size_t pos = 0, blocks = 0;
	block b;
	while (next_block(&pos, &b)) {
		if (strcmp(b.kind, "ifaces") != 0) {
			block_free(&b);
			continue;
		}
		blocks++;
		rnsc_config *cfg;
		rnsc_config_error err;
		CU_ASSERT_EQUAL_FATAL(
			rnsc_config_parse(NULL, b.input.p, b.input.len, NULL, &cfg, &err), 0);
		size_t i = 0;
		for (char *l = b.expect.p; *l; i++) {
			char *e = strchr(l, '\n');
			*e = '\0';
			char name[96], en[8], type[96];
			rnsc_config_iface ifc;
			int rc = rnsc_config_iface_at(cfg, i, &ifc, &err);
			if (strncmp(l, "iface-error ", 12) == 0) {
				CU_ASSERT(rc < 0);
				CU_ASSERT(err.msg[0] != '\0');
			} else if (sscanf(l, "iface %95s %7s %95s", name, en, type) == 3) {
				CU_ASSERT_EQUAL_FATAL(rc, 0);
				CU_ASSERT_STRING_EQUAL(ifc.name, name);
				CU_ASSERT_EQUAL(ifc.enabled, en[0] == '1');
				if (strcmp(type, "-") == 0) {
					CU_ASSERT_PTR_NULL(ifc.type);
				} else {
					CU_ASSERT(ifc.type && strcmp(ifc.type, type) == 0);
				}
			}
			l = e + 1;
		}
		CU_ASSERT_EQUAL(i, rnsc_config_iface_count(cfg));
		rnsc_config_del(cfg);
		block_free(&b);
	}
	CU_ASSERT(blocks >= 4);
}

/* ---- messages and API ------------------------------------------------------------------- */

static rnsc_config *parse_ok(const char *text)
{
	rnsc_config *cfg = NULL;
	rnsc_config_error err;
	int rc = rnsc_config_parse(NULL, text, strlen(text), "test", &cfg, &err);
	if (rc)
		fprintf(stderr, "\nunexpected parse error: %s\n", err.msg);
	CU_ASSERT_EQUAL(rc, 0);
	return cfg;
}

static void test_error_messages(void)
{
	rnsc_config *cfg =
		parse_ok("[interfaces]\n  [[TCP Server]]\n    type = TCPServerInterface\n"
			 "    listen_port = abc\n    enabled = maybe\n    big = 1e99\n"
			 "    huge = 99999999999999999999\n    l = 1, 2\n    i = %(nope)s\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
	const rnsc_config_section *ifs =
		rnsc_config_section_get(rnsc_config_root(cfg), "interfaces");
	const rnsc_config_section *tcp = rnsc_config_section_get(ifs, "TCP Server");
	CU_ASSERT_PTR_NOT_NULL_FATAL(tcp);
	rnsc_config_error err;
	int64_t iv = 7;
	CU_ASSERT_EQUAL(rnsc_config_get_int(tcp, "listen_port", &iv, &err), RNSC_ERR_CONFIG_VALUE);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "[interfaces] [[TCP Server]] listen_port: 'abc' is not an integer");
	CU_ASSERT_EQUAL(err.line, 4);
	CU_ASSERT_EQUAL(err.code, RNSC_ERR_CONFIG_VALUE);
	CU_ASSERT_EQUAL(iv, 7); /* untouched on failure */
	int b;
	CU_ASSERT_EQUAL(rnsc_config_get_bool(tcp, "enabled", &b, &err), RNSC_ERR_CONFIG_VALUE);
	CU_ASSERT_PTR_NOT_NULL(
		strstr(err.msg, "[interfaces] [[TCP Server]] enabled: 'maybe' is not a boolean"));
	CU_ASSERT_EQUAL(rnsc_config_get_int(tcp, "big", &iv, &err), RNSC_ERR_CONFIG_VALUE);
	double fv;
	CU_ASSERT_EQUAL(rnsc_config_get_float(tcp, "big", &fv, &err), 0);
	CU_ASSERT_EQUAL(fv, 1e99);
	CU_ASSERT_EQUAL(rnsc_config_get_float(tcp, "type", &fv, &err), RNSC_ERR_CONFIG_VALUE);
	CU_ASSERT_STRING_EQUAL(
		err.msg, "[interfaces] [[TCP Server]] type: 'TCPServerInterface' is not a number");
	CU_ASSERT_EQUAL(rnsc_config_get_int(tcp, "huge", &iv, &err), RNSC_ERR_RANGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "huge: '99999999999999999999' is out of range"));
	const char *sv;
	CU_ASSERT_EQUAL(rnsc_config_get_str(tcp, "l", &sv, &err), RNSC_ERR_CONFIG_VALUE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "l: is a list (2 items, first '1')"));
	CU_ASSERT_EQUAL(rnsc_config_get_str(tcp, "missing", &sv, &err), RNSC_ERR_NOTFOUND);
	CU_ASSERT_STRING_EQUAL(err.msg, "[interfaces] [[TCP Server]] missing: option is missing");
	CU_ASSERT_EQUAL(rnsc_config_get_str(tcp, "i", &sv, &err), RNSC_ERR_CONFIG_INTERP);
	CU_ASSERT_STRING_EQUAL(
		err.msg, "[interfaces] [[TCP Server]] i: missing option 'nope' in interpolation");
	/* cached failure reports the same */
	CU_ASSERT_EQUAL(rnsc_config_get_str(tcp, "i", &sv, &err), RNSC_ERR_CONFIG_INTERP);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing option 'nope'"));
	CU_ASSERT_EQUAL(rnsc_config_get_str(ifs, "TCP Server", &sv, &err), RNSC_ERR_CONFIG_VALUE);
	CU_ASSERT_STRING_EQUAL(err.msg, "[interfaces] TCP Server: is a section, not an option");
	CU_ASSERT_EQUAL(err.line, 2);
	CU_ASSERT_EQUAL(rnsc_config_get_str(NULL, "x", &sv, &err), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_config_get_str(tcp, "x", NULL, NULL), RNSC_ERR_INVAL);
	rnsc_config_del(cfg);

	/* Parse errors: specific code, line, origin and a readable reason. */
	struct {
		const char *text;
		int code;
		unsigned line;
		const char *needle;
	} bad[] = {
		{"[a]\nk = 1\nk = 2\n", RNSC_ERR_CONFIG_DUP, 3,
		 "test:3: duplicate option 'k' in [a]"},
		{"[a]\n[[b]]\n[[b]]\n", RNSC_ERR_CONFIG_DUP, 3,
		 "test:3: duplicate section name 'b' in [a]"},
		{"[a]\n[[b]\n", RNSC_ERR_CONFIG_SYNTAX, 2, "cannot compute the section depth"},
		{"[[a]]\n", RNSC_ERR_CONFIG_SYNTAX, 1, "section too nested"},
		{"[a]\nwords\n", RNSC_ERR_CONFIG_SYNTAX, 2, "test:2: invalid line"},
		{"[a]\nk = \"x\" y\n", RNSC_ERR_CONFIG_SYNTAX, 2, "parse error in value"},
		{"[a]\nk = a, , b\n", RNSC_ERR_CONFIG_SYNTAX, 2, "an empty list item"},
		{"[a]\nk = '''x\ny\n", RNSC_ERR_CONFIG_SYNTAX, 2, "multi-line value"},
		{"[a]\nk = \xff\n", RNSC_ERR_MALFORMED, 2, "not valid UTF-8"},
		{"\xff\xfe[\0a\0]\0", RNSC_ERR_MALFORMED, 1, "UTF-16"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rnsc_config *c = NULL;
		size_t len = i == 9 ? 8 : strlen(bad[i].text);
		int rc = rnsc_config_parse(NULL, bad[i].text, len, "test", &c, &err);
		CU_ASSERT_EQUAL(rc, bad[i].code);
		CU_ASSERT_EQUAL(err.code, bad[i].code);
		CU_ASSERT_EQUAL(err.line, bad[i].line);
		CU_ASSERT_PTR_NULL(c);
		if (!strstr(err.msg, bad[i].needle))
			fprintf(stderr, "\nmessage '%s' lacks '%s'\n", err.msg, bad[i].needle);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].needle));
	}
	/* NUL bytes are refused (a deliberate difference: Python would keep them). */
	CU_ASSERT_EQUAL(rnsc_config_parse(NULL, "[a]\nk = \0\n", 9, NULL, &cfg, &err),
			RNSC_ERR_MALFORMED);
	CU_ASSERT_EQUAL(err.line, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 2: NUL byte"));
	CU_ASSERT_EQUAL(rnsc_config_parse(NULL, NULL, 3, NULL, &cfg, &err), RNSC_ERR_INVAL);
}

static void test_settings_messages(void)
{
	rnsc_config *cfg = parse_ok("[reticulum]\nshared_instance_port = 4x\n");
	rnsc_config_settings st;
	rnsc_config_error err;
	CU_ASSERT_EQUAL(rnsc_config_read_settings(cfg, &st, &err), RNSC_ERR_CONFIG_VALUE);
	CU_ASSERT_STRING_EQUAL(err.msg, "[reticulum] shared_instance_port: '4x' is not an integer");
	CU_ASSERT_EQUAL(err.line, 2);
	rnsc_config_del(cfg);
	cfg = parse_ok("[reticulum]\nblackhole_sources = 0011, 22\n");
	CU_ASSERT_EQUAL(rnsc_config_read_settings(cfg, &st, &err), RNSC_ERR_CONFIG_VALUE);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "[reticulum] blackhole_sources: '0011' is not a 32-character "
			       "hexadecimal hash (16 bytes)");
	rnsc_config_del(cfg);
	cfg = parse_ok("[reticulum]\n[[share_instance]]\n");
	CU_ASSERT_EQUAL(rnsc_config_read_settings(cfg, &st, &err), RNSC_ERR_CONFIG_VALUE);
	CU_ASSERT_STRING_EQUAL(err.msg, "[reticulum] share_instance: is a section, not an option");
	rnsc_config_del(cfg);
	cfg = parse_ok("[reticulum]\n[[rpc_key]]\n[[autoconnect_interface_mode]]\n[[other]]\n");
	CU_ASSERT_EQUAL(rnsc_config_read_settings(cfg, &st, &err), 0);
	CU_ASSERT(st.rpc_key_invalid);
	rnsc_config_del(cfg);
	cfg = parse_ok("[reticulum]\nautoconnect_interface_mode = a, b\n");
	CU_ASSERT_EQUAL(rnsc_config_read_settings(cfg, &st, &err), 0);
	CU_ASSERT_EQUAL(st.autoconnect_interface_mode, RNSC_IFMODE_UNSET);
	rnsc_config_del(cfg);
	rnsc_config_settings_defaults(&st);
	CU_ASSERT_EQUAL(st.loglevel, 3);
	CU_ASSERT_EQUAL(st.shared_instance_port, 37428);
	CU_ASSERT_STRING_EQUAL(st.local_socket_path, "default");
	CU_ASSERT_EQUAL(rnsc_config_read_settings(NULL, &st, &err), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_config_iface_mode_from_name("GW"), RNSC_IFMODE_GATEWAY);
	CU_ASSERT_EQUAL(rnsc_config_iface_mode_from_name("pointtopoint"),
			RNSC_IFMODE_POINT_TO_POINT);
	CU_ASSERT_EQUAL(rnsc_config_iface_mode_from_name("x"), RNSC_IFMODE_UNSET);
	CU_ASSERT_EQUAL(rnsc_config_iface_mode_from_name(NULL), RNSC_IFMODE_UNSET);
}

static void test_tree_api(void)
{
	rnsc_config *cfg = parse_ok("top = 1\n[a]\nx = 1\ny = 2, 3\n  [[b]]\n  z = 'q'\n[c]\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
	const rnsc_config_section *root = rnsc_config_root(cfg);
	CU_ASSERT_PTR_NULL(rnsc_config_section_name(root));
	CU_ASSERT_PTR_NULL(rnsc_config_section_parent(root));
	CU_ASSERT_EQUAL(rnsc_config_section_depth(root), 0);
	CU_ASSERT_EQUAL(rnsc_config_section_count(root), 2);
	CU_ASSERT_EQUAL(rnsc_config_option_count(root), 1);
	const rnsc_config_section *a = rnsc_config_section_at(root, 0);
	CU_ASSERT_STRING_EQUAL(rnsc_config_section_name(a), "a");
	CU_ASSERT_EQUAL(rnsc_config_section_line(a), 2);
	CU_ASSERT_PTR_EQUAL(rnsc_config_section_parent(a), root);
	CU_ASSERT_PTR_NULL(rnsc_config_section_at(root, 2));
	CU_ASSERT_PTR_NULL(rnsc_config_option_name(root, 1));
	const rnsc_config_section *b = rnsc_config_section_get(a, "b");
	CU_ASSERT_EQUAL(rnsc_config_section_depth(b), 2);
	char path[64];
	CU_ASSERT_EQUAL(rnsc_config_section_path(b, path, sizeof(path)), strlen("[a] [[b]]"));
	CU_ASSERT_STRING_EQUAL(path, "[a] [[b]]");
	CU_ASSERT_EQUAL(rnsc_config_section_path(b, path, 4), strlen("[a] [[b]]"));
	CU_ASSERT_STRING_EQUAL(path, "[a]");
	CU_ASSERT(rnsc_config_has(a, "x"));
	CU_ASSERT(rnsc_config_has(a, "b")); /* a subsection counts, as `in` does */
	CU_ASSERT(!rnsc_config_has(a, "z"));
	CU_ASSERT_PTR_NULL(rnsc_config_section_get(a, "x"));
	CU_ASSERT_EQUAL(rnsc_config_option_line(a, "y"), 4);
	CU_ASSERT_EQUAL(rnsc_config_option_line(a, "b"), 0);
	CU_ASSERT_EQUAL(rnsc_config_is_list(a, "y"), 1);
	CU_ASSERT_EQUAL(rnsc_config_is_list(a, "x"), 0);
	CU_ASSERT_EQUAL(rnsc_config_is_list(a, "nope"), RNSC_ERR_NOTFOUND);
	const char *const *it;
	size_t n;
	CU_ASSERT_EQUAL(rnsc_config_get_list(a, "x", &it, &n, NULL), 0);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_STRING_EQUAL(it[0], "1");
	CU_ASSERT_EQUAL(rnsc_config_get_list(a, "y", &it, &n, NULL), 0);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_STRING_EQUAL(it[1], "3");
	const char *v;
	CU_ASSERT_EQUAL(rnsc_config_get_str(b, "z", &v, NULL), 0);
	CU_ASSERT_STRING_EQUAL(v, "q");
	CU_ASSERT_EQUAL(rnsc_config_iface_count(cfg), 0);
	rnsc_config_iface ifc;
	CU_ASSERT_EQUAL(rnsc_config_iface_at(cfg, 0, &ifc, NULL), RNSC_ERR_INVAL);
	rnsc_config_del(cfg);
	rnsc_config_del(NULL);
}

/* Hostile inputs stay bounded: exponential interpolation, long lines, many keys. */
static void test_limits(void)
{
	sbuf t = {0};
	sb_puts(&t, "[a]\nv0 = x\n");
	for (int i = 1; i < 40; i++)
		sb_printf(&t, "v%d = %%(v%d)s%%(v%d)s\n", i, i - 1, i - 1);
	rnsc_config *cfg = parse_ok(t.p);
	free(t.p);
	const rnsc_config_section *a = rnsc_config_section_get(rnsc_config_root(cfg), "a");
	const char *v;
	rnsc_config_error err;
	CU_ASSERT_EQUAL(rnsc_config_get_str(a, "v10", &v, NULL), 0);
	CU_ASSERT_EQUAL(strlen(v), 1024);
	CU_ASSERT_EQUAL(rnsc_config_get_str(a, "v39", &v, &err), RNSC_ERR_CONFIG_INTERP);
	CU_ASSERT(strstr(err.msg, "longer than") || strstr(err.msg, "interpolations"));
	rnsc_config_del(cfg);
	/* empty leaves: the substitution count stops it */
	sbuf u = {0};
	sb_puts(&u, "[a]\nv0 =\n");
	for (int i = 1; i < 40; i++)
		sb_printf(&u, "v%d = %%(v%d)s%%(v%d)s\n", i, i - 1, i - 1);
	cfg = parse_ok(u.p);
	free(u.p);
	a = rnsc_config_section_get(rnsc_config_root(cfg), "a");
	CU_ASSERT_EQUAL(rnsc_config_get_str(a, "v39", &v, &err), RNSC_ERR_CONFIG_INTERP);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "interpolations"));
	rnsc_config_del(cfg);
	/* a line over 64 Ki characters */
	size_t big = 70 * 1024;
	char *line = malloc(big + 16);
	memcpy(line, "[a]\nk = ", 8);
	memset(line + 8, 'x', big);
	line[8 + big] = '\n';
	CU_ASSERT_EQUAL(rnsc_config_parse(NULL, line, big + 9, NULL, &cfg, &err), RNSC_ERR_TOOBIG);
	CU_ASSERT_EQUAL(err.line, 2);
	free(line);
	/* 50 000 options in one section: duplicate checks are hashed, so this is quick */
	sbuf m = {0};
	sb_puts(&m, "[a]\n");
	for (int i = 0; i < 50000; i++)
		sb_printf(&m, "key%d = %d\n", i, i);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CU_ASSERT_EQUAL(rnsc_config_parse(NULL, m.p, m.len, NULL, &cfg, &err), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CU_ASSERT((t1.tv_sec - t0.tv_sec) < 5);
	a = rnsc_config_section_get(rnsc_config_root(cfg), "a");
	int64_t iv;
	CU_ASSERT_EQUAL(rnsc_config_get_int(a, "key49999", &iv, NULL), 0);
	CU_ASSERT_EQUAL(iv, 49999);
	rnsc_config_del(cfg);
	free(m.p);
	/* pathological quoting stays linear */
	sbuf q = {0};
	sb_puts(&q, "[a]\nk = ");
	for (int i = 0; i < 15000; i++)
		sb_puts(&q, "\"\", ");
	sb_puts(&q, "\"x\" y\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CU_ASSERT_EQUAL(rnsc_config_parse(NULL, q.p, q.len, NULL, &cfg, &err),
			RNSC_ERR_CONFIG_SYNTAX);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CU_ASSERT((t1.tv_sec - t0.tv_sec) < 5);
	free(q.p);
}

/* Every allocation failure is reported as RNSC_ERR_NOMEM and leaks nothing (the
 * sanitizer build checks the leaks). */
static void test_alloc_failures(void)
{
	static const char text[] = "top = T\n"
				   "[reticulum]\n"
				   "x = %(y)s, b\n"
				   "y = 1\n"
				   "z = %(top)s-%(y)s\n"
				   "remote_management_allowed = 00112233445566778899aabbccddeeff, "
				   "ffeeddccbbaa99887766554433221100\n"
				   "rpc_key = 0011\n"
				   "share_instance = yes\n"
				   "[logging]\n"
				   "loglevel = 5\n"
				   "[interfaces]\n"
				   "  [[A]]\n"
				   "    type = T\n"
				   "    enabled = yes\n"
				   "    m = '''a\n"
				   "b'''\n"
				   "    l = \"q, r\", s, 't',\n"
				   "  [[B]]\n"
				   "    [[[C]]]\n";
	rnsc_ctx *ctx;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&ctx), 0);
	int done = 0, wrong = 0;
	unsigned long nth;
	for (nth = 1; nth < 5000 && !done; nth++) {
		rnsc_ctx_fail_alloc_after(ctx, nth);
		rnsc_config *cfg = NULL;
		rnsc_config_error err;
		int rc = rnsc_config_parse(ctx, text, sizeof(text) - 1, NULL, &cfg, &err);
		if (rc) {
			wrong += rc != RNSC_ERR_NOMEM || err.code != RNSC_ERR_NOMEM || cfg != NULL;
			continue;
		}
		rnsc_config_settings st;
		rc = rnsc_config_read_settings(cfg, &st, &err);
		wrong += rc != 0 && rc != RNSC_ERR_NOMEM;
		const rnsc_config_section *r =
			rnsc_config_section_get(rnsc_config_root(cfg), "reticulum");
		const char *const *it = NULL;
		const char *z = NULL;
		size_t n = 0;
		int rc2 = rnsc_config_get_list(r, "x", &it, &n, &err);
		int rc3 = rnsc_config_get_str(r, "z", &z, &err);
		wrong += (rc2 != 0 && rc2 != RNSC_ERR_NOMEM) + (rc3 != 0 && rc3 != RNSC_ERR_NOMEM);
		rnsc_config_iface ifc;
		int rc4 = rnsc_config_iface_at(cfg, 0, &ifc, &err);
		wrong += rc4 != 0 && rc4 != RNSC_ERR_NOMEM;
		if (rc == 0 && rc2 == 0 && rc3 == 0 && rc4 == 0) {
			CU_ASSERT_EQUAL(n, 2);
			CU_ASSERT_STRING_EQUAL(it[0], "1");
			CU_ASSERT_STRING_EQUAL(z, "T-1");
			CU_ASSERT_EQUAL(st.remote_management_allowed.n, 2);
			CU_ASSERT_EQUAL(st.rpc_key_len, 2);
			CU_ASSERT(ifc.enabled);
			done = 1;
		}
		rnsc_config_del(cfg);
	}
	rnsc_ctx_fail_alloc_after(ctx, 0);
	CU_ASSERT(done);
	CU_ASSERT_EQUAL(wrong, 0);
	CU_ASSERT(nth > 50); /* the loop really went through many failure points */
	rnsc_ctx_del(ctx);
}

/* ---- files and folders ------------------------------------------------------------------ */

static char tmpdir[256];

static void make_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/rnsc-config-XXXXXX", t && *t ? t : "/tmp");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpdir));
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void rm_rf(const char *p)
{
	CU_ASSERT_EQUAL(nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void write_file(const char *path, const char *text)
{
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(path, text, strlen(text), 0644), 0);
}

static void test_locate(void)
{
	make_tmpdir();
	char etc[300], home[300], p[400], out[512];
	snprintf(etc, sizeof(etc), "%s/etc", tmpdir);
	snprintf(home, sizeof(home), "%s/home", tmpdir);
	/* nothing anywhere: ~/.reticulum, existing or not */
	CU_ASSERT_EQUAL(rnsc_config_locate_in(NULL, etc, home, out, sizeof(out)), 0);
	snprintf(p, sizeof(p), "%s/.reticulum", home);
	CU_ASSERT_STRING_EQUAL(out, p);
	/* ~/.config/reticulum counts only with a config file in it */
	snprintf(p, sizeof(p), "%s/.config/reticulum", home);
	CU_ASSERT_EQUAL(rnsc_store_mkdirs(p), 0);
	CU_ASSERT_EQUAL(rnsc_config_locate_in(NULL, etc, home, out, sizeof(out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "/.reticulum"));
	snprintf(p, sizeof(p), "%s/.config/reticulum/config", home);
	write_file(p, "");
	CU_ASSERT_EQUAL(rnsc_config_locate_in(NULL, etc, home, out, sizeof(out)), 0);
	snprintf(p, sizeof(p), "%s/.config/reticulum", home);
	CU_ASSERT_STRING_EQUAL(out, p);
	/* a folder named config does not count */
	snprintf(p, sizeof(p), "%s/config", etc);
	CU_ASSERT_EQUAL(rnsc_store_mkdirs(p), 0);
	CU_ASSERT_EQUAL(rnsc_config_locate_in(NULL, etc, home, out, sizeof(out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "/.config/reticulum"));
	rm_rf(p);
	/* the system folder wins over both */
	write_file(p, "");
	CU_ASSERT_EQUAL(rnsc_config_locate_in(NULL, etc, home, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, etc);
	/* an explicit folder is used as given, even when it does not exist */
	CU_ASSERT_EQUAL(rnsc_config_locate_in("/no/such/dir", etc, home, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/no/such/dir");
	CU_ASSERT_EQUAL(rnsc_config_locate_in(NULL, etc, home, out, 4), RNSC_ERR_BUFSIZE);
	CU_ASSERT_EQUAL(rnsc_config_locate_in(NULL, etc, home, NULL, 4), RNSC_ERR_INVAL);
	/* "~" as Python expands it: $HOME without trailing slashes, "/" when empty */
	char *saved = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char h2[320];
	snprintf(h2, sizeof(h2), "%s//", home);
	setenv("HOME", h2, 1);
	CU_ASSERT_EQUAL(rnsc_config_locate_in(NULL, "/nonexistent-etc", NULL, out, sizeof(out)), 0);
	snprintf(p, sizeof(p), "%s/.config/reticulum", home);
	CU_ASSERT_STRING_EQUAL(out, p);
	setenv("HOME", "", 1);
	CU_ASSERT_EQUAL(rnsc_config_locate_in(NULL, "/nonexistent-etc", NULL, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "//.reticulum");
	unsetenv("HOME");
	CU_ASSERT_EQUAL(rnsc_config_locate_in(NULL, "/nonexistent-etc", NULL, out, sizeof(out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "/.reticulum"));
	if (saved) {
		setenv("HOME", saved, 1);
		free(saved);
	}
	rm_rf(tmpdir);
}

static void test_open_and_default(void)
{
	make_tmpdir();
	char dir[400], path[450];
	snprintf(dir, sizeof(dir), "%s/a/b/reticulum", tmpdir);
	snprintf(path, sizeof(path), "%s/config", dir);
	mode_t old = umask(022);
	rnsc_config *cfg = NULL;
	rnsc_config_error err;
	char where[512];
	int created = -1;
	CU_ASSERT_EQUAL(rnsc_config_open(NULL, dir, where, sizeof(where), &created, &cfg, &err), 0);
	CU_ASSERT_EQUAL(created, 1);
	CU_ASSERT_STRING_EQUAL(where, dir);
	struct stat st;
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0644); /* 0666 minus the umask, like open() */
	rnsc_config_settings s;
	CU_ASSERT_EQUAL(rnsc_config_read_settings(cfg, &s, &err), 0);
	CU_ASSERT_EQUAL(s.loglevel, 4);
	CU_ASSERT_EQUAL(s.share_instance, 1);
	CU_ASSERT_EQUAL(s.enable_transport, 0);
	CU_ASSERT_EQUAL(rnsc_config_iface_count(cfg), 1);
	rnsc_config_iface ifc;
	CU_ASSERT_EQUAL(rnsc_config_iface_at(cfg, 0, &ifc, &err), 0);
	CU_ASSERT_STRING_EQUAL(ifc.name, "Default Interface");
	CU_ASSERT_STRING_EQUAL(ifc.type, "AutoInterface");
	CU_ASSERT(ifc.enabled);
	rnsc_config_del(cfg);
	/* The second start reads the file that is now there. */
	write_file(path, "[logging]\nloglevel = 6\n");
	CU_ASSERT_EQUAL(rnsc_config_open(NULL, dir, NULL, 0, &created, &cfg, &err), 0);
	CU_ASSERT_EQUAL(created, 0);
	CU_ASSERT_EQUAL(rnsc_config_read_settings(cfg, &s, &err), 0);
	CU_ASSERT_EQUAL(s.loglevel, 6);
	rnsc_config_del(cfg);
	/* Load errors name the file. */
	write_file(path, "[logging]\nloglevel = 6\nloglevel = 5\n");
	CU_ASSERT_EQUAL(rnsc_config_open(NULL, dir, NULL, 0, NULL, &cfg, &err),
			RNSC_ERR_CONFIG_DUP);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/config:3: duplicate option 'loglevel'"));
	CU_ASSERT_EQUAL(rnsc_config_load(NULL, "/no/such/config", &cfg, &err), RNSC_ERR_NOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/no/such/config: "));
	/* A folder where the file should be cannot be replaced. */
	rm_rf(path);
	CU_ASSERT_EQUAL(mkdir(path, 0755), 0);
	CU_ASSERT(rnsc_config_open(NULL, dir, NULL, 0, NULL, &cfg, &err) < 0);
	CU_ASSERT_PTR_NULL(cfg);
	CU_ASSERT_EQUAL(rnsc_config_write_default(""), RNSC_ERR_INVAL);
	umask(old);
	rm_rf(tmpdir);
}

/* ---- main ------------------------------------------------------------------------------ */

static int dump_files(int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		uint8_t *buf;
		size_t len;
		printf("=== %s\n", argv[i]);
		if (rnsc_store_read_file(NULL, argv[i], RNSC_CONFIG_MAX_SIZE, &buf, &len) != 0) {
			printf("READFAIL\n");
			continue;
		}
		char *d = dump_text((const char *)buf, len);
		fputs(d, stdout);
		free(d);
		free(buf);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--dump") == 0)
		return dump_files(argc, argv);
	if (load_cases() != 0)
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("config", NULL, NULL);
	CU_add_test(s, "reference grammar cases (ConfigObj)", test_reference_grammar);
	CU_add_test(s, "reference default config, live from the venv", test_live_reference_default);
	CU_add_test(s, "rnsc default text has the reference's values",
		    test_default_text_matches_reference);
	CU_add_test(s, "conversions match int()/float()/as_bool()", test_conversions);
	CU_add_test(s, "settings match Reticulum.__init__", test_reference_settings);
	CU_add_test(s, "interface enabled/type match the reference", test_reference_ifaces);
	CU_add_test(s, "error messages name section and option", test_error_messages);
	CU_add_test(s, "settings errors", test_settings_messages);
	CU_add_test(s, "tree API", test_tree_api);
	CU_add_test(s, "limits on hostile input", test_limits);
	CU_add_test(s, "allocation failures", test_alloc_failures);
	CU_add_test(s, "config folder search", test_locate);
	CU_add_test(s, "open, default file, reload", test_open_and_default);
	int rc = rnsc_cu_run();
	free(cases_text);
	return rc;
}
