/* SPDX-License-Identifier: MIT */
/* rnsc path -r / -j (cmd_path_rates.c). Return exit codes as rnpath. */
#ifndef RNSC_CLI_CMD_PATH_RATES_H
#define RNSC_CLI_CMD_PATH_RATES_H

#include <stdint.h>

#include "node.h"

/* The rate table (rates) or the path table as JSON, of the shared instance (attached) or
 * of this node. only (may be NULL) limits the text rates listing. */
int path_rates_or_json(rnsc_node *n, rnsc_ctx *ctx, int rates, int json, const uint8_t *only,
		       long max_hops);
/* The same from a remote instance over remote management (-R/-i/-W). */
int path_remote_rates_or_json(const char *dir, const char *remote, const char *mgmt_id,
			      double timeout, int rates, int json, const uint8_t *only,
			      long max_hops);

#endif
