/* SPDX-License-Identifier: MIT */
/*
 * The accounting shared by the resource scenarios 4 (maximum resource segment) and 5
 * (64-segment resource stream), header-only, libc only. One link, one resource at a time,
 * compression off; after each completed resource the receiver checks its content against
 * the generator stream and sends a 16-byte application ACK (8-byte magic "RNSCBACK" +
 * 8-byte big-endian sequence) as a link packet; the initiator starts the next resource once
 * its own resource concluded COMPLETE and the ACK with the expected sequence arrived.
 *
 * Result lines:
 *   initiator: sent completed acked bytes sent_bytes resource_size unfinished elapsed_s
 *              rtt_p50_us rtt_p99_us link_mtu       (RTT = resource start -> ACK)
 *   responder: completed bytes corrupt failed acks   (failed: concluded, not COMPLETE;
 *              corrupt: COMPLETE but not the generator's bytes)
 * Rule: sent = completed = ACKed (initiator) = completed = ACKs sent (responder) > 0,
 * nothing unfinished, failed or corrupt, and bytes sent = bytes ACKed = bytes received =
 * ACKed * resource_size. Rate in resources/s; goodput in bytes/s (MiB/s in extra_json).
 */
#ifndef RNSC_RESOURCE_CHECK_H
#define RNSC_RESOURCE_CHECK_H

#include "scn_util.h"

/* The matched-policy variants (scenario 8): TCP on both sides, each configured to the
 * reference's TCP tier (bitrate 10 Mbit/s, which both map to the same hardware MTU). */
#define SCN_MATCHED_BITRATE 10000000
static inline int scn_tcp_matched_endpoints(int role, const int *ports, size_t n, char *out,
					    size_t cap)
{
	int rc = scn_tcp_endpoints(role, ports, n, out, cap);
	size_t len = rc ? 0 : strlen(out);
	return rc ? rc : scn_put(out + len, cap - len, "    bitrate = %d\n", SCN_MATCHED_BITRATE);
}

static inline int scn_resource_check(const rnsc_scenario_lines *l, rnsc_scenario_sample *s)
{
	if (!l || !s)
		return RNSC_ERR_INVAL;
	int missing = 0;
	s->sent = scn_u(l->a, "sent", &missing);
	unsigned long long completed = scn_u(l->a, "completed", &missing);
	s->proved = scn_u(l->a, "acked", &missing);
	s->bytes = scn_u(l->a, "bytes", &missing);
	unsigned long long sent_bytes = scn_u(l->a, "sent_bytes", &missing);
	unsigned long long size = scn_u(l->a, "resource_size", &missing);
	s->unproved = scn_u(l->a, "unfinished", &missing);
	s->elapsed_s = scn_d(l->a, "elapsed_s", &missing);
	s->p50_us = scn_d(l->a, "rtt_p50_us", &missing);
	s->p99_us = scn_d(l->a, "rtt_p99_us", &missing);
	s->link_mtu = (uint32_t)scn_u(l->a, "link_mtu", &missing);
	s->delivered = scn_u(l->b, "completed", &missing);
	unsigned long long rbytes = scn_u(l->b, "bytes", &missing);
	unsigned long long corrupt = scn_u(l->b, "corrupt", &missing);
	unsigned long long failed = scn_u(l->b, "failed", &missing);
	unsigned long long acks = scn_u(l->b, "acks", &missing);
	if (missing)
		return scn_fail(s, "a result line lacks %d field(s): '%s' / '%s'", missing,
				l->a ? l->a : "", l->b ? l->b : "");
	if (s->elapsed_s > 0) {
		s->rate = (double)s->proved / s->elapsed_s;
		s->goodput = (double)s->bytes / s->elapsed_s;
	}
	snprintf(s->extra_json, sizeof(s->extra_json),
		 "\"resource_size\": %llu, \"completed\": %llu, \"acked\": %llu, "
		 "\"received\": %llu, \"acks_sent\": %llu, \"corrupt\": %llu, "
		 "\"failed\": %llu, \"goodput_mib_s\": %.3f",
		 size, completed, s->proved, s->delivered, acks, corrupt, failed,
		 s->goodput / (1024.0 * 1024.0));
	if (s->sent == 0)
		return scn_fail(s, "no resource was sent");
	if (size == 0 || s->sent != completed || s->sent != s->proved || s->sent != s->delivered ||
	    s->sent != acks || s->unproved || corrupt || failed || sent_bytes != s->bytes ||
	    rbytes != s->bytes || s->bytes != s->proved * size)
		return scn_fail(
			s,
			"accounting: sent %llu, completed %llu, acked %llu, received %llu, "
			"acks sent %llu, unfinished %llu, corrupt %llu, failed %llu, bytes sent %llu / "
			"acked %llu / received %llu, resource size %llu",
			s->sent, completed, s->proved, s->delivered, acks, s->unproved, corrupt,
			failed, sent_bytes, s->bytes, rbytes, size);
	s->ok = 1;
	return 0;
}

#endif
