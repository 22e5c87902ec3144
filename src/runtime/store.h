/* SPDX-License-Identifier: MIT */
/*
 * Persistence helpers: crash-safe whole-file replacement and bounded reads.
 *
 * rnsc_store_write_atomic() gives the guarantee every persisted table needs
 * (known destinations, path tables, identities, ratchets): after a crash or
 * SIGKILL at any moment, the file holds either the complete old content or
 * the complete new content, never a mix or a prefix. It writes a temporary
 * file in the same directory (rename is only atomic within one filesystem),
 * fsyncs it, renames it over the target and fsyncs the directory so the
 * rename itself survives a power loss.
 *
 * A crash between creating the temporary file and the rename leaves a
 * ".<name>.tmp.*" file behind; rnsc_store_cleanup_temps() removes those at
 * startup.
 *
 * Threading: every function is reentrant and may be called from any thread.
 * Two writers replacing the same path concurrently each succeed atomically;
 * the last rename wins. Errors are mapped from errno by rnsc_store_errno().
 */
#ifndef RNSC_STORE_H
#define RNSC_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctx.h"

/* Upper bound for rnsc_store_read_file()'s max argument (1 GiB). */
#define RNSC_STORE_MAX_READ ((size_t)1 << 30)

/*
 * Replaces path with data[0..len) atomically. mode is passed to open(2) for
 * the new file, so the process umask applies as it does for any new file
 * (use 0600 for secrets). Returns 0, RNSC_ERR_INVAL (NULL path, empty file
 * name or a path too long for the temporary name), RNSC_ERR_NOENT (the
 * directory does not exist), RNSC_ERR_PERM, RNSC_ERR_NOSPC, RNSC_ERR_IO or
 * RNSC_ERR_SYS. On failure the target is untouched and no temporary file is
 * left behind.
 */
RNSC_API int rnsc_store_write_atomic(const char *path, const void *data, size_t len, unsigned mode);

/*
 * Reads a whole regular file of at most max bytes (max <= RNSC_STORE_MAX_READ).
 * *out is allocated through ctx (NULL ctx: malloc), NUL-terminated one byte
 * past *out_len for the convenience of text parsers, and owned by the caller
 * (free with rnsc_free(ctx, *out)). Returns 0, RNSC_ERR_INVAL (bad
 * arguments, or the path is not a regular file), RNSC_ERR_NOENT,
 * RNSC_ERR_PERM, RNSC_ERR_TOOBIG (the file is larger than max, or grew past
 * it while being read), RNSC_ERR_TRUNCATED (the file shrank while being
 * read: fewer bytes arrived than fstat promised), RNSC_ERR_NOMEM,
 * RNSC_ERR_IO or RNSC_ERR_SYS. *out is NULL on failure.
 */
RNSC_API int rnsc_store_read_file(rnsc_ctx *ctx, const char *path, size_t max, uint8_t **out,
				  size_t *out_len);

/*
 * Reads a file that must be exactly len bytes long (fixed-size records such as
 * a 64-byte identity key). Returns 0, RNSC_ERR_TRUNCATED when it is shorter,
 * RNSC_ERR_TOOBIG when it is longer, or the errors of rnsc_store_read_file().
 * buf is left in an unspecified state on failure.
 */
RNSC_API int rnsc_store_read_exact(const char *path, void *buf, size_t len);

/*
 * Removes temporary files an interrupted rnsc_store_write_atomic(path, ...)
 * left next to path. Only call it when no other process or thread is writing
 * that path. Returns the number of files removed, RNSC_ERR_INVAL,
 * RNSC_ERR_NOENT (no such directory), RNSC_ERR_PERM or RNSC_ERR_SYS.
 */
RNSC_API int rnsc_store_cleanup_temps(const char *path);

/*
 * Creates dir and any missing parents (like mkdir -p) with mode 0777 minus the
 * umask, as the reference's os.makedirs() does. Returns 0 (also when it
 * already exists as a directory), RNSC_ERR_INVAL (empty path, or a component
 * exists and is not a directory), RNSC_ERR_PERM, RNSC_ERR_NOSPC or
 * RNSC_ERR_SYS.
 */
RNSC_API int rnsc_store_mkdirs(const char *dir);

/* Maps an errno value to the rnsc_err used by this module. */
RNSC_API int rnsc_store_errno(int err);

#endif
