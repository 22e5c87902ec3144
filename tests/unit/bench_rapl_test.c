/* SPDX-License-Identifier: MIT */
/* bench/runner/rapl.c on fake powercap trees: which zones count, joules across a wrap, and
 * the reasons given when energy cannot be measured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu_run.h"
#include "rapl.h"

static char root[] = "/tmp/rnsc-rapl-test.XXXXXX";

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	char *slash = strrchr(p, '/');
	*slash = '\0';
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	*slash = '/';
	FILE *f = fopen(p, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void t_no_interface(void)
{
	rnsc_rapl r;
	setenv("RNSC_POWERCAP_ROOT", "/nonexistent/powercap", 1);
	CU_ASSERT_EQUAL(rnsc_rapl_open(&r), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "no RAPL powercap interface"));
	rnsc_rapl_mark a, b;
	rnsc_rapl_mark_now(&r, &a);
	rnsc_rapl_mark_now(&r, &b);
	CU_ASSERT_FALSE(a.ok);
	CU_ASSERT(rnsc_rapl_joules(&r, &a, &b) < 0);
}

static void t_packages(void)
{
	put("intel-rapl:0/name", "package-0\n");
	put("intel-rapl:0/energy_uj", "1000000\n");
	put("intel-rapl:0/max_energy_range_uj", "5000000\n");
	put("intel-rapl:0:0/name", "core\n"); /* a sub-zone: not counted */
	put("intel-rapl:0:0/energy_uj", "7\n");
	put("intel-rapl:1/name", "package-1\n");
	put("intel-rapl:1/energy_uj", "2000000\n");
	put("intel-rapl:1/max_energy_range_uj", "9000000\n");
	put("intel-rapl:2/name", "psys\n"); /* not a package */
	put("intel-rapl:2/energy_uj", "5\n");
	setenv("RNSC_POWERCAP_ROOT", root, 1);
	rnsc_rapl r;
	CU_ASSERT_EQUAL_FATAL(rnsc_rapl_open(&r), 2);
	rnsc_rapl_mark a, b;
	rnsc_rapl_mark_now(&r, &a);
	CU_ASSERT_TRUE(a.ok);
	/* package-0 wraps: 1.0 J -> 5.0 J range -> 0.5 J: 4.5 J; package-1: 2.0 -> 3.25 J */
	put("intel-rapl:0/energy_uj", "500000\n");
	put("intel-rapl:1/energy_uj", "3250000\n");
	rnsc_rapl_mark_now(&r, &b);
	double j = rnsc_rapl_joules(&r, &a, &b);
	CU_ASSERT(j > 5.7499 && j < 5.7501);
	/* a counter that went backwards with no known range is unknown, never guessed */
	r.range_uj[0] = 0;
	CU_ASSERT(rnsc_rapl_joules(&r, &a, &b) < 0);
	/* a counter that cannot be read fails the mark */
	char cmd[PATH_MAX + 32];
	snprintf(cmd, sizeof(cmd),
		 "rm -f '%s/intel-rapl:1/energy_uj'; mkdir '%s/intel-rapl:1/energy_uj'", root,
		 root);
	CU_ASSERT_EQUAL(system(cmd), 0);
	rnsc_rapl_mark_now(&r, &b);
	CU_ASSERT_FALSE(b.ok);
	CU_ASSERT(rnsc_rapl_joules(&r, &a, &b) < 0);
	/* only unreadable package zones: the reason says so */
	CU_ASSERT_EQUAL(rnsc_rapl_open(&r), 1);
	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s/intel-rapl:0/energy_uj'; mkdir '%s/intel-rapl:0/energy_uj'", root,
		 root);
	CU_ASSERT_EQUAL(system(cmd), 0);
	CU_ASSERT_EQUAL(rnsc_rapl_open(&r), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "not readable"));
	/* a tree without package zones */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/intel-rapl:0' '%s/intel-rapl:1'", root, root);
	CU_ASSERT_EQUAL(system(cmd), 0);
	CU_ASSERT_EQUAL(rnsc_rapl_open(&r), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "no RAPL package zone"));
}

int main(void)
{
	if (!mkdtemp(root))
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("rapl", NULL, NULL);
	CU_add_test(s, "no powercap interface", t_no_interface);
	CU_add_test(s, "package zones, wrap, unreadable", t_packages);
	int rc = rnsc_cu_run();
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
