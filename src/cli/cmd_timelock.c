/* SPDX-License-Identifier: MIT */
/*
 * rnsc timelock: calibrate the strictly sequential RandomX chain, seal a file behind it, open
 * (resumably) a sealed file. The format and the chain are in src/lib/timelock.h; this file does
 * the I/O: files, progress, checkpoints, signals and the calibration report.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "machine.h"
#include "config.h"
#include "crypto.h"
#include "timelock.h"

/* open stopped before the end of the chain (--max-steps, or a signal) with its progress saved. */
#define TL_EXIT_PAUSED 4
#define CKPT_SUFFIX ".tlckpt"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc timelock calibrate [--mode full|light] [--workers 1] [--samples N] [--hashes H]\n"
		"                               [--algo v1|v2] [--impl own|librandomx] [--pages auto|4k|both]\n"
		"                               [--prefetch spec|hint] [--init-threads N] [--json]\n"
		"                               [--output FILE]\n"
		"       rnsc timelock seal --seconds S [--rate H/S | --steps N] [--checkpoint-every N]\n"
		"                          [--mode full|light] [--algo v1|v2] [--impl own|librandomx] IN OUT\n"
		"       rnsc timelock open [--mode full|light] [--impl own|librandomx] [--max-steps N]\n"
		"                          [--no-resume] [-f] IN OUT\n"
		"       rnsc timelock info IN\n"
		"\n"
		"Time-locks a file behind a strictly sequential RandomX hash chain: every hash input is the\n"
		"previous 32-byte result followed by a 4-byte little-endian step counter and a 32-byte\n"
		"per-file context (68 bytes), computed by one worker with no pipelining, so nobody can open\n"
		"the file much faster than the chain takes on one core. The RandomX key and the chain's seed\n"
		"are random per file. Sealing computes the same chain (a hash chain has no shortcut), so\n"
		"'seal --seconds S' takes about S seconds here, and about S seconds on a machine as fast.\n"
		"\n"
		"Commands:\n"
		"  calibrate   measure the chain's hash rate: median, min and max over --samples runs of\n"
		"              --hashes steps, with cache/dataset initialisation timed separately (and not in\n"
		"              the rate), the machine's environment and a JSON record. Without --algo and\n"
		"              --impl it compares own v1, own v2 and librandomx v1 in one run: all machines\n"
		"              of a page setting are built first (full mode: about 2.3 GiB each), then the\n"
		"              samples are taken round-robin so background load weighs on each alike.\n"
		"  seal        encrypt IN into OUT so that opening needs the whole chain. The step count is\n"
		"              --seconds times the rate measured on this machine (or --rate, or --steps).\n"
		"  open        run the chain for IN, then authenticate and decrypt it into OUT. Progress is\n"
		"              saved to OUT" CKPT_SUFFIX
		" every checkpoint interval and on Ctrl-C; running the same\n"
		"              command again resumes there. OUT is written only after authentication.\n"
		"  info        print a sealed file's header (algorithm, steps, expected time).\n"
		"\n"
		"Options:\n"
		"  --mode full|light      full-memory mode (2080 MiB dataset built with all cores, 5-9x\n"
		"                         faster per hash) or light mode (256 MiB cache). Same hashes\n"
		"                         either way. Default: full (open: the mode the file was sealed with).\n"
		"  --algo v1|v2           RandomX version (seal default: v2; calibrate default: both)\n"
		"  --impl own|librandomx  rnsc's own RandomX (v1, v2) or the system's librandomx (v1 only)\n"
		"  --pages auto|4k|both   huge pages when the system grants them (auto), never (4k), or\n"
		"                         calibrate each configuration both ways (both). Always reported.\n"
		"  --interp               use the portable interpreter instead of the JIT\n"
		"  --secure-jit           keep JIT code pages W^X (never writable and executable at once;\n"
		"                         two page-protection changes per program, a little slower). Also\n"
		"                         asks librandomx for its secure JIT.\n"
		"  --prefetch spec|hint   own v2 full-memory JIT: start each dataset item's TLB walk with\n"
		"                         a load that runs only speculatively and prefetch the line an\n"
		"                         iteration later (spec, the default), or fetch it with one\n"
		"                         prefetch instruction as upstream RandomX does (hint). Same\n"
		"                         hashes either way.\n"
		"  --init-threads N       threads for the dataset (default: all online CPUs)\n"
		"  --workers 1            chain workers; a sequential chain has exactly one\n"
		"  --samples N            calibration samples (default 5)\n"
		"  --hashes H             chain steps per sample (default 300 full, 40 light)\n"
		"  --json                 print the calibration as JSON only\n"
		"  --output FILE          also write the calibration JSON record to FILE\n"
		"  --seconds S            seal: target opening time in seconds on a machine like this one\n"
		"  --rate R               seal: use R hashes per second instead of measuring\n"
		"  --steps N              seal: use exactly N chain steps (1 .. 4294967295)\n"
		"  --checkpoint-every N   seal: steps between checkpoints when opening (default: a minute)\n"
		"  --max-steps N          open: stop after N more steps, saving a checkpoint\n"
		"  --no-resume            open: ignore an existing checkpoint and start from step 0\n"
		"  -f, --force            open: overwrite OUT if it exists\n"
		"  -q, --quiet            no progress bar (it is only drawn on a terminal anyway)\n"
		"      --crypto LIST      crypto backend order (the randomx plugin is always added)\n"
		"  -h, --help             show this help\n"
		"\n"
		"Exit status: 0 success; 1 the file was rejected (not a timelock file, unsupported format\n"
		"version, truncated, header corrupted, authentication failed: nothing is written) or the\n"
		"operation failed; 2 usage error; 3 environment problem (unreadable IN, unwritable or\n"
		"existing OUT, no RandomX backend, memory for the dataset); 4 open stopped before the end of\n"
		"the chain with its checkpoint saved (run it again to continue).\n");
}

/* ---- options ------------------------------------------------------------------------------ */

typedef struct tl_opts {
	const char *sub;
	int mode;  /* -1 default, else enum rnsc_tl_mode */
	int algo;  /* 0 default/all, 1, 2 */
	int impl;  /* -1 default/all, 0 own, 1 librandomx */
	int pages; /* 0 auto, 1 4k, 2 both */
	int interp;
	int secure_jit;    /* W^X JIT pages for every machine of the run */
	int prefetch_hint; /* own full-memory JIT: prefetchnta instead of the speculative load */
	unsigned init_threads;
	unsigned samples;
	unsigned hashes;
	int json;
	const char *output;
	double seconds;
	double rate;
	uint64_t steps;
	uint64_t ckpt_every;
	uint64_t max_steps;
	int no_resume, force, quiet, verbose;
	const char *crypto;
	const char *in, *out;
} tl_opts;

static int parse_u64(const char *s, uint64_t *out, uint64_t lo, uint64_t hi)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int bad(const char *opt, const char *val)
{
	fprintf(stderr, "rnsc timelock: invalid value '%s' for %s (see 'rnsc timelock --help')\n",
		val, opt);
	return CLI_USAGE;
}

