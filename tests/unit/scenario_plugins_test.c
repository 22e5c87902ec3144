/* SPDX-License-Identifier: MIT */
/*
 * The benchmark scenario plugins (plugins/scenario/ modules, ops in include/rnsc/scenario_abi.h)
 * loaded through the plugin host as `rnsc bench` loads them: their descriptors, the
 * [interfaces] sections they write per role, and every branch of their accounting rules
 * (conformant samples, missing fields, each failed rule) on crafted result lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_run.h"
#include "plugin_host.h"
#include "scenario_abi.h"

static rnsc_ctx *ctx;
static rnsc_plugin_host *host;

static int setup(void)
{
	const char *b = getenv("RNSC_BUILDDIR");
	char dir[4096];
	if (!b)
		b = RNSC_BUILDDIR;
	snprintf(dir, sizeof(dir), "%s/plugins/scenario/.libs", b);
	if (rnsc_ctx_new(&ctx) || rnsc_plugin_host_new(ctx, &host) ||
	    rnsc_plugin_host_add_dir(host, dir))
		return 1;
	return rnsc_plugin_host_scan(host) >= 4 ? 0 : 1;
}

static int teardown(void)
{
	rnsc_plugin_host_del(host);
	rnsc_ctx_del(ctx);
	return 0;
}

static const rnsc_plugin_rec *get(const char *name, const rnsc_scenario_ops **ops)
{
	const rnsc_plugin_rec *r = rnsc_plugin_host_find(host, name);
	*ops = r ? r->desc->ops : NULL;
	return r;
}

static int judge(const char *name, const char *a, const char *b, rnsc_scenario_sample *s)
{
	const rnsc_scenario_ops *o;
	const rnsc_plugin_rec *r = get(name, &o);
	memset(s, 0, sizeof(*s));
	s->struct_size = sizeof(*s);
	rnsc_scenario_lines l = {.struct_size = sizeof(l), .a = a, .b = b};
	return r ? o->check(r->inst, &l, s) : -1000;
}

static void test_descriptors(void)
{
	static const struct {
		const char *name;
		uint32_t number, topology;
		const char *version; /* 1.1: single and link on Backbone; the resource responder
			      * reports failed apart from corrupt */
	} want[] = {{"single", 1, RNSC_SCENARIO_ENDPOINTS, "1.1.0"},
		    {"link", 2, RNSC_SCENARIO_ENDPOINTS, "1.1.0"},
		    {"request", 3, RNSC_SCENARIO_ENDPOINTS, "1.0.0"},
		    {"resource-segment", 4, RNSC_SCENARIO_ENDPOINTS, "1.1.0"},
		    {"resource-stream", 5, RNSC_SCENARIO_ENDPOINTS, "1.1.0"},
		    {"resource-segment-matched", 8, RNSC_SCENARIO_ENDPOINTS, "1.1.0"},
		    {"resource-stream-matched", 8, RNSC_SCENARIO_ENDPOINTS, "1.1.0"},
		    {"raw-transport", 6, RNSC_SCENARIO_RELAY, "1.0.0"},
		    {"transported-resource", 7, RNSC_SCENARIO_RELAY, "1.0.0"}};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const rnsc_scenario_ops *o;
		const rnsc_plugin_rec *r = get(want[i].name, &o);
		CU_ASSERT_PTR_NOT_NULL_FATAL(r);
		CU_ASSERT_EQUAL(r->desc->kind, RNSC_PLUGIN_SCENARIO);
		CU_ASSERT_STRING_EQUAL(r->desc->version, want[i].version);
		CU_ASSERT_EQUAL(o->number, want[i].number);
		CU_ASSERT_EQUAL(o->topology, want[i].topology);
		CU_ASSERT(RNSC_OPS_HAS(o, rnsc_scenario_ops, check));
		CU_ASSERT(RNSC_OPS_HAS(o, rnsc_scenario_ops, interfaces));
		CU_ASSERT_PTR_NOT_NULL(o->title);
		CU_ASSERT_PTR_NOT_NULL(o->mode);
		CU_ASSERT_EQUAL(o->check(r->inst, NULL, NULL), RNSC_ERR_INVAL);
	}
}

