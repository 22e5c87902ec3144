/* SPDX-License-Identifier: MIT */
/*
 * Test plugin for the plugin host: the entry point itself refuses to start
 * (rnsc_plugin_init returns RNSC_ERR_PLUGIN_INIT and no descriptor), as a
 * plugin whose library dependencies are unusable would.
 */
#include "crypto_abi.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out);

EXPORT int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	(void)host;
	if (out != NULL)
		*out = NULL;
	return RNSC_ERR_PLUGIN_INIT;
}
