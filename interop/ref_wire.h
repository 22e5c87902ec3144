/* SPDX-License-Identifier: MIT */
/*
 * C access to the reference's wire formats: interop/python/rnsc_wireharness.py, imported into
 * the embedded interpreter next to rnsc_refharness (pyref.h). One generic call keeps the
 * conformance code free of Python types: arguments are described by a small format string,
 * results come back as a flat list of items (ints, bytes, strings, None) or as the verdict the
 * harness names for a rejection.
 *
 * Threading and lifetime as pyref.h: each call takes the GIL itself; a result is caller
 * storage holding one heap buffer (rnsc_refwire_res_free()).
 */
#ifndef RNSC_REF_WIRE_H
#define RNSC_REF_WIRE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "pyref.h"

enum rnsc_refwire_kind {
	RNSC_RW_NONE = 0,
	RNSC_RW_INT,
	RNSC_RW_BYTES,
	RNSC_RW_STR, /* p is NUL-terminated */
};

#define RNSC_REFWIRE_MAX_ITEMS 16

typedef struct rnsc_refwire_item {
	int kind;
	long long i;
	const uint8_t *p; /* into the result's buffer */
	size_t len;
} rnsc_refwire_item;

typedef struct rnsc_refwire_res {
	size_t n;
	rnsc_refwire_item item[RNSC_REFWIRE_MAX_ITEMS];
	uint8_t *buf; /* owned */
	size_t used, cap;
} rnsc_refwire_res;

/* Calls rnsc_wireharness.<fn>(...) with one argument per format character:
 *   'b'  const uint8_t *p, size_t len   -> bytes (None when p is NULL)
 *   'i'  long long                      -> int
 *   'd'  double                         -> float
 *   's'  const char *                   -> str (None when NULL)
 * On return res (always initialised; free it even on failure) holds the result: a tuple's
 * items in order, or a single item for a scalar (None is one RNSC_RW_NONE item). Nested
 * containers and more than RNSC_REFWIRE_MAX_ITEMS items are harness errors.
 * Returns 0, the verdict (< 0) when the harness returned an rnsc error name, RNSC_ERR_PYTHON
 * when the harness failed (traceback logged), RNSC_ERR_INVAL for a bad format, RNSC_ERR_NOMEM,
 * RNSC_ERR_NOREF when the harness module cannot be imported. */
int rnsc_refwire_call(rnsc_pyref *ref, rnsc_refwire_res *res, const char *fn, const char *fmt, ...);
/* The same with a va_list. */
int rnsc_refwire_vcall(rnsc_pyref *ref, rnsc_refwire_res *res, const char *fn, const char *fmt,
		       va_list ap);
void rnsc_refwire_res_free(rnsc_refwire_res *res);

#endif
