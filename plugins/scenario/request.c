/* SPDX-License-Identifier: MIT */
/*
 * Scenario 3, request/response: 4 links at a fixed 500-byte link MTU (every role's config
 * sets `link_mtu_discovery = No`, so the initiator signals the base MTU), each with one
 * request in flight to /bench/query; requests of 32..128 bytes whose first two bytes (big
 * endian) name the response size, 1024..4096 bytes, so every response (its packed form is
 * above the 431-byte link MDU) travels as a resource. Over TCP.
 *
 * Result lines:
 *   initiator: sent delivered failed unanswered corrupt via_resource bytes sent_bytes links
 *              elapsed_s rtt_p50_us rtt_p99_us link_mtu     (RTT = request -> response)
 *              [slow]  responses that took 200 ms or more (informative: the reference's
 *                      request race and advertise-before-register recover through retries)
 *              [late_adv] of which the response's resource advertisement came 200 ms or
 *                      more after the request (the first advertisement missed: request race)
 *   responder: requests served bad req_bytes bytes
 * Rule: sent = delivered = served = requests > 0; nothing failed, unanswered, corrupt or
 * malformed; every delivered response arrived as a resource (via_resource = delivered: the
 * requester saw the response's resource progress before the response); request bytes sent
 * = received, response bytes served = delivered; link MTU 500. Rate in requests/s.
 */
#include "scn_util.h"

#define REQ_LINK_MTU 500

static int interfaces(void *inst, int role, const int *ports, size_t n, char *out, size_t cap)
{
	(void)inst;
	return scn_tcp_endpoints(role, ports, n, out, cap);
}

static int check(void *inst, const rnsc_scenario_lines *l, rnsc_scenario_sample *s)
{
	(void)inst;
	if (!l || !s)
		return RNSC_ERR_INVAL;
	int missing = 0;
	s->sent = scn_u(l->a, "sent", &missing);
	s->delivered = scn_u(l->a, "delivered", &missing);
	s->timeouts = scn_u(l->a, "failed", &missing);
	s->unproved = scn_u(l->a, "unanswered", &missing);
	unsigned long long corrupt = scn_u(l->a, "corrupt", &missing);
	unsigned long long via_res = scn_u(l->a, "via_resource", &missing);
	s->bytes = scn_u(l->a, "bytes", &missing);
	unsigned long long sent_bytes = scn_u(l->a, "sent_bytes", &missing);
	unsigned long long links = scn_u(l->a, "links", &missing);
	s->elapsed_s = scn_d(l->a, "elapsed_s", &missing);
	s->p50_us = scn_d(l->a, "rtt_p50_us", &missing);
	s->p99_us = scn_d(l->a, "rtt_p99_us", &missing);
	s->link_mtu = (uint32_t)scn_u(l->a, "link_mtu", &missing);
	unsigned long long requests = scn_u(l->b, "requests", &missing);
	unsigned long long served = scn_u(l->b, "served", &missing);
	unsigned long long bad = scn_u(l->b, "bad", &missing);
	unsigned long long req_bytes = scn_u(l->b, "req_bytes", &missing);
	unsigned long long served_bytes = scn_u(l->b, "bytes", &missing);
	int optional = 0;
	/* informative only */
	unsigned long long slow = scn_u(l->a, "slow", &optional);
	unsigned long long late_adv = scn_u(l->a, "late_adv", &optional);
	if (missing)
		return scn_fail(s, "a result line lacks %d field(s): '%s' / '%s'", missing,
				l->a ? l->a : "", l->b ? l->b : "");
	s->proved = via_res;
	if (s->elapsed_s > 0) {
		s->rate = (double)s->delivered / s->elapsed_s;
		s->goodput = (double)s->bytes / s->elapsed_s;
	}
	snprintf(s->extra_json, sizeof(s->extra_json),
		 "\"served\": %llu, \"requests_received\": %llu, \"failed\": %llu, "
		 "\"corrupt\": %llu, \"malformed\": %llu, \"via_resource\": %llu, "
		 "\"request_bytes_sent\": %llu, \"request_bytes_received\": %llu, "
		 "\"response_bytes_served\": %llu, \"links\": %llu, \"slow_200ms\": %llu, "
		 "\"late_advertisement_200ms\": %llu",
		 served, requests, s->timeouts, corrupt, bad, via_res, sent_bytes, req_bytes,
		 served_bytes, links, slow, late_adv);
	if (s->sent == 0)
		return scn_fail(s, "no request was sent");
	if (s->sent != s->delivered || s->sent != served || s->sent != requests || s->timeouts ||
	    s->unproved || corrupt || bad || via_res != s->delivered || sent_bytes != req_bytes ||
	    served_bytes != s->bytes || links != 4 || s->link_mtu != REQ_LINK_MTU)
		return scn_fail(
			s,
			"accounting: sent %llu, delivered %llu, served %llu, received %llu, "
			"failed %llu, unanswered %llu, corrupt %llu, malformed %llu, as "
			"resources %llu, request bytes %llu vs %llu, response bytes %llu vs "
			"%llu, links %llu, link MTU %u",
			s->sent, s->delivered, served, requests, s->timeouts, s->unproved, corrupt,
			bad, via_res, sent_bytes, req_bytes, served_bytes, s->bytes, links,
			s->link_mtu);
	s->ok = 1;
	return 0;
}

static const rnsc_scenario_ops OPS = {
	.struct_size = sizeof(rnsc_scenario_ops),
	.number = 3,
	.topology = RNSC_SCENARIO_ENDPOINTS,
	.title = "request/response",
	.desc = "4 links at a fixed 500-byte link MTU, one request in flight per link to "
		"/bench/query; requests of 32-128 bytes name a 1-4 KiB response, so every response "
		"is a resource (content-checked); sent = delivered = served, bytes equal; RTT = "
		"request -> response",
	.unit = "requests/s",
	.size_lo = 32,
	.size_hi = 128,
	.iface_policy = "TCP (loopback), link MTU discovery off: fixed 500-byte link MTU",
	.mode = "request",
	.interfaces = interfaces,
	.check = check,
	.reticulum = "  link_mtu_discovery = No\n",
};

static const rnsc_plugin_desc DESC = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_SCENARIO,
	.name = "request",
	.version = "1.0.0",
	.description = "benchmark scenario 3: request/response",
	.ops = &OPS,
};

int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
	__attribute__((visibility("default")));
int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	(void)host;
	*out = &DESC;
	return 0;
}
