/* SPDX-License-Identifier: MIT */
/* rnsc status -d / -D: discovered interfaces (cmd_status_disc.c). */
#ifndef RNSC_CMD_STATUS_DISC_H
#define RNSC_CMD_STATUS_DISC_H

#include "cfgfile.h"
#include "ctx.h"

/* Lists <cdir>/storage/discovery/interfaces as rnstatus -d (details: -D, json: -j) prints
 * it. Returns the exit status (0, or 2 when the listing failed). */
int status_discovered(rnsc_ctx *ctx, const rnsc_config_settings *set, const char *cdir, int json,
		      int details, const char *filter);

#endif
