/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the PipeInterface command splitter (plugins/iface/shlex.c).
 *
 * Input: the command text (cut at the first NUL). Checked beyond "no crash, no UB":
 *   - with the documented buffer size (strlen + 1) the split never reports
 *     RNSC_ERR_BUFSIZE, and every argument lies inside the buffer;
 *   - argv is NULL-terminated and no argument is longer than the input;
 *   - re-quoting the arguments ('...' with ' written as '\'') and splitting again
 *     gives the same arguments;
 *   - with a buffer one byte too small for the result, the split fails cleanly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "shlex.h"

#define MAXA 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	size_t len = strlen(s), cap = len + 1;
	char *buf = malloc(cap);
	char *argv[MAXA + 1];
	const char *why = NULL;
	int n = rnsc_shlex_split(s, buf, cap, argv, MAXA, &why);
	if (n == RNSC_ERR_BUFSIZE || n == RNSC_ERR_INVAL)
		abort();
	if (n == RNSC_ERR_MALFORMED && !why)
		abort();
	if (n >= 0) {
		if (argv[n] != NULL)
			abort();
		size_t used = 0;
		for (int k = 0; k < n; k++) {
			if (argv[k] < buf || argv[k] >= buf + cap)
				abort();
			size_t al = strlen(argv[k]);
			if (al > len || argv[k] + al >= buf + cap)
				abort();
			used = (size_t)(argv[k] - buf) + al + 1;
		}
		/* Round trip through single quotes. */
		size_t qcap = 4 * len + 3 * (size_t)n + 2;
		char *q = malloc(qcap), *buf2 = malloc(qcap);
		char *argv2[MAXA + 1];
		size_t o = 0;
		for (int k = 0; k < n; k++) {
			q[o++] = '\'';
			for (const char *c = argv[k]; *c; c++) {
				if (*c == '\'') {
					memcpy(q + o, "'\\''", 4);
					o += 4;
				} else {
					q[o++] = *c;
				}
			}
			q[o++] = '\'';
			q[o++] = ' ';
		}
		q[o] = 0;
		int n2 = rnsc_shlex_split(q, buf2, qcap, argv2, MAXA, NULL);
		if (n2 != n)
			abort();
		for (int k = 0; k < n; k++)
			if (strcmp(argv[k], argv2[k]) != 0)
				abort();
		/* One byte short of what the result needs. */
		if (used > 0) {
			char *tight = malloc(used - 1 ? used - 1 : 1);
			int n3 = rnsc_shlex_split(s, tight, used - 1, argv2, MAXA, NULL);
			if (n3 != RNSC_ERR_BUFSIZE)
				abort();
			free(tight);
		}
		free(q);
		free(buf2);
	}
	free(buf);
	free(s);
	return 0;
}
