/* SPDX-License-Identifier: MIT */
/*
 * Running a CUnit registry so the process exit status is the failure count.
 * CUnit's basic runner alone returns success even when assertions fail. The
 * count is clamped below 77 because automake reads 77 as "skipped" and 99 as a
 * hard error; a test binary here must never be able to report a skip.
 */
#ifndef RNSC_CU_RUN_H
#define RNSC_CU_RUN_H

#include <CUnit/Basic.h>

static inline int rnsc_cu_run(void)
{
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed() +
			    CU_get_number_of_suites_failed();
	unsigned ran = CU_get_number_of_tests_run();
	CU_cleanup_registry();
	if (ran == 0)
		return 1; /* a runner that executed nothing has failed */
	return failures > 76 ? 76 : (int)failures;
}

#endif
