/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the scenario plugins (header-only, libc only: plugins never link
 * librnsc): key=value lookup in a result line, and the [interfaces] sections the scenarios
 * write. Nothing here allocates.
 */
#ifndef RNSC_SCN_UTIL_H
#define RNSC_SCN_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario_abi.h"

/* The value of " key=" in line (0 and *missing incremented when absent or line is NULL). */
static inline unsigned long long scn_u(const char *line, const char *key, int *missing)
{
	char pat[64];
	snprintf(pat, sizeof(pat), " %s=", key);
	const char *p = line ? strstr(line, pat) : NULL;
	if (!p) {
		(*missing)++;
		return 0;
	}
	return strtoull(p + strlen(pat), NULL, 10);
}

static inline double scn_d(const char *line, const char *key, int *missing)
{
	char pat[64];
	snprintf(pat, sizeof(pat), " %s=", key);
	const char *p = line ? strstr(line, pat) : NULL;
	if (!p) {
		(*missing)++;
		return 0;
	}
	return strtod(p + strlen(pat), NULL);
}

/* Records why a sample failed, cut to fit. Always returns 0 (check() ran). */
__attribute__((format(printf, 2, 3))) static inline int scn_fail(rnsc_scenario_sample *s,
								 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	s->ok = 0;
	return 0;
}

/* snprintf into out that reports truncation as RNSC_ERR_BUFSIZE. */
__attribute__((format(printf, 3, 4))) static inline int scn_put(char *out, size_t cap,
								const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, cap, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= cap ? RNSC_ERR_BUFSIZE : 0;
}

/* Endpoint scenarios over TCP: the responder serves, the initiator connects. */
static inline int scn_tcp_endpoints(int role, const int *ports, size_t n, char *out, size_t cap)
{
	if (n < 1)
		return RNSC_ERR_INVAL;
	if (role == RNSC_SCENARIO_ROLE_RESPONDER)
		return scn_put(
			out, cap,
			"[interfaces]\n  [[bench server]]\n    type = TCPServerInterface\n"
			"    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %d\n",
			ports[0]);
	if (role == RNSC_SCENARIO_ROLE_INITIATOR)
		return scn_put(
			out, cap,
			"[interfaces]\n  [[bench client]]\n    type = TCPClientInterface\n"
			"    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %d\n",
			ports[0]);
	return RNSC_ERR_INVAL;
}

/* Endpoint scenarios over Backbone interfaces (the Linux default policy): the
 * responder listens, the initiator connects; each side keeps its own MTU policy. */
static inline int scn_backbone_endpoints(int role, const int *ports, size_t n, char *out,
					 size_t cap)
{
	if (n < 1)
		return RNSC_ERR_INVAL;
	if (role == RNSC_SCENARIO_ROLE_RESPONDER)
		return scn_put(out, cap,
			       "[interfaces]\n  [[bench server]]\n    type = BackboneInterface\n"
			       "    enabled = yes\n    listen_on = 127.0.0.1\n    port = %d\n",
			       ports[0]);
	if (role == RNSC_SCENARIO_ROLE_INITIATOR)
		return scn_put(
			out, cap,
			"[interfaces]\n  [[bench client]]\n    type = BackboneInterface\n"
			"    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %d\n",
			ports[0]);
	return RNSC_ERR_INVAL;
}

/* Relay scenarios: two Backbone server interfaces (the Linux default policy), each
 * implementation keeping its own default bitrate and MTU policy. */
static inline int scn_backbone_relay(int role, const int *ports, size_t n, char *out, size_t cap)
{
	if (role != RNSC_SCENARIO_ROLE_RELAY || n < 2)
		return RNSC_ERR_INVAL;
	return scn_put(out, cap,
		       "[interfaces]\n  [[bench side a]]\n    type = BackboneInterface\n"
		       "    enabled = yes\n    listen_on = 127.0.0.1\n    port = %d\n"
		       "  [[bench side b]]\n    type = BackboneInterface\n    enabled = yes\n"
		       "    listen_on = 127.0.0.1\n    port = %d\n",
		       ports[0], ports[1]);
}

#endif
