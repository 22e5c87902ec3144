/* SPDX-License-Identifier: MIT */
/*
 * `rnsc bench` (no subcommand): the scenario runner. For every scenario, pairing and sample
 * it writes two Reticulum config directories (loopback interfaces on a free port), starts
 * the responder and the initiator as separate processes (the reference participant
 * bench/participants/rnsc_bench_ref.py on the venv's python, or rnsc's own participant),
 * drives them through the line protocol (ready, start, started, done, collect, result, quit), checks
 * the scenario's accounting exactly, and takes peak RSS and CPU time per role from wait4.
 * Samples are never retried once timing has started; a failed sample is reported failed.
 * Reports: a terminal table, JSON (`cells`), Markdown and an SVG chart with min/max whiskers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "participant.h"
#include "pyref.h"

#define MAX_SAMPLES 8

typedef struct scenario_def {
	const char *name;
	const char *desc;
	unsigned lo, hi; /* payload size range */
	const char *unit; /* of rate */
} scenario_def;

static const scenario_def SCENARIOS[] = {
	{"single", "single-packet throughput: SINGLE DATA, no link, each proved, 16 outstanding",
	 60, 380, "packets/s"},
	{"link", "link throughput: one link, link packets each proved, 16 outstanding", 60, 420,
	 "packets/s"},
};
#define N_SCENARIOS (sizeof(SCENARIOS) / sizeof(SCENARIOS[0]))

enum impl { IMPL_RNSC = 0, IMPL_REF = 1 };
static const char *const impl_name[2] = {"rnsc", "reference"};

typedef struct pairing {
	enum impl initiator, responder;
	const char *name;
} pairing;

static const pairing PAIRINGS[] = {
	{IMPL_RNSC, IMPL_RNSC, "rnsc-rnsc"},
	{IMPL_RNSC, IMPL_REF, "rnsc-ref"},
	{IMPL_REF, IMPL_RNSC, "ref-rnsc"},
	{IMPL_REF, IMPL_REF, "ref-ref"},
};
#define N_PAIRINGS (sizeof(PAIRINGS) / sizeof(PAIRINGS[0]))

typedef struct sample {
	int ok;          /* ran to the end and met the accounting rule */
	char why[400];   /* when not ok */
	unsigned long long sent, proved, delivered, timeouts, unproved, bytes, bytes_delivered;
	unsigned long long bytes_sent; /* link: what the initiator sent (proved or not) */
	double elapsed_s, rate, goodput, p50_us, p99_us;
	long rss_kib[2];  /* initiator, responder */
	double cpu_s[2];
} sample;

typedef struct cell {
	const scenario_def *sc;
	const pairing *pr;
	sample s[MAX_SAMPLES];
	int n;
	int conformant;
	double rate_med, rate_min, rate_max, goodput_med, p50_med, p99_med;
	long rss_med[2];
	double cpu_med[2];
} cell;

typedef struct run_opts {
	double seconds, drain, setup_timeout;
	int samples;
	const char *self, *python, *ref_script;
	const char *keep_dir; /* keep participant logs here */
} run_opts;

