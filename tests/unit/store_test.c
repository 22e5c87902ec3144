/* SPDX-License-Identifier: MIT */
/*
 * Tests of src/runtime/store.c: atomic replacement, bounded reads, temp-file
 * cleanup, mkdir -p, and a crash test that SIGKILLs a child process at random
 * moments while it replaces a file over and over, then checks the file always
 * holds one complete version.
 */
#define _GNU_SOURCE /* nftw, mkdtemp */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cu_run.h"
#include "store.h"
#include "test_rng.h"

static char dir[512];

/* Scratch space inside the build tree (a real disk, so fsync means something),
 * falling back to $TMPDIR. */
static int suite_init(void)
{
	snprintf(dir, sizeof(dir), "./store-test-XXXXXX");
	if (mkdtemp(dir))
		return 0;
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/store-test-XXXXXX", t && *t ? t : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int suite_clean(void)
{
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void path_of(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", dir, name);
}

/* Temporary files rnsc_store_write_atomic would leave next to `name`. */
static int count_temps(const char *name)
{
	char prefix[300];
	int n = 0, plen = snprintf(prefix, sizeof(prefix), ".%s.tmp.", name);
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		n += strncmp(e->d_name, prefix, (size_t)plen) == 0;
	closedir(d);
	return n;
}

static void test_write_read(void)
{
	char p[600];
	path_of(p, sizeof(p), "a.bin");
	uint8_t *buf;
	size_t len;
	CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, p, 100, &buf, &len), RNSC_ERR_NOENT);
	CU_ASSERT_PTR_NULL(buf);
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(p, "hello", 5, 0600), 0);
	CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, p, 100, &buf, &len), 0);
	CU_ASSERT_EQUAL(len, 5);
	CU_ASSERT_EQUAL(memcmp(buf, "hello", 6), 0); /* NUL-terminated */
	free(buf);
	/* replace with something longer, then shorter */
	uint8_t big[70000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 31 + 7);
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(p, big, sizeof(big), 0600), 0);
	CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, p, sizeof(big), &buf, &len), 0);
	CU_ASSERT_EQUAL(len, sizeof(big));
	CU_ASSERT_EQUAL(memcmp(buf, big, sizeof(big)), 0);
	free(buf);
	CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, p, sizeof(big) - 1, &buf, &len),
			RNSC_ERR_TOOBIG);
	CU_ASSERT_PTR_NULL(buf);
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(p, NULL, 0, 0600), 0);
	CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, p, 0, &buf, &len), 0);
	CU_ASSERT_EQUAL(len, 0);
	CU_ASSERT_EQUAL(buf[0], 0);
	free(buf);
	CU_ASSERT_EQUAL(count_temps("a.bin"), 0);
	/* the mode goes through open(2), so the umask applies */
	mode_t old = umask(022);
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(p, "x", 1, 0666), 0);
	struct stat st;
	CU_ASSERT_EQUAL(stat(p, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0644);
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(p, "x", 1, 0600), 0);
	CU_ASSERT_EQUAL(stat(p, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	umask(old);
	/* a relative name without a folder works in the current folder */
	char cwd[600];
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof(cwd)));
	CU_ASSERT_EQUAL(chdir(dir), 0);
	CU_ASSERT_EQUAL(rnsc_store_write_atomic("rel.bin", "r", 1, 0600), 0);
	CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, "rel.bin", 10, &buf, &len), 0);
	free(buf);
	CU_ASSERT_EQUAL(chdir(cwd), 0);
}