static void test_interfaces(void)
{
	char out[1024], tiny[16];
	int ports[2] = {4242, 4343};
	const rnsc_scenario_ops *o;
	const rnsc_plugin_rec *r = get("single", &o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(
		o->interfaces(r->inst, RNSC_SCENARIO_ROLE_RESPONDER, ports, 1, out, sizeof(out)),
		0);
	/* default-policy cells: Backbone on Linux */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "type = BackboneInterface"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "listen_on = 127.0.0.1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "port = 4242"));
	r = get("link", &o);
	CU_ASSERT_EQUAL(
		o->interfaces(r->inst, RNSC_SCENARIO_ROLE_INITIATOR, ports, 1, out, sizeof(out)),
		0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "type = BackboneInterface"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "target_port = 4242"));
	CU_ASSERT_EQUAL(
		o->interfaces(r->inst, RNSC_SCENARIO_ROLE_RELAY, ports, 2, out, sizeof(out)),
		RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(
		o->interfaces(r->inst, RNSC_SCENARIO_ROLE_INITIATOR, ports, 0, out, sizeof(out)),
		RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(
		o->interfaces(r->inst, RNSC_SCENARIO_ROLE_INITIATOR, ports, 1, tiny, sizeof(tiny)),
		RNSC_ERR_BUFSIZE);
	for (int k = 0; k < 2; k++) {
		r = get(k ? "transported-resource" : "raw-transport", &o);
		CU_ASSERT_PTR_NOT_NULL_FATAL(r);
		CU_ASSERT_EQUAL(o->interfaces(r->inst, RNSC_SCENARIO_ROLE_RELAY, ports, 2, out,
					      sizeof(out)),
				0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "type = BackboneInterface"));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "port = 4242"));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "port = 4343"));
		CU_ASSERT_EQUAL(o->interfaces(r->inst, RNSC_SCENARIO_ROLE_RESPONDER, ports, 2, out,
					      sizeof(out)),
				RNSC_ERR_INVAL);
		CU_ASSERT_EQUAL(o->interfaces(r->inst, RNSC_SCENARIO_ROLE_RELAY, ports, 1, out,
					      sizeof(out)),
				RNSC_ERR_INVAL);
	}
}

static void test_resource_interfaces(void)
{
	char out[1024], tiny[16];
	int ports[1] = {4242};
	for (int k = 0; k < 2; k++) {
		const rnsc_scenario_ops *o;
		const rnsc_plugin_rec *r = get(k ? "resource-stream" : "resource-segment", &o);
		CU_ASSERT_PTR_NOT_NULL_FATAL(r);
		CU_ASSERT_STRING_EQUAL(o->mode, k ? "stream" : "resource");
		CU_ASSERT_EQUAL(o->size_lo, k ? 67108800u : 1048575u);
		CU_ASSERT_EQUAL(o->interfaces(r->inst, RNSC_SCENARIO_ROLE_RESPONDER, ports, 1, out,
					      sizeof(out)),
				0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "type = BackboneInterface"));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "listen_on = 127.0.0.1"));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "port = 4242"));
		CU_ASSERT_EQUAL(o->interfaces(r->inst, RNSC_SCENARIO_ROLE_INITIATOR, ports, 1, out,
					      sizeof(out)),
				0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "target_host = 127.0.0.1"));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "target_port = 4242"));
		CU_ASSERT_EQUAL(o->interfaces(r->inst, RNSC_SCENARIO_ROLE_RELAY, ports, 1, out,
					      sizeof(out)),
				RNSC_ERR_INVAL);
		CU_ASSERT_EQUAL(o->interfaces(r->inst, RNSC_SCENARIO_ROLE_INITIATOR, ports, 0, out,
					      sizeof(out)),
				RNSC_ERR_INVAL);
		CU_ASSERT_EQUAL(o->interfaces(r->inst, RNSC_SCENARIO_ROLE_RESPONDER, ports, 1, tiny,
					      sizeof(tiny)),
				RNSC_ERR_BUFSIZE);
	}
}