/* ---- one sample -------------------------------------------------------------------- */

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t l = sizeof(a);
	int port = -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &l) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* A Reticulum config (the reference's format, which rnsc reads too). */
static int write_config(const char *dir, int server, int port)
{
	char path[PATH_MAX];
	if (mkdir(dir, 0700) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/config", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "[reticulum]\n  enable_transport = No\n  share_instance = No\n"
		   "  respond_to_probes = No\n\n[logging]\n  loglevel = 2\n\n[interfaces]\n");
	if (server)
		fprintf(f, "  [[bench server]]\n    type = TCPServerInterface\n    enabled = yes\n"
			   "    listen_ip = 127.0.0.1\n    listen_port = %d\n",
			port);
	else
		fprintf(f, "  [[bench client]]\n    type = TCPClientInterface\n    enabled = yes\n"
			   "    target_host = 127.0.0.1\n    target_port = %d\n",
			port);
	return fclose(f) == 0 ? 0 : -1;
}

static void part_argv(const run_opts *o, enum impl im, const char *role, const char *scenario,
		      const char *cfg, const char *dest, char **argv)
{
	int n = 0;
	if (im == IMPL_REF) {
		argv[n++] = (char *)o->python;
		argv[n++] = (char *)o->ref_script;
	} else {
		argv[n++] = (char *)o->self;
		argv[n++] = (char *)"bench";
		argv[n++] = (char *)"participant";
	}
	argv[n++] = (char *)"--role";
	argv[n++] = (char *)role;
	argv[n++] = (char *)"--scenario";
	argv[n++] = (char *)scenario;
	argv[n++] = (char *)"--config";
	argv[n++] = (char *)cfg;
	if (dest) {
		argv[n++] = (char *)"--dest";
		argv[n++] = (char *)dest;
	}
	argv[n] = NULL;
}

static unsigned long long kv_u(const char *line, const char *key, int *missing)
{
	char pat[64];
	snprintf(pat, sizeof(pat), " %s=", key);
	const char *p = strstr(line, pat);
	if (!p) {
		(*missing)++;
		return 0;
	}
	return strtoull(p + strlen(pat), NULL, 10);
}

static double kv_d(const char *line, const char *key, int *missing)
{
	char pat[64];
	snprintf(pat, sizeof(pat), " %s=", key);
	const char *p = strstr(line, pat);
	if (!p) {
		(*missing)++;
		return 0;
	}
	return strtod(p + strlen(pat), NULL);
}

static double cpu_of(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec * 1e-6 +
	       (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec * 1e-6;
}

/* Records why the sample failed (cut to fit) and abandons it. */
#define FAIL(...)                                                                          \
	do {                                                                               \
		char fail_buf_[16384];                                                     \
		snprintf(fail_buf_, sizeof(fail_buf_), __VA_ARGS__);                       \
		size_t fail_len_ = strlen(fail_buf_);                                      \
		if (fail_len_ >= sizeof(s->why))                                           \
			fail_len_ = sizeof(s->why) - 1;                                    \
		memcpy(s->why, fail_buf_, fail_len_);                                      \
		s->why[fail_len_] = '\0';                                                 \
		goto out;                                                                  \
	} while (0)

static void run_sample(const run_opts *o, const cell *c, int idx, sample *s)
{
	memset(s, 0, sizeof(*s));
	part ini = {0}, res = {0};
	char tmpl[] = "/tmp/rnsc-bench.XXXXXX";
	char *dir = mkdtemp(tmpl);
	char rcfg[PATH_MAX], icfg[PATH_MAX], rlog[PATH_MAX], ilog[PATH_MAX], line[1024], cmd[128];
	const char *why = "";
	if (!dir) {
		snprintf(s->why, sizeof(s->why), "mkdtemp: %s", strerror(errno));
		return;
	}
	const char *logdir = o->keep_dir ? o->keep_dir : dir;
	snprintf(rcfg, sizeof(rcfg), "%s/responder", dir);
	snprintf(icfg, sizeof(icfg), "%s/initiator", dir);
	snprintf(rlog, sizeof(rlog), "%s/%s-%s-%d-responder.log", logdir, c->sc->name, c->pr->name,
		 idx);
	snprintf(ilog, sizeof(ilog), "%s/%s-%s-%d-initiator.log", logdir, c->sc->name, c->pr->name,
		 idx);
	int port = free_port();
	if (port < 0 || write_config(rcfg, 1, port) || write_config(icfg, 0, port))
		FAIL("cannot prepare the config directories in %s", dir);

	char *argv[16];
	part_argv(o, c->pr->responder, "responder", c->sc->name, rcfg, NULL, argv);
	if (part_spawn(&res, argv, rlog) != 0)
		FAIL("cannot start the %s responder: %s", impl_name[c->pr->responder], strerror(errno));
	if (part_readline(&res, o->setup_timeout, line, sizeof(line), &why) < 0)
		FAIL("%s responder: %s before ready (log: %s)", impl_name[c->pr->responder], why, rlog);
	const char *d = strstr(line, "dest=");
	if (strncmp(line, "ready", 5) != 0 || !d || strlen(d + 5) != 32)
		FAIL("%s responder: expected 'ready dest=HASH', got '%s'", impl_name[c->pr->responder],
		     line);
	char dest[33];
	memcpy(dest, d + 5, 33);

	part_argv(o, c->pr->initiator, "initiator", c->sc->name, icfg, dest, argv);
	if (part_spawn(&ini, argv, ilog) != 0)
		FAIL("cannot start the %s initiator: %s", impl_name[c->pr->initiator], strerror(errno));
	if (part_readline(&ini, o->setup_timeout + 30, line, sizeof(line), &why) < 0)
		FAIL("%s initiator: %s before ready (log: %s)", impl_name[c->pr->initiator], why, ilog);
	if (strcmp(line, "ready") != 0)
		FAIL("%s initiator: expected 'ready', got '%s'", impl_name[c->pr->initiator], line);

	/* timing starts: from here a sample is never retried */
	snprintf(cmd, sizeof(cmd), "start seconds=%g drain=%g", o->seconds, o->drain);
	if (part_send(&res, cmd))
		FAIL("the responder went away before start");
	/* the responder zeroes its counters before the first timed packet can reach it */
	if (part_readline(&res, 30, line, sizeof(line), &why) < 0 || strcmp(line, "started") != 0)
		FAIL("%s responder: expected 'started' (%s)", impl_name[c->pr->responder],
		     *why ? why : line);
	if (part_send(&ini, cmd))
		FAIL("the initiator went away before start");
	if (part_readline(&ini, o->seconds + o->drain + 30, line, sizeof(line), &why) < 0 ||
	    strcmp(line, "done") != 0)
		FAIL("%s initiator: %s while timing (log: %s)", impl_name[c->pr->initiator],
		     *why ? why : line, ilog);
	if (part_send(&res, "collect") || part_send(&ini, "collect"))
		FAIL("a participant went away before collect");
	char rres[1024];
	if (part_readline(&res, 30, rres, sizeof(rres), &why) < 0 || strncmp(rres, "result", 6))
		FAIL("%s responder: no result (%s)", impl_name[c->pr->responder], why);
	if (part_readline(&ini, 30, line, sizeof(line), &why) < 0 || strncmp(line, "result", 6))
		FAIL("%s initiator: no result (%s)", impl_name[c->pr->initiator], why);
	int missing = 0;
	s->sent = kv_u(line, "sent", &missing);
	s->proved = kv_u(line, "proved", &missing);
	s->timeouts = kv_u(line, "timeouts", &missing);
	s->unproved = kv_u(line, "unproved", &missing);
	s->bytes = kv_u(line, "bytes", &missing);
	s->elapsed_s = kv_d(line, "elapsed_s", &missing);
	s->p50_us = kv_d(line, "rtt_p50_us", &missing);
	s->p99_us = kv_d(line, "rtt_p99_us", &missing);
	s->delivered = kv_u(rres, "delivered", &missing);
	s->bytes_delivered = kv_u(rres, "bytes", &missing);
	int is_link = !strcmp(c->sc->name, "link");
	if (is_link)
		s->bytes_sent = kv_u(line, "sent_bytes", &missing);
	if (missing)
		FAIL("a result line lacks %d field(s): '%s' / '%s'", missing, line, rres);
	part_finish(&res, 10);
	part_finish(&ini, 10);
	s->rss_kib[0] = ini.ru.ru_maxrss, s->rss_kib[1] = res.ru.ru_maxrss;
	s->cpu_s[0] = cpu_of(&ini.ru), s->cpu_s[1] = cpu_of(&res.ru);
	if (s->elapsed_s > 0) {
		s->rate = (double)s->proved / s->elapsed_s;
		s->goodput = (double)s->bytes / s->elapsed_s;
	}
	if (s->sent == 0)
		FAIL("nothing was sent");
	/* the accounting rule of the link scenario: everything sent arrived, byte for byte, and
	 * every packet is accounted for by its proof, a receipt timeout or as unproved at the
	 * end (the reference registers a link packet's receipt after sending it, so a very fast
	 * proof can miss it: NOTES-reference.md) */
	if (is_link) {
		if (s->sent != s->delivered || s->bytes_sent != s->bytes_delivered ||
		    s->proved + s->timeouts + s->unproved != s->sent)
			FAIL("accounting: sent %llu, delivered %llu, proved %llu, timeouts %llu, "
			     "unproved %llu, bytes sent %llu vs delivered %llu",
			     s->sent, s->delivered, s->proved, s->timeouts, s->unproved,
			     s->bytes_sent, s->bytes_delivered);
		s->ok = 1;
		goto out;
	}
	/* the accounting rule of the single-packet scenario */
	if (s->sent != s->proved || s->proved != s->delivered || s->timeouts || s->unproved ||
	    s->bytes != s->bytes_delivered)
		FAIL("accounting: sent %llu, proved %llu, delivered %llu, timeouts %llu, unproved "
		     "%llu, bytes %llu vs %llu",
		     s->sent, s->proved, s->delivered, s->timeouts, s->unproved, s->bytes,
		     s->bytes_delivered);
	s->ok = 1;
out:
	part_kill(&res);
	part_kill(&ini);
	if (!s->ok && !o->keep_dir)
		for (int k = 0; k < 2; k++) {
			/* the logs go with the temporary directory: show their tails now */
			char tail[PATH_MAX + 64];
			const char *log = k ? rlog : ilog;
			if (access(log, R_OK) != 0)
				continue;
			fprintf(stderr, "--- last lines of %s\n", log);
			fflush(stderr);
			snprintf(tail, sizeof(tail), "tail -n 8 '%s' >&2", log);
			if (system(tail) != 0)
				fprintf(stderr, "(could not show it)\n");
		}
	if (!o->keep_dir) {
		unlink(rlog), unlink(ilog);
	}
	/* the participants write storage/ under their config dirs: remove the whole tree */
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/rm", "rm", "-rf", dir, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* ---- reduction and reports ------------------------------------------------------------ */

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	if (!n)
		return 0;
	qsort(v, (size_t)n, sizeof(double), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void reduce(cell *c)
{
	double r[MAX_SAMPLES], g[MAX_SAMPLES], p5[MAX_SAMPLES], p9[MAX_SAMPLES];
	double rs0[MAX_SAMPLES], rs1[MAX_SAMPLES], c0[MAX_SAMPLES], c1[MAX_SAMPLES];
	int k = 0;
	c->conformant = c->n > 0;
	for (int i = 0; i < c->n; i++) {
		if (!c->s[i].ok) {
			c->conformant = 0;
			continue;
		}
		r[k] = c->s[i].rate, g[k] = c->s[i].goodput, p5[k] = c->s[i].p50_us;
		p9[k] = c->s[i].p99_us, rs0[k] = (double)c->s[i].rss_kib[0];
		rs1[k] = (double)c->s[i].rss_kib[1], c0[k] = c->s[i].cpu_s[0], c1[k] = c->s[i].cpu_s[1];
		k++;
	}
	c->rate_min = c->rate_max = 0;
	for (int i = 0; i < k; i++) {
		if (!i || r[i] < c->rate_min)
			c->rate_min = r[i];
		if (r[i] > c->rate_max)
			c->rate_max = r[i];
	}
	c->rate_med = median(r, k), c->goodput_med = median(g, k);
	c->p50_med = median(p5, k), c->p99_med = median(p9, k);
	c->rss_med[0] = (long)median(rs0, k), c->rss_med[1] = (long)median(rs1, k);
	c->cpu_med[0] = median(c0, k), c->cpu_med[1] = median(c1, k);
}

static void write_json(FILE *f, const cell *cells, size_t n, const run_opts *o,
		       const char *ref_version)
{
	fprintf(f, "{\n\"benchmark\": \"scenarios\",\n");
	cli_env_json(f);
	fprintf(f, ",\n\"settings\": {\"seconds\": %g, \"drain_s\": %g, \"samples\": %d, "
		   "\"interface\": \"TCP (loopback)\", \"reference_version\": ",
		o->seconds, o->drain, o->samples);
	cli_json_str(f, ref_version);
	fprintf(f, "},\n\"cells\": [\n");
	for (size_t i = 0; i < n; i++) {
		const cell *c = &cells[i];
		fprintf(f, "  {\"scenario\": \"%s\", \"initiator\": \"%s\", \"responder\": \"%s\", "
			   "\"conformant\": %s,\n   \"rate\": {\"median\": %.6g, \"min\": %.6g, "
			   "\"max\": %.6g, \"unit\": \"%s\"}, \"goodput\": {\"median\": %.6g, \"unit\": "
			   "\"B/s\"}, \"rtt_p50_us\": %.6g, \"rtt_p99_us\": %.6g,\n   \"rss_kib\": "
			   "{\"initiator\": %ld, \"responder\": %ld}, \"cpu_s\": {\"initiator\": %.4g, "
			   "\"responder\": %.4g},\n   \"samples\": [",
			c->sc->name, impl_name[c->pr->initiator], impl_name[c->pr->responder],
			c->conformant ? "true" : "false", c->rate_med, c->rate_min, c->rate_max,
			c->sc->unit, c->goodput_med, c->p50_med, c->p99_med, c->rss_med[0], c->rss_med[1],
			c->cpu_med[0], c->cpu_med[1]);
		for (int k = 0; k < c->n; k++) {
			const sample *s = &c->s[k];
			fprintf(f, "%s{\"ok\": %s, \"sent\": %llu, \"proved\": %llu, \"delivered\": %llu, "
				   "\"timeouts\": %llu, \"unproved\": %llu, \"bytes\": %llu, "
				   "\"elapsed_s\": %.6g, \"rate\": %.6g",
				k ? ", " : "", s->ok ? "true" : "false", s->sent, s->proved, s->delivered,
				s->timeouts, s->unproved, s->bytes, s->elapsed_s, s->rate);
			if (!s->ok) {
				fprintf(f, ", \"failure\": ");
				cli_json_str(f, s->why);
			}
			fprintf(f, "}");
		}
		fprintf(f, "]}%s\n", i + 1 < n ? "," : "");
	}
	fprintf(f, "]\n}\n");
}

static const cell *find_cell(const cell *cells, size_t n, const char *sc, enum impl a, enum impl b)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(cells[i].sc->name, sc) && cells[i].pr->initiator == a &&
		    cells[i].pr->responder == b)
			return &cells[i];
	return NULL;
}

static void write_md(FILE *f, const cell *cells, size_t n, const run_opts *o,
		     const char *ref_version)
{
	fprintf(f, "# rnsc bench: scenarios\n\nrnsc and the reference (RNS %s) measured in the same "
		   "run on the same machine over loopback TCP; %g s timed traffic plus a drain of up "
		   "to %g s counted in elapsed time; %d sample(s) per cell, medians shown.\n\n",
		ref_version, o->seconds, o->drain, o->samples);
	fprintf(f, "## At a glance (rnsc→rnsc / reference→reference)\n\n| scenario | rnsc | "
		   "reference | ratio |\n|---|---:|---:|---:|\n");
	for (size_t k = 0; k < N_SCENARIOS; k++) {
		const cell *a = find_cell(cells, n, SCENARIOS[k].name, IMPL_RNSC, IMPL_RNSC);
		const cell *b = find_cell(cells, n, SCENARIOS[k].name, IMPL_REF, IMPL_REF);
		if (!a && !b)
			continue;
		fprintf(f, "| %s | ", SCENARIOS[k].name);
		if (a && a->conformant)
			fprintf(f, "%.1f %s", a->rate_med, SCENARIOS[k].unit);
		else
			fprintf(f, "%s", a ? "failed" : "—");
		fprintf(f, " | ");
		if (b && b->conformant)
			fprintf(f, "%.1f %s", b->rate_med, SCENARIOS[k].unit);
		else
			fprintf(f, "%s", b ? "failed" : "—");
		if (a && b && a->conformant && b->conformant && b->rate_med > 0)
			fprintf(f, " | %.2f× |\n", a->rate_med / b->rate_med);
		else
			fprintf(f, " | — |\n");
	}
	for (size_t k = 0; k < N_SCENARIOS; k++) {
		int any = 0;
		for (size_t i = 0; i < n; i++)
			any |= cells[i].sc == &SCENARIOS[k];
		if (!any)
			continue;
		fprintf(f, "\n## %s\n\n%s.\n\n| initiator → responder | conformant | rate (min–max) "
			   "| goodput | RTT p50 / p99 (µs) | RSS initiator / responder (MiB) | CPU "
			   "initiator / responder (s) |\n|---|---|---:|---:|---:|---:|---:|\n",
			SCENARIOS[k].name, SCENARIOS[k].desc);
		for (size_t i = 0; i < n; i++) {
			const cell *c = &cells[i];
			if (c->sc != &SCENARIOS[k])
				continue;
			int okn = 0;
			for (int j = 0; j < c->n; j++)
				okn += c->s[j].ok;
			fprintf(f, "| %s → %s | %d/%d | %.1f (%.1f–%.1f) %s | %.1f KiB/s | %.0f / %.0f | "
				   "%.1f / %.1f | %.2f / %.2f |\n",
				impl_name[c->pr->initiator], impl_name[c->pr->responder], okn, c->n,
				c->rate_med, c->rate_min, c->rate_max, c->sc->unit, c->goodput_med / 1024,
				c->p50_med, c->p99_med, c->rss_med[0] / 1024.0, c->rss_med[1] / 1024.0,
				c->cpu_med[0], c->cpu_med[1]);
		}
		for (size_t i = 0; i < n; i++)
			for (int j = 0; j < cells[i].n; j++)
				if (cells[i].sc == &SCENARIOS[k] && !cells[i].s[j].ok)
					fprintf(f, "\n- %s sample %d failed: %s\n", cells[i].pr->name, j + 1,
						cells[i].s[j].why);
	}
}

static void write_svg(FILE *f, const cell *cells, size_t n)
{
	double max = 1;
	for (size_t i = 0; i < n; i++)
		if (cells[i].rate_max > max)
			max = cells[i].rate_max;
	const int row = 24, left = 220, width = 520, top = 34;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"10\" y=\"18\" "
		   "font-size=\"14\">Rate per cell (median, whiskers min–max)</text>\n",
		left + width + 110, top + (int)n * row + 10);
	for (size_t i = 0; i < n; i++) {
		const cell *c = &cells[i];
		int y = top + (int)i * row;
		fprintf(f, "<text x=\"10\" y=\"%d\">%s %s → %s</text>\n", y + 14, c->sc->name,
			impl_name[c->pr->initiator], impl_name[c->pr->responder]);
		double w = c->rate_med / max * width;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"%s\"/>\n", left,
			y + 3, w, c->pr->initiator == IMPL_RNSC ? "#2a6fb0" : "#c9822b");
		double x0 = left + c->rate_min / max * width, x1 = left + c->rate_max / max * width;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>"
			   "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>"
			   "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>\n",
			x0, y + 10, x1, y + 10, x0, y + 5, x0, y + 15, x1, y + 5, x1, y + 15);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\">%s</text>\n", x1 + 6, y + 14,
			c->conformant ? "" : "not conformant");
		if (c->conformant)
			fprintf(f, "<text x=\"%.1f\" y=\"%d\">%.0f %s</text>\n", x1 + 6, y + 14,
				c->rate_med, c->sc->unit);
	}
	fprintf(f, "</svg>\n");
}

