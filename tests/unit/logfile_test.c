/* SPDX-License-Identifier: MIT */
/*
 * The daemon's log file (src/runtime/logfile.c) against the reference's RNS.log: level
 * names for all nine levels, "[ts] [Level]" lines, no timestamp with logtimestamps = no,
 * and rotation once the file exceeds its limit: the file becomes "<file>.1" (replacing
 * an older one) and the next line starts a new file; a file whose writes fail hands over
 * to standard output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu_run.h"
#include "err.h"
#include "ctx.h"
#include "logfile.h"

static char dir[256], path[320], prev[330];

static long size_of(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static void slurp(const char *p, char *buf, size_t cap)
{
	FILE *f = fopen(p, "r");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
	buf[n] = 0;
	if (f)
		fclose(f);
}

static void test_names(void)
{
	static const char *const want[] = {"Critical", "Error", "Warning", "Notice", "Info",
					   "Verbose",  "Debug", "Pathing", "Extra"};
	for (int i = 0; i <= 8; i++)
		CU_ASSERT_STRING_EQUAL(rnsc_log_level_name(i), want[i]);
	CU_ASSERT_STRING_EQUAL(rnsc_log_level_name(9), "Unknown");
	CU_ASSERT_STRING_EQUAL(rnsc_log_level_name(-1), "Unknown");
	CU_ASSERT_EQUAL(RNSC_LOG_EXTREME, 8);
}

static void test_lines(void)
{
	rnsc_logfile lf;
	CU_ASSERT_EQUAL_FATAL(rnsc_logfile_open(&lf, path, 0), 0);
	rnsc_logfile_write(&lf, RNSC_LOG_NOTICE, "node", "hello");
	lf.timestamps = 0;
	rnsc_logfile_write(&lf, RNSC_LOG_EXTREME, NULL, "plain");
	rnsc_logfile_close(&lf);
	char buf[512];
	slurp(path, buf, sizeof(buf));
	/* "[YYYY-MM-DD HH:MM:SS] [Notice] node: hello" then "[Extra] rnsc: plain" */
	CU_ASSERT_EQUAL(buf[0], '[');
	CU_ASSERT(strlen(buf) > 22 && buf[20] == ']' && buf[5] == '-' && buf[14] == ':');
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "] [Notice] node: hello\n[Extra] rnsc: plain\n"));
	unlink(path);
	CU_ASSERT_EQUAL(rnsc_logfile_open(NULL, path, 0), RNSC_ERR_INVAL);
	char bad[400];
	snprintf(bad, sizeof(bad), "%s/no/such/dir/logfile", dir);
	CU_ASSERT_EQUAL(rnsc_logfile_open(&lf, bad, 0), RNSC_ERR_IO);
	CU_ASSERT_EQUAL(rnsc_logfile_open(&lf, NULL, 0), 0); /* stdout */
	CU_ASSERT_PTR_EQUAL(lf.f, stdout);
	rnsc_logfile_close(&lf);
}

static void test_rotation(void)
{
	rnsc_logfile lf;
	char line[101];
	memset(line, 'x', 100);
	line[100] = 0;
	CU_ASSERT_EQUAL_FATAL(rnsc_logfile_open(&lf, path, 1000), 0);
	lf.timestamps = 0;
	/* each line is 100 + "[Info] t: \n" = 111 bytes: the 10th passes 1000 bytes */
	for (int i = 0; i < 9; i++)
		rnsc_logfile_write(&lf, RNSC_LOG_INFO, "t", line);
	CU_ASSERT_EQUAL(size_of(path), 999);
	CU_ASSERT_EQUAL(size_of(prev), -1);
	rnsc_logfile_write(&lf, RNSC_LOG_INFO, "t", line);
	CU_ASSERT_EQUAL(lf.rotations, 1);
	CU_ASSERT_EQUAL(size_of(prev), 1110); /* the line that crossed stays in the old file */
	CU_ASSERT_EQUAL(size_of(path), 0);
	rnsc_logfile_write(&lf, RNSC_LOG_INFO, "t", "new");
	CU_ASSERT_EQUAL(size_of(path), 14);
	for (int i = 0; i < 10; i++)
		rnsc_logfile_write(&lf, RNSC_LOG_INFO, "t", line);
	CU_ASSERT_EQUAL(lf.rotations, 2);
	CU_ASSERT_EQUAL(size_of(prev), 14 + 9 * 111); /* the older .1 was replaced */
	rnsc_logfile_close(&lf);
	/* A file whose writes fail (a full disk): logging goes on to standard output. */
	CU_ASSERT_EQUAL_FATAL(rnsc_logfile_open(&lf, "/dev/full", 0), 0);
	rnsc_logfile_write(&lf, RNSC_LOG_INFO, "t", line);
	CU_ASSERT_PTR_EQUAL(lf.f, stdout);
	CU_ASSERT_PTR_NULL(lf.path);
	rnsc_logfile_close(&lf);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/rnsc-logfile-test.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/logfile", dir);
	snprintf(prev, sizeof(prev), "%s/logfile.1", dir);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("logfile", NULL, NULL);
	CU_add_test(s, "the reference's level names", test_names);
	CU_add_test(s, "lines with and without timestamps", test_lines);
	CU_add_test(s, "rotation beyond the limit to <file>.1", test_rotation);
	int rc = rnsc_cu_run();
	unlink(path);
	unlink(prev);
	rmdir(dir);
	return rc;
}
