/* SPDX-License-Identifier: MIT */
/*
 * `rnsc bench echo`: the IO-model echo matrix. Every run is a fresh process (this binary
 * with --one, or the Boost.Asio peer bench/peers/asio_echo with the same arguments) whose
 * one "ECHO ..." result line is parsed here; repetitions are reduced to medians and written
 * as a terminal table, JSON, Markdown and an SVG chart, with rnsc / peer per cell.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "env.h"
#include "strfmt.h"
#include "echo_run.h"

#define MAX_REPS 16
#define MAX_LIST 8

typedef struct run_rec {
	int ok;      /* the process exited 0 and printed a result line */
	double v[9]; /* rt_per_s mib_per_s p50 p95 p99 cpu rss echoes elapsed */
	uint64_t err[ECHO_ERR_COUNT];
} run_rec;

enum { V_RT, V_MIB, V_P50, V_P95, V_P99, V_CPU, V_RSS, V_ECHOES, V_ELAPSED, V_N };
static const char *const v_keys[V_N] = {"rt_per_s", "mib_per_s", "p50_us", "p95_us",   "p99_us",
					"cpu_pct",  "rss_kib",   "echoes", "elapsed_s"};

typedef struct cell {
	const char *proto;
	enum rnsc_io_model model;
	unsigned threads;
	size_t payload;
	unsigned clients, window;
	run_rec rnsc[MAX_REPS], peer[MAX_REPS];
	double med_rnsc[V_N], med_peer[V_N];
	int valid_rnsc, valid_peer;
} cell;

typedef struct matrix_opts {
	double warmup, measure, drain;
	int reps;
	const char *peer;
	const char *lean; /* bench/echo/rnsc-echo, or NULL: this binary's --one */
} matrix_opts;

/* ---- one process ------------------------------------------------------------------- */

static int parse_line(const char *line, run_rec *r)
{
	if (strncmp(line, "ECHO ", 5) != 0)
		return -1;
	int found = 0;
	for (int k = 0; k < V_N; k++) {
		char pat[32];
		snprintf(pat, sizeof(pat), " %s=", v_keys[k]);
		const char *p = strstr(line, pat);
		if (!p)
			return -1;
		r->v[k] = strtod(p + strlen(pat), NULL);
		found++;
	}
	for (int e = 0; e < ECHO_ERR_COUNT; e++) {
		char pat[48];
		snprintf(pat, sizeof(pat), " err_%s=", echo_err_names[e]);
		const char *p = strstr(line, pat);
		if (!p)
			return -1;
		r->err[e] = strtoull(p + strlen(pat), NULL, 10);
	}
	return found == V_N ? 0 : -1;
}