static int o_check_null(const char *name)
{
	const rnsc_scenario_ops *o;
	const rnsc_plugin_rec *r = get(name, &o);
	return r ? o->check(r->inst, NULL, NULL) : -1000;
}

static void res_line(char *out, size_t cap, const char *repl);
#define RES_OK "result completed=4 bytes=4194300 corrupt=0 failed=0 acks=4"

static void test_matched_interfaces(void)
{
	char out[1024], small[256];
	int ports[1] = {4242};
	for (int k = 0; k < 2; k++) {
		const rnsc_scenario_ops *o;
		const rnsc_plugin_rec *r =
			get(k ? "resource-stream-matched" : "resource-segment-matched", &o);
		CU_ASSERT_PTR_NOT_NULL_FATAL(r);
		CU_ASSERT_STRING_EQUAL(o->mode, k ? "stream" : "resource");
		for (int role = RNSC_SCENARIO_ROLE_RESPONDER; role <= RNSC_SCENARIO_ROLE_INITIATOR;
		     role++) {
			CU_ASSERT_EQUAL(o->interfaces(r->inst, role, ports, 1, out, sizeof(out)),
					0);
			CU_ASSERT_PTR_NOT_NULL(strstr(out, role == RNSC_SCENARIO_ROLE_RESPONDER
								   ? "type = TCPServerInterface"
								   : "type = TCPClientInterface"));
			CU_ASSERT_PTR_NOT_NULL(strstr(out, "bitrate = 10000000\n"));
			/* room for the section but not for the bitrate line */
			size_t len = strlen(out) - strlen("    bitrate = 10000000\n") + 1;
			CU_ASSERT_FATAL(len < sizeof(small));
			CU_ASSERT_EQUAL(o->interfaces(r->inst, role, ports, 1, small, len + 4),
					RNSC_ERR_BUFSIZE);
		}
		CU_ASSERT_EQUAL(o->interfaces(r->inst, RNSC_SCENARIO_ROLE_RELAY, ports, 1, out,
					      sizeof(out)),
				RNSC_ERR_INVAL);
		rnsc_scenario_sample s;
		char line[512];
		res_line(line, sizeof(line), NULL);
		CU_ASSERT_EQUAL(judge(k ? "resource-stream-matched" : "resource-segment-matched",
				      line, RES_OK, &s),
				0);
		CU_ASSERT(s.ok);
		CU_ASSERT_EQUAL(o->check(r->inst, NULL, NULL), RNSC_ERR_INVAL);
	}
}

/* A resource initiator's line with one field replaced (key=value, NULL: none). */
static void res_line(char *out, size_t cap, const char *repl)
{
	static const char *const keys[] = {"sent",       "completed",     "acked",      "bytes",
					   "sent_bytes", "resource_size", "unfinished", "elapsed_s",
					   "rtt_p50_us", "rtt_p99_us",    "link_mtu"};
	static const char *const vals[] = {"4", "4",   "4",    "4194300", "4194300", "1048575",
					   "0", "2.0", "1000", "2000",    "32768"};
	size_t n = (size_t)snprintf(out, cap, "result");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t kl = strlen(keys[i]);
		if (repl && !strncmp(repl, keys[i], kl) && repl[kl] == '=')
			n += (size_t)snprintf(out + n, cap - n, " %s", repl);
		else
			n += (size_t)snprintf(out + n, cap - n, " %s=%s", keys[i], vals[i]);
	}
}

