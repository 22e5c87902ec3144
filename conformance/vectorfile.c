/* SPDX-License-Identifier: MIT */
#include "vectorfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

/* Vector files are small; anything bigger is a mistake, not a test. */
#define VFILE_MAX_BYTES (16u * 1024u * 1024u)
#define SOURCE_TAG "# Source:"

struct conf_vfile {
	char *path;
	char *text; /* whole file, NUL-terminated; lines are cut in place */
	size_t size;
	size_t pos;      /* offset of the next unread line */
	unsigned lineno; /* number of the next unread line */
	int failed;
	const char *source;
	conf_vkv *kv;
	size_t kv_cap;
	conf_vstanza stanza;
	char err[512];
};

static int set_err(conf_vfile *vf, unsigned line, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int vset_err(conf_vfile *vf, unsigned line, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static int vset_err(conf_vfile *vf, unsigned line, int code, const char *fmt, va_list ap)
{
	int n = snprintf(vf->err, sizeof vf->err, "%s:%u: ", vf->path, line);

	if (n < 0 || (size_t)n >= sizeof vf->err)
		n = 0;
	vsnprintf(vf->err + n, sizeof vf->err - (size_t)n, fmt, ap);
	return code;
}

static int set_err(conf_vfile *vf, unsigned line, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset_err(vf, line, code, fmt, ap);
	va_end(ap);
	return code;
}

/* Cuts the next line out of the buffer (NUL-terminating it, dropping one
 * trailing '\r') and returns it, or NULL at end of file. */
static char *next_line(conf_vfile *vf, unsigned *lineno)
{
	char *line, *nl;

	if (vf->pos >= vf->size)
		return NULL;
	line = vf->text + vf->pos;
	nl = memchr(line, '\n', vf->size - vf->pos);
	if (nl != NULL) {
		*nl = '\0';
		vf->pos = (size_t)(nl - vf->text) + 1;
	} else {
		vf->pos = vf->size;
	}
	size_t len = strlen(line);
	if (len > 0 && line[len - 1] == '\r')
		line[len - 1] = '\0';
	*lineno = vf->lineno++;
	return line;
}

static int is_blank(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s != ' ' && *s != '\t')
			return 0;
	return 1;
}

static char *trim_right(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

static int is_key_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int is_key_char(char c)
{
	return is_key_start(c) || (c >= '0' && c <= '9') || c == '_';
}

int conf_vfile_open(conf_vfile **out, const char *path)
{
	conf_vfile *vf;
	FILE *f;
	long sz;
	unsigned line;
	char *first;

	if (out == NULL || path == NULL)
		return RNSC_ERR_INVAL;
	*out = NULL;
	vf = calloc(1, sizeof *vf);
	if (vf == NULL)
		return RNSC_ERR_NOMEM;
	vf->lineno = 1;
	vf->path = strdup(path);
	if (vf->path == NULL) {
		free(vf);
		return RNSC_ERR_NOMEM;
	}
	*out = vf;
	vf->failed = 1; /* until the header checks out */

	f = fopen(path, "rb");
	if (f == NULL)
		return set_err(vf, 0, errno == ENOENT ? RNSC_ERR_NOENT : RNSC_ERR_IO,
			       "cannot open: %s", strerror(errno));
	if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return set_err(vf, 0, RNSC_ERR_IO, "cannot size the file");
	}
	if ((unsigned long)sz > VFILE_MAX_BYTES) {
		fclose(f);
		return set_err(vf, 0, RNSC_ERR_TOOBIG, "file is larger than %u bytes",
			       VFILE_MAX_BYTES);
	}
	vf->size = (size_t)sz;
	vf->text = malloc(vf->size + 1);
	if (vf->text == NULL) {
		fclose(f);
		return set_err(vf, 0, RNSC_ERR_NOMEM, "out of memory");
	}
	if (fread(vf->text, 1, vf->size, f) != vf->size) {
		fclose(f);
		return set_err(vf, 0, RNSC_ERR_IO, "read error");
	}
	fclose(f);
	vf->text[vf->size] = '\0';
	if (memchr(vf->text, '\0', vf->size) != NULL)
		return set_err(vf, 0, RNSC_ERR_MALFORMED, "file contains a NUL byte");

	first = next_line(vf, &line);
	if (first == NULL || strncmp(first, SOURCE_TAG, strlen(SOURCE_TAG)) != 0)
		return set_err(vf, 1, RNSC_ERR_MALFORMED,
			       "a vector file must start with a '" SOURCE_TAG "' line");
	first += strlen(SOURCE_TAG);
	while (*first == ' ' || *first == '\t')
		first++;
	vf->source = trim_right(first);
	if (*vf->source == '\0')
		return set_err(vf, 1, RNSC_ERR_MALFORMED, "empty '" SOURCE_TAG "' line");
	vf->failed = 0;
	vf->err[0] = '\0';
	return 0;
}

void conf_vfile_close(conf_vfile *vf)
{
	if (vf == NULL)
		return;
	free(vf->kv);
	free(vf->text);
	free(vf->path);
	free(vf);
}

const char *conf_vfile_path(const conf_vfile *vf)
{
	return vf != NULL ? vf->path : "";
}

const char *conf_vfile_source(const conf_vfile *vf)
{
	return vf != NULL && vf->source != NULL ? vf->source : "";
}

const char *conf_vfile_error(const conf_vfile *vf)
{
	return vf != NULL ? vf->err : "";
}

static int push_kv(conf_vfile *vf, const char *key, const char *value, unsigned line)
{
	for (size_t i = 0; i < vf->stanza.count; i++)
		if (strcmp(vf->kv[i].key, key) == 0)
			return set_err(vf, line, RNSC_ERR_MALFORMED,
				       "duplicate key '%s' (first on line %u)", key,
				       vf->kv[i].line);
	if (vf->stanza.count == vf->kv_cap) {
		size_t cap = vf->kv_cap != 0 ? vf->kv_cap * 2 : 16;
		conf_vkv *kv = realloc(vf->kv, cap * sizeof *kv);
		if (kv == NULL)
			return set_err(vf, line, RNSC_ERR_NOMEM, "out of memory");
		vf->kv = kv;
		vf->kv_cap = cap;
	}
	vf->kv[vf->stanza.count++] = (conf_vkv){.key = key, .value = value, .line = line};
	return 0;
}

/* Splits "Key = value" in place; returns 0 or RNSC_ERR_MALFORMED. */
static int parse_kv(conf_vfile *vf, char *s, unsigned line)
{
	char *key = s, *p = s, *value;

	if (!is_key_start(*p))
		return set_err(vf, line, RNSC_ERR_MALFORMED,
			       *p == ' ' || *p == '\t' ? "indented line (keys start in column 1)"
						       : "expected 'Key = value'");
	while (is_key_char(*p))
		p++;
	value = p;
	while (*value == ' ' || *value == '\t')
		value++;
	if (*value != '=')
		return set_err(vf, line, RNSC_ERR_MALFORMED, "expected '=' after the key");
	*p = '\0';
	value++;
	while (*value == ' ' || *value == '\t')
		value++;
	for (const char *c = value; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 && *c != '\t')
			return set_err(vf, line, RNSC_ERR_MALFORMED,
				       "control character 0x%02x in value", (unsigned char)*c);
	return push_kv(vf, key, trim_right(value), line);
}

int conf_vfile_next(conf_vfile *vf, const conf_vstanza **out)
{
	unsigned line;
	char *s;
	int rc;

	if (vf == NULL || out == NULL)
		return RNSC_ERR_INVAL;
	*out = NULL;
	if (vf->failed)
		return RNSC_ERR_STATE;
	vf->stanza = (conf_vstanza){.vf = vf, .path = vf->path, .kv = vf->kv};
	while ((s = next_line(vf, &line)) != NULL) {
		if (s[0] == '#')
			continue;
		if (is_blank(s)) {
			if (vf->stanza.count != 0)
				break;
			continue;
		}
		if (vf->stanza.count == 0)
			vf->stanza.line = line;
		rc = parse_kv(vf, s, line);
		if (rc != 0) {
			vf->failed = 1;
			return rc;
		}
	}
	if (vf->stanza.count == 0)
		return 0;
	vf->stanza.kv = vf->kv;
	*out = &vf->stanza;
	return 1;
}

static const conf_vkv *find(const conf_vstanza *s, const char *key)
{
	for (size_t i = 0; i < s->count; i++)
		if (strcmp(s->kv[i].key, key) == 0)
			return &s->kv[i];
	return NULL;
}

const char *conf_vstanza_get(const conf_vstanza *s, const char *key)
{
	const conf_vkv *kv = find(s, key);
	return kv != NULL ? kv->value : NULL;
}

unsigned conf_vstanza_line(const conf_vstanza *s, const char *key)
{
	const conf_vkv *kv = key != NULL ? find(s, key) : NULL;
	return kv != NULL ? kv->line : s->line;
}

void conf_vstanza_set_error(const conf_vstanza *s, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset_err(s->vf, conf_vstanza_line(s, key), 0, fmt, ap);
	va_end(ap);
}

static int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int conf_vstanza_hex(const conf_vstanza *s, const char *key, uint8_t **out, size_t *len)
{
	const conf_vkv *kv = find(s, key);
	size_t n;
	uint8_t *buf;

	*out = NULL;
	*len = 0;
	if (kv == NULL)
		return set_err(s->vf, s->line, RNSC_ERR_NOTFOUND, "missing key '%s'", key);
	n = strlen(kv->value);
	if (n % 2 != 0)
		return set_err(s->vf, kv->line, RNSC_ERR_MALFORMED,
			       "'%s' has an odd number of hex digits (%zu)", key, n);
	buf = malloc(n / 2 + 1);
	if (buf == NULL)
		return set_err(s->vf, kv->line, RNSC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i += 2) {
		int hi = hex_nibble(kv->value[i]), lo = hex_nibble(kv->value[i + 1]);
		if (hi < 0 || lo < 0) {
			free(buf);
			return set_err(s->vf, kv->line, RNSC_ERR_MALFORMED,
				       "'%s' is not hex (at character %zu)", key,
				       i + (hi < 0 ? 1 : 2));
		}
		buf[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	*out = buf;
	*len = n / 2;
	return 0;
}

int conf_vstanza_uint(const conf_vstanza *s, const char *key, unsigned long long min,
		      unsigned long long max, unsigned long long *out)
{
	const conf_vkv *kv = find(s, key);
	unsigned long long v = 0;
	const char *p;

	if (kv == NULL)
		return set_err(s->vf, s->line, RNSC_ERR_NOTFOUND, "missing key '%s'", key);
	p = kv->value;
	/* Decimal only, no sign, no leading zeros: one spelling per number. */
	if (*p == '\0' || (p[0] == '0' && p[1] != '\0'))
		return set_err(s->vf, kv->line, RNSC_ERR_MALFORMED,
			       "'%s' must be a decimal integer without leading zeros", key);
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return set_err(s->vf, kv->line, RNSC_ERR_MALFORMED,
				       "'%s' must be a decimal integer", key);
		unsigned long long d = (unsigned long long)(*p - '0');
		if (d > max || v > (max - d) / 10)
			return set_err(s->vf, kv->line, RNSC_ERR_RANGE, "'%s' exceeds %llu", key,
				       max);
		v = v * 10 + d;
	}
	if (v < min)
		return set_err(s->vf, kv->line, RNSC_ERR_RANGE, "'%s' is below %llu", key, min);
	*out = v;
	return 0;
}