/* ---- command line ----------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc bench [--quick] [--scenario LIST] [--pairing LIST] [--seconds S]\n"
		"                  [--drain S] [--samples N] [--json FILE] [--report DIR]\n"
		"                  [--keep-logs DIR]\n"
		"       rnsc bench crypto|echo [OPTIONS]   (see their --help)\n\n"
		"Runs the Reticulum benchmark scenarios with rnsc and the reference (the pinned rns\n"
		"in the venv, driven through its public API by bench/participants/rnsc_bench_ref.py)\n"
		"as separate processes over loopback interfaces, in every initiator/responder\n"
		"pairing, measured in the same run. A sample counts only when the scenario's\n"
		"accounting holds exactly; it is never retried once timing starts.\n\n"
		"  --scenario LIST  scenarios (default all):");
	for (size_t i = 0; i < N_SCENARIOS; i++)
		fprintf(f, " %s", SCENARIOS[i].name);
	fprintf(f, "\n  --pairing LIST   initiator-responder pairs (default all): rnsc-rnsc, rnsc-ref,\n"
		   "                   ref-rnsc, ref-ref\n"
		   "  --seconds S      timed traffic per sample (default 30)\n"
		   "  --drain S        drain limit, counted in elapsed time (default 30)\n"
		   "  --samples N      samples per cell (default 3, at most %d)\n"
		   "  --quick          2 s, drain 10 s, 1 sample\n"
		   "  --json FILE      raw results (- for stdout)\n"
		   "  --report DIR     DIR/scenarios.md, DIR/scenarios.json, DIR/scenarios.svg\n"
		   "  --keep-logs DIR  keep every participant's log in DIR\n\n"
		   "Exit status: 0 when every cell was conformant, 1 otherwise, 2 usage, 3 setup.\n",
		MAX_SAMPLES);
}

static int in_list(const char *list, const char *name)
{
	if (!list)
		return 1;
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == n && !strncmp(p, name, n))
			return 1;
		p += l + (e ? 1 : 0);
	}
	return 0;
}

static int list_valid(const char *list, int scen)
{
	if (!list)
		return 1;
	char *copy = strdup(list), *save = NULL;
	int ok = copy != NULL;
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
		int found = 0;
		if (scen) {
			for (size_t i = 0; i < N_SCENARIOS; i++)
				found |= !strcmp(t, SCENARIOS[i].name);
		} else {
			for (size_t i = 0; i < N_PAIRINGS; i++)
				found |= !strcmp(t, PAIRINGS[i].name);
		}
		if (!found) {
			fprintf(stderr, "rnsc bench: unknown %s '%s'\n", scen ? "scenario" : "pairing", t);
			ok = 0;
		}
	}
	free(copy);
	return ok;
}

static FILE *open_out(const char *dir, const char *name, char *path, size_t cap)
{
	snprintf(path, cap, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "rnsc bench: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

int cmd_bench_scenarios(int argc, char **argv)
{
	static const struct option opts[] = {
		{"quick", no_argument, NULL, 'q'},	   {"scenario", required_argument, NULL, 's'},
		{"pairing", required_argument, NULL, 'p'}, {"seconds", required_argument, NULL, 'S'},
		{"drain", required_argument, NULL, 'D'},   {"samples", required_argument, NULL, 'n'},
		{"json", required_argument, NULL, 'j'},    {"report", required_argument, NULL, 'r'},
		{"keep-logs", required_argument, NULL, 'k'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	run_opts o = {.seconds = 30, .drain = 30, .setup_timeout = 60, .samples = 3};
	const char *scen = NULL, *pair = NULL, *json = NULL, *report = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			o.seconds = 2, o.drain = 10, o.samples = 1;
			break;
		case 's':
			scen = optarg;
			break;
		case 'p':
			pair = optarg;
			break;
		case 'S':
			o.seconds = strtod(optarg, NULL);
			break;
		case 'D':
			o.drain = strtod(optarg, NULL);
			break;
		case 'n':
			o.samples = atoi(optarg);
			break;
		case 'j':
			json = optarg;
			break;
		case 'r':
			report = optarg;
			break;
		case 'k':
			o.keep_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind != argc || o.seconds <= 0 || o.drain <= 0 || o.samples < 1 ||
	    o.samples > MAX_SAMPLES || !list_valid(scen, 1) || !list_valid(pair, 0)) {
		usage(stderr);
		return CLI_USAGE;
	}
	char self[PATH_MAX], python[PATH_MAX], script[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *venv = rnsc_pyref_venv_dir(), *src = rnsc_pyref_src_dir();
	if (sl <= 0 || !venv || !src) {
		fprintf(stderr, "rnsc bench: RNSC_VENV or RNSC_SRCDIR unknown (set them)\n");
		return CLI_SETUP;
	}
	self[sl] = '\0';
	snprintf(python, sizeof(python), "%s/bin/python", venv);
	snprintf(script, sizeof(script), "%s/bench/participants/rnsc_bench_ref.py", src);
	if (access(python, X_OK) != 0 || access(script, R_OK) != 0) {
		fprintf(stderr, "rnsc bench: the reference participant needs %s and %s (run `make "
				"venv`, or set RNSC_VENV / RNSC_SRCDIR)\n",
			python, script);
		return CLI_SETUP;
	}
	o.self = self, o.python = python, o.ref_script = script;
	if (o.keep_dir && mkdir(o.keep_dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "rnsc bench: cannot create %s: %s\n", o.keep_dir, strerror(errno));
		return CLI_SETUP;
	}
	/* the reference's version, for the reports */
	char ref_version[64] = "unknown";
	{
		char cmd[PATH_MAX + 128];
		snprintf(cmd, sizeof(cmd), "'%s' -c 'import RNS; print(RNS.__version__)' 2>/dev/null",
			 python);
		FILE *p = popen(cmd, "r");
		if (p) {
			if (fgets(ref_version, sizeof(ref_version), p))
				ref_version[strcspn(ref_version, "\n")] = '\0';
			pclose(p);
		}
	}
	cell cells[N_SCENARIOS * N_PAIRINGS];
	size_t n = 0;
	memset(cells, 0, sizeof(cells));
	for (size_t i = 0; i < N_SCENARIOS; i++)
		for (size_t j = 0; j < N_PAIRINGS; j++)
			if (in_list(scen, SCENARIOS[i].name) && in_list(pair, PAIRINGS[j].name)) {
				cells[n].sc = &SCENARIOS[i];
				cells[n].pr = &PAIRINGS[j];
				n++;
			}
	printf("%-8s %-22s %-11s %16s %12s %12s\n", "scenario", "initiator -> responder",
	       "conformant", "rate", "p50 (us)", "p99 (us)");
	int all = 1;
	for (size_t i = 0; i < n; i++) {
		cell *x = &cells[i];
		for (int k = 0; k < o.samples; k++) {
			run_sample(&o, x, k, &x->s[k]);
			x->n++;
			if (!x->s[k].ok)
				fprintf(stderr, "rnsc bench: %s %s sample %d failed: %s\n", x->sc->name,
					x->pr->name, k + 1, x->s[k].why);
		}
		reduce(x);
		all &= x->conformant;
		char pr[48];
		snprintf(pr, sizeof(pr), "%s -> %s", impl_name[x->pr->initiator],
			 impl_name[x->pr->responder]);
		printf("%-8s %-22s %-11s %10.1f pkt/s %12.0f %12.0f\n", x->sc->name, pr,
		       x->conformant ? "yes" : "NO", x->rate_med, x->p50_med, x->p99_med);
		fflush(stdout);
	}
	int rc = all ? CLI_OK : CLI_FAIL;
	if (json) {
		FILE *f = strcmp(json, "-") ? fopen(json, "w") : stdout;
		if (!f) {
			fprintf(stderr, "rnsc bench: cannot write %s: %s\n", json, strerror(errno));
			rc = CLI_SETUP;
		} else {
			write_json(f, cells, n, &o, ref_version);
			if (f != stdout)
				fclose(f);
		}
	}
	if (report) {
		char path[PATH_MAX];
		FILE *f;
		mkdir(report, 0755);
		if ((f = open_out(report, "scenarios.json", path, sizeof(path)))) {
			write_json(f, cells, n, &o, ref_version);
			fclose(f);
		} else {
			rc = CLI_SETUP;
		}
		if ((f = open_out(report, "scenarios.md", path, sizeof(path)))) {
			write_md(f, cells, n, &o, ref_version);
			fclose(f);
		} else {
			rc = CLI_SETUP;
		}
		if ((f = open_out(report, "scenarios.svg", path, sizeof(path)))) {
			write_svg(f, cells, n);
			fclose(f);
		} else {
			rc = CLI_SETUP;
		}
	}
	return rc;
}
