/* SPDX-License-Identifier: MIT */
/*
 * A node when memory runs out: starting from a configuration (storage, identity, tables, a
 * TCP server interface), running a few loop passes and shutting down (which saves the
 * tables), with every allocation failed in turn. Each attempt must fail with an error or run
 * (no crash, no leak under the sanitizer build), and the sweep must reach the count where
 * nothing failed, so every failure point was visited.
 */
#include <CUnit/Basic.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu_run.h"
#include "node.h"
#include "plugin_host.h"

static rnsc_ctx *C;
static rnsc_plugin_host *H;
static char root[] = "/tmp/rnsc-node-oom-XXXXXX";

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &l))
		return -1;
	close(fd);
	return ntohs(a.sin_port);
}

static int setup(void)
{
	if (!mkdtemp(root) || rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &H) ||
	    rnsc_plugin_host_add_default_dirs(H))
		return 1;
	rnsc_plugin_host_scan(H);
	rnsc_ctx_set_log_level(C, RNSC_LOG_CRITICAL);
	char path[600];
	snprintf(path, sizeof path, "%s/config", root);
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f,
		"[reticulum]\n  enable_transport = yes\n  share_instance = no\n"
		"[logging]\n  loglevel = 2\n[interfaces]\n  [[Srv]]\n    type = TCPServerInterface\n"
		"    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %d\n",
		free_port());
	fclose(f);
	return 0;
}

static int teardown(void)
{
	rnsc_plugin_host_del(H);
	rnsc_ctx_del(C);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : 1;
}

static void test_oom(void)
{
	unsigned failed = 0;
	for (unsigned long n = 1; n < 4000; n++) {
		rnsc_node_options o = {.config_dir = root};
		rnsc_node *node = NULL;
		rnsc_config_error err;
		rnsc_ctx_fail_alloc_after(C, n);
		int rc = rnsc_node_new(C, H, &o, &node, &err);
		if (rc == 0) {
			for (int i = 0; i < 3; i++)
				(void)rnsc_node_run_once(node, 1);
		} else {
			CU_ASSERT(rc < 0);
			CU_ASSERT_PTR_NULL(node);
		}
		rnsc_node_del(node);
		unsigned long made = rnsc_ctx_fail_alloc_after(C, 0);
		if (rc == 0 && made < n) {
			fprintf(stderr, "node: %u allocation failure points, each survived\n",
				failed);
			CU_ASSERT(failed > 20);
			return;
		}
		failed++;
	}
	CU_FAIL("the sweep never reached a run without a failed allocation");
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("node_oom", setup, teardown);
	CU_add_test(s, "every allocation of a node's start, run and shutdown fails in turn",
		    test_oom);
	return rnsc_cu_run();
}
