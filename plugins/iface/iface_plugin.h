/* SPDX-License-Identifier: MIT */
/*
 * What every interface plugin repeats around its ops: the per-instance state, the init
 * that checks the host API, the descriptor and the one exported symbol. Header only:
 * plugins never link librnsc, and each .so must define its own rnsc_plugin_init.
 *
 * Use once per plugin, at file scope, after the ops functions:
 *
 *   RNSC_IFACE_PLUGIN("tcp", "TCPClientInterface and ...", tcp_types, tcp_open, tcp_send,
 *                     tcp_stats, tcp_close, tcp_describe)
 *
 * The descriptor, its ops table and the instance are static and owned by the module; the
 * host allocates the instance (sizeof(rnsc_iface_inst), zeroed) and passes it to init.
 */
#ifndef RNSC_IFACE_PLUGIN_H
#define RNSC_IFACE_PLUGIN_H

#include <stddef.h>

#include "iface_abi.h"

/* Per-instance state: only the host API, borrowed for the instance's lifetime. */
typedef struct rnsc_iface_inst {
	const rnsc_host_api *api;
} rnsc_iface_inst;

/* RNSC_ERR_ABI when the host is missing or too old to carry alloc/free, which every
 * interface plugin uses; 0 otherwise. */
static inline int rnsc_iface_inst_init(void *instp, const rnsc_host_api *host)
{
	rnsc_iface_inst *inst = instp;
	if (!host || host->struct_size < offsetof(rnsc_host_api, free) + sizeof(host->free) ||
	    !host->alloc || !host->free)
		return RNSC_ERR_ABI;
	inst->api = host;
	return 0;
}

#define RNSC_IFACE_PLUGIN(name_, description_, types_, open_, send_, stats_, close_, describe_)    \
	static const rnsc_iface_ops rnsc_iface_plugin_ops = {                                      \
		.struct_size = sizeof(rnsc_iface_ops),                                             \
		.types = (types_),                                                                 \
		.open = (open_),                                                                   \
		.send = (send_),                                                                   \
		.stats = (stats_),                                                                 \
		.close = (close_),                                                                 \
		.describe = (describe_),                                                           \
	};                                                                                         \
	static const rnsc_plugin_desc rnsc_iface_plugin_desc = {                                   \
		.struct_size = sizeof(rnsc_plugin_desc),                                           \
		.abi_major = RNSC_PLUGIN_ABI_MAJOR,                                                \
		.abi_minor = RNSC_PLUGIN_ABI_MINOR,                                                \
		.kind = RNSC_PLUGIN_IFACE,                                                         \
		.name = (name_),                                                                   \
		.version = "0.1.0",                                                                \
		.description = (description_),                                                     \
		.caps = 0,                                                                         \
		.inst_size = sizeof(rnsc_iface_inst),                                              \
		.ops = &rnsc_iface_plugin_ops,                                                     \
		.init = rnsc_iface_inst_init,                                                      \
		.fini = NULL,                                                                      \
	};                                                                                         \
	__attribute__((visibility("default"))) int rnsc_plugin_init(const rnsc_host_api *host,     \
								    const rnsc_plugin_desc **out); \
	__attribute__((visibility("default"))) int rnsc_plugin_init(const rnsc_host_api *host,     \
								    const rnsc_plugin_desc **out)  \
	{                                                                                          \
		(void)host;                                                                        \
		if (!out)                                                                          \
			return RNSC_ERR_INVAL;                                                     \
		*out = &rnsc_iface_plugin_desc;                                                    \
		return 0;                                                                          \
	}

#endif /* RNSC_IFACE_PLUGIN_H */
