/* SPDX-License-Identifier: MIT */
/*
 * Splitting a command line into an argument vector the way the reference's
 * PipeInterface does it (Python's shlex.split(command): POSIX mode, whitespace
 * splitting, no comments), so a config's `command` runs the same program with
 * the same arguments under rnsc and under the reference. No shell is involved.
 *
 * Rules (Python 3.11 shlex, posix=True, whitespace_split=True, commenters=""):
 *  - space, tab, CR and LF separate arguments;
 *  - '...' keeps everything literally; "..." keeps everything except that a
 *    backslash escapes a following '"' or '\' (before any other character the
 *    backslash stays);
 *  - outside quotes a backslash takes the next character literally;
 *  - quoted and unquoted pieces next to each other make one argument, and ""
 *    or '' alone is an empty argument;
 *  - an unterminated quote or a trailing backslash is an error (Python raises
 *    ValueError: "No closing quotation" / "No escaped character").
 *
 * Pure function, no allocation, no global state; any thread.
 */
#ifndef RNSC_PLUGIN_SHLEX_H
#define RNSC_PLUGIN_SHLEX_H

#include <stddef.h>

/*
 * Splits the NUL-terminated string s. The arguments are written as NUL-
 * terminated strings into buf (cap bytes; strlen(s) + 1 always suffices, as
 * no argument is longer than the text it came from plus its terminator), and
 * argv[0..argc-1] point into buf, followed by argv[argc] = NULL (so argv needs
 * max_args + 1 slots).
 * Returns argc (0 for a blank line), or
 *   RNSC_ERR_INVAL      s, buf or argv NULL,
 *   RNSC_ERR_MALFORMED  unterminated quote or trailing backslash (*why names it),
 *   RNSC_ERR_BUFSIZE    buf too small,
 *   RNSC_ERR_TOOBIG     more than max_args arguments.
 * why (may be NULL) receives a static message on RNSC_ERR_MALFORMED.
 */
int rnsc_shlex_split(const char *s, char *buf, size_t cap, char **argv, size_t max_args,
		     const char **why);

#endif