static void test_errors(void)
{
	char p[600];
	uint8_t *buf;
	size_t len;
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(NULL, "x", 1, 0600), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_store_write_atomic("", "x", 1, 0600), RNSC_ERR_INVAL);
	path_of(p, sizeof(p), "sub/");
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(p, "x", 1, 0600), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_store_write_atomic("x", NULL, 3, 0600), RNSC_ERR_INVAL);
	path_of(p, sizeof(p), "no/such/dir/f");
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(p, "x", 1, 0600), RNSC_ERR_NOENT);
	/* a folder under the target name cannot be replaced, and no temp file stays */
	path_of(p, sizeof(p), "adir");
	CU_ASSERT_EQUAL(mkdir(p, 0755), 0);
	CU_ASSERT(rnsc_store_write_atomic(p, "x", 1, 0600) < 0);
	CU_ASSERT_EQUAL(count_temps("adir"), 0);
	CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, p, 10, &buf, &len), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, p, RNSC_STORE_MAX_READ + 1, &buf, &len),
			RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, NULL, 10, &buf, &len), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, p, 10, NULL, &len), RNSC_ERR_INVAL);
	if (geteuid() != 0) {
		/* root ignores permission bits, so only meaningful for other users */
		path_of(p, sizeof(p), "ro");
		CU_ASSERT_EQUAL(mkdir(p, 0555), 0);
		path_of(p, sizeof(p), "ro/f");
		CU_ASSERT_EQUAL(rnsc_store_write_atomic(p, "x", 1, 0600), RNSC_ERR_PERM);
	}
	CU_ASSERT_EQUAL(rnsc_store_errno(ENOSPC), RNSC_ERR_NOSPC);
	CU_ASSERT_EQUAL(rnsc_store_errno(EDQUOT), RNSC_ERR_NOSPC);
	CU_ASSERT_EQUAL(rnsc_store_errno(EROFS), RNSC_ERR_PERM);
	CU_ASSERT_EQUAL(rnsc_store_errno(EIO), RNSC_ERR_IO);
	CU_ASSERT_EQUAL(rnsc_store_errno(ENOTDIR), RNSC_ERR_NOENT);
	CU_ASSERT_EQUAL(rnsc_store_errno(EBUSY), RNSC_ERR_SYS);
	CU_ASSERT_EQUAL(rnsc_store_errno(ENOMEM), RNSC_ERR_NOMEM);
	CU_ASSERT_EQUAL(rnsc_store_errno(ENAMETOOLONG), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_store_errno(EACCES), RNSC_ERR_PERM);
	/* names too long for a temporary name or for the system */
	char longp[5000];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(longp, "x", 1, 0600), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_store_mkdirs(longp), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_store_cleanup_temps(longp), RNSC_ERR_INVAL);
	char longn[600];
	snprintf(longn, sizeof(longn), "%s/", dir);
	memset(longn + strlen(longn), 'b', 300);
	longn[strlen(dir) + 1 + 300] = '\0';
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(longn, "x", 1, 0600), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_store_read_exact(longn, longp, 1), RNSC_ERR_INVAL);
	/* allocation failure while reading */
	rnsc_ctx *ctx;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&ctx), 0);
	path_of(p, sizeof(p), "a.bin");
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(p, "abc", 3, 0600), 0);
	rnsc_ctx_fail_alloc_after(ctx, 1);
	CU_ASSERT_EQUAL(rnsc_store_read_file(ctx, p, 10, &buf, &len), RNSC_ERR_NOMEM);
	rnsc_ctx_fail_alloc_after(ctx, 0);
	CU_ASSERT_EQUAL(rnsc_store_read_file(ctx, p, 10, &buf, &len), 0);
	rnsc_free(ctx, buf);
	rnsc_ctx_del(ctx);
}

/* Files whose size fstat reports wrongly: procfs says 0 and delivers more (the read
 * grows to EOF), sysfs says 4096 and delivers less (a short, torn read). */
static void test_size_lies(void)
{
	uint8_t *buf;
	size_t len;
	CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, "/proc/self/status", 1 << 16, &buf, &len), 0);
	CU_ASSERT(len > 0);
	CU_ASSERT_PTR_NOT_NULL(strstr((char *)buf, "Name:"));
	free(buf);
	CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, "/proc/self/status", 8, &buf, &len),
			RNSC_ERR_TOOBIG);
	const char *sysf[] = {"/sys/kernel/mm/transparent_hugepage/enabled",
			      "/sys/devices/system/cpu/online", "/sys/kernel/uevent_seqnum"};
	struct stat st;
	for (size_t i = 0; i < 3; i++) {
		if (stat(sysf[i], &st) != 0 || st.st_size != 4096)
			continue;
		CU_ASSERT_EQUAL(rnsc_store_read_file(NULL, sysf[i], 8192, &buf, &len),
				RNSC_ERR_TRUNCATED);
		return;
	}
	fprintf(stderr, "\n  (no sysfs file to test a short read with; skipped)\n");
}

