/* SPDX-License-Identifier: MIT */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_TAG ".tmp."

int rnsc_store_errno(int err)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		return RNSC_ERR_NOENT;
	case EACCES:
	case EPERM:
	case EROFS:
		return RNSC_ERR_PERM;
	case ENOSPC:
	case EDQUOT:
		return RNSC_ERR_NOSPC;
	case EIO:
		return RNSC_ERR_IO;
	case ENOMEM:
		return RNSC_ERR_NOMEM;
	case ENAMETOOLONG:
		return RNSC_ERR_INVAL;
	default:
		return RNSC_ERR_SYS;
	}
}

/* Splits path into its directory ("." when none) and checks the file name is usable. */
static int split_path(const char *path, char *dir, size_t dircap, const char **base)
{
	if (!path || !*path)
		return RNSC_ERR_INVAL;
	const char *slash = strrchr(path, '/');
	const char *b = slash ? slash + 1 : path;
	if (!*b || strcmp(b, ".") == 0 || strcmp(b, "..") == 0)
		return RNSC_ERR_INVAL;
	if (!slash) {
		if (dircap < 2)
			return RNSC_ERR_INVAL;
		strcpy(dir, ".");
	} else {
		size_t n = (size_t)(slash - path);
		if (n == 0)
			n = 1; /* "/name": the directory is "/" */
		if (n >= dircap)
			return RNSC_ERR_INVAL;
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	*base = b;
	return 0;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len > (size_t)1 << 30 ? (size_t)1 << 30 : len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return rnsc_store_errno(errno);
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return rnsc_store_errno(errno);
	int rc = 0;
	/* Some filesystems refuse fsync on directories (EINVAL); the rename is then as
	 * durable as that filesystem can make it, which is not an error of ours. */
	if (fsync(fd) != 0 && errno != EINVAL)
		rc = rnsc_store_errno(errno);
	close(fd);
	return rc;
}

/* A per-process counter plus pid and clock keeps temporary names unique across
 * threads and processes without relying on mkstemp's fixed 0600 mode. */
static atomic_uint_fast64_t tmp_counter;

static int make_tmp(const char *path, size_t dirlen_with_slash, const char *base, unsigned mode,
		    char *tmp, size_t cap)
{
	for (int attempt = 0; attempt < 64; attempt++) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t c = atomic_fetch_add(&tmp_counter, 1);
		int n = snprintf(tmp, cap, "%.*s.%s" TMP_TAG "%ld.%llu.%lx", (int)dirlen_with_slash,
				 path, base, (long)getpid(), (unsigned long long)c,
				 (unsigned long)ts.tv_nsec);
		if (n < 0 || (size_t)n >= cap)
			return RNSC_ERR_INVAL;
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST && errno != EINTR)
			return rnsc_store_errno(errno);
	}
	return RNSC_ERR_SYS;
}

