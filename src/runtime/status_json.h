/* SPDX-License-Identifier: MIT */
/*
 * The status document as JSON, the way the reference's rnstatus -j prints it: json.dumps
 * of the interface_stats msgpack document with bytes turned into lowercase hex and floats
 * in Python's repr. One renderer for `rnsc status --json` (whatever shared instance
 * answered) and the daemon's GET /status (node_status.h), so the two never differ.
 *
 * Ownership: *out is malloc'd and belongs to the caller (free()).
 * Hostile input: the msgpack reader bounds every read; nesting deeper than
 * RNSC_MP_MAX_DEPTH is refused (RNSC_ERR_TOOBIG).
 */
#ifndef RNSC_STATUS_JSON_H
#define RNSC_STATUS_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Renders one msgpack value (the bytes after it are ignored, as umsgpack does) as one
 * JSON line. Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOMEM or the msgpack reader's errors. */
RNSC_API int rnsc_status_json_from_mp(const uint8_t *p, size_t len, char **out, size_t *out_len);
/* A double as Python's repr() prints it (what json.dumps and str() show). */
RNSC_API void rnsc_py_float_repr(char *buf, size_t cap, double v);

#endif
