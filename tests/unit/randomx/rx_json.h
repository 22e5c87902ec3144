/* SPDX-License-Identifier: MIT */
/*
 * A tiny JSON reader for the RandomX vector files (tests only). It builds a tree of values;
 * numbers are kept as their text so 64-bit integers survive exactly. Objects keep key order.
 * Strings support the escapes the vector files use (\" \\ \/ \b \f \n \r \t and \u00XX).
 * The caller owns the tree returned by rx_json_load() and frees it with rx_json_free().
 */
#ifndef RNSC_RX_JSON_H
#define RNSC_RX_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum { RXJ_NULL, RXJ_BOOL, RXJ_NUM, RXJ_STR, RXJ_ARR, RXJ_OBJ } rx_json_type;

typedef struct rx_json {
	rx_json_type type;
	int boolean;
	char *text; /* string contents or number text */
	size_t n;   /* array/object length */
	struct rx_json **items;
	char **keys; /* object keys, parallel to items */
} rx_json;

/* Parse a whole file; NULL on I/O or syntax error (a message goes to stderr). */
rx_json *rx_json_load(const char *path);
void rx_json_free(rx_json *v);
/* Member of an object, or NULL. */
const rx_json *rx_json_get(const rx_json *obj, const char *key);
/* i-th element of an array, or NULL. */
const rx_json *rx_json_at(const rx_json *arr, size_t i);
/* String contents, or NULL when v is not a string. */
const char *rx_json_str(const rx_json *v);
/* Unsigned decimal number, given as a number or a decimal string (else 0). */
uint64_t rx_json_u64(const rx_json *v);
/* Decode a hex string member into out (max bytes); returns the byte count or -1. */
int rx_json_hex(const rx_json *v, uint8_t *out, size_t max);
/* A hex string of up to 16 digits as a u64 (big-endian digits, as the vectors write them). */
uint64_t rx_json_hex_u64(const rx_json *v);

#endif
