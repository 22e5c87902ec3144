/* SPDX-License-Identifier: MIT */
/* Remote management requests of rnsc status -R and rnsc path -R (cli_remote.c). */
#ifndef RNSC_CLI_REMOTE_H
#define RNSC_CLI_REMOTE_H

#include "cli.h"

enum {
	CLI_REMOTE_OK = 0,
	CLI_REMOTE_NO_PATH, /* "Path request timed out" printed */
	CLI_REMOTE_LINK,    /* the link closed or timed out (message printed) */
	CLI_REMOTE_FAILED,  /* the request failed: no response (nothing printed) */
	CLI_REMOTE_SETUP,   /* identity or node could not be set up (message printed) */
};

/* Sends path with data (one msgpack value, NULL for nil) to the remote management
 * destination of the transport instance identity_hash, identified as the identity in
 * identity_path; waits up to timeout_s for the path. On CLI_REMOTE_OK *out (malloc'd, the
 * response value) is the caller's. quiet: no progress lines (-j). */
int cli_remote_request(cli_env *env, const char *config_dir, const uint8_t identity_hash[16],
		       const char *identity_path, const char *path, const uint8_t *data,
		       size_t data_len, double timeout_s, int quiet, uint8_t **out,
		       size_t *out_len);

#endif