int rnsc_store_write_atomic(const char *path, const void *data, size_t len, unsigned mode)
{
	char dir[PATH_MAX];
	char tmp[PATH_MAX];
	const char *base;
	if (!data && len)
		return RNSC_ERR_INVAL;
	int rc = split_path(path, dir, sizeof(dir), &base);
	if (rc)
		return rc;
	int fd = make_tmp(path, (size_t)(base - path), base, mode, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	rc = write_all(fd, data, len);
	/* fsync before rename: otherwise the rename can reach the disk before the data and
	 * a crash leaves an empty or partial file under the real name. */
	if (rc == 0 && fsync(fd) != 0)
		rc = rnsc_store_errno(errno);
	if (close(fd) != 0 && rc == 0 && errno != EINTR)
		rc = rnsc_store_errno(errno);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = rnsc_store_errno(errno);
	if (rc != 0) {
		unlink(tmp);
		return rc;
	}
	return fsync_dir(dir);
}

int rnsc_store_read_file(rnsc_ctx *ctx, const char *path, size_t max, uint8_t **out,
			 size_t *out_len)
{
	if (!out || !out_len)
		return RNSC_ERR_INVAL;
	*out = NULL;
	*out_len = 0;
	if (!path || !*path || max > RNSC_STORE_MAX_READ)
		return RNSC_ERR_INVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rnsc_store_errno(errno);
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int rc = rnsc_store_errno(errno);
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return RNSC_ERR_INVAL;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return RNSC_ERR_TOOBIG;
	}
	size_t want = (size_t)st.st_size;
	/* Read to EOF rather than trusting fstat: a spare byte past the expected size
	 * detects growth, and the buffer grows (up to max + 1) if a writer appended. */
	size_t cap = want + 2;
	uint8_t *buf = rnsc_alloc(ctx, cap);
	size_t got = 0;
	int rc = buf ? 0 : RNSC_ERR_NOMEM;
	while (rc == 0) {
		if (got + 1 >= cap) {
			if (cap >= max + 2) {
				rc = RNSC_ERR_TOOBIG;
				break;
			}
			size_t ncap = cap * 2 > max + 2 ? max + 2 : cap * 2;
			uint8_t *nb = rnsc_alloc(ctx, ncap);
			if (!nb) {
				rc = RNSC_ERR_NOMEM;
				break;
			}
			memcpy(nb, buf, got);
			rnsc_free(ctx, buf);
			buf = nb;
			cap = ncap;
		}
		ssize_t n = read(fd, buf + got, cap - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = rnsc_store_errno(errno);
			break;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (rc == 0 && got > max)
		rc = RNSC_ERR_TOOBIG;
	/* Fewer bytes than fstat reported: the file was cut short under us (a writer
	 * that truncates in place, a failing disk). A prefix is never returned. */
	if (rc == 0 && got < want)
		rc = RNSC_ERR_TRUNCATED;
	if (rc != 0) {
		rnsc_free(ctx, buf);
		return rc;
	}
	buf[got] = '\0';
	*out = buf;
	*out_len = got;
	return 0;
}

int rnsc_store_read_exact(const char *path, void *buf, size_t len)
{
	if (!path || (!buf && len))
		return RNSC_ERR_INVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rnsc_store_errno(errno);
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) != 0)
		rc = rnsc_store_errno(errno);
	else if (!S_ISREG(st.st_mode))
		rc = RNSC_ERR_INVAL;
	size_t got = 0;
	while (rc == 0 && got < len) {
		ssize_t n = read(fd, (uint8_t *)buf + got, len - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = rnsc_store_errno(errno);
			break;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (rc == 0 && got < len)
		rc = RNSC_ERR_TRUNCATED;
	if (rc == 0) {
		uint8_t extra;
		ssize_t n;
		do
			n = read(fd, &extra, 1);
		while (n < 0 && errno == EINTR);
		if (n > 0)
			rc = RNSC_ERR_TOOBIG;
		else if (n < 0)
			rc = rnsc_store_errno(errno);
	}
	close(fd);
	return rc;
}

int rnsc_store_cleanup_temps(const char *path)
{
	char dir[PATH_MAX];
	char prefix[NAME_MAX + 16];
	const char *base;
	int rc = split_path(path, dir, sizeof(dir), &base);
	if (rc)
		return rc;
	int n = snprintf(prefix, sizeof(prefix), ".%s" TMP_TAG, base);
	if (n < 0 || (size_t)n >= sizeof(prefix))
		return RNSC_ERR_INVAL;
	DIR *d = opendir(dir);
	if (!d)
		return rnsc_store_errno(errno);
	int removed = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, prefix, (size_t)n) != 0)
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

int rnsc_store_mkdirs(const char *dir)
{
	char buf[PATH_MAX];
	if (!dir || !*dir)
		return RNSC_ERR_INVAL;
	size_t n = strlen(dir);
	if (n >= sizeof(buf))
		return RNSC_ERR_INVAL;
	memcpy(buf, dir, n + 1);
	/* Each prefix that ends just before a '/' (skipping repeated slashes), then the
	 * whole path. An existing directory is fine even where mkdir itself would be
	 * refused (no write permission on "/", a read-only parent). */
	for (size_t i = 1; i <= n; i++) {
		if (i < n && (buf[i] != '/' || buf[i - 1] == '/'))
			continue;
		char saved = buf[i];
		buf[i] = '\0';
		if (mkdir(buf, 0777) != 0) {
			int e = errno;
			struct stat st;
			if (stat(buf, &st) == 0) {
				if (!S_ISDIR(st.st_mode))
					return RNSC_ERR_INVAL;
			} else {
				return rnsc_store_errno(e == EEXIST ? errno : e);
			}
		}
		buf[i] = saved;
	}
	return 0;
}
