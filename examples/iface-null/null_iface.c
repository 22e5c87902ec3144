/* SPDX-License-Identifier: MIT */
/*
 * An out-of-tree interface plugin, built against an installed rnsc with only its public
 * headers (pkg-config --cflags rnsc): it serves the config type ExampleNullInterface, an
 * interface that is always online and discards what it is given, counting it. A starting
 * point for a real driver: open() reads the section, send() takes frames, stats() reports.
 *
 *   [[Sink]]
 *     type = ExampleNullInterface
 *     enabled = yes
 *     bitrate = 1000000
 */
#include <rnsc/iface_abi.h>

#include <stdio.h>

typedef struct null_inst {
	const rnsc_host_api *api;
} null_inst;

typedef struct null_if {
	null_inst *inst;
	char name[64];
	uint64_t bitrate, tx_bytes, tx_packets;
} null_if;

static const char *const null_types[] = {"ExampleNullInterface", NULL};

static int null_open(void *instp, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		     void **handle)
{
	null_inst *inst = instp;
	int64_t bitrate = 1000000;
	int rc = cfg->get_int(cfg->cctx, "bitrate", &bitrate);
	if (rc != 0 && rc != RNSC_ERR_NOTFOUND)
		return rc; /* the host has logged the bad value */
	if (bitrate <= 0)
		return cfg->fail(cfg->cctx, "bitrate", RNSC_ERR_CONFIG_VALUE, "must be positive");
	null_if *n = inst->api->alloc(inst->api->host_ctx, sizeof(*n));
	if (!n)
		return RNSC_ERR_NOMEM;
	*n = (null_if){.inst = inst, .bitrate = (uint64_t)bitrate};
	snprintf(n->name, sizeof(n->name), "%s", cfg->name);
	host->set_online(host->hctx, 1);
	*handle = n;
	return 0;
}

static int null_send(void *handle, const uint8_t *frame, size_t len)
{
	null_if *n = handle;
	(void)frame;
	n->tx_bytes += len;
	n->tx_packets++;
	return 0;
}

static int null_stats(void *handle, rnsc_iface_stats *out)
{
	null_if *n = handle;
	out->tx_bytes = n->tx_bytes;
	out->tx_packets = n->tx_packets;
	out->online = 1;
	out->bitrate = n->bitrate;
	return 0;
}

static void null_close(void *handle)
{
	null_if *n = handle;
	n->inst->api->free(n->inst->api->host_ctx, n);
}

static int null_describe(void *handle, char *buf, size_t cap)
{
	null_if *n = handle;
	return snprintf(buf, cap, "ExampleNullInterface[%s]", n->name);
}

static int null_init(void *instp, const rnsc_host_api *host)
{
	null_inst *inst = instp;
	if (!host || host->struct_size < offsetof(rnsc_host_api, free) + sizeof(host->free))
		return RNSC_ERR_ABI;
	inst->api = host;
	return 0;
}

static const rnsc_iface_ops null_ops = {
	.struct_size = sizeof(rnsc_iface_ops),
	.types = null_types,
	.open = null_open,
	.send = null_send,
	.stats = null_stats,
	.close = null_close,
	.describe = null_describe,
};

static const rnsc_plugin_desc null_desc = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_IFACE,
	.name = "example-null",
	.version = "0.1.0",
	.description = "ExampleNullInterface (an out-of-tree example: discards and counts)",
	.inst_size = sizeof(null_inst),
	.ops = &null_ops,
	.init = null_init,
};

__attribute__((visibility("default"))) int rnsc_plugin_init(const rnsc_host_api *host,
							    const rnsc_plugin_desc **out);
int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	if (!host || !out || host->abi_major != RNSC_PLUGIN_ABI_MAJOR)
		return RNSC_ERR_ABI;
	*out = &null_desc;
	return 0;
}
