/* SPDX-License-Identifier: MIT */
/*
 * Strict reader for the test-vector files under conformance/vectors/.
 *
 * Format:
 *   - The first line is a provenance comment starting with "# Source:".
 *   - A line whose first character is '#' is a comment, anywhere.
 *   - A stanza is a run of "Key = value" lines; one or more blank lines end it.
 *     Keys are [A-Za-z][A-Za-z0-9_]*, unique within a stanza, and start in
 *     column 1. Spaces around '=' and trailing whitespace are ignored; the
 *     value may be empty ("Msg =" is an empty message).
 *   - Hex values are an even number of hex digits, no prefix or spaces.
 *   - A trailing '\r' is dropped from each line; other control characters
 *     (except tab) are errors.
 * Anything else is an error reported as "path:line: message", because a
 * vector that is silently misread would test nothing.
 *
 * Ownership: a conf_vfile owns the whole file text. A stanza returned by
 * conf_vfile_next() and every string it points to stay valid until the next
 * call to conf_vfile_next() or conf_vfile_close(). Hex buffers returned by
 * conf_vstanza_hex() belong to the caller (free()).
 *
 * Errors: functions return 0 (or 1 where stated) or a negative rnsc_err; on
 * failure conf_vfile_error() holds the message. Not thread-safe per file.
 */
#ifndef RNSC_CONF_VECTORFILE_H
#define RNSC_CONF_VECTORFILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct conf_vfile conf_vfile;

typedef struct conf_vkv {
	const char *key;
	const char *value;
	unsigned line;
} conf_vkv;

typedef struct conf_vstanza {
	conf_vfile *vf;   /* the file it came from, for error messages */
	const char *path; /* same as conf_vfile_path(vf) */
	unsigned line;    /* line of the stanza's first key */
	size_t count;
	const conf_vkv *kv;
} conf_vstanza;

/* Reads the file and checks its "# Source:" header. RNSC_ERR_NOENT / RNSC_ERR_IO
 * when it cannot be read, RNSC_ERR_MALFORMED for a missing header, RNSC_ERR_NOMEM.
 * On failure *out is still set when possible so conf_vfile_error() can be read;
 * always pass it to conf_vfile_close(). */
int conf_vfile_open(conf_vfile **out, const char *path);
void conf_vfile_close(conf_vfile *vf);

const char *conf_vfile_path(const conf_vfile *vf);
/* The header's text after "# Source:", trimmed. */
const char *conf_vfile_source(const conf_vfile *vf);
/* Last error as "path:line: message"; "" when none. */
const char *conf_vfile_error(const conf_vfile *vf);

/* Next stanza: returns 1 and sets *out, 0 at end of file, or a negative rnsc_err
 * (RNSC_ERR_MALFORMED, RNSC_ERR_NOMEM). After an error the file cannot continue. */
int conf_vfile_next(conf_vfile *vf, const conf_vstanza **out);

/* Value of `key`, or NULL when the stanza has no such key. */
const char *conf_vstanza_get(const conf_vstanza *s, const char *key);
/* Line of `key`, or the stanza's line when absent. */
unsigned conf_vstanza_line(const conf_vstanza *s, const char *key);
/* Decodes a hex value into a new buffer (never NULL on success, even when empty).
 * RNSC_ERR_NOTFOUND when absent, RNSC_ERR_MALFORMED for bad hex, RNSC_ERR_NOMEM. */
int conf_vstanza_hex(const conf_vstanza *s, const char *key, uint8_t **out, size_t *len);
/* Decimal integer in [min, max]. RNSC_ERR_NOTFOUND, RNSC_ERR_MALFORMED, RNSC_ERR_RANGE. */
int conf_vstanza_uint(const conf_vstanza *s, const char *key, unsigned long long min,
		      unsigned long long max, unsigned long long *out);
/* Records a message about this stanza (at `key`'s line) in conf_vfile_error(). */
void conf_vstanza_set_error(const conf_vstanza *s, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