static int parse_opts(tl_opts *o, int argc, char **argv)
{
	enum {
		O_MODE = 256,
		O_ALGO,
		O_IMPL,
		O_PAGES,
		O_INTERP,
		O_THREADS,
		O_WORKERS,
		O_SAMPLES,
		O_HASHES,
		O_JSON,
		O_OUTPUT,
		O_SECONDS,
		O_RATE,
		O_STEPS,
		O_CKPT,
		O_MAX,
		O_NORESUME,
		O_CRYPTO,
		O_SECURE_JIT,
		O_PREFETCH
	};
	static const struct option opts[] = {{"mode", required_argument, NULL, O_MODE},
					     {"algo", required_argument, NULL, O_ALGO},
					     {"impl", required_argument, NULL, O_IMPL},
					     {"pages", required_argument, NULL, O_PAGES},
					     {"interp", no_argument, NULL, O_INTERP},
					     {"secure-jit", no_argument, NULL, O_SECURE_JIT},
					     {"prefetch", required_argument, NULL, O_PREFETCH},
					     {"init-threads", required_argument, NULL, O_THREADS},
					     {"workers", required_argument, NULL, O_WORKERS},
					     {"samples", required_argument, NULL, O_SAMPLES},
					     {"hashes", required_argument, NULL, O_HASHES},
					     {"json", no_argument, NULL, O_JSON},
					     {"output", required_argument, NULL, O_OUTPUT},
					     {"seconds", required_argument, NULL, O_SECONDS},
					     {"rate", required_argument, NULL, O_RATE},
					     {"steps", required_argument, NULL, O_STEPS},
					     {"checkpoint-every", required_argument, NULL, O_CKPT},
					     {"max-steps", required_argument, NULL, O_MAX},
					     {"no-resume", no_argument, NULL, O_NORESUME},
					     {"force", no_argument, NULL, 'f'},
					     {"quiet", no_argument, NULL, 'q'},
					     {"verbose", no_argument, NULL, 'v'},
					     {"crypto", required_argument, NULL, O_CRYPTO},
					     {"help", no_argument, NULL, 'h'},
					     {0, 0, 0, 0}};
	uint64_t v;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "fqvh", opts, NULL)) != -1) {
		switch (c) {
		case O_MODE:
			if (!strcmp(optarg, "full"))
				o->mode = RNSC_TL_MODE_FULL;
			else if (!strcmp(optarg, "light"))
				o->mode = RNSC_TL_MODE_LIGHT;
			else
				return bad("--mode", optarg);
			break;
		case O_ALGO:
			if (!strcmp(optarg, "v1") || !strcmp(optarg, "1"))
				o->algo = 1;
			else if (!strcmp(optarg, "v2") || !strcmp(optarg, "2"))
				o->algo = 2;
			else
				return bad("--algo", optarg);
			break;
		case O_IMPL:
			if (!strcmp(optarg, "own"))
				o->impl = 0;
			else if (!strcmp(optarg, "librandomx"))
				o->impl = 1;
			else
				return bad("--impl", optarg);
			break;
		case O_PAGES:
			if (!strcmp(optarg, "auto"))
				o->pages = 0;
			else if (!strcmp(optarg, "4k"))
				o->pages = 1;
			else if (!strcmp(optarg, "both"))
				o->pages = 2;
			else
				return bad("--pages", optarg);
			break;
		case O_INTERP:
			o->interp = 1;
			break;
		case O_SECURE_JIT:
			o->secure_jit = 1;
			break;
		case O_PREFETCH:
			if (!strcmp(optarg, "spec"))
				o->prefetch_hint = 0;
			else if (!strcmp(optarg, "hint"))
				o->prefetch_hint = 1;
			else
				return bad("--prefetch", optarg);
			break;
		case O_THREADS:
			if (parse_u64(optarg, &v, 1, 1024))
				return bad("--init-threads", optarg);
			o->init_threads = (unsigned)v;
			break;
		case O_WORKERS:
			if (parse_u64(optarg, &v, 1, 1024))
				return bad("--workers", optarg);
			if (v != 1) {
				fprintf(stderr,
					"rnsc timelock: --workers %s: the chain is strictly "
					"sequential, so it has exactly one worker\n",
					optarg);
				return CLI_USAGE;
			}
			break;
		case O_SAMPLES:
			if (parse_u64(optarg, &v, 1, 1000))
				return bad("--samples", optarg);
			o->samples = (unsigned)v;
			break;
		case O_HASHES:
			if (parse_u64(optarg, &v, 1, 10000000))
				return bad("--hashes", optarg);
			o->hashes = (unsigned)v;
			break;
		case O_JSON:
			o->json = 1;
			break;
		case O_OUTPUT:
			o->output = optarg;
			break;
		case O_SECONDS: {
			char *end;
			o->seconds = strtod(optarg, &end);
			if (*end || !(o->seconds > 0) || o->seconds > 1e9)
				return bad("--seconds", optarg);
			break;
		}
		case O_RATE: {
			char *end;
			o->rate = strtod(optarg, &end);
			if (*end || !(o->rate > 0) || o->rate > 1e7)
				return bad("--rate", optarg);
			break;
		}
		case O_STEPS:
			if (parse_u64(optarg, &o->steps, 1, RNSC_TL_MAX_STEPS))
				return bad("--steps", optarg);
			break;
		case O_CKPT:
			if (parse_u64(optarg, &o->ckpt_every, 1, UINT32_MAX))
				return bad("--checkpoint-every", optarg);
			break;
		case O_MAX:
			if (parse_u64(optarg, &o->max_steps, 1, RNSC_TL_MAX_STEPS))
				return bad("--max-steps", optarg);
			break;
		case O_NORESUME:
			o->no_resume = 1;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'v':
			o->verbose++;
			break;
		case O_CRYPTO:
			o->crypto = optarg;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	return 0;
}

/* ---- environment: context with the randomx backend --------------------------------------- */

static int open_env(cli_env *env, const tl_opts *o)
{
	int rc = cli_env_open(env, o->crypto, o->verbose);
	if (rc)
		return rc;
	/* An explicit order ("sodium, openssl") would leave RandomX unserved: the randomx
	 * plugin serves nothing else, so adding it at the end changes no other primitive. */
	const char *order = o->crypto ? o->crypto : getenv("RNSC_CRYPTO");
	if (!rnsc_crypto_provider(env->ctx, RNSC_PRIM_RANDOMX) &&
	    rnsc_crypto_backend_find(env->ctx, "randomx") && order && *order) {
		char buf[600];
		snprintf(buf, sizeof(buf), "%s,randomx", order);
		(void)rnsc_crypto_set_order(env->ctx, buf);
	}
	if (!rnsc_crypto_provider(env->ctx, RNSC_PRIM_RANDOMX)) {
		fprintf(stderr,
			"rnsc timelock: no crypto backend serves RandomX: the randomx plugin "
			"is not loaded (it needs libsodium-dev at build time; see 'rnsc plugins')\n");
		cli_env_close(env);
		return CLI_SETUP;
	}
	return CLI_OK;
}

static uint32_t machine_flags(const tl_opts *o, int algo, int impl, int mode, int no_huge)
{
	uint32_t f = algo == 2 ? RNSC_RANDOMX_V2 : 0;
	if (mode == RNSC_TL_MODE_FULL)
		f |= RNSC_RANDOMX_FULL;
	if (o->interp)
		f |= RNSC_RANDOMX_INTERP;
	if (o->secure_jit)
		f |= RNSC_RANDOMX_SECURE_JIT;
	if (o->prefetch_hint && impl == 0)
		f |= RNSC_RANDOMX_PREFETCH_NTA;
	if (no_huge)
		f |= RNSC_RANDOMX_NO_HUGE;
	f |= impl == 1 ? RNSC_RANDOMX_IMPL_LIBRANDOMX : RNSC_RANDOMX_IMPL_OWN;
	return f;
}

/* Builds a machine, turning failures into messages that say what to do. */
static int build_machine(cli_env *env, rnsc_randomx **rx, uint32_t flags, const uint8_t key[32],
			 unsigned threads, int announce)
{
	int full = (flags & RNSC_RANDOMX_FULL) != 0;
	int lib = (flags & RNSC_RANDOMX_IMPL_MASK) == RNSC_RANDOMX_IMPL_LIBRANDOMX;
	if (announce)
		fprintf(stderr, "rnsc timelock: building the RandomX %s (%s, v%d)...\n",
			full ? "dataset (2080 MiB, all cores; tens of seconds)" : "cache (256 MiB)",
			lib ? "librandomx" : "own", (flags & RNSC_RANDOMX_V2) ? 2 : 1);
	errno = 0;
	int rc = rnsc_randomx_new(env->ctx, rx, flags, key, 32, threads);
	if (rc == 0)
		return CLI_OK;
	int e = errno;
	if (rc == RNSC_ERR_NOMEM)
		fprintf(stderr,
			"rnsc timelock: cannot allocate the RandomX %s: %s. Full-memory mode "
			"needs about 2.3 GiB free; try --mode light (256 MiB).\n",
			full ? "dataset" : "cache", e ? strerror(e) : "out of memory");
	else if (rc == RNSC_ERR_NOPRIM)
		fprintf(stderr, "rnsc timelock: %s RandomX v%d is not available here%s\n",
			lib ? "librandomx" : "rnsc's own", (flags & RNSC_RANDOMX_V2) ? 2 : 1,
			lib ? " (librandomx implements v1 only, and needs librandomx-dev at build time)"
			    : "");
	else
		fprintf(stderr, "rnsc timelock: cannot build the RandomX machine: %s\n",
			rnsc_strerror(rc));
	return CLI_SETUP;
}

/* Value of key in a "k=v k=v" line (empty when absent). */
static void kv(const char *info, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	out[0] = '\0';
	for (const char *p = info; p && *p;) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			p += kl + 1;
			size_t n = strcspn(p, " ");
			if (n >= cap)
				n = cap - 1;
			memcpy(out, p, n);
			out[n] = '\0';
			return;
		}
		p += strcspn(p, " ");
	}
}

