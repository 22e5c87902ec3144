/* SPDX-License-Identifier: MIT */
/*
 * Small text encoders shared by the CLI, the benchmarks and the bridge: lowercase hex both
 * ways, and a JSON string literal (quotes and escapes) written to a stream.
 */
#ifndef RNSC_STRFMT_H
#define RNSC_STRFMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export.h"

/* out holds 2*len+1 bytes; lowercase, NUL-terminated. */
RNSC_API void rnsc_hex(char *out, const uint8_t *p, size_t len);
/* Decodes an even-length hex string (either case) into out; returns its length in bytes or
 * -1 (odd length, a non-hex digit, or more than cap bytes). */
RNSC_API int rnsc_unhex(uint8_t *out, size_t cap, const char *hex);
/* Writes s (NULL: "") as a JSON string literal. */
RNSC_API void rnsc_json_str(FILE *f, const char *s);

#endif
