/* SPDX-License-Identifier: MIT */
/*
 * rnsc-conformance-bridge: prints READY, then answers one JSON request per stdin line with
 * one JSON response per stdout line (bridge.h) until stdin ends. Log output goes to stderr.
 * Exit status: 0 at end of input, 2 on a bad command line, 3 when no crypto backend loads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "env.h"

/* Reads one line (without its newline) into *buf; a line longer than the limit is consumed
 * to its end and reported by its length so that the caller can refuse it.
 * Returns the line length, or -1 at end of input. */
static long read_line(FILE *in, char **buf, size_t *cap)
{
	size_t len = 0;
	int c;
	while ((c = getc(in)) != EOF && c != '\n') {
		if (len < RNSC_BRIDGE_MAX_LINE + 1) {
			if (len + 1 >= *cap) {
				size_t nc = *cap ? *cap * 2 : 4096;
				char *nb = realloc(*buf, nc);
				if (!nb)
					return -1;
				*buf = nb, *cap = nc;
			}
			(*buf)[len] = (char)c;
		}
		len++;
	}
	if (c == EOF && len == 0)
		return -1;
	return (long)len;
}

/* The second plugin environment crypto_provider_op runs on, restricted to one backend. */
static rnsc_env alt_env;
static int alt_open;

static int open_backend(rnsc_bridge *b, const char *backend)
{
	if (alt_open) {
		rnsc_env_close(&alt_env);
		alt_open = 0;
		b->alt_ctx = NULL;
	}
	if (rnsc_env_open(&alt_env, backend, 0, stderr) != 0)
		return -1;
	alt_open = 1;
	b->alt_ctx = alt_env.ctx;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		FILE *f = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ? stdout
										       : stderr;
		fprintf(f,
			"Usage: rnsc-conformance-bridge\n\n"
			"Speaks the reticulum-conformance suite's bridge protocol on stdin and\n"
			"stdout: prints READY, then answers one JSON request per line with one\n"
			"JSON response per line, from rnsc's own library. Takes no options;\n"
			"RNSC_CRYPTO picks the crypto backend order, RNSC_PLUGIN_PATH the plugins.\n");
		return f == stdout ? 0 : 2;
	}
	rnsc_env env;
	if (rnsc_env_open(&env, NULL, 0, stderr) != 0)
		return 3; /* no plugins: an environment problem, as the CLI says it */
	rnsc_bridge b;
	rnsc_bridge_init(&b, env.ctx);
	b.open_backend = open_backend;
	b.extra_cmds = rnsc_bridge_wire_cmds;
	b.lock = rnsc_bridge_wire_lock;
	b.unlock = rnsc_bridge_wire_unlock;
	rnsc_bridge_wire_set_plugins(env.host);
	printf("READY\n");
	fflush(stdout);
	char *line = NULL;
	size_t cap = 0;
	long len;
	while ((len = read_line(stdin, &line, &cap)) >= 0) {
		size_t n = (size_t)len;
		char *out;
		if (n > RNSC_BRIDGE_MAX_LINE) {
			/* only the first bytes were kept: answer by length alone */
			out = rnsc_bridge_handle(&b, "", n);
		} else {
			size_t start = 0;
			while (n &&
			       (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
				n--;
			while (start < n && (line[start] == ' ' || line[start] == '\t'))
				start++;
			if (n == start)
				continue; /* blank lines are skipped, as the reference does */
			out = rnsc_bridge_handle(&b, line + start, n - start);
		}
		if (out) {
			fputs(out, stdout);
			free(out);
		} else {
			fputs("{\"id\":\"unknown\",\"success\":false,\"error\":\"out of memory\"}",
			      stdout);
		}
		fputc('\n', stdout);
		fflush(stdout);
	}
	free(line);
	rnsc_bridge_wire_shutdown();
	if (alt_open)
		rnsc_env_close(&alt_env);
	rnsc_env_close(&env);
	return 0;
}