static double kv_d(const char *info, const char *key)
{
	char b[64];
	kv(info, key, b, sizeof(b));
	return b[0] ? atof(b) : 0.0;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- progress ----------------------------------------------------------------------------- */

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

typedef struct progress {
	cli_env *env;
	int bar; /* draw on stderr (a terminal, not --quiet) */
	double t0, last;
	uint64_t pos0; /* where this run started (rate excludes resumed steps) */
	const char *label;
	/* open: checkpoints */
	const char *ckpt_path;
	uint64_t ckpt_every;
	rnsc_timelock_chain *chain;
	int ckpt_error;
} progress;

static void fmt_hms(char *out, size_t cap, double s)
{
	if (!(s >= 0) || s > 1e9) {
		snprintf(out, cap, "--:--:--");
		return;
	}
	unsigned long t = (unsigned long)(s + 0.5);
	snprintf(out, cap, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
}

static void draw(progress *p, uint64_t pos, uint64_t steps, int final)
{
	double t = now_s();
	if (!p->bar || (!final && t - p->last < 0.2))
		return;
	p->last = t;
	double frac = steps ? (double)pos / (double)steps : 1.0;
	double rate = t > p->t0 ? (double)(pos - p->pos0) / (t - p->t0) : 0.0;
	char eta[32], bar[41];
	fmt_hms(eta, sizeof(eta), rate > 0 ? (double)(steps - pos) / rate : -1);
	int fill = (int)(frac * 40);
	for (int i = 0; i < 40; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[40] = '\0';
	fprintf(stderr, "\r%s [%s] %5.1f%% %llu/%llu steps %7.1f H/s ETA %s ", p->label, bar,
		100.0 * frac, (unsigned long long)pos, (unsigned long long)steps, rate, eta);
	if (final)
		fputc('\n', stderr);
	fflush(stderr);
}

/* Writes len bytes to path via a temporary file in the same folder and a rename, so a reader
 * (or a crash) never sees a half-written file. mode: permissions of the new file. */
static int write_atomic(const char *path, const uint8_t *buf, size_t len, mode_t mode)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		off += (size_t)w;
	}
	if (fchmod(fd, mode) != 0 || fsync(fd) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) != 0)
		goto fail;
	return 0;
fail:;
	int e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = e;
	return -1;
}

static int save_checkpoint(progress *p)
{
	uint8_t ck[RNSC_TL_CKPT_LEN];
	int rc = rnsc_timelock_checkpoint_encode(p->env->ctx, ck, p->chain);
	if (rc == 0 && write_atomic(p->ckpt_path, ck, sizeof(ck), 0600) != 0) {
		if (!p->ckpt_error)
			fprintf(stderr, "\nrnsc timelock: cannot write checkpoint %s: %s\n",
				p->ckpt_path, strerror(errno));
		p->ckpt_error = 1;
		rc = RNSC_ERR_IO;
	}
	return rc;
}

static int on_progress(void *ud, uint64_t pos, uint64_t steps)
{
	progress *p = ud;
	draw(p, pos, steps, pos == steps);
	if (p->ckpt_path && p->ckpt_every && pos % p->ckpt_every == 0 && pos != steps)
		(void)save_checkpoint(p);
	return g_stop != 0;
}

/* ---- files -------------------------------------------------------------------------------- */

