/* SPDX-License-Identifier: MIT */
#include "shlex.h"

#include "err.h"

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int rnsc_shlex_split(const char *s, char *buf, size_t cap, char **argv, size_t max_args,
		     const char **why)
{
	if (!s || !buf || !argv)
		return RNSC_ERR_INVAL;
	size_t argc = 0, o = 0;
	const char *p = s;
	for (;;) {
		while (*p && is_ws(*p))
			p++;
		if (!*p)
			break;
		/* One argument: runs until unquoted whitespace or the end. */
		size_t start = o;
		for (;;) {
			char c = *p;
			if (!c || is_ws(c))
				break;
			p++;
			if (c == '\'' || c == '"') {
				for (;;) {
					char q = *p;
					if (!q) {
						if (why)
							*why = "No closing quotation";
						return RNSC_ERR_MALFORMED;
					}
					p++;
					if (q == c)
						break;
					if (c == '"' && q == '\\') {
						char n = *p;
						if (!n) {
							if (why)
								*why = "No escaped character";
							return RNSC_ERR_MALFORMED;
						}
						/* Inside "..." the backslash only escapes " and \. */
						if (n != '"' && n != '\\') {
							if (o >= cap)
								return RNSC_ERR_BUFSIZE;
							buf[o++] = '\\';
						}
						q = n;
						p++;
					}
					if (o >= cap)
						return RNSC_ERR_BUFSIZE;
					buf[o++] = q;
				}
				continue;
			}
			if (c == '\\') {
				if (!*p) {
					if (why)
						*why = "No escaped character";
					return RNSC_ERR_MALFORMED;
				}
				c = *p++;
			}
			if (o >= cap)
				return RNSC_ERR_BUFSIZE;
			buf[o++] = c;
		}
		if (argc >= max_args)
			return RNSC_ERR_TOOBIG;
		if (o >= cap)
			return RNSC_ERR_BUFSIZE;
		buf[o++] = 0;
		argv[argc++] = buf + start;
	}
	argv[argc] = NULL;
	return (int)argc;
}
