/* SPDX-License-Identifier: MIT */
/*
 * The send queue of the byte-stream interface plugins (tcp, backbone, pipe, serial and
 * the stream engine under tls and websocket): one buffer per connection whose bytes
 * [off, len) wait for the fd. Compiled into each plugin that queues (plugins never link
 * librnsc). The caller owns the buffer and frees it with the same host allocator; what
 * a refusal means (a drop counted or not, which code is returned) stays with the caller.
 */
#ifndef RNSC_IFACE_TXQ_H
#define RNSC_IFACE_TXQ_H

#include <stddef.h>
#include <stdint.h>

#include "iface_plugin.h"

/* Makes room for `need` more bytes at *buf + *len: when the tail lacks room the pending
 * bytes move to the front (off becomes 0) and, if still short, the buffer grows, doubling
 * from first_cap, through inst's host
 * allocator (zeroed, the old one freed). 0 on success; RNSC_ERR_TOOBIG when the pending
 * bytes plus need would pass max (nothing changes); RNSC_ERR_NOMEM when the allocation
 * fails (the pending bytes are kept, compacted). */
int rnsc_txq_reserve(const rnsc_iface_inst *inst, uint8_t **buf, size_t *off, size_t *len,
		     size_t *cap, size_t need, size_t max, size_t first_cap);

#endif /* RNSC_IFACE_TXQ_H */