static void test_resource_rules(void)
{
	rnsc_scenario_sample s;
	char line[1024];
	for (int k = 0; k < 2; k++) {
		const char *name = k ? "resource-stream" : "resource-segment";
		res_line(line, sizeof(line), NULL);
		CU_ASSERT_EQUAL(judge(name, line, RES_OK, &s), 0);
		CU_ASSERT(s.ok);
		CU_ASSERT_DOUBLE_EQUAL(s.rate, 2.0, 1e-9);
		CU_ASSERT_DOUBLE_EQUAL(s.goodput, 4194300 / 2.0, 1e-9);
		CU_ASSERT_EQUAL(s.link_mtu, 32768);
		CU_ASSERT_EQUAL(s.proved, 4);
		CU_ASSERT_EQUAL(s.delivered, 4);
		CU_ASSERT_PTR_NOT_NULL(strstr(s.extra_json, "\"resource_size\": 1048575"));
		CU_ASSERT_PTR_NOT_NULL(strstr(s.extra_json, "\"goodput_mib_s\": 2.000"));
		CU_ASSERT_EQUAL(judge(name, NULL, NULL, &s), 0);
		CU_ASSERT(!s.ok);
		CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "lacks"));
		CU_ASSERT_EQUAL(judge(name, line, "result completed=4", &s), 0);
		CU_ASSERT(!s.ok);
		CU_ASSERT_EQUAL(o_check_null(name), RNSC_ERR_INVAL);
	}
	/* nothing sent */
	static const char *const zero[] = {"sent=0"};
	res_line(line, sizeof(line), zero[0]);
	CU_ASSERT_EQUAL(judge("resource-segment", line,
			      "result completed=0 bytes=0 corrupt=0 failed=0 acks=0", &s),
			0);
	CU_ASSERT(!s.ok);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "no resource was sent"));
	/* every initiator-side rule */
	static const char *const bad[] = {"completed=3",     "acked=3",
					  "bytes=4194299",   "sent_bytes=5242875",
					  "resource_size=0", "resource_size=1048576",
					  "unfinished=1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		res_line(line, sizeof(line), bad[i]);
		CU_ASSERT_EQUAL(judge("resource-segment", line, RES_OK, &s), 0);
		CU_ASSERT(!s.ok);
		CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "accounting"));
	}
	/* every responder-side rule */
	static const char *const rbad[] = {
		"result completed=3 bytes=4194300 corrupt=0 failed=0 acks=4",
		"result completed=4 bytes=3145725 corrupt=0 failed=0 acks=4",
		"result completed=4 bytes=4194300 corrupt=1 failed=0 acks=4",
		"result completed=4 bytes=4194300 corrupt=0 failed=0 acks=5",
		"result completed=4 bytes=4194300 corrupt=0 failed=1 acks=4"};
	res_line(line, sizeof(line), NULL);
	for (size_t i = 0; i < sizeof(rbad) / sizeof(rbad[0]); i++) {
		CU_ASSERT_EQUAL(judge("resource-stream", line, rbad[i], &s), 0);
		CU_ASSERT(!s.ok);
		CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "accounting"));
	}
	/* elapsed 0: no rate, but the accounting still holds */
	res_line(line, sizeof(line), "elapsed_s=0");
	CU_ASSERT_EQUAL(judge("resource-stream", line, RES_OK, &s), 0);
	CU_ASSERT(s.ok);
	CU_ASSERT_DOUBLE_EQUAL(s.rate, 0.0, 1e-9);
}

#define INI                                                                                        \
	"result sent=10 proved=10 timeouts=0 unproved=0 bytes=1000 sent_bytes=1000 "               \
	"elapsed_s=2.0 rtt_p50_us=5.0 rtt_p99_us=9.0"

