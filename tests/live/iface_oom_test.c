/* SPDX-License-Identifier: MIT */
/*
 * Interface plugins and the interface host when memory runs out: every allocation an
 * interface's open (and its first loop passes) makes is failed in turn, for each stream,
 * datagram and pipe plugin. Each attempt must fail cleanly (an error code, nothing left
 * open, no leak under the sanitizer build) or succeed, and the sweep must reach the
 * allocation count where the open succeeds, so every failure point was visited.
 */
#include <CUnit/Basic.h>

#include "iface_test_util.h"

static int load(const char *so)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/plugins/iface/.libs/%s", RNSC_BUILDDIR, so);
	return rnsc_plugin_host_load_file(P, path);
}

static int suite_init(void)
{
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &P))
		return 1;
	static const char *const so[] = {"udp.so", "tcp.so", "backbone.so", "pipe.so"};
	for (size_t i = 0; i < sizeof so / sizeof *so; i++)
		if (load(so[i]) != 0)
			return 1;
	return 0;
}

/* Fails the nth allocation from here on for n = 1, 2, ... until an open succeeds with no
 * failure injected into it. Returns the number of attempts that failed. */
static unsigned sweep(const char *name, const char *text)
{
	unsigned failed = 0;
	for (unsigned long n = 1; n < 400; n++) {
		CU_ASSERT_FATAL(tu_setup() == 0);
		rnsc_config_error err = {0};
		rnsc_ctx_fail_alloc_after(C, n);
		int rc = open_text(text, &err);
		run_for(5);
		unsigned long made = rnsc_ctx_fail_alloc_after(C, 0);
		size_t open = rnsc_iface_host_count(H);
		tu_teardown();
		if (rc == 1 && made < n) {
			/* no allocation failed: every earlier n was a failure point */
			CU_ASSERT(failed > 0);
			return failed;
		}
		if (rc != 1) {
			CU_ASSERT(rc <= 0);
			CU_ASSERT_EQUAL(open, 0);
			failed++;
		}
	}
	fprintf(stderr, "%s: the open never succeeded in 400 attempts\n", name);
	CU_FAIL("sweep did not reach a clean open");
	return failed;
}

static void test_oom(void)
{
	static const struct {
		const char *name, *text;
	} cases[] = {
		{"udp", "[interfaces]\n [[U]]\n type = UDPInterface\n enabled = yes\n"
			" listen_ip = 127.0.0.1\n listen_port = 0\n forward_ip = 127.0.0.1\n"
			" forward_port = 9\n"},
		{"tcp server", "[interfaces]\n [[S]]\n type = TCPServerInterface\n enabled = yes\n"
			       " listen_ip = 127.0.0.1\n listen_port = 0\n"},
		{"tcp client", "[interfaces]\n [[T]]\n type = TCPClientInterface\n enabled = yes\n"
			       " target_host = 127.0.0.1\n target_port = 9\n"},
		{"backbone", "[interfaces]\n [[B]]\n type = BackboneInterface\n enabled = yes\n"
			     " listen_on = 127.0.0.1\n port = 0\n"},
		{"backbone client", "[interfaces]\n [[BC]]\n type = BackboneClientInterface\n"
				    " enabled = yes\n target_host = 127.0.0.1\n target_port = 9\n"},
		{"pipe", "[interfaces]\n [[P]]\n type = PipeInterface\n enabled = yes\n"
			 " command = cat\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		unsigned f = sweep(cases[i].name, cases[i].text);
		fprintf(stderr, "%s: %u allocation failure points, each failed cleanly\n",
			cases[i].name, f);
	}
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("iface_oom", suite_init, tu_suite_fini);
	CU_add_test(s, "every allocation of an interface's open fails in turn", test_oom);
	return rnsc_cu_run();
}