static int read_all(const char *path, uint64_t max, uint8_t **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int e = errno ? errno : EINVAL;
		close(fd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : e;
		return -1;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		errno = EFBIG;
		return -1;
	}
	size_t n = (size_t)st.st_size;
	uint8_t *b = malloc(n ? n : 1);
	if (!b) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	size_t off = 0;
	while (off < n) {
		ssize_t r = read(fd, b + off, n - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	close(fd);
	*out = b;
	*len = off;
	return 0;
}

/* ---- calibrate ---------------------------------------------------------------------------- */

typedef struct cal_run {
	int impl, algo, no_huge;
	int group; /* machines of one group exist together and are sampled round-robin */
	int ok;
	char info[512];
	double *hs;
	unsigned n;
	double median, min, max;
} cal_run;

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

typedef struct env_info {
	rnsc_machine m;
	char backend[512];
} env_info;

static void gather_env(cli_env *env, env_info *e)
{
	memset(e, 0, sizeof(*e));
	rnsc_machine_read(&e->m);
	if (rnsc_randomx_backend_info(env->ctx, e->backend, sizeof(e->backend)) < 0)
		e->backend[0] = '\0';
}

static void json_kv_str(FILE *f, const char *k, const char *v, int comma)
{
	fprintf(f, "%s\"%s\": ", comma ? ", " : "", k);
	cli_json_str(f, v);
}

static void print_json(FILE *f, const tl_opts *o, const env_info *e, const cal_run *runs, size_t nr,
		       unsigned hashes, const char *targets_json, const double load[2])
{
	char date[64];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	char lib[64];
	kv(e->backend, "librandomx_version", lib, sizeof(lib));
	fprintf(f, "{");
	json_kv_str(f, "tool", "rnsc timelock calibrate", 0);
	json_kv_str(f, "rnsc_version", PACKAGE_VERSION, 1);
	json_kv_str(f, "date", date, 1);
	json_kv_str(f, "mode", o->mode == RNSC_TL_MODE_LIGHT ? "light" : "full", 1);
	fprintf(f, ", \"workers\": 1, \"samples\": %u, \"hashes_per_sample\": %u", o->samples,
		hashes);
	fprintf(f, ", \"init_threads\": %ld", o->init_threads ? (long)o->init_threads : e->m.cores);
	fprintf(f, ",\n  \"chain\": ");
	cli_json_str(f, "x[i+1] = RandomX_K(x[i] || LE32(i) || context32), 68-byte input, one "
			"worker, no pipelining; key and seed random per run");
	fprintf(f, ",\n  \"environment\": {");
	json_kv_str(f, "cpu_model", e->m.cpu, 0);
	json_kv_str(f, "cpu_flags", e->m.flags, 1);
	fprintf(f, ", \"cores_online\": %ld", e->m.cores);
	json_kv_str(f, "kernel", e->m.kernel, 1);
	fprintf(f, ", \"page_size\": %ld", e->m.page_size);
	json_kv_str(f, "thp_enabled", e->m.thp, 1);
	json_kv_str(f, "thp_defrag", e->m.defrag, 1);
	fprintf(f,
		", \"hugetlb_pages_total\": %ld, \"hugetlb_pages_free\": %ld, \"hugepage_kb\": %ld",
		e->m.huge_total, e->m.huge_free, e->m.huge_kb);
	json_kv_str(f, "compiler", e->m.compiler, 1);
	json_kv_str(f, "librandomx_version", lib[0] ? lib : "not built", 1);
	json_kv_str(f, "randomx_backend", e->backend, 1);
	/* Other processes share the cores: the 1-minute load average before and after says how
	 * much (the samples are interleaved so every configuration sees the same load). */
	fprintf(f, ", \"loadavg_1min_before\": %.2f, \"loadavg_1min_after\": %.2f", load[0],
		load[1]);
	fprintf(f, "},\n  \"runs\": [");
	for (size_t i = 0; i < nr; i++) {
		const cal_run *r = &runs[i];
		char v[64];
		fprintf(f, "%s\n    {", i ? "," : "");
		json_kv_str(f, "impl", r->impl ? "librandomx" : "own", 0);
		json_kv_str(f, "algo", r->algo == 2 ? "v2" : "v1", 1);
		json_kv_str(f, "huge_pages_requested", r->no_huge ? "no" : "yes", 1);
		fprintf(f, ", \"group\": %d", r->group);
		fprintf(f, ", \"ok\": %s", r->ok ? "true" : "false");
		static const char *const keys[] = {"impl_version", "pages", "cache_pages", "jit",
						   "jit_pages",    "aes",   "prefetch"};
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			kv(r->info, keys[k], v, sizeof(v));
			json_kv_str(f, keys[k], v, 1);
		}
		fprintf(f, ", \"thp_mib\": %.0f, \"init_threads\": %.0f",
			kv_d(r->info, "thp_kb") / 1024.0, kv_d(r->info, "init_threads"));
		fprintf(f, ", \"cache_init_s\": %.3f, \"dataset_init_s\": %.3f, \"init_s\": %.3f",
			kv_d(r->info, "cache_s"), kv_d(r->info, "dataset_s"),
			kv_d(r->info, "cache_s") + kv_d(r->info, "dataset_s"));
		fprintf(f,
			", \"hs_median\": %.2f, \"hs_min\": %.2f, \"hs_max\": %.2f, \"hs_samples\": [",
			r->median, r->min, r->max);
		for (unsigned s = 0; s < r->n; s++)
			fprintf(f, "%s%.2f", s ? ", " : "", r->hs[s]);
		fprintf(f, "]}");
	}
	fprintf(f, "\n  ],\n  \"targets\": [%s\n  ]\n}\n", targets_json);
}

/* The targets, computed from runs measured in this same process. Pairs are taken from
 * the same page setting group (machines built together, samples interleaved). */
static const cal_run *find_run(const cal_run *runs, size_t nr, int impl, int algo,
			       const char *pages, int group)
{
	for (size_t i = 0; i < nr; i++) {
		char p[16];
		kv(runs[i].info, "pages", p, sizeof(p));
		if (runs[i].ok && runs[i].impl == impl && runs[i].algo == algo &&
		    (group < 0 || runs[i].group == group) && (!pages || !strcmp(p, pages)))
			return &runs[i];
	}
	return NULL;
}

static void add_target(char *json, size_t cap, FILE *txt, const char *name, double ratio,
		       double goal)
{
	int met = ratio >= goal;
	size_t l = strlen(json);
	snprintf(json + l, cap - l,
		 "%s\n    {\"target\": \"%s\", \"ratio\": %.3f, \"goal\": %.2f, \"met\": %s}",
		 l ? "," : "", name, ratio, goal, met ? "true" : "false");
	if (txt)
		fprintf(txt, "  %-64s %6.3f  (goal >= %.2f) %s\n", name, ratio, goal,
			met ? "met" : "NOT MET");
}

static void targets(const cal_run *runs, size_t nr, int full, char *json, size_t cap, FILE *txt)
{
	json[0] = '\0';
	static const char *const pagesets[] = {"4k", "thp", "hugetlb"};
	char name[160];
	for (int g = 0; g < 2; g++)
		for (size_t i = 0; i < 3; i++) {
			const cal_run *own = find_run(runs, nr, 0, 1, pagesets[i], g);
			const cal_run *lib = find_run(runs, nr, 1, 1, pagesets[i], g);
			if (!own || !lib || lib->median <= 0)
				continue;
			snprintf(name, sizeof(name),
				 "own v1 %s / librandomx v1 %s, same pages (%s)",
				 strstr(own->info, "jit=on") ? "JIT" : "interp",
				 strstr(lib->info, "jit=on") ? "JIT" : "interp", pagesets[i]);
			add_target(json, cap, txt, name, own->median / lib->median, 1.0);
			if (full && kv_d(own->info, "dataset_s") > 0) {
				snprintf(name, sizeof(name),
					 "dataset init speed own / librandomx (%s)", pagesets[i]);
				add_target(json, cap, txt, name,
					   kv_d(lib->info, "dataset_s") /
						   kv_d(own->info, "dataset_s"),
					   1.0);
			}
		}
	const cal_run *own2 = NULL;
	for (size_t i = 0; i < nr; i++)
		if (runs[i].ok && runs[i].impl == 0 && runs[i].algo == 2 &&
		    (!own2 || runs[i].median > own2->median))
			own2 = &runs[i];
	/* Prefer the 4 KiB librandomx run sampled round-robin with own v2 (same group). */
	const cal_run *lib4k = own2 ? find_run(runs, nr, 1, 1, "4k", own2->group) : NULL;
	if (!lib4k)
		lib4k = find_run(runs, nr, 1, 1, "4k", -1);
	if (full && own2 && lib4k && lib4k->median > 0) {
		char p[16];
		kv(own2->info, "pages", p, sizeof(p));
		snprintf(name, sizeof(name), "own v2 full (%s) / librandomx v1 full (4k)", p);
		add_target(json, cap, txt, name, own2->median / lib4k->median, 1.6);
	}
}

/* The configurations to measure: own v1, own v2, librandomx v1 unless narrowed down, per
 * page setting (group). Returns how many went into runs (at most 12). */
static size_t plan_runs(const tl_opts *o, int have_lib, cal_run runs[12])
{
	size_t nr = 0;
	static const int cfg[3][2] = {{0, 1}, {0, 2}, {1, 1}};
	for (int pg = 0; pg < 2; pg++) {
		int no_huge = o->pages == 1 || (o->pages == 2 && pg == 1);
		if (pg == 1 && o->pages != 2)
			break;
		for (int i = 0; i < 3; i++) {
			if ((o->impl >= 0 && cfg[i][0] != o->impl) ||
			    (o->algo && cfg[i][1] != o->algo))
				continue;
			if (cfg[i][0] == 1 && !have_lib)
				continue;
			runs[nr] = (cal_run){.impl = cfg[i][0],
					     .algo = cfg[i][1],
					     .no_huge = no_huge,
					     .group = pg};
			nr++;
		}
		/* The v2 target compares own v2 on huge pages with librandomx v1 on 4 KiB pages: with
		 * both page settings, the huge-page group also carries a 4 KiB librandomx machine so
		 * that this pair is sampled round-robin too, not minutes apart. */
		if (pg == 0 && o->pages == 2 && o->mode == RNSC_TL_MODE_FULL && have_lib &&
		    o->impl < 0 && !o->algo) {
			runs[nr] = (cal_run){.impl = 1, .algo = 1, .no_huge = 1, .group = 0};
			nr++;
		}
	}
	return nr;
}

static void print_env_text(const tl_opts *o, const env_info *e, unsigned hashes)
{
	printf("RandomX timelock calibration: strictly sequential chain, 1 worker, no pipelining\n"
	       "mode %s, %u samples x %u steps, key and seed random per run, init excluded from H/s\n\n",
	       o->mode == RNSC_TL_MODE_FULL ? "full-memory (2080 MiB dataset)"
					    : "light (256 MiB cache)",
	       o->samples, hashes);
	printf("Environment\n  CPU        %s (%ld online)\n  CPU flags  %s\n  kernel     %s\n"
	       "  pages      base %ld B; THP enabled [%s], defrag [%s]; hugetlb %ld total, %ld free (%ld kB)\n"
	       "  compiler   %s\n  backend    %s\n\n",
	       e->m.cpu, e->m.cores, e->m.flags, e->m.kernel, e->m.page_size, e->m.thp, e->m.defrag,
	       e->m.huge_total, e->m.huge_free, e->m.huge_kb, e->m.compiler, e->backend);
	fflush(stdout);
}

/* One page-setting group runs[g0..g1): every machine is built first (initialisation timed on
 * its own), then the samples are taken round-robin, so that load from other processes, which
 * comes and goes, weighs on every configuration alike. Returns the failures. */
static int measure_group(cli_env *envp, const tl_opts *o, cal_run *runs, size_t g0, size_t g1,
			 size_t nr, unsigned hashes)
{
	int failures = 0, rc;
	rnsc_randomx *rx[12] = {NULL};
	rnsc_timelock_chain ch[12];
	for (size_t i = g0; i < g1 && !g_stop; i++) {
		cal_run *r = &runs[i];
		memset(&ch[i], 0, sizeof(ch[i]));
		uint8_t key[32];
		/* Key, seed and context random per run, as for a sealed file. */
		if (rnsc_random(envp->ctx, key, 32) || rnsc_random(envp->ctx, ch[i].x, 32) ||
		    rnsc_random(envp->ctx, ch[i].context, 32)) {
			fprintf(stderr, "rnsc timelock: the random number generator failed\n");
			failures++;
			continue;
		}
		ch[i].steps = RNSC_TL_MAX_STEPS;
		if (!o->json)
			fprintf(stderr, "[%zu/%zu] %s v%d%s: initialising...\n", i + 1, nr,
				r->impl ? "librandomx" : "own", r->algo,
				r->no_huge ? ", 4 KiB pages" : "");
		if (build_machine(envp, &rx[i],
				  machine_flags(o, r->algo, r->impl, o->mode, r->no_huge), key,
				  o->init_threads, 0) != CLI_OK) {
			failures++;
			continue;
		}
		if (rnsc_randomx_info(rx[i], r->info, sizeof(r->info)) < 0)
			r->info[0] = '\0';
		r->hs = calloc(o->samples, sizeof(double));
		/* Warm-up: first touches of scratchpad and code, outside the measurement. */
		if (!r->hs || rnsc_timelock_chain_run(&ch[i], rx[i], 3, 0, NULL, NULL) != 0) {
			rnsc_randomx_del(rx[i]);
			rx[i] = NULL;
			failures++;
			continue;
		}
		if (!o->json)
			fprintf(stderr,
				"      init %.2f s (cache %.2f s, dataset %.2f s), %s pages\n",
				kv_d(r->info, "cache_s") + kv_d(r->info, "dataset_s"),
				kv_d(r->info, "cache_s"), kv_d(r->info, "dataset_s"),
				strstr(r->info, "pages=thp")       ? "transparent huge"
				: strstr(r->info, "pages=hugetlb") ? "reserved huge"
								   : "4 KiB");
	}
	for (unsigned s = 0; s < o->samples && !g_stop; s++) {
		for (size_t i = g0; i < g1 && !g_stop; i++) {
			cal_run *r = &runs[i];
			if (!rx[i])
				continue;
			uint64_t p0 = ch[i].pos;
			double t0 = now_s();
			rc = rnsc_timelock_chain_run(&ch[i], rx[i], hashes, 0, NULL, NULL);
			double dt = now_s() - t0;
			if (rc == 0 && ch[i].pos == p0 + hashes && dt > 0) {
				r->hs[r->n++] = (double)hashes / dt;
			} else {
				fprintf(stderr, "rnsc timelock: hashing failed: %s\n",
					rnsc_strerror(rc));
				rnsc_randomx_del(rx[i]);
				rx[i] = NULL;
				r->n = 0;
				failures++;
			}
		}
	}
	for (size_t i = g0; i < g1; i++) {
		cal_run *r = &runs[i];
		if (!rx[i])
			continue;
		/* The page report after the run: what the kernel backed by then. */
		if (rnsc_randomx_info(rx[i], r->info, sizeof(r->info)) < 0)
			r->info[0] = '\0';
		rnsc_randomx_del(rx[i]);
		if (!r->n || g_stop)
			continue;
		double *sorted = malloc(r->n * sizeof(double));
		if (!sorted)
			continue;
		memcpy(sorted, r->hs, r->n * sizeof(double));
		qsort(sorted, r->n, sizeof(double), cmp_d);
		r->min = sorted[0];
		r->max = sorted[r->n - 1];
		r->median =
			r->n % 2 ? sorted[r->n / 2] : (sorted[r->n / 2 - 1] + sorted[r->n / 2]) / 2;
		free(sorted);
		r->ok = 1;
		if (!o->json)
			fprintf(stderr, "%s v%d%s: %.1f H/s median\n",
				r->impl ? "librandomx" : "own", r->algo,
				r->no_huge ? " (4 KiB pages)" : "", r->median);
	}
	return failures;
}

static void print_table(const cal_run *runs, size_t nr)
{
	printf("%-10s %-4s %-7s %-9s %-4s %-4s %-5s %-7s %8s %8s %9s %9s %9s %9s\n", "impl", "algo",
	       "pages", "thp MiB", "jit", "aes", "fetch", "threads", "cache s", "dataset s",
	       "init s", "H/s med", "H/s min", "H/s max");
	for (size_t i = 0; i < nr; i++) {
		const cal_run *r = &runs[i];
		char pages[16], jit[8], aes[8], fetch[8];
		kv(r->info, "pages", pages, sizeof(pages));
		kv(r->info, "jit", jit, sizeof(jit));
		kv(r->info, "aes", aes, sizeof(aes));
		kv(r->info, "prefetch", fetch, sizeof(fetch));
		if (!r->ok) {
			printf("%-10s v%-3d %-7s failed\n", r->impl ? "librandomx" : "own", r->algo,
			       r->no_huge ? "4k" : "auto");
			continue;
		}
		printf("%-10s v%-3d %-7s %-9.0f %-4s %-4s %-5s %-7.0f %8.2f %9.2f %9.2f %9.1f %9.1f "
		       "%9.1f\n",
		       r->impl ? "librandomx" : "own", r->algo, pages,
		       kv_d(r->info, "thp_kb") / 1024.0, jit, aes, fetch,
		       kv_d(r->info, "init_threads"), kv_d(r->info, "cache_s"),
		       kv_d(r->info, "dataset_s"),
		       kv_d(r->info, "cache_s") + kv_d(r->info, "dataset_s"), r->median, r->min,
		       r->max);
	}
}

static int cmd_calibrate(tl_opts *o)
{
	if (o->in) {
		fprintf(stderr, "rnsc timelock calibrate: unexpected argument '%s'\n", o->in);
		return CLI_USAGE;
	}
	if (o->mode < 0)
		o->mode = RNSC_TL_MODE_FULL;
	if (!o->samples)
		o->samples = 5;
	unsigned hashes = o->hashes ? o->hashes : o->mode == RNSC_TL_MODE_FULL ? 300 : 40;
	cli_env env;
	int rc = open_env(&env, o);
	if (rc)
		return rc;
	env_info e;
	gather_env(&env, &e);
	int have_lib = strstr(e.backend, "librandomx") != NULL;
	if (o->impl == 1 && !have_lib) {
		fprintf(stderr, "rnsc timelock: this build has no librandomx (install the Debian "
				"package 'librandomx-dev' and reconfigure)\n");
		cli_env_close(&env);
		return CLI_SETUP;
	}
	if (o->impl == 1 && o->algo == 2) {
		fprintf(stderr, "rnsc timelock: librandomx implements RandomX v1 only\n");
		cli_env_close(&env);
		return CLI_USAGE;
	}
	cal_run runs[12];
	size_t nr = plan_runs(o, have_lib, runs);
	FILE *txt = o->json ? NULL : stdout;
	if (txt) {
		print_env_text(o, &e, hashes);
		fflush(stdout);
	}
	catch_signals();
	int failures = 0;
	double load0[3] = {0, 0, 0}, load1[3] = {0, 0, 0};
	if (getloadavg(load0, 3) < 0)
		load0[0] = -1;
	for (size_t g0 = 0, g1; g0 < nr && !g_stop; g0 = g1) {
		for (g1 = g0; g1 < nr && runs[g1].group == runs[g0].group; g1++)
			;
		failures += measure_group(&env, o, runs, g0, g1, nr, hashes);
	}
	if (getloadavg(load1, 3) < 0)
		load1[0] = -1;
	if (g_stop) {
		fprintf(stderr, "rnsc timelock: interrupted\n");
		failures++;
	}
	if (txt)
		print_table(runs, nr);
	const double loads[2] = {load0[0], load1[0]};
	if (txt)
		printf("\nLoad average (1 min) before %.2f, after %.2f on %ld cores\n", loads[0],
		       loads[1], e.m.cores);
	char tj[4096];
	if (txt)
		printf("\nTargets (measured in this run)\n");
	targets(runs, nr, o->mode == RNSC_TL_MODE_FULL, tj, sizeof(tj), txt);
	if (txt && !tj[0])
		printf("  (none applicable: needs own and librandomx runs in the same mode)\n");
	if (o->json)
		print_json(stdout, o, &e, runs, nr, hashes, tj, loads);
	else
		printf("\n");
	if (o->output) {
		FILE *f = fopen(o->output, "w");
		if (!f) {
			fprintf(stderr, "rnsc timelock: cannot write %s: %s\n", o->output,
				strerror(errno));
			failures++;
		} else {
			print_json(f, o, &e, runs, nr, hashes, tj, loads);
			if (fclose(f) != 0)
				failures++;
		}
	}
	for (size_t i = 0; i < nr; i++)
		free(runs[i].hs);
	cli_env_close(&env);
	return failures ? CLI_FAIL : CLI_OK;
}

/* ---- seal --------------------------------------------------------------------------------- */

static int cmd_seal(tl_opts *o)
{
	if (!o->in || !o->out) {
		fprintf(stderr,
			"rnsc timelock seal: needs IN and OUT (see 'rnsc timelock --help')\n");
		return CLI_USAGE;
	}
	if (!o->steps && !(o->seconds > 0)) {
		fprintf(stderr, "rnsc timelock seal: give --seconds S (or --steps N)\n");
		return CLI_USAGE;
	}
	if (o->impl == 1 && o->algo == 2) {
		fprintf(stderr, "rnsc timelock: librandomx implements RandomX v1 only\n");
		return CLI_USAGE;
	}
	int algo = o->algo ? o->algo : (o->impl == 1 ? 1 : 2);
	int mode = o->mode < 0 ? RNSC_TL_MODE_FULL : o->mode;
	uint8_t *pt = NULL, *file = NULL;
	size_t pt_len = 0;
	if (read_all(o->in, RNSC_TL_MAX_PAYLOAD, &pt, &pt_len) != 0) {
		fprintf(stderr, "rnsc timelock: cannot read %s: %s\n", o->in,
			errno == EFBIG ? "larger than the 1 GiB a timelock file holds"
				       : strerror(errno));
		return CLI_SETUP;
	}
	cli_env env;
	int ret = open_env(&env, o), rc;
	if (ret) {
		free(pt);
		return ret;
	}
	rnsc_randomx *rx = NULL;
	rnsc_timelock_header h;
	uint8_t hdr[RNSC_TL_HEADER_LEN];
	/* The key and seed first: the machine that measures the rate is the one that seals. */
	if ((rc = rnsc_timelock_header_new(env.ctx, &h, algo, mode, 1, 1, 0, pt_len)) != 0) {
		fprintf(stderr, "rnsc timelock: cannot start a header: %s\n", rnsc_strerror(rc));
		ret = CLI_FAIL;
		goto out;
	}
	uint32_t flags = machine_flags(o, algo, o->impl == 1, mode, o->pages == 1);
	if ((ret = build_machine(&env, &rx, flags, h.rx_key, o->init_threads, !o->quiet)) != CLI_OK)
		goto out;
	double rate = o->rate;
	if (!o->steps && !(rate > 0)) {
		/* Measure about two seconds of the real chain step on this machine. */
		rnsc_timelock_chain ch;
		memset(&ch, 0, sizeof(ch));
		ch.steps = RNSC_TL_MAX_STEPS;
		(void)rnsc_random(env.ctx, ch.x, 32);
		double t0 = now_s(), dt = 0;
		(void)rnsc_timelock_chain_run(&ch, rx, 2, 0, NULL, NULL);
		t0 = now_s();
		uint64_t p0 = ch.pos;
		while (dt < 2.0 && rc == 0) {
			rc = rnsc_timelock_chain_run(&ch, rx, 8, 0, NULL, NULL);
			dt = now_s() - t0;
		}
		if (rc) {
			fprintf(stderr, "rnsc timelock: hashing failed: %s\n", rnsc_strerror(rc));
			ret = CLI_FAIL;
			goto out;
		}
		rate = (double)(ch.pos - p0) / dt;
		if (!o->quiet)
			fprintf(stderr, "rnsc timelock: measured %.1f H/s on this machine\n", rate);
	}
	uint64_t steps = o->steps;
	if (!steps) {
		double s = ceil(o->seconds * rate);
		if (s > (double)RNSC_TL_MAX_STEPS) {
			fprintf(stderr,
				"rnsc timelock: %.0f s at %.1f H/s is %.0f steps, over the format's "
				"limit of %llu\n",
				o->seconds, rate, s, (unsigned long long)RNSC_TL_MAX_STEPS);
			ret = CLI_USAGE;
			goto out;
		}
		steps = s < 1 ? 1 : (uint64_t)s;
	}
	uint64_t every = o->ckpt_every;
	if (!every)
		every = rate > 0 ? (uint64_t)(rate * 60.0) : 1000;
	if (every < 1)
		every = 1;
	if (every > UINT32_MAX)
		every = UINT32_MAX;
	h.steps = steps;
	h.checkpoint_interval = (uint32_t)every;
	h.rate_mhs = rate > 0 && rate * 1000.0 < (double)UINT32_MAX ? (uint32_t)(rate * 1000.0) : 0;
	if ((rc = rnsc_timelock_header_encode(env.ctx, hdr, &h)) != 0) {
		fprintf(stderr, "rnsc timelock: cannot encode the header: %s\n", rnsc_strerror(rc));
		ret = CLI_FAIL;
		goto out;
	}
	rnsc_timelock_chain ch;
	if ((rc = rnsc_timelock_chain_init(env.ctx, &ch, hdr, &h)) != 0) {
		ret = CLI_FAIL;
		goto out;
	}
	if (!o->quiet)
		fprintf(stderr, "rnsc timelock: sealing %s with %llu steps of RandomX v%d%s\n",
			o->in, (unsigned long long)steps, algo,
			rate > 0 ? "" : " (no rate: time unknown)");
	progress pr = {.env = &env,
		       .bar = !o->quiet && isatty(STDERR_FILENO),
		       .label = "seal",
		       .chain = &ch};
	pr.t0 = pr.last = now_s();
	catch_signals();
	double t0 = now_s();
	rc = rnsc_timelock_chain_run(&ch, rx, 0, 1, on_progress, &pr);
	double took = now_s() - t0;
	if (rc || ch.pos != ch.steps) {
		fprintf(stderr, "\nrnsc timelock: %s; nothing written\n",
			rc ? rnsc_strerror(rc) : "interrupted");
		ret = CLI_FAIL;
		goto out;
	}
	size_t flen = (size_t)rnsc_timelock_file_len(&h);
	file = malloc(flen);
	int n = file ? rnsc_timelock_seal(env.ctx, file, flen, hdr, &ch, pt, pt_len)
		     : RNSC_ERR_NOMEM;
	if (n < 0) {
		fprintf(stderr, "rnsc timelock: sealing failed: %s\n", rnsc_strerror(n));
		ret = CLI_FAIL;
		goto out;
	}
	if (write_atomic(o->out, file, (size_t)n, 0644) != 0) {
		fprintf(stderr, "rnsc timelock: cannot write %s: %s\n", o->out, strerror(errno));
		ret = CLI_SETUP;
		goto out;
	}
	if (!o->quiet)
		fprintf(stderr, "rnsc timelock: sealed %s -> %s: %llu steps in %.1f s (%.1f H/s)\n",
			o->in, o->out, (unsigned long long)steps, took,
			took > 0 ? (double)steps / took : 0.0);
	ret = CLI_OK;
out:
	rnsc_randomx_del(rx);
	if (pt) {
		rnsc_memzero(pt, pt_len);
		free(pt);
	}
	free(file);
	cli_env_close(&env);
	return ret;
}

/* ---- open / info -------------------------------------------------------------------------- */

/* Reads and checks IN's header; prints the specific reason on failure. */
static int load_sealed(cli_env *env, const char *path, uint8_t **file, size_t *len,
		       rnsc_timelock_header *h)
{
	if (read_all(path, RNSC_TL_MAX_PAYLOAD + 4096, file, len) != 0) {
		fprintf(stderr, "rnsc timelock: cannot read %s: %s\n", path,
			errno == EFBIG ? "too large for a timelock file" : strerror(errno));
		return CLI_SETUP;
	}
	const char *why = NULL;
	int rc = rnsc_timelock_header_decode(env->ctx, h, *file, *len, &why);
	if (rc) {
		fprintf(stderr, "rnsc timelock: %s: %s (%s)\n", path, why ? why : rnsc_strerror(rc),
			rnsc_err_name(rc));
		return CLI_FAIL;
	}
	uint64_t want = rnsc_timelock_file_len(h);
	if (*len != want) {
		fprintf(stderr, "rnsc timelock: %s: %s: %zu bytes, the header says %llu (%s)\n",
			path, *len < want ? "file is truncated" : "file has trailing bytes", *len,
			(unsigned long long)want,
			rnsc_err_name(*len < want ? RNSC_ERR_TRUNCATED : RNSC_ERR_MALFORMED));
		return CLI_FAIL;
	}
	return CLI_OK;
}

static int cmd_info(tl_opts *o)
{
	if (!o->in || o->out) {
		fprintf(stderr, "rnsc timelock info: needs exactly one file\n");
		return CLI_USAGE;
	}
	cli_env env;
	int ret = cli_env_open(&env, o->crypto, o->verbose);
	if (ret)
		return ret;
	uint8_t *file = NULL;
	size_t len = 0;
	rnsc_timelock_header h;
	ret = load_sealed(&env, o->in, &file, &len, &h);
	if (ret == CLI_OK) {
		double rate = h.rate_mhs / 1000.0;
		char t[32];
		fmt_hms(t, sizeof(t), rate > 0 ? (double)h.steps / rate : -1);
		printf("format        rnsc timelock v%u\nalgorithm     RandomX v%u\n"
		       "sealed mode   %s\nsteps         %llu\ncheckpoints   every %u steps\n"
		       "sealer rate   %.1f H/s\nexpected time %s at the sealer's rate\n"
		       "payload       %llu bytes of ciphertext\n",
		       h.version, h.algo, h.mode == RNSC_TL_MODE_FULL ? "full" : "light",
		       (unsigned long long)h.steps, h.checkpoint_interval, rate, t,
		       (unsigned long long)h.ct_len);
	}
	free(file);
	cli_env_close(&env);
	return ret;
}

static int cmd_open(tl_opts *o)
{
	if (!o->in || !o->out) {
		fprintf(stderr,
			"rnsc timelock open: needs IN and OUT (see 'rnsc timelock --help')\n");
		return CLI_USAGE;
	}
	struct stat st;
	if (!o->force && stat(o->out, &st) == 0) {
		fprintf(stderr, "rnsc timelock: %s exists; use -f to overwrite\n", o->out);
		return CLI_SETUP;
	}
	char ckpt[PATH_MAX];
	if (snprintf(ckpt, sizeof(ckpt), "%s%s", o->out, CKPT_SUFFIX) >= (int)sizeof(ckpt)) {
		fprintf(stderr, "rnsc timelock: output path too long\n");
		return CLI_USAGE;
	}
	cli_env env;
	int ret = open_env(&env, o), rc;
	if (ret)
		return ret;
	uint8_t *file = NULL, *pt = NULL;
	size_t len = 0;
	rnsc_randomx *rx = NULL;
	rnsc_timelock_header h;
	rnsc_timelock_chain ch;
	if ((ret = load_sealed(&env, o->in, &file, &len, &h)) != CLI_OK)
		goto out;
	if (o->impl == 1 && h.algo == RNSC_TL_ALGO_V2) {
		fprintf(stderr,
			"rnsc timelock: %s needs RandomX v2, which librandomx does not implement; "
			"use --impl own\n",
			o->in);
		ret = CLI_USAGE;
		goto out;
	}
	if ((rc = rnsc_timelock_chain_init(env.ctx, &ch, file, &h)) != 0) {
		ret = CLI_FAIL;
		goto out;
	}
	uint64_t resumed = 0;
	if (!o->no_resume) {
		uint8_t *ck = NULL;
		size_t cl = 0;
		if (read_all(ckpt, 4096, &ck, &cl) == 0) {
			rc = rnsc_timelock_checkpoint_decode(env.ctx, &ch, ck, cl);
			if (rc == 0) {
				resumed = ch.pos;
				if (!o->quiet)
					fprintf(stderr,
						"rnsc timelock: resuming from %s at step %llu of %llu\n",
						ckpt, (unsigned long long)ch.pos,
						(unsigned long long)ch.steps);
			} else {
				fprintf(stderr,
					"rnsc timelock: ignoring %s: %s; starting from step 0\n",
					ckpt,
					rc == RNSC_ERR_NOTFOUND
						? "it belongs to another sealed file"
						: "it is corrupted");
			}
			free(ck);
		}
	}
	int mode = o->mode >= 0 ? o->mode : h.mode;
	if (ch.pos < ch.steps) {
		uint32_t flags = machine_flags(o, h.algo, o->impl == 1, mode, o->pages == 1);
		if ((ret = build_machine(&env, &rx, flags, h.rx_key, o->init_threads, !o->quiet)) !=
		    CLI_OK)
			goto out;
		if (!o->quiet) {
			char t[32];
			double rate = h.rate_mhs / 1000.0;
			fmt_hms(t, sizeof(t), rate > 0 ? (double)(ch.steps - ch.pos) / rate : -1);
			fprintf(stderr,
				"rnsc timelock: %llu steps to go (about %s at the sealer's rate); "
				"Ctrl-C saves progress to %s\n",
				(unsigned long long)(ch.steps - ch.pos), t, ckpt);
		}
	}
	progress pr = {.env = &env,
		       .bar = !o->quiet && isatty(STDERR_FILENO),
		       .label = "open",
		       .ckpt_path = ckpt,
		       .ckpt_every = h.checkpoint_interval,
		       .chain = &ch,
		       .pos0 = ch.pos};
	pr.t0 = pr.last = now_s();
	catch_signals();
	rc = ch.pos < ch.steps ? rnsc_timelock_chain_run(&ch, rx, o->max_steps, 1, on_progress, &pr)
			       : 0;
	if (rc) {
		fprintf(stderr, "\nrnsc timelock: hashing failed: %s\n", rnsc_strerror(rc));
		ret = CLI_FAIL;
		goto out;
	}
	/* Keep the end (or where we stopped): a re-run after a failure below costs nothing. */
	if (ch.pos != resumed || ch.pos < ch.steps) {
		if (save_checkpoint(&pr) != 0 && ch.pos < ch.steps) {
			ret = CLI_SETUP;
			goto out;
		}
	}
	if (ch.pos < ch.steps) {
		if (pr.bar)
			fputc('\n', stderr);
		fprintf(stderr,
			"rnsc timelock: stopped at step %llu of %llu; progress saved to %s. Run "
			"the same command again to continue.\n",
			(unsigned long long)ch.pos, (unsigned long long)ch.steps, ckpt);
		ret = TL_EXIT_PAUSED;
		goto out;
	}
	pt = malloc((size_t)h.ct_len);
	int n = pt ? rnsc_timelock_open(env.ctx, pt, (size_t)h.ct_len, file, len, &ch)
		   : RNSC_ERR_NOMEM;
	if (n < 0) {
		if (n == RNSC_ERR_AUTH)
			fprintf(stderr,
				"rnsc timelock: %s: authentication failed: the file was modified or "
				"damaged (%s); nothing written\n",
				o->in, rnsc_err_name(n));
		else
			fprintf(stderr,
				"rnsc timelock: %s: cannot open: %s (%s); nothing written\n", o->in,
				rnsc_strerror(n), rnsc_err_name(n));
		ret = CLI_FAIL;
		goto out;
	}
	if (write_atomic(o->out, pt, (size_t)n, 0600) != 0) {
		fprintf(stderr, "rnsc timelock: cannot write %s: %s\n", o->out, strerror(errno));
		ret = CLI_SETUP;
		goto out;
	}
	unlink(ckpt);
	if (!o->quiet)
		fprintf(stderr, "rnsc timelock: opened %s -> %s (%d bytes) after %llu steps\n",
			o->in, o->out, n, (unsigned long long)ch.steps);
	ret = CLI_OK;
out:
	if (pt) {
		rnsc_memzero(pt, (size_t)h.ct_len);
		free(pt);
	}
	rnsc_randomx_del(rx);
	free(file);
	cli_env_close(&env);
	return ret;
}

int cmd_timelock(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_USAGE : CLI_OK;
	}
	tl_opts o = {.sub = argv[1], .mode = -1, .impl = -1};
	int rc = parse_opts(&o, argc - 1, argv + 1);
	if (rc < 0)
		return CLI_OK; /* --help */
	if (rc)
		return rc;
	int nargs = argc - 1 - optind;
	char **args = argv + 1 + optind;
	if (nargs > 2) {
		fprintf(stderr, "rnsc timelock: unexpected argument '%s'\n", args[2]);
		return CLI_USAGE;
	}
	o.in = nargs > 0 ? args[0] : NULL;
	o.out = nargs > 1 ? args[1] : NULL;
	if (!strcmp(o.sub, "calibrate"))
		return cmd_calibrate(&o);
	if (!strcmp(o.sub, "seal"))
		return cmd_seal(&o);
	if (!strcmp(o.sub, "open"))
		return cmd_open(&o);
	if (!strcmp(o.sub, "info"))
		return cmd_info(&o);
	fprintf(stderr, "rnsc timelock: unknown command '%s' (calibrate, seal, open, info)\n",
		o.sub);
	return CLI_USAGE;
}