static void test_endpoint_rules(void)
{
	rnsc_scenario_sample s;
	const char *names[2] = {"single", "link"};
	for (int k = 0; k < 2; k++) {
		CU_ASSERT_EQUAL(judge(names[k], INI, "result delivered=10 bytes=1000", &s), 0);
		CU_ASSERT(s.ok);
		CU_ASSERT_DOUBLE_EQUAL(s.rate, 5.0, 1e-9);
		CU_ASSERT_DOUBLE_EQUAL(s.goodput, 500.0, 1e-9);
		CU_ASSERT_EQUAL(judge(names[k], INI, "result delivered=9 bytes=1000", &s), 0);
		CU_ASSERT(!s.ok);
		CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "accounting"));
		CU_ASSERT_EQUAL(judge(names[k], "result sent=1", "result", &s), 0);
		CU_ASSERT(!s.ok);
		CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "lacks"));
		CU_ASSERT_EQUAL(judge(names[k], NULL, NULL, &s), 0);
		CU_ASSERT(!s.ok);
		CU_ASSERT_EQUAL(judge(names[k],
				      "result sent=0 proved=0 timeouts=0 unproved=0 bytes=0 "
				      "sent_bytes=0 elapsed_s=2 rtt_p50_us=0 rtt_p99_us=0",
				      "result delivered=0 bytes=0", &s),
				0);
		CU_ASSERT(!s.ok);
		CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "nothing was sent"));
	}
	/* a link packet proved late still counts when accounted as a timeout */
	CU_ASSERT_EQUAL(judge("link",
			      "result sent=10 proved=9 timeouts=1 unproved=0 bytes=900 "
			      "sent_bytes=1000 elapsed_s=2.0 rtt_p50_us=5.0 rtt_p99_us=9.0",
			      "result delivered=10 bytes=1000", &s),
			0);
	CU_ASSERT(s.ok);
	CU_ASSERT_EQUAL(judge("link", INI " link_mtu=16384", "result delivered=10 bytes=1000", &s),
			0);
	CU_ASSERT(s.ok);
	CU_ASSERT_EQUAL(s.link_mtu, 16384);
	/* ... but never for single packets */
	CU_ASSERT_EQUAL(judge("single",
			      "result sent=10 proved=9 timeouts=1 unproved=0 bytes=900 "
			      "sent_bytes=1000 elapsed_s=2.0 rtt_p50_us=5.0 rtt_p99_us=9.0",
			      "result delivered=10 bytes=1000", &s),
			0);
	CU_ASSERT(!s.ok);
}

/* Scenario 3: the initiator's line with one field replaced (key=value), and the rule. */
static void req_line(char *out, size_t cap, const char *repl)
{
	static const char *const keys[] = {"sent",    "delivered",    "failed",     "unanswered",
					   "corrupt", "via_resource", "bytes",      "sent_bytes",
					   "links",   "elapsed_s",    "rtt_p50_us", "rtt_p99_us",
					   "link_mtu"};
	static const char *const vals[] = {"8",   "8", "0",   "0",   "0",   "8",  "20000",
					   "640", "4", "2.0", "700", "900", "500"};
	size_t len = (size_t)snprintf(out, cap, "result");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t kl = strlen(keys[i]);
		const char *v = vals[i];
		if (repl && !strncmp(repl, keys[i], kl) && repl[kl] == '=')
			v = repl + kl + 1;
		len += (size_t)snprintf(out + len, cap - len, " %s=%s", keys[i], v);
	}
}

#define REQ_OK "result requests=8 served=8 bad=0 req_bytes=640 bytes=20000"

