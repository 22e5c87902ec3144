/* SPDX-License-Identifier: MIT */
/*
 * Test plugin for the plugin host: a well-formed shared object that exports
 * an entry point under the wrong name, so dlopen succeeds and dlsym of
 * rnsc_plugin_init fails (the host must report RNSC_ERR_NOSYM).
 */
#include "crypto_abi.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int rnsc_broken_entry(const rnsc_host_api *host, const rnsc_plugin_desc **out);

EXPORT int rnsc_broken_entry(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	(void)host;
	*out = NULL;
	return RNSC_ERR_PLUGIN_INIT;
}
