/* SPDX-License-Identifier: MIT */
#include "txq.h"

#include <string.h>

int rnsc_txq_reserve(const rnsc_iface_inst *inst, uint8_t **buf, size_t *off, size_t *len,
		     size_t *cap, size_t need, size_t max, size_t first_cap)
{
	size_t pending = *len - *off;
	/* need > max first, so pending + need cannot wrap. */
	if (need > max || pending + need > max)
		return RNSC_ERR_TOOBIG;
	/* Compact only when the tail lacks room: after every partial write of a congested
	 * queue, moving all pending bytes (up to the 4 MiB limit) before appending a frame
	 * was wasted copying. A TLS write buffer may move (ACCEPT_MOVING_WRITE_BUFFER). */
	if (*off && *len + need > *cap) {
		memmove(*buf, *buf + *off, pending);
		*off = 0;
		*len = pending;
	}
	if (*len + need > *cap) {
		size_t ncap = *cap ? *cap : first_cap;
		while (ncap < *len + need)
			ncap *= 2;
		uint8_t *n = inst->api->alloc(inst->api->host_ctx, ncap);
		if (!n)
			return RNSC_ERR_NOMEM;
		memset(n, 0, ncap);
		if (*len)
			memcpy(n, *buf, *len);
		if (*buf)
			inst->api->free(inst->api->host_ctx, *buf);
		*buf = n;
		*cap = ncap;
	}
	return 0;
}