static void test_request_rules(void)
{
	rnsc_scenario_sample s;
	char line[512], out[1024];
	int ports[1] = {4242};
	const rnsc_scenario_ops *o;
	const rnsc_plugin_rec *r = get("request", &o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_STRING_EQUAL(o->mode, "request");
	CU_ASSERT_EQUAL(o->size_lo, 32);
	CU_ASSERT_EQUAL(o->size_hi, 128);
	/* the fixed 500-byte link MTU: link MTU discovery off in every role's config */
	CU_ASSERT(RNSC_OPS_HAS(o, rnsc_scenario_ops, reticulum));
	CU_ASSERT_PTR_NOT_NULL(strstr(o->reticulum, "link_mtu_discovery = No"));
	CU_ASSERT_EQUAL(
		o->interfaces(r->inst, RNSC_SCENARIO_ROLE_RESPONDER, ports, 1, out, sizeof(out)),
		0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "TCPServerInterface"));
	CU_ASSERT_EQUAL(
		o->interfaces(r->inst, RNSC_SCENARIO_ROLE_RELAY, ports, 1, out, sizeof(out)),
		RNSC_ERR_INVAL);

	req_line(line, sizeof(line), NULL);
	CU_ASSERT_EQUAL(judge("request", line, REQ_OK, &s), 0);
	CU_ASSERT(s.ok);
	CU_ASSERT_DOUBLE_EQUAL(s.rate, 4.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(s.goodput, 10000.0, 1e-9);
	CU_ASSERT_EQUAL(s.link_mtu, 500);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.extra_json, "\"via_resource\": 8"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s.extra_json, "\"slow_200ms\": 0"));
	/* the optional slow count is reported, not judged */
	snprintf(line + strlen(line), sizeof(line) - strlen(line), " slow=2 late_adv=1");
	CU_ASSERT_EQUAL(judge("request", line, REQ_OK, &s), 0);
	CU_ASSERT(s.ok);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.extra_json, "\"slow_200ms\": 2"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s.extra_json, "\"late_advertisement_200ms\": 1"));

	static const char *const bad[] = {
		"delivered=7", "failed=1",       "unanswered=1", "corrupt=1",      "via_resource=7",
		"bytes=19999", "sent_bytes=641", "links=3",      "link_mtu=16384", "sent=9"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		req_line(line, sizeof(line), bad[i]);
		CU_ASSERT_EQUAL(judge("request", line, REQ_OK, &s), 0);
		CU_ASSERT(!s.ok);
		CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "accounting"));
	}
	static const char *const rbad[] = {
		"result requests=8 served=7 bad=0 req_bytes=640 bytes=20000",
		"result requests=9 served=8 bad=0 req_bytes=640 bytes=20000",
		"result requests=8 served=8 bad=1 req_bytes=640 bytes=20000",
		"result requests=8 served=8 bad=0 req_bytes=639 bytes=20000",
		"result requests=8 served=8 bad=0 req_bytes=640 bytes=20001"};
	req_line(line, sizeof(line), NULL);
	for (size_t i = 0; i < sizeof(rbad) / sizeof(rbad[0]); i++) {
		CU_ASSERT_EQUAL(judge("request", line, rbad[i], &s), 0);
		CU_ASSERT(!s.ok);
	}
	req_line(line, sizeof(line), "sent=0");
	CU_ASSERT_EQUAL(judge("request", line, REQ_OK, &s), 0);
	CU_ASSERT(!s.ok);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "no request"));
	CU_ASSERT_EQUAL(judge("request", line, "result served=8", &s), 0);
	CU_ASSERT(!s.ok);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "lacks"));
	req_line(line, sizeof(line), "elapsed_s=0");
	CU_ASSERT_EQUAL(judge("request", line, REQ_OK, &s), 0);
	CU_ASSERT(s.ok);
	CU_ASSERT_DOUBLE_EQUAL(s.rate, 0.0, 1e-9);
}

static void relay_line(char *out, size_t cap, const char *ab_extra, double capacity)
{
	snprintf(out, cap,
		 "result mode=raw elapsed_s=2.0 capacity=%g link_mtu=%s rtt_p50_us=1 rtt_p99_us=2 "
		 "ab_sent=100 ab_carried=100 ab_dup=0 ab_corrupt=0 ab_reordered=0 ab_lost=0 "
		 "ab_bytes=20000 ab_unproved=0 ba_sent=100 ba_carried=100 ba_dup=0 ba_corrupt=0 "
		 "ba_reordered=0 ba_lost=0 ba_bytes=20000 ba_unproved=0%s",
		 capacity, ab_extra && !strcmp(ab_extra, "mtu") ? "32768" : "0",
		 ab_extra && strcmp(ab_extra, "mtu") ? ab_extra : "");
}