/* Runs argv with a deadline; fills r from its result line. */
static void run_process(char *const argv[], double timeout_s, run_rec *r)
{
	memset(r, 0, sizeof(*r));
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return;
	pid_t pid = fork();
	if (pid < 0) {
		close(pfd[0]), close(pfd[1]);
		return;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		execv(argv[0], argv);
		fprintf(stderr, "rnsc bench echo: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	char buf[2048];
	size_t have = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		double left = timeout_s - (double)(t.tv_sec - t0.tv_sec) -
			      (double)(t.tv_nsec - t0.tv_nsec) * 1e-9;
		if (left <= 0) {
			fprintf(stderr, "rnsc bench echo: %s timed out; killed\n", argv[0]);
			kill(pid, SIGKILL);
			break;
		}
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		int pr = poll(&p, 1, (int)(left * 1000) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		ssize_t n = read(pfd[0], buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		if (have == sizeof(buf) - 1)
			break;
	}
	close(pfd[0]);
	buf[have] = '\0';
	int st = 0;
	waitpid(pid, &st, 0);
	char *line = strstr(buf, "ECHO ");
	if (line && WIFEXITED(st) && WEXITSTATUS(st) == 0 && parse_line(line, r) == 0)
		r->ok = 1;
}

static int rec_valid(const run_rec *r)
{
	if (!r->ok || r->v[V_ECHOES] <= 0)
		return 0;
	for (int e = 0; e < ECHO_ERR_COUNT; e++)
		if (r->err[e])
			return 0;
	return 1;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void reduce(const run_rec *r, int n, double med[V_N], int *valid)
{
	*valid = n > 0;
	for (int i = 0; i < n; i++)
		if (!rec_valid(&r[i]))
			*valid = 0;
	for (int k = 0; k < V_N; k++) {
		double x[MAX_REPS];
		for (int i = 0; i < n; i++)
			x[i] = r[i].v[k];
		qsort(x, (size_t)n, sizeof(double), dbl_cmp);
		med[k] = n ? (n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2) : 0;
	}
}

static void run_cell(cell *c, const matrix_opts *mo, const char *self)
{
	char a[10][32];
	snprintf(a[0], 32, "%s", c->proto);
	snprintf(a[1], 32, "%s", rnsc_io_model_name(c->model));
	snprintf(a[2], 32, "%u", c->threads);
	snprintf(a[3], 32, "%zu", c->payload);
	snprintf(a[4], 32, "%u", c->clients);
	snprintf(a[5], 32, "%u", c->window);
	snprintf(a[6], 32, "%g", mo->warmup);
	snprintf(a[7], 32, "%g", mo->measure);
	snprintf(a[8], 32, "%g", mo->drain);
	double timeout = mo->warmup + mo->measure + mo->drain + 15.0;
	for (int rep = 0; rep < mo->reps; rep++) {
		/* alternate who goes first so slow drift on a shared machine hits both sides */
		for (int side = 0; side < 2; side++) {
			int peer = (side + rep) % 2;
			if (peer && !mo->peer)
				continue;
			char *argv[16];
			int n = 0;
			argv[n++] = (char *)(peer ? mo->peer : mo->lean ? mo->lean : self);
			if (!peer && !mo->lean) {
				argv[n++] = (char *)"bench";
				argv[n++] = (char *)"echo";
			}
			argv[n++] = (char *)"--one";
			for (int i = 0; i < 9; i++)
				argv[n++] = a[i];
			argv[n] = NULL;
			run_process(argv, timeout, peer ? &c->peer[rep] : &c->rnsc[rep]);
		}
	}
	reduce(c->rnsc, mo->reps, c->med_rnsc, &c->valid_rnsc);
	if (mo->peer)
		reduce(c->peer, mo->reps, c->med_peer, &c->valid_peer);
}

/* ---- reports ------------------------------------------------------------------------ */

static void cell_label(const cell *c, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s %s/%u %zuB %ux%u", c->proto, rnsc_io_model_name(c->model),
		 c->threads, c->payload, c->clients, c->window);
}

static const char *model_desc(const cell *c, char *buf, size_t cap)
{
	switch (c->model) {
	case RNSC_IO_SINGLE:
		snprintf(buf, cap, "1 loop / 1 thread");
		break;
	case RNSC_IO_POOL:
		snprintf(buf, cap, "1 loop / %u threads", c->threads);
		break;
	default:
		snprintf(buf, cap, "%u loops / %u threads", c->threads, c->threads);
	}
	return buf;
}

static void write_runs_json(FILE *f, const run_rec *r, int n)
{
	fprintf(f, "[");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s{\"ok\": %s, \"valid\": %s", i ? ", " : "",
			r[i].ok ? "true" : "false", rec_valid(&r[i]) ? "true" : "false");
		for (int k = 0; k < V_N; k++)
			fprintf(f, ", \"%s\": %.6g", v_keys[k], r[i].v[k]);
		fprintf(f, ", \"errors\": {");
		for (int e = 0; e < ECHO_ERR_COUNT; e++)
			fprintf(f, "%s\"%s\": %llu", e ? ", " : "", echo_err_names[e],
				(unsigned long long)r[i].err[e]);
		fprintf(f, "}}");
	}
	fprintf(f, "]");
}

static void write_json(FILE *f, const cell *cells, size_t n, const matrix_opts *mo)
{
	fprintf(f, "{\n\"benchmark\": \"echo\",\n");
	rnsc_env_json(f);
	fprintf(f,
		",\n\"settings\": {\"warmup_s\": %g, \"measure_s\": %g, \"drain_s\": %g, "
		"\"repetitions\": %d, \"reservoir\": %u, \"rnsc_program\": \"%s\", \"peer\": ",
		mo->warmup, mo->measure, mo->drain, mo->reps, ECHO_RESERVOIR,
		mo->lean ? "rnsc-echo (runtime only)" : "rnsc bench echo --one");
	if (mo->peer)
		rnsc_json_str(f, "Boost.Asio (bench/peers/asio_echo.cpp)");
	else
		fprintf(f, "null");
	fprintf(f, "},\n\"cells\": [\n");
	for (size_t i = 0; i < n; i++) {
		const cell *c = &cells[i];
		char md[48];
		fprintf(f,
			"  {\"protocol\": \"%s\", \"io_model\": \"%s\", \"io_model_desc\": \"%s\", "
			"\"threads\": %u, \"payload\": %zu, \"clients\": %u, \"window\": %u,\n",
			c->proto, rnsc_io_model_name(c->model), model_desc(c, md, sizeof(md)),
			c->threads, c->payload, c->clients, c->window);
		fprintf(f, "   \"rnsc\": {\"valid\": %s", c->valid_rnsc ? "true" : "false");
		for (int k = 0; k < V_N; k++)
			fprintf(f, ", \"%s\": %.6g", v_keys[k], c->med_rnsc[k]);
		fprintf(f, ", \"runs\": ");
		write_runs_json(f, c->rnsc, mo->reps);
		fprintf(f, "}");
		if (mo->peer) {
			fprintf(f, ",\n   \"peer\": {\"valid\": %s",
				c->valid_peer ? "true" : "false");
			for (int k = 0; k < V_N; k++)
				fprintf(f, ", \"%s\": %.6g", v_keys[k], c->med_peer[k]);
			fprintf(f, ", \"runs\": ");
			write_runs_json(f, c->peer, mo->reps);
			fprintf(f, "},\n   \"ratio_rt\": %.4f",
				c->med_peer[V_RT] > 0 ? c->med_rnsc[V_RT] / c->med_peer[V_RT] : 0);
		}
		fprintf(f, "}%s\n", i + 1 < n ? "," : "");
	}
	fprintf(f, "]\n}\n");
}

static void fmt_rt(char *b, size_t cap, double v, int valid)
{
	if (!valid)
		snprintf(b, cap, "invalid");
	else
		snprintf(b, cap, "%.0f", v);
}

/* Per protocol and IO model: how many cells rnsc wins on throughput, p99 and RSS, and the
 * geometric mean of rnsc / peer round trips, over the cells valid on both sides. */
static void write_md_summary(FILE *f, const cell *cells, size_t n)
{
	fprintf(f, "\n## Summary\n\nCells valid on both sides; \"wins\" = rnsc better (more round "
		   "trips, lower p99, lower peak RSS); geometric mean of rnsc / peer round trips."
		   "\n\n| protocol | IO model | cells | rt/s wins | geo-mean rnsc/peer | "
		   "lower p99 | lower RSS |\n|---|---|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < n; i++) {
		int seen = 0;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(cells[k].proto, cells[i].proto) &&
			    cells[k].model == cells[i].model &&
			    cells[k].threads == cells[i].threads)
				seen = 1;
		if (seen)
			continue;
		unsigned m = 0, win = 0, p99 = 0, rss = 0;
		double lg = 0;
		for (size_t k = i; k < n; k++) {
			const cell *c = &cells[k];
			if (strcmp(c->proto, cells[i].proto) || c->model != cells[i].model ||
			    c->threads != cells[i].threads || !c->valid_rnsc || !c->valid_peer ||
			    c->med_peer[V_RT] <= 0 || c->med_rnsc[V_RT] <= 0)
				continue;
			m++;
			win += c->med_rnsc[V_RT] >= c->med_peer[V_RT];
			p99 += c->med_rnsc[V_P99] <= c->med_peer[V_P99];
			rss += c->med_rnsc[V_RSS] <= c->med_peer[V_RSS];
			lg += log(c->med_rnsc[V_RT] / c->med_peer[V_RT]);
		}
		char md[48];
		fprintf(f, "| %s | %s | %u | %u | %.2f | %u | %u |\n", cells[i].proto,
			model_desc(&cells[i], md, sizeof(md)), m, win, m ? exp(lg / m) : 0.0, p99,
			rss);
	}
}

static void write_md(FILE *f, const cell *cells, size_t n, const matrix_opts *mo)
{
	fprintf(f,
		"# rnsc bench echo\n\n"
		"Loopback echo, rnsc's runtime vs the Boost.Asio peer built in the same run; "
		"each cell is the median of %d fresh-process runs (warm-up %g s, measured %g s, "
		"drain ≤ %g s). Round trips per second; RTT percentiles in µs from an "
		"%u-sample reservoir; CPU in %% of one core; RSS peak in MiB. A run with any "
		"error counter above zero is shown as invalid.\n",
		mo->reps, mo->warmup, mo->measure, mo->drain, ECHO_RESERVOIR);
	if (mo->peer)
		write_md_summary(f, cells, n);
	const char *last = "";
	for (size_t i = 0; i < n; i++) {
		const cell *c = &cells[i];
		if (strcmp(last, c->proto)) {
			last = c->proto;
			fprintf(f,
				"\n## %s\n\n| IO model | payload | clients × window | rnsc rt/s | "
				"peer rt/s | rnsc/peer | rnsc p50 / p99 | peer p50 / p99 | rnsc CPU | "
				"peer CPU | rnsc RSS | peer RSS |\n|---|---:|---:|---:|---:|---:|---:|"
				"---:|---:|---:|---:|---:|\n",
				c->proto);
		}
		char md[48], r1[32], r2[32];
		fmt_rt(r1, sizeof(r1), c->med_rnsc[V_RT], c->valid_rnsc);
		fmt_rt(r2, sizeof(r2), c->med_peer[V_RT], mo->peer && c->valid_peer);
		fprintf(f, "| %s | %zu | %u × %u | %s | %s | ", model_desc(c, md, sizeof(md)),
			c->payload, c->clients, c->window, r1, mo->peer ? r2 : "—");
		if (mo->peer && c->valid_peer && c->valid_rnsc && c->med_peer[V_RT] > 0)
			fprintf(f, "%.2f", c->med_rnsc[V_RT] / c->med_peer[V_RT]);
		else
			fprintf(f, "—");
		fprintf(f, " | %.0f / %.0f | ", c->med_rnsc[V_P50], c->med_rnsc[V_P99]);
		if (mo->peer)
			fprintf(f, "%.0f / %.0f", c->med_peer[V_P50], c->med_peer[V_P99]);
		else
			fprintf(f, "—");
		fprintf(f, " | %.0f%% | ", c->med_rnsc[V_CPU]);
		if (mo->peer)
			fprintf(f, "%.0f%%", c->med_peer[V_CPU]);
		else
			fprintf(f, "—");
		fprintf(f, " | %.1f | ", c->med_rnsc[V_RSS] / 1024.0);
		if (mo->peer)
			fprintf(f, "%.1f |\n", c->med_peer[V_RSS] / 1024.0);
		else
			fprintf(f, "— |\n");
	}
}

/* Horizontal paired bars: one row per cell, rnsc and peer, for one metric; only_model >= 0
 * keeps the cells of that IO model (with only_threads threads). */
static void write_svg(FILE *f, const cell *all, size_t n_all, int metric, const char *title,
		      int only_model, unsigned only_threads)
{
	cell const **sel = calloc(n_all + 1, sizeof(*sel));
	size_t n = 0;
	if (!sel)
		return;
	for (size_t i = 0; i < n_all; i++)
		if (only_model < 0 ||
		    ((int)all[i].model == only_model && all[i].threads == only_threads))
			sel[n++] = &all[i];
	double max = 1;
	for (size_t i = 0; i < n; i++) {
		if (sel[i]->med_rnsc[metric] > max)
			max = sel[i]->med_rnsc[metric];
		if (sel[i]->med_peer[metric] > max)
			max = sel[i]->med_peer[metric];
	}
	const int row = 26, left = 230, width = 520, top = 40;
	int h = top + (int)n * row + 30;
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n",
		left + width + 90, h);
	fprintf(f, "<text x=\"10\" y=\"18\" font-size=\"14\">%s</text>\n", title);
	fprintf(f,
		"<rect x=\"%d\" y=\"24\" width=\"10\" height=\"8\" fill=\"#2a6fb0\"/>"
		"<text x=\"%d\" y=\"32\">rnsc</text>"
		"<rect x=\"%d\" y=\"24\" width=\"10\" height=\"8\" fill=\"#c9822b\"/>"
		"<text x=\"%d\" y=\"32\">Boost.Asio peer</text>\n",
		left, left + 14, left + 60, left + 74);
	for (size_t i = 0; i < n; i++) {
		char lab[96];
		cell_label(sel[i], lab, sizeof(lab));
		int y = top + (int)i * row;
		fprintf(f, "<text x=\"10\" y=\"%d\">%s</text>\n", y + 15, lab);
		double a = sel[i]->med_rnsc[metric], b = sel[i]->med_peer[metric];
		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"10\" fill=\"#2a6fb0\"/>"
			"<text x=\"%.1f\" y=\"%d\">%.0f</text>\n",
			left, y + 2, a / max * width, left + a / max * width + 4, y + 11, a);
		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"10\" fill=\"#c9822b\"/>"
			"<text x=\"%.1f\" y=\"%d\">%.0f</text>\n",
			left, y + 13, b / max * width, left + b / max * width + 4, y + 22, b);
	}
	fprintf(f, "</svg>\n");
	free(sel);
}