static void test_read_exact(void)
{
	char p[600];
	path_of(p, sizeof(p), "key");
	uint8_t k[64], got[64];
	for (int i = 0; i < 64; i++)
		k[i] = (uint8_t)i;
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(p, k, 64, 0600), 0);
	CU_ASSERT_EQUAL(rnsc_store_read_exact(p, got, 64), 0);
	CU_ASSERT_EQUAL(memcmp(k, got, 64), 0);
	CU_ASSERT_EQUAL(rnsc_store_read_exact(p, got, 32), RNSC_ERR_TOOBIG);
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(p, k, 63, 0600), 0);
	CU_ASSERT_EQUAL(rnsc_store_read_exact(p, got, 64), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(rnsc_store_read_exact(dir, got, 64), RNSC_ERR_INVAL);
	path_of(p, sizeof(p), "nokey");
	CU_ASSERT_EQUAL(rnsc_store_read_exact(p, got, 64), RNSC_ERR_NOENT);
	CU_ASSERT_EQUAL(rnsc_store_read_exact(NULL, got, 64), RNSC_ERR_INVAL);
}

static void test_cleanup_and_mkdirs(void)
{
	char p[600], t[700];
	path_of(p, sizeof(p), "table");
	CU_ASSERT_EQUAL(rnsc_store_write_atomic(p, "t", 1, 0600), 0);
	const char *junk[] = {".table.tmp.1.2.3", ".table.tmp.x", ".tablex.tmp.1", "table.tmp.1",
			      ".other.tmp.1"};
	for (size_t i = 0; i < 5; i++) {
		snprintf(t, sizeof(t), "%s/%s", dir, junk[i]);
		int fd = open(t, O_CREAT | O_WRONLY, 0600);
		CU_ASSERT(fd >= 0);
		close(fd);
	}
	CU_ASSERT_EQUAL(rnsc_store_cleanup_temps(p), 2);
	CU_ASSERT_EQUAL(rnsc_store_cleanup_temps(p), 0);
	CU_ASSERT_EQUAL(access(p, F_OK), 0);
	snprintf(t, sizeof(t), "%s/.tablex.tmp.1", dir);
	CU_ASSERT_EQUAL(access(t, F_OK), 0);
	path_of(p, sizeof(p), "nodir/table");
	CU_ASSERT_EQUAL(rnsc_store_cleanup_temps(p), RNSC_ERR_NOENT);
	CU_ASSERT_EQUAL(rnsc_store_cleanup_temps(""), RNSC_ERR_INVAL);

	path_of(p, sizeof(p), "m/n//o/");
	CU_ASSERT_EQUAL(rnsc_store_mkdirs(p), 0);
	CU_ASSERT_EQUAL(rnsc_store_mkdirs(p), 0);
	struct stat st;
	path_of(p, sizeof(p), "m/n/o");
	CU_ASSERT(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
	path_of(p, sizeof(p), "table/sub");
	CU_ASSERT_EQUAL(rnsc_store_mkdirs(p), RNSC_ERR_INVAL); /* a file is in the way */
	CU_ASSERT_EQUAL(rnsc_store_mkdirs(""), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_store_mkdirs("/"), 0);
}

/* ---- the crash test ----------------------------------------------------------------- */

#define MAGIC "RNSCGEN1"

static size_t version_len(uint64_t gen)
{
	return 64 + (size_t)((gen * 7919) % 60000);
}

/* Version gen of the file: a header (magic, gen, length) and pseudo-random bytes, so a
 * mix of two versions or a prefix of one is always detected. */
static void make_version(uint64_t gen, uint8_t *buf)
{
	size_t len = version_len(gen);
	memcpy(buf, MAGIC, 8);
	memcpy(buf + 8, &gen, 8);
	uint64_t l = len;
	memcpy(buf + 16, &l, 8);
	uint64_t x = gen * 0x9e3779b97f4a7c15ULL + 1;
	for (size_t i = 24; i < len; i++)
		buf[i] = (uint8_t)test_xorshift64(&x);
}

/* The generation the file holds, or -1 when it is not exactly one complete version. */
static int64_t check_version(const uint8_t *p, size_t n, uint8_t *scratch)
{
	uint64_t gen;
	if (n < 24 || memcmp(p, MAGIC, 8) != 0)
		return -1;
	memcpy(&gen, p + 8, 8);
	if (version_len(gen) != n)
		return -1;
	make_version(gen, scratch);
	return memcmp(p, scratch, n) == 0 ? (int64_t)gen : -1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_sigkill_during_writes(void)
{
	char p[600];
	path_of(p, sizeof(p), "crash.bin");
	uint8_t *ver = malloc(64 + 60000), *scratch = malloc(64 + 60000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ver);
	CU_ASSERT_PTR_NOT_NULL_FATAL(scratch);
	make_version(0, ver);
	CU_ASSERT_EQUAL_FATAL(rnsc_store_write_atomic(p, ver, version_len(0), 0600), 0);
	uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 16;
	fprintf(stderr, "\n  kill test seed %llu", (unsigned long long)seed);
	int64_t last = 0;
	unsigned iters = 0, torn = 0, advanced = 0, bad = 0, not_killed = 0;
	double t0 = now_s();
	while (iters < 60 || (iters < 2000 && now_s() - t0 < 2.0)) {
		int go[2];
		CU_ASSERT_EQUAL_FATAL(pipe(go), 0);
		pid_t pid = fork();
		CU_ASSERT_FATAL(pid >= 0);
		if (pid == 0) {
			close(go[0]);
			/* Tell the parent the loop is starting, then replace forever. */
			if (write(go[1], "g", 1) != 1)
				_exit(2);
			for (uint64_t g = (uint64_t)last + 1;; g++) {
				make_version(g, ver);
				if (rnsc_store_write_atomic(p, ver, version_len(g), 0600) != 0)
					_exit(3);
			}
		}
		close(go[1]);
		char c;
		CU_ASSERT_EQUAL(read(go[0], &c, 1), 1);
		close(go[0]);
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		struct timespec d = {0, (long)((seed >> 33) % 3000000)}; /* 0..3 ms */
		nanosleep(&d, NULL);
		kill(pid, SIGKILL);
		int status;
		CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
		if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
			not_killed++;
		uint8_t *buf;
		size_t len;
		int rc = rnsc_store_read_file(NULL, p, 1 << 20, &buf, &len);
		int64_t g = rc == 0 ? check_version(buf, len, scratch) : -1;
		if (rc == 0)
			free(buf);
		/* Old or new, complete, and never going backwards. */
		if (g < 0 || g < last) {
			bad++;
			fprintf(stderr,
				"\n  iteration %u: file is not one complete version (rc %d, gen %lld)",
				iters, rc, (long long)g);
		} else {
			advanced += g > last;
			last = g;
		}
		int removed = rnsc_store_cleanup_temps(p);
		CU_ASSERT(removed >= 0);
		torn += removed > 0; /* killed between creating the temporary file and the rename */
		iters++;
	}
	fprintf(stderr,
		"\n  %u SIGKILLs in %.2f s: %u mid-write (temporary file left), file "
		"advanced %u times, last generation %lld, %u bad\n",
		iters, now_s() - t0, torn, advanced, (long long)last, bad);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(not_killed, 0);
	CU_ASSERT(torn > 0);     /* the kills really landed inside writes */
	CU_ASSERT(advanced > 0); /* and the writer really made progress */
	CU_ASSERT_EQUAL(count_temps("crash.bin"), 0);
	free(ver);
	free(scratch);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("store", suite_init, suite_clean);
	CU_add_test(s, "atomic write and read back", test_write_read);
	CU_add_test(s, "errors", test_errors);
	CU_add_test(s, "files whose size lies", test_size_lies);
	CU_add_test(s, "fixed-size reads", test_read_exact);
	CU_add_test(s, "temp cleanup and mkdir -p", test_cleanup_and_mkdirs);
	CU_add_test(s, "SIGKILL at random moments during writes", test_sigkill_during_writes);
	return rnsc_cu_run();
}