static void test_relay_rules(void)
{
	rnsc_scenario_sample s;
	char line[1024];
	relay_line(line, sizeof(line), NULL, 1000);
	CU_ASSERT_EQUAL(judge("raw-transport", line, NULL, &s), 0);
	CU_ASSERT(s.ok);
	CU_ASSERT_DOUBLE_EQUAL(s.rate, 100.0, 1e-9);
	CU_ASSERT_EQUAL(s.delivered, 200);
	CU_ASSERT_EQUAL(s.proved, 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.extra_json, "\"ab\": {\"sent\": 100"));
	relay_line(line, sizeof(line), "mtu", 1000);
	CU_ASSERT_EQUAL(judge("transported-resource", line, NULL, &s), 0);
	CU_ASSERT(s.ok);
	CU_ASSERT_EQUAL(s.link_mtu, 32768);
	CU_ASSERT_EQUAL(s.proved, 0);
	/* the driver's capacity must be 1.25 x the carried rate */
	relay_line(line, sizeof(line), NULL, 124);
	CU_ASSERT_EQUAL(judge("raw-transport", line, NULL, &s), 0);
	CU_ASSERT(!s.ok);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "capacity"));
	/* every failed rule of a direction; later keys override nothing, so rewrite the line */
	static const char *const bad[] = {"ab_carried=99",  "ab_dup=1",  "ab_corrupt=1",
					  "ab_reordered=1", "ab_lost=1", "ab_unproved=1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		relay_line(line, sizeof(line), NULL, 1000);
		char key[32];
		snprintf(key, sizeof(key), " %.*s=", (int)(strchr(bad[i], '=') - bad[i]), bad[i]);
		char *p = strstr(line, key);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		char *v = p + strlen(key);
		*v = *(strchr(bad[i], '=') + 1); /* 100 -> 900 / 0 -> 1 */
		CU_ASSERT_EQUAL(judge("raw-transport", line, NULL, &s), 0);
		CU_ASSERT(!s.ok);
		CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "accounting ab"));
	}
	/* an unproved frame is fine where credits come on receipt */
	relay_line(line, sizeof(line), NULL, 1000);
	*(strstr(line, " ba_unproved=") + strlen(" ba_unproved=")) = '3';
	CU_ASSERT_EQUAL(judge("transported-resource", line, NULL, &s), 0);
	CU_ASSERT(s.ok);
	/* nothing sent in one direction */
	relay_line(line, sizeof(line), NULL, 1000);
	memcpy(strstr(line, " ba_sent=100") + 9, "000", 3);
	memcpy(strstr(line, " ba_carried=100") + 12, "000", 3);
	CU_ASSERT_EQUAL(judge("raw-transport", line, NULL, &s), 0);
	CU_ASSERT(!s.ok);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "nothing was sent ba"));
	CU_ASSERT_EQUAL(judge("raw-transport", "result mode=raw", NULL, &s), 0);
	CU_ASSERT(!s.ok);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "lacks"));
	CU_ASSERT_EQUAL(judge("transported-resource", NULL, NULL, &s), 0);
	CU_ASSERT(!s.ok);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("scenario_plugins", setup, teardown);
	CU_add_test(s, "descriptors and ops", test_descriptors);
	CU_add_test(s, "interfaces per role", test_interfaces);
	CU_add_test(s, "endpoint accounting rules", test_endpoint_rules);
	CU_add_test(s, "relay accounting rules", test_relay_rules);
	CU_add_test(s, "resource interfaces (Backbone endpoints)", test_resource_interfaces);
	CU_add_test(s, "resource accounting rules", test_resource_rules);
	CU_add_test(s, "matched-policy resource variants (TCP, bitrate)", test_matched_interfaces);
	CU_add_test(s, "request/response accounting rules (scenario 3)", test_request_rules);
	return rnsc_cu_run();
}