/* ---- command line ------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc bench echo [OPTIONS]\n"
		"       rnsc bench echo --one PROTO MODEL THREADS PAYLOAD CLIENTS WINDOW WARMUP "
		"MEASURE DRAIN\n\n"
		"Loopback echo over real sockets through rnsc's runtime (rnsc_loop and its IO\n"
		"models), side by side with the Boost.Asio peer (bench/peers/asio_echo) run the\n"
		"same way in the same session. Each run is a fresh process; every echo is checked\n"
		"byte for byte and for order, and a run with any error is reported invalid.\n\n"
		"  --protocols LIST  tcp, udp, tls, websocket, wss, http, https (default all;\n"
		"                    TLS ones use RNSC_ECHO_CERT/RNSC_ECHO_KEY, or a throw-away\n"
		"                    certificate made with the openssl CLI)\n"
		"  --payloads LIST   bytes per message (default 64,1024,16384)\n"
		"  --loads LIST      CLIENTSxWINDOW pairs (default 1x1,16x16; UDP uses window 1)\n"
		"  --models LIST     single, pool:N, sharded:N (default single,pool:2,sharded:2, plus\n"
		"                    sharded:4 with 4 or more CPUs)\n"
		"  --reps N          repetitions per cell (default 3, at most %d)\n"
		"  --warmup S --measure S --drain S   phases (default 0.25, 1.0, 2.0)\n"
		"  --quick           every protocol briefly: 1024 B, 1x1 and 16x16, single and\n"
		"                    sharded:2, 1 repetition, 0.05 s warm-up, 0.2 s measured\n"
		"  --peer PATH       the Asio peer (default: bench/peers/asio_echo in the build tree)\n"
		"  --no-peer         measure rnsc only\n"
		"  --json FILE  --md FILE  --svg-prefix PREFIX   reports (PREFIX-throughput.svg,\n"
		"                    PREFIX-p99.svg)\n"
		"  --one ...         one run in this process; prints the result line\n\n"
		"Exit status: 0 when every run completed without errors, 1 when a run was invalid,\n"
		"2 for a bad command line, 3 when the peer cannot be found.\n",
		MAX_REPS);
}

static int split(char *s, char **out, int max)
{
	int n = 0;
	for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
		out[n++] = tok;
	return n;
}

/* A program built in this build tree (<top>/src/cli/rnsc is this binary), or NULL. */
static char *build_tree_program(const char *rel)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = '\0';
	char *p = strstr(self, "/src/cli/");
	if (!p)
		return NULL;
	*p = '\0';
	char *out = NULL;
	if (asprintf(&out, "%s/%s", self, rel) < 0)
		return NULL;
	if (access(out, X_OK) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

int rnsc_bench_echo_main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--one"))
		return echo_run_main(argc - 1, argv + 1, "rnsc bench echo");
	static const struct option opts[] = {{"protocols", required_argument, NULL, 'P'},
					     {"payloads", required_argument, NULL, 'p'},
					     {"loads", required_argument, NULL, 'l'},
					     {"models", required_argument, NULL, 'm'},
					     {"reps", required_argument, NULL, 'r'},
					     {"warmup", required_argument, NULL, 'W'},
					     {"measure", required_argument, NULL, 'M'},
					     {"drain", required_argument, NULL, 'D'},
					     {"quick", no_argument, NULL, 'q'},
					     {"peer", required_argument, NULL, 'e'},
					     {"no-peer", no_argument, NULL, 'n'},
					     {"json", required_argument, NULL, 'j'},
					     {"md", required_argument, NULL, 'k'},
					     {"svg-prefix", required_argument, NULL, 's'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	char protocols[128] = "tcp,udp,tls,websocket,wss,http,https",
	     payloads[128] = "64,1024,16384", loads[128] = "1x1,16x16";
	char models[128] = "single,pool:2,sharded:2";
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 4)
		strcat(models, ",sharded:4");
	matrix_opts mo = {.warmup = 0.25, .measure = 1.0, .drain = 2.0, .reps = 3};
	const char *json = NULL, *md = NULL, *svg = NULL, *peer = NULL;
	int no_peer = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'P':
			snprintf(protocols, sizeof(protocols), "%s", optarg);
			break;
		case 'p':
			snprintf(payloads, sizeof(payloads), "%s", optarg);
			break;
		case 'l':
			snprintf(loads, sizeof(loads), "%s", optarg);
			break;
		case 'm':
			snprintf(models, sizeof(models), "%s", optarg);
			break;
		case 'r':
			mo.reps = atoi(optarg);
			break;
		case 'W':
			mo.warmup = strtod(optarg, NULL);
			break;
		case 'M':
			mo.measure = strtod(optarg, NULL);
			break;
		case 'D':
			mo.drain = strtod(optarg, NULL);
			break;
		case 'q':
			snprintf(payloads, sizeof(payloads), "1024");
			snprintf(models, sizeof(models), "single,sharded:2");
			mo.reps = 1, mo.warmup = 0.05, mo.measure = 0.2;
			break;
		case 'e':
			peer = optarg;
			break;
		case 'n':
			no_peer = 1;
			break;
		case 'j':
			json = optarg;
			break;
		case 'k':
			md = optarg;
			break;
		case 's':
			svg = optarg;
			break;
		case 'h':
			usage(stdout);
			return BENCH_OK;
		default:
			usage(stderr);
			return BENCH_USAGE;
		}
	}
	if (optind != argc || mo.reps < 1 || mo.reps > MAX_REPS || mo.warmup < 0 ||
	    mo.measure <= 0 || mo.drain <= 0) {
		usage(stderr);
		return BENCH_USAGE;
	}
	char *peer_alloc = NULL;
	if (!no_peer) {
		if (!peer)
			peer = peer_alloc = build_tree_program("bench/peers/asio_echo");
		if (!peer || access(peer, X_OK) != 0) {
			fprintf(stderr,
				"rnsc bench echo: the Boost.Asio peer is not built (install "
				"the Debian package 'libboost-dev' and re-run configure), or pass "
				"--peer PATH or --no-peer\n");
			return BENCH_SETUP;
		}
	}
	mo.peer = no_peer ? NULL : peer;
	/* rnsc's runs go to the runtime-only binary when it is built (its RSS is the runtime's,
	 * not that of a binary embedding Python); the reports say which one ran */
	char *lean = build_tree_program("bench/echo/rnsc-echo");
	mo.lean = lean;
	char self[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0) {
		free(peer_alloc);
		free(lean);
		return BENCH_SETUP;
	}
	self[sl] = '\0';

	char *pl[MAX_LIST], *sz[MAX_LIST], *ld[MAX_LIST], *ml[MAX_LIST];
	int npl = split(protocols, pl, MAX_LIST), nsz = split(payloads, sz, MAX_LIST);
	int nld = split(loads, ld, MAX_LIST), nml = split(models, ml, MAX_LIST);
	cell *cells = calloc((size_t)(npl * nsz * nld * nml) + 1, sizeof(cell));
	if (!cells) {
		free(peer_alloc);
		free(lean);
		return BENCH_FAIL;
	}
	size_t n = 0;
	for (int a = 0; a < npl; a++)
		for (int m = 0; m < nml; m++)
			for (int b = 0; b < nsz; b++)
				for (int d = 0; d < nld; d++) {
					cell *x = &cells[n];
					x->proto = pl[a];
					char mname[32];
					unsigned th = 1;
					if (sscanf(ml[m], "%31[a-z]:%u", mname, &th) < 1 ||
					    rnsc_io_model_from_name(mname, &x->model) != 0 ||
					    !echo_proto_known(pl[a]) || th < 1 || th > 64 ||
					    sscanf(ld[d], "%ux%u", &x->clients, &x->window) != 2) {
						fprintf(stderr,
							"rnsc bench echo: bad list entry\n");
						free(cells);
						free(peer_alloc);
						free(lean);
						return BENCH_USAGE;
					}
					x->threads = x->model == RNSC_IO_SINGLE ? 1 : th;
					if (x->model == RNSC_IO_POOL && th < 2)
						x->threads = 2;
					x->payload = strtoul(sz[b], NULL, 10);
					if (!strcmp(pl[a], "udp"))
						x->window = 1;
					n++;
				}
	int need_tls = 0;
	for (int a = 0; a < npl; a++)
		need_tls |= echo_proto_needs_tls(pl[a]);
	if (need_tls && echo_tls_material() != 0) {
		free(cells);
		free(peer_alloc);
		free(lean);
		return BENCH_SETUP;
	}
	printf("%-34s %12s %12s %8s %10s %10s\n", "cell", "rnsc rt/s", "peer rt/s", "ratio",
	       "rnsc p99", "peer p99");
	int all_valid = 1;
	for (size_t i = 0; i < n; i++) {
		run_cell(&cells[i], &mo, self);
		cell *x = &cells[i];
		char lab[96], r1[32], r2[32];
		cell_label(x, lab, sizeof(lab));
		fmt_rt(r1, sizeof(r1), x->med_rnsc[V_RT], x->valid_rnsc);
		fmt_rt(r2, sizeof(r2), x->med_peer[V_RT], x->valid_peer);
		if (!x->valid_rnsc || (mo.peer && !x->valid_peer))
			all_valid = 0;
		if (mo.peer)
			printf("%-34s %12s %12s %8.2f %10.0f %10.0f\n", lab, r1, r2,
			       x->med_peer[V_RT] > 0 ? x->med_rnsc[V_RT] / x->med_peer[V_RT] : 0.0,
			       x->med_rnsc[V_P99], x->med_peer[V_P99]);
		else
			printf("%-34s %12s %12s %8s %10.0f %10s\n", lab, r1, "-", "-",
			       x->med_rnsc[V_P99], "-");
		fflush(stdout);
	}
	int rc = all_valid ? BENCH_OK : BENCH_FAIL;
	FILE *f;
	if (json && (f = strcmp(json, "-") ? fopen(json, "w") : stdout)) {
		write_json(f, cells, n, &mo);
		if (f != stdout)
			fclose(f);
	} else if (json) {
		fprintf(stderr, "rnsc bench echo: cannot write %s: %s\n", json, strerror(errno));
		rc = BENCH_SETUP;
	}
	if (md && (f = fopen(md, "w"))) {
		write_md(f, cells, n, &mo);
		fclose(f);
	} else if (md) {
		fprintf(stderr, "rnsc bench echo: cannot write %s: %s\n", md, strerror(errno));
		rc = BENCH_SETUP;
	}
	if (svg) {
		static const struct {
			const char *suffix, *title;
			int metric;
		} charts[] = {{"throughput", "Round trips per second (higher is better)", V_RT},
			      {"p99", "RTT p99 in microseconds (lower is better)", V_P99}};
		for (size_t k = 0; k < 2; k++) {
			char path[PATH_MAX];
			snprintf(path, sizeof(path), "%s-%s.svg", svg, charts[k].suffix);
			if (!(f = fopen(path, "w"))) {
				fprintf(stderr, "rnsc bench echo: cannot write %s: %s\n", path,
					strerror(errno));
				rc = BENCH_SETUP;
				continue;
			}
			write_svg(f, cells, n, charts[k].metric, charts[k].title, -1, 0);
			fclose(f);
			/* and one chart per IO model */
			for (size_t i = 0; i < n; i++) {
				int seen = 0;
				for (size_t q = 0; q < i; q++)
					seen |= cells[q].model == cells[i].model &&
						cells[q].threads == cells[i].threads;
				if (seen)
					continue;
				char title[160], mdesc[48];
				snprintf(path, sizeof(path), "%s-%s-%s%u.svg", svg,
					 charts[k].suffix, rnsc_io_model_name(cells[i].model),
					 cells[i].threads);
				snprintf(title, sizeof(title), "%s, %s", charts[k].title,
					 model_desc(&cells[i], mdesc, sizeof(mdesc)));
				if (!(f = fopen(path, "w"))) {
					rc = BENCH_SETUP;
					continue;
				}
				write_svg(f, cells, n, charts[k].metric, title, (int)cells[i].model,
					  cells[i].threads);
				fclose(f);
			}
		}
	}
	if (!all_valid)
		fprintf(stderr,
			"rnsc bench echo: some runs were invalid (see the error counters)\n");
	free(cells);
	free(peer_alloc);
	free(lean);
	return rc;
}
