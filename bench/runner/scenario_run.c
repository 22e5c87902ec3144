/* SPDX-License-Identifier: MIT */
/*
 * `rnsc bench` (no subcommand): the scenario runner. The scenarios are plugins (kind
 * RNSC_PLUGIN_SCENARIO, ops in include/rnsc/scenario_abi.h, modules under
 * plugins/scenario/) found through the plugin host: each says what runs, the interface
 * sections of each role's config and the accounting rule, so the runner holds no scenario.
 *
 * Endpoint scenarios: for every pairing and sample it writes two Reticulum config
 * directories (loopback interfaces on a free port), starts the responder and the initiator
 * as separate processes (the reference participant bench/participants/rnsc_bench_ref.py on
 * the venv's python, or rnsc's own participant) and drives them through the line protocol
 * (ready, start, started, done, collect, result, quit).
 * Relay scenarios: for each relay (rnsc daemon, the reference's rnsd) it writes the relay's
 * config (transport enabled, the plugin's two server interfaces), starts it, then rnsc's
 * wire driver (`rnsc bench driver`, bench/driver/wire_driver.c) through the same protocol.
 * The plugin checks the accounting exactly; peak RSS and CPU time per role come from wait4.
 * Samples are never retried once timing has started; a failed sample is reported failed.
 * Reports: a terminal table, JSON (`cells`), Markdown and SVG charts with min/max whiskers.
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

#include "bench_iface.h"
#include "bench.h"
#include "env.h"
#include "strfmt.h"
#include "participant.h"
#include "rapl.h"
#include "pyref.h"
#include "scenario_abi.h"

#define MAX_SAMPLES 8
/* --iface rnode: larger scenario payloads take minutes a sample on the simulated radio */
#define RADIO_MAX_PAYLOAD 65536

#define MAX_SCENARIOS 32

/* A scenario plugin the host loaded and the runner accepted. */
typedef struct scenario_def {
	const char *name, *version, *file;
	const rnsc_scenario_ops *ops;
	void *inst;
} scenario_def;

static scenario_def SCENARIOS[MAX_SCENARIOS];
static rnsc_ctx *G_CTX; /* the command's context: checks --crypto orders against what loaded */

/* `rnsc bench matrix`: the same runner over a default grid, plus a heat map; --smoke
 * runs each interface x crypto cell once, as briefly as the accounting allows, for CI. */
static struct {
	int active, smoke;
} G_MATRIX;
static size_t N_SCENARIOS;

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

/* Relay cells: the implementation under test as relay. */
static const char *const RELAY_NAMES[2] = {"rnsc", "ref"};

typedef struct sample {
	rnsc_scenario_sample v; /* the plugin's verdict and counters */
	long rss_kib[2];        /* initiator / driver, responder / relay */
	double cpu_s[2];
	double energy_j; /* package energy over the timed interval (RAPL); < 0: not available */
} sample;

typedef struct cell {
	const scenario_def *sc;
	const pairing *pr; /* endpoint scenarios */
	int relay;         /* relay scenarios: enum impl of the relay; -1 otherwise */
	uint32_t link_mtu; /* as the last conformant sample reported it (0: none) */
	sample s[MAX_SAMPLES];
	int n;
	int conformant;
	double rate_med, rate_min, rate_max, goodput_med, p50_med, p99_med;
	long rss_med[2];
	double cpu_med[2];
	/* relay cells: frames carried per CPU-second of the relay (median), a figure that holds
	 * when the machine is shared and a single-threaded relay gets a thread's share */
	double per_cpu_med;
	double energy_med;      /* < 0: no sample had an energy figure */
	const bench_iface *ifc; /* --iface: what carries the cell (NULL: the scenario's own) */
	const char *crypto;     /* --crypto: the rnsc side's backend order (NULL: the default) */
	char skip[512];         /* non-empty: the cell cannot run, and this says why */
} cell;

typedef struct run_opts {
	double seconds, drain, setup_timeout;
	int samples;
	int quick; /* --quick: told to the participants (a scenario may run a stated smaller variant) */
	const char *self, *python, *ref_script;
	const char *pipe_helper; /* bench/participants/pipe_relay.py, for --iface pipe */
	const char *pty_helper;  /* bench/participants/pty_pair.py, for --iface serial, kiss */
	const char *rnode_sim;   /* tests/common/rnode_sim.py, for --iface rnode */
	const char *ip_cmd;      /* iproute2's ip, for --iface auto (NULL: not found) */
	char tls_dir[64];        /* --iface tls: the certificate's temporary directory */
	char tls_cert[128], tls_key[128], tls_pin[128];
	const char *env_crypto; /* RNSC_CRYPTO as the runner found it (NULL: unset) */
	const char *keep_dir;   /* keep participant logs here */
	rnsc_rapl rapl;         /* package energy, when the machine exposes it */
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

/* A Reticulum config (the reference's format, which rnsc reads too); the [interfaces]
 * section comes from the scenario plugin. */
static int write_config(const char *dir, int transport, const char *extra, const char *iface_ret,
			const char *interfaces)
{
	char path[PATH_MAX];
	if (mkdir(dir, 0700) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/config", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	/* RNSC_BENCH_LOGLEVEL: a participant's log level for a diagnosis (--keep-logs) */
	const char *loglevel = getenv("RNSC_BENCH_LOGLEVEL");
	if (!loglevel || strspn(loglevel, "0123456789") != strlen(loglevel) || !*loglevel ||
	    strlen(loglevel) > 1)
		loglevel = "2";
	/* an interface that is the shared instance brings its own share_instance line */
	fprintf(f,
		"[reticulum]\n  enable_transport = %s\n%s  respond_to_probes = No\n%s%s\n"
		"[logging]\n  loglevel = %s\n\n%s",
		transport ? "Yes" : "No", iface_ret && *iface_ret ? "" : "  share_instance = No\n",
		extra ? extra : "", iface_ret ? iface_ret : "", loglevel, interfaces);
	return fclose(f) == 0 ? 0 : -1;
}

static int role_config(const run_opts *o, const cell *c, const char *dir, int role,
		       const int *ports, size_t n, char (*dev)[PATH_MAX])
{
	char text[4096], ret[512] = "";
	if (c->ifc && !c->ifc->plugin_own && role != RNSC_SCENARIO_ROLE_RELAY) {
		bench_iface_env env = {.python = o->python,
				       .helper = o->pipe_helper,
				       .tls_cert = o->tls_pin[0] ? o->tls_cert : NULL,
				       .tls_key = o->tls_pin[0] ? o->tls_key : NULL,
				       .tls_pin = o->tls_pin[0] ? o->tls_pin : NULL,
				       .dev = {dev && dev[0][0] ? dev[0] : NULL,
					       dev && dev[1][0] ? dev[1] : NULL}};
		if (bench_iface_config(c->ifc, role, ports, &env, ret, sizeof(ret), text,
				       sizeof(text)) != 0)
			return -1;
	} else if (c->sc->ops->interfaces(c->sc->inst, role, ports, n, text, sizeof(text)) != 0) {
		return -1;
	}
	const char *extra = RNSC_OPS_HAS(c->sc->ops, rnsc_scenario_ops, reticulum)
				    ? c->sc->ops->reticulum
				    : NULL;
	return write_config(dir, role == RNSC_SCENARIO_ROLE_RELAY, extra, ret, text);
}

/* --iface tls: a self-signed P-256 certificate for 127.0.0.1 from the openssl command
 * (Debian package openssl), and its SHA-256 fingerprint, which the client pins. Returns 0,
 * or -1 with why. */
static int make_tls_cert(run_opts *o, char *why, size_t cap)
{
	snprintf(o->tls_dir, sizeof(o->tls_dir), "/tmp/rnsc-bench-tls.XXXXXX");
	if (!mkdtemp(o->tls_dir)) {
		snprintf(why, cap, "mkdtemp: %s", strerror(errno));
		o->tls_dir[0] = '\0';
		return -1;
	}
	snprintf(o->tls_cert, sizeof(o->tls_cert), "%s/cert.pem", o->tls_dir);
	snprintf(o->tls_key, sizeof(o->tls_key), "%s/key.pem", o->tls_dir);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-days 2 -subj /CN=127.0.0.1 -keyout '%s' -out '%s' >/dev/null 2>&1 && "
		 "openssl x509 -noout -fingerprint -sha256 -in '%s' 2>/dev/null",
		 o->tls_key, o->tls_cert, o->tls_cert);
	FILE *p = popen(cmd, "r");
	char line[256] = "";
	int ok = p && fgets(line, sizeof(line), p) != NULL;
	if (p)
		ok &= pclose(p) == 0;
	const char *eq = strchr(line, '=');
	if (!ok || !eq) {
		snprintf(why, cap,
			 "the openssl command could not make a certificate (install the "
			 "Debian package 'openssl')");
		return -1;
	}
	snprintf(o->tls_pin, sizeof(o->tls_pin), "%s", eq + 1);
	o->tls_pin[strcspn(o->tls_pin, "\r\n")] = '\0';
	return 0;
}

/* n distinct free loopback ports, or -1 */
static int free_ports(int *ports, int n)
{
	for (int i = 0; i < n; i++) {
		int tries = 0, dup;
		do {
			ports[i] = free_port();
			dup = 0;
			for (int j = 0; j < i; j++)
				dup |= ports[j] == ports[i];
		} while (dup && ++tries < 16);
		if (ports[i] < 0 || dup)
			return -1;
	}
	return 0;
}

static void part_argv(const run_opts *o, enum impl im, const char *role, const char *scenario,
		      const char *cfg, const char *dest, const char *netns, char **argv)
{
	int n = 0;
	if (netns) { /* --iface auto: each end in its own namespace */
		argv[n++] = (char *)o->ip_cmd;
		argv[n++] = (char *)"netns";
		argv[n++] = (char *)"exec";
		argv[n++] = (char *)netns;
	}
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
	if (o->quick)
		argv[n++] = (char *)"--quick";
	argv[n] = NULL;
}

static double cpu_of(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec * 1e-6 +
	       (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec * 1e-6;
}

/* Records why the sample failed (cut to fit) and abandons it. */
#define FAIL(...)                                                                                  \
	do {                                                                                       \
		char fail_buf_[16384];                                                             \
		snprintf(fail_buf_, sizeof(fail_buf_), __VA_ARGS__);                               \
		size_t fail_len_ = strlen(fail_buf_);                                              \
		if (fail_len_ >= sizeof(s->v.why))                                                 \
			fail_len_ = sizeof(s->v.why) - 1;                                          \
		memcpy(s->v.why, fail_buf_, fail_len_);                                            \
		s->v.why[fail_len_] = '\0';                                                        \
		goto out;                                                                          \
	} while (0)

static void show_tail(const char *log)
{
	/* the logs go with the temporary directory: show their tails now */
	char tail[PATH_MAX + 64];
	if (access(log, R_OK) != 0)
		return;
	fprintf(stderr, "--- last lines of %s\n", log);
	fflush(stderr);
	snprintf(tail, sizeof(tail), "tail -n 8 '%s' >&2", log);
	if (system(tail) != 0)
		fprintf(stderr, "(could not show it)\n");
}

static void rm_tree(const char *dir)
{
	/* the participants write storage/ under their config dirs: remove the whole tree */
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/rm", "rm", "-rf", dir, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void judge(const cell *c, const char *a, const char *b, sample *s)
{
	rnsc_scenario_lines l = {.struct_size = sizeof(l), .a = a, .b = b};
	s->v.struct_size = sizeof(s->v);
	if (c->sc->ops->check(c->sc->inst, &l, &s->v) != 0) {
		s->v.ok = 0;
		snprintf(s->v.why, sizeof(s->v.why),
			 "the scenario plugin could not judge the sample");
	}
}

/* ---- carriers: what joins the two ends beyond loopback sockets ---------------------- */

/* One sample's carrier: the pty relay, the two RNode simulators, or the two namespaces.
 * dev[0] / dev[1] are the responder's / initiator's device (tty path or veth name). */
typedef struct carrier {
	part relay, sim[2];
	char ns[2][32];
	char dev[2][PATH_MAX];
	int netns_made;
} carrier;

static int run_shell(const char *cmd, const char *log)
{
	char full[24 * PATH_MAX];
	if (snprintf(full, sizeof(full), "( %s ) >>'%s' 2>&1", cmd, log) >= (int)sizeof(full))
		return -1;
	int st = system(full);
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int wait_paths(const char *a, const char *b, double seconds)
{
	for (int i = 0; i < (int)(seconds * 20); i++) {
		if (access(a, F_OK) == 0 && access(b, F_OK) == 0)
			return 0;
		usleep(50000);
	}
	return -1;
}

/* Sets up c's carrier for one sample; logs go to logdir. Returns 0, or -1 with why. */
static int carrier_up(const run_opts *o, const cell *c, const char *dir, const char *logdir,
		      int idx, const int *ports, carrier *k, char *why, size_t cap)
{
	static unsigned serial_no;
	char log[PATH_MAX], pa[16], pb[16], line[256];
	const char *w = "";
	enum bench_carrier kind = c->ifc ? c->ifc->carrier : BENCH_CARRIER_NONE;
	if (kind == BENCH_CARRIER_NONE)
		return 0;
	snprintf(log, sizeof(log), "%s/%s-%s-%d-carrier.log", logdir, c->sc->name, c->pr->name,
		 idx);
	if (kind == BENCH_CARRIER_PTY) {
		snprintf(k->dev[0], sizeof(k->dev[0]), "%s/tty-responder", dir);
		snprintf(k->dev[1], sizeof(k->dev[1]), "%s/tty-initiator", dir);
		char *argv[] = {(char *)o->python, (char *)o->pty_helper, k->dev[0], k->dev[1],
				NULL};
		if (part_spawn(&k->relay, argv, log) != 0 ||
		    part_readline(&k->relay, 20, line, sizeof(line), &w) < 0 ||
		    strcmp(line, "ready") != 0) {
			snprintf(why, cap, "the pty relay did not start (%s; log: %s)", w, log);
			return -1;
		}
		return 0;
	}
	if (kind == BENCH_CARRIER_RNODE) {
		for (int i = 0; i < 2; i++) {
			snprintf(k->dev[i], sizeof(k->dev[i]), "%s/rnode-%s", dir,
				 i ? "initiator" : "responder");
			snprintf(pa, sizeof(pa), "%d", ports[i]);
			snprintf(pb, sizeof(pb), "%d", ports[1 - i]);
			char *argv[] = {(char *)o->python,
					(char *)o->rnode_sim,
					(char *)"--link",
					k->dev[i],
					(char *)"--air",
					pa,
					(char *)"--peer",
					pb,
					(char *)"--lifetime",
					(char *)"3600",
					NULL};
			if (part_spawn_service(&k->sim[i], argv, log) != 0) {
				snprintf(why, cap, "cannot start the RNode simulator: %s",
					 strerror(errno));
				return -1;
			}
		}
		if (wait_paths(k->dev[0], k->dev[1], 20) != 0) {
			snprintf(why, cap,
				 "the RNode simulators made no ptys within 20 s (log: %s)", log);
			return -1;
		}
		return 0;
	}
	/* BENCH_CARRIER_NETNS: veth names are at most 15 bytes */
	unsigned id = ((unsigned)getpid() & 0xffffff) * 4096u + (serial_no++ & 0xfff);
	snprintf(k->ns[0], sizeof(k->ns[0]), "rnscb-%x-r", id);
	snprintf(k->ns[1], sizeof(k->ns[1]), "rnscb-%x-i", id);
	snprintf(k->dev[0], sizeof(k->dev[0]), "br%x", id);
	snprintf(k->dev[1], sizeof(k->dev[1]), "bi%x", id);
	if (!o->ip_cmd || geteuid() != 0) {
		snprintf(why, cap,
			 "AutoInterface cells need root and iproute2 (network namespaces)");
		return -1;
	}
	char cmd[20 * PATH_MAX];
	k->netns_made = 1;
	/* IPv6 DAD off, so the link-local addresses are usable at once */
	snprintf(cmd, sizeof(cmd),
		 "set -e; ip=%s; for ns in %s %s; do $ip netns add $ns; "
		 "$ip netns exec $ns sysctl -qw net.ipv6.conf.all.accept_dad=0 "
		 "net.ipv6.conf.default.accept_dad=0; $ip -n $ns link set lo up; done; "
		 "$ip link add %s netns %s type veth peer name %s netns %s; "
		 "$ip -n %s link set %s up; $ip -n %s link set %s up; "
		 "for i in $(seq 200); do "
		 "if $ip -n %s -6 addr show dev %s scope link | grep -q fe80 && "
		 "$ip -n %s -6 addr show dev %s scope link | grep -q fe80 && "
		 "! $ip -n %s -6 addr show dev %s | grep -q tentative && "
		 "! $ip -n %s -6 addr show dev %s | grep -q tentative; then exit 0; fi; "
		 "sleep 0.05; done; exit 1",
		 o->ip_cmd, k->ns[0], k->ns[1], k->dev[0], k->ns[0], k->dev[1], k->ns[1], k->ns[0],
		 k->dev[0], k->ns[1], k->dev[1], k->ns[0], k->dev[0], k->ns[1], k->dev[1], k->ns[0],
		 k->dev[0], k->ns[1], k->dev[1]);
	if (run_shell(cmd, log) != 0) {
		snprintf(why, cap, "the network namespaces could not be set up (log: %s)", log);
		return -1;
	}
	return 0;
}

static void carrier_down(const run_opts *o, carrier *k)
{
	if (k->relay.pid) {
		part_send(&k->relay, "quit");
		part_stop(&k->relay, 5);
	}
	for (int i = 0; i < 2; i++)
		if (k->sim[i].pid)
			part_stop(&k->sim[i], 5);
	if (k->netns_made) {
		char cmd[512];
		snprintf(cmd, sizeof(cmd),
			 "for ns in %s %s; do %s netns pids $ns 2>/dev/null | xargs -r kill -9; "
			 "%s netns del $ns; done",
			 k->ns[0], k->ns[1], o->ip_cmd, o->ip_cmd);
		(void)run_shell(cmd, "/dev/null");
	}
}

static void run_endpoints(const run_opts *o, const cell *c, int idx, sample *s)
{
	part ini = {0}, res = {0};
	carrier k = {0};
	char tmpl[] = "/tmp/rnsc-bench.XXXXXX";
	char *dir = mkdtemp(tmpl);
	char rcfg[PATH_MAX], icfg[PATH_MAX], rlog[PATH_MAX], ilog[PATH_MAX], line[1024], cmd[128];
	char cwhy[PATH_MAX + 128];
	/* a slow carrier (the radio) gets a longer drain limit, said in the report */
	double drain = c->ifc && c->ifc->min_drain > o->drain ? c->ifc->min_drain : o->drain;
	const char *why = "";
	const char *scn = c->sc->ops->mode;
	if (!dir) {
		snprintf(s->v.why, sizeof(s->v.why), "mkdtemp: %s", strerror(errno));
		return;
	}
	const char *logdir = o->keep_dir ? o->keep_dir : dir;
	snprintf(rcfg, sizeof(rcfg), "%s/responder", dir);
	snprintf(icfg, sizeof(icfg), "%s/initiator", dir);
	snprintf(rlog, sizeof(rlog), "%s/%s-%s-%d-responder.log", logdir, c->sc->name, c->pr->name,
		 idx);
	snprintf(ilog, sizeof(ilog), "%s/%s-%s-%d-initiator.log", logdir, c->sc->name, c->pr->name,
		 idx);
	int ports[2] = {-1, -1};
	if (free_ports(ports, c->ifc ? c->ifc->nports : 1))
		FAIL("no free loopback ports");
	if (carrier_up(o, c, dir, logdir, idx, ports, &k, cwhy, sizeof(cwhy)) != 0)
		FAIL("%s", cwhy);
	if (role_config(o, c, rcfg, RNSC_SCENARIO_ROLE_RESPONDER, ports, 1, k.dev) ||
	    role_config(o, c, icfg, RNSC_SCENARIO_ROLE_INITIATOR, ports, 1, k.dev))
		FAIL("cannot prepare the config directories in %s", dir);

	char *argv[24];
	part_argv(o, c->pr->responder, "responder", scn, rcfg, NULL, k.netns_made ? k.ns[0] : NULL,
		  argv);
	if (part_spawn(&res, argv, rlog) != 0)
		FAIL("cannot start the %s responder: %s", impl_name[c->pr->responder],
		     strerror(errno));
	if (part_readline(&res, o->setup_timeout, line, sizeof(line), &why) < 0)
		FAIL("%s responder: %s before ready (log: %s)", impl_name[c->pr->responder], why,
		     rlog);
	const char *d = strstr(line, "dest=");
	if (strncmp(line, "ready", 5) != 0 || !d || strlen(d + 5) != 32)
		FAIL("%s responder: expected 'ready dest=HASH', got '%s'",
		     impl_name[c->pr->responder], line);
	char dest[33];
	memcpy(dest, d + 5, 33);

	part_argv(o, c->pr->initiator, "initiator", scn, icfg, dest, k.netns_made ? k.ns[1] : NULL,
		  argv);
	if (part_spawn(&ini, argv, ilog) != 0)
		FAIL("cannot start the %s initiator: %s", impl_name[c->pr->initiator],
		     strerror(errno));
	if (part_readline(&ini, o->setup_timeout + 30, line, sizeof(line), &why) < 0)
		FAIL("%s initiator: %s before ready (log: %s)", impl_name[c->pr->initiator], why,
		     ilog);
	if (strcmp(line, "ready") != 0)
		FAIL("%s initiator: expected 'ready', got '%s'", impl_name[c->pr->initiator], line);

	/* timing starts: from here a sample is never retried */
	snprintf(cmd, sizeof(cmd), "start seconds=%g drain=%g", o->seconds, drain);
	if (part_send(&res, cmd))
		FAIL("the responder went away before start");
	/* the responder zeroes its counters before the first timed packet can reach it */
	if (part_readline(&res, 30, line, sizeof(line), &why) < 0 || strcmp(line, "started") != 0)
		FAIL("%s responder: expected 'started' (%s)", impl_name[c->pr->responder],
		     *why ? why : line);
	rnsc_rapl_mark e0, e1;
	rnsc_rapl_mark_now(&o->rapl, &e0);
	if (part_send(&ini, cmd))
		FAIL("the initiator went away before start");
	if (part_readline(&ini, o->seconds + drain + 30, line, sizeof(line), &why) < 0 ||
	    strcmp(line, "done") != 0)
		FAIL("%s initiator: %s while timing (log: %s)", impl_name[c->pr->initiator],
		     *why ? why : line, ilog);
	rnsc_rapl_mark_now(&o->rapl, &e1);
	s->energy_j = rnsc_rapl_joules(&o->rapl, &e0, &e1);
	if (part_send(&res, "collect") || part_send(&ini, "collect"))
		FAIL("a participant went away before collect");
	char rres[1024];
	if (part_readline(&res, 30, rres, sizeof(rres), &why) < 0 || strncmp(rres, "result", 6))
		FAIL("%s responder: no result (%s)", impl_name[c->pr->responder], why);
	if (part_readline(&ini, 30, line, sizeof(line), &why) < 0 || strncmp(line, "result", 6))
		FAIL("%s initiator: no result (%s)", impl_name[c->pr->initiator], why);
	part_finish(&res, 10);
	part_finish(&ini, 10);
	s->rss_kib[0] = ini.ru.ru_maxrss, s->rss_kib[1] = res.ru.ru_maxrss;
	s->cpu_s[0] = cpu_of(&ini.ru), s->cpu_s[1] = cpu_of(&res.ru);
	judge(c, line, rres, s);
out:
	part_kill(&res);
	part_kill(&ini);
	carrier_down(o, &k);
	if (!s->v.ok && !o->keep_dir)
		show_tail(ilog), show_tail(rlog);
	if (!o->keep_dir) {
		unlink(rlog), unlink(ilog);
	}
	rm_tree(dir);
}

static void run_relay(const run_opts *o, const cell *c, int idx, sample *s)
{
	part rel = {0}, drv = {0};
	char tmpl[] = "/tmp/rnsc-bench.XXXXXX";
	char *dir = mkdtemp(tmpl);
	char cfg[PATH_MAX], rlog[PATH_MAX], dlog[PATH_MAX], line[2048], cmd[128];
	const char *why = "";
	const char *rname = impl_name[c->relay];
	if (!dir) {
		snprintf(s->v.why, sizeof(s->v.why), "mkdtemp: %s", strerror(errno));
		return;
	}
	const char *logdir = o->keep_dir ? o->keep_dir : dir;
	snprintf(cfg, sizeof(cfg), "%s/relay", dir);
	snprintf(rlog, sizeof(rlog), "%s/%s-%s-%d-relay.log", logdir, c->sc->name,
		 RELAY_NAMES[c->relay], idx);
	snprintf(dlog, sizeof(dlog), "%s/%s-%s-%d-driver.log", logdir, c->sc->name,
		 RELAY_NAMES[c->relay], idx);
	int ports[2] = {free_port(), -1};
	do
		ports[1] = free_port();
	while (ports[1] == ports[0] && ports[1] > 0);
	if (ports[0] < 0 || ports[1] < 0 ||
	    role_config(o, c, cfg, RNSC_SCENARIO_ROLE_RELAY, ports, 2, NULL))
		FAIL("cannot prepare the relay's config directory in %s", dir);
	char *argv[20];
	int n = 0;
	if (c->relay == IMPL_REF) {
		argv[n++] = (char *)o->python;
		argv[n++] = (char *)"-m";
		argv[n++] = (char *)"RNS.Utilities.rnsd";
	} else {
		argv[n++] = (char *)o->self;
		argv[n++] = (char *)"daemon";
	}
	argv[n++] = (char *)"--config";
	argv[n++] = cfg;
	argv[n] = NULL;
	if (part_spawn_service(&rel, argv, rlog) != 0)
		FAIL("cannot start the %s relay: %s", rname, strerror(errno));
	char pa[16], pb[16], cal[32], st[32];
	snprintf(pa, sizeof(pa), "%d", ports[0]);
	snprintf(pb, sizeof(pb), "%d", ports[1]);
	/* the driver's calibration: half the timed traffic, at most 5 s */
	snprintf(cal, sizeof(cal), "%g", o->seconds < 10 ? o->seconds / 2 : 5);
	snprintf(st, sizeof(st), "%g", o->setup_timeout);
	n = 0;
	argv[n++] = (char *)o->self;
	argv[n++] = (char *)"bench";
	argv[n++] = (char *)"driver";
	argv[n++] = (char *)"--mode";
	argv[n++] = (char *)c->sc->ops->mode;
	argv[n++] = (char *)"--a";
	argv[n++] = pa;
	argv[n++] = (char *)"--b";
	argv[n++] = pb;
	argv[n++] = (char *)"--calibrate";
	argv[n++] = cal;
	argv[n++] = (char *)"--setup-timeout";
	argv[n++] = st;
	argv[n] = NULL;
	if (part_spawn(&drv, argv, dlog) != 0)
		FAIL("cannot start the wire driver: %s", strerror(errno));
	if (part_readline(&drv, o->setup_timeout + o->seconds + 30, line, sizeof(line), &why) < 0)
		FAIL("wire driver: %s before ready with the %s relay%s (logs: %s, %s)", why, rname,
		     part_alive(&rel) ? "" : ", which exited", dlog, rlog);
	if (strcmp(line, "ready") != 0)
		FAIL("wire driver: expected 'ready', got '%s' (%s relay%s)", line, rname,
		     part_alive(&rel) ? "" : ", which exited");

	/* timing starts: from here a sample is never retried */
	snprintf(cmd, sizeof(cmd), "start seconds=%g drain=%g", o->seconds, o->drain);
	rnsc_rapl_mark e0, e1;
	rnsc_rapl_mark_now(&o->rapl, &e0);
	if (part_send(&drv, cmd))
		FAIL("the wire driver went away before start");
	if (part_readline(&drv, o->seconds + o->drain + 30, line, sizeof(line), &why) < 0 ||
	    strcmp(line, "done") != 0)
		FAIL("wire driver: %s while timing through the %s relay (log: %s)",
		     *why ? why : line, rname, dlog);
	rnsc_rapl_mark_now(&o->rapl, &e1);
	s->energy_j = rnsc_rapl_joules(&o->rapl, &e0, &e1);
	if (part_send(&drv, "collect"))
		FAIL("the wire driver went away before collect");
	if (part_readline(&drv, 30, line, sizeof(line), &why) < 0 || strncmp(line, "result", 6))
		FAIL("wire driver: no result (%s)", why);
	part_finish(&drv, 10);
	if (!part_alive(&rel))
		FAIL("the %s relay exited during the sample (log: %s)", rname, rlog);
	part_stop(&rel, 10);
	s->rss_kib[0] = drv.ru.ru_maxrss, s->rss_kib[1] = rel.ru.ru_maxrss;
	s->cpu_s[0] = cpu_of(&drv.ru), s->cpu_s[1] = cpu_of(&rel.ru);
	judge(c, line, NULL, s);
out:
	part_kill(&drv);
	part_stop(&rel, 5);
	if (!s->v.ok && !o->keep_dir)
		show_tail(dlog), show_tail(rlog);
	if (!o->keep_dir) {
		unlink(rlog), unlink(dlog);
	}
	rm_tree(dir);
}

static void run_sample(const run_opts *o, const cell *c, int idx, sample *s)
{
	memset(s, 0, sizeof(*s));
	s->energy_j = -1;
	/* the rnsc participants, daemon and driver read their order from RNSC_CRYPTO */
	if (c->crypto)
		setenv("RNSC_CRYPTO", c->crypto, 1);
	if (c->sc->ops->topology == RNSC_SCENARIO_RELAY)
		run_relay(o, c, idx, s);
	else
		run_endpoints(o, c, idx, s);
	if (o->env_crypto)
		setenv("RNSC_CRYPTO", o->env_crypto, 1);
	else
		unsetenv("RNSC_CRYPTO");
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
	double pc[MAX_SAMPLES], en[MAX_SAMPLES];
	int k = 0, ke = 0;
	c->conformant = c->n > 0;
	for (int i = 0; i < c->n; i++) {
		const sample *s = &c->s[i];
		if (!s->v.ok) {
			c->conformant = 0;
			continue;
		}
		if (s->v.link_mtu)
			c->link_mtu = s->v.link_mtu;
		r[k] = s->v.rate, g[k] = s->v.goodput, p5[k] = s->v.p50_us;
		p9[k] = s->v.p99_us, rs0[k] = (double)s->rss_kib[0];
		rs1[k] = (double)s->rss_kib[1], c0[k] = s->cpu_s[0], c1[k] = s->cpu_s[1];
		pc[k] = s->cpu_s[1] > 0 ? (double)s->v.delivered / s->cpu_s[1] : 0;
		if (s->energy_j >= 0)
			en[ke++] = s->energy_j;
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
	c->per_cpu_med = median(pc, k);
	c->energy_med = ke ? median(en, ke) : -1;
}

static int is_relay(const cell *c)
{
	return c->sc->ops->topology == RNSC_SCENARIO_RELAY;
}

/* "rnsc → reference" or "relay rnsc", then " [iface, crypto]" when those were chosen */
static void cell_label(const cell *c, char *out, size_t cap, const char *arrow)
{
	int k;
	if (is_relay(c))
		k = snprintf(out, cap, "relay %s", impl_name[c->relay]);
	else
		k = snprintf(out, cap, "%s %s %s", impl_name[c->pr->initiator], arrow,
			     impl_name[c->pr->responder]);
	if (k > 0 && (size_t)k < cap && (c->ifc || c->crypto))
		snprintf(out + k, cap - (size_t)k, " [%s%s%s]", c->ifc ? c->ifc->name : "backbone",
			 c->crypto ? ", crypto " : "", c->crypto ? c->crypto : "");
}

static void write_json(FILE *f, const cell *cells, size_t n, const run_opts *o,
		       const char *ref_version)
{
	fprintf(f, "{\n\"benchmark\": \"scenarios\",\n");
	rnsc_env_json(f);
	fprintf(f,
		",\n\"settings\": {\"seconds\": %g, \"drain_s\": %g, \"samples\": %d, "
		"\"quick\": %s, \"interface\": \"loopback (per scenario: interface_policy)\", "
		"\"reference_version\": ",
		o->seconds, o->drain, o->samples, o->quick ? "true" : "false");
	rnsc_json_str(f, ref_version);
	fprintf(f, ", \"energy\": ");
	if (o->rapl.n) {
		char what[64];
		snprintf(what, sizeof(what), "RAPL, %d package zone(s), machine-wide", o->rapl.n);
		rnsc_json_str(f, what);
	} else {
		fprintf(f, "null, \"energy_unavailable\": ");
		rnsc_json_str(f, o->rapl.why);
	}
	fprintf(f, "},\n\"cells\": [\n");
	for (size_t i = 0; i < n; i++) {
		const cell *c = &cells[i];
		const char *r0 = is_relay(c) ? "driver" : "initiator";
		const char *r1 = is_relay(c) ? "relay" : "responder";
		fprintf(f,
			"  {\"scenario\": \"%s\", \"scenario_number\": %u, \"scenario_version\": ",
			c->sc->name, c->sc->ops->number);
		rnsc_json_str(f, c->sc->version);
		if (is_relay(c))
			fprintf(f, ", \"relay\": \"%s\", \"driver\": \"rnsc\"",
				impl_name[c->relay]);
		else
			fprintf(f, ", \"initiator\": \"%s\", \"responder\": \"%s\"",
				impl_name[c->pr->initiator], impl_name[c->pr->responder]);
		if (is_relay(c))
			fprintf(f, ", \"frames_per_relay_cpu_s\": %.6g", c->per_cpu_med);
		if (c->energy_med >= 0)
			fprintf(f, ", \"energy_j\": %.6g", c->energy_med);
		else
			fprintf(f, ", \"energy_j\": null");
		fprintf(f, ", \"interface_policy\": ");
		rnsc_json_str(f, c->ifc && !c->ifc->plugin_own ? c->ifc->policy
							       : c->sc->ops->iface_policy);
		fprintf(f, ", \"interface\": ");
		rnsc_json_str(f, c->ifc ? c->ifc->name : "backbone");
		fprintf(f, ", \"crypto\": ");
		if (c->crypto)
			rnsc_json_str(f, c->crypto);
		else
			fprintf(f, "null");
		if (c->skip[0]) {
			fprintf(f, ", \"not_run\": ");
			rnsc_json_str(f, c->skip);
		}
		fprintf(f,
			", \"link_mtu\": %u,\n   \"conformant\": %s, \"rate\": {\"median\": %.6g, "
			"\"min\": %.6g, \"max\": %.6g, \"unit\": \"%s\"}, \"goodput\": {\"median\": "
			"%.6g, \"unit\": \"B/s\"}, \"rtt_p50_us\": %.6g, \"rtt_p99_us\": %.6g,\n   "
			"\"rss_kib\": {\"%s\": %ld, \"%s\": %ld}, \"cpu_s\": {\"%s\": %.4g, \"%s\": "
			"%.4g},\n   \"samples\": [",
			c->link_mtu, c->conformant ? "true" : "false", c->rate_med, c->rate_min,
			c->rate_max, c->sc->ops->unit, c->goodput_med, c->p50_med, c->p99_med, r0,
			c->rss_med[0], r1, c->rss_med[1], r0, c->cpu_med[0], r1, c->cpu_med[1]);
		for (int k = 0; k < c->n; k++) {
			const rnsc_scenario_sample *s = &c->s[k].v;
			fprintf(f,
				"%s{\"ok\": %s, \"sent\": %llu, \"proved\": %llu, \"delivered\": %llu, "
				"\"timeouts\": %llu, \"unproved\": %llu, \"bytes\": %llu, "
				"\"elapsed_s\": %.6g, \"rate\": %.6g",
				k ? ", " : "", s->ok ? "true" : "false", s->sent, s->proved,
				s->delivered, s->timeouts, s->unproved, s->bytes, s->elapsed_s,
				s->rate);
			if (c->s[k].energy_j >= 0)
				fprintf(f, ", \"energy_j\": %.6g", c->s[k].energy_j);
			if (s->extra_json[0])
				fprintf(f, ", %s", s->extra_json);
			if (!s->ok) {
				fprintf(f, ", \"failure\": ");
				rnsc_json_str(f, s->why);
			}
			fprintf(f, "}");
		}
		fprintf(f, "]}%s\n", i + 1 < n ? "," : "");
	}
	fprintf(f, "]\n}\n");
}

static const cell *find_cell(const cell *cells, size_t n, const scenario_def *sc, enum impl a,
			     enum impl b)
{
	for (size_t i = 0; i < n; i++) {
		if (cells[i].sc != sc)
			continue;
		if (is_relay(&cells[i])
			    ? (int)a == cells[i].relay
			    : cells[i].pr->initiator == a && cells[i].pr->responder == b)
			return &cells[i];
	}
	return NULL;
}

static void md_rate(FILE *f, const cell *c)
{
	if (c && c->conformant)
		fprintf(f, "%.1f %s", c->rate_med, c->sc->ops->unit);
	else
		fprintf(f, "%s", c ? (c->skip[0] ? "not run" : "failed") : "—");
}

static void write_md(FILE *f, const cell *cells, size_t n, const run_opts *o,
		     const char *ref_version, const char *svg_prefix)
{
	fprintf(f,
		"# rnsc bench: scenarios\n\nrnsc and the reference (RNS %s) measured in the same "
		"run on the same machine over loopback; %g s timed traffic plus a drain of up "
		"to %g s counted in elapsed time; %d sample(s) per cell, medians shown. Each "
		"scenario is a plugin (name and version in its heading).\n\n",
		ref_version, o->seconds, o->drain, o->samples);
	if (o->quick)
		fprintf(f,
			"Quick run (`--quick`): scenarios with a stated quick variant ran it (see "
			"their descriptions).\n\n");
	if (o->rapl.n)
		fprintf(f,
			"Energy: package energy from RAPL (%d zone(s)) over each sample's timed "
			"interval, machine-wide (both participants and anything else running); "
			"medians in the cell tables.\n\n",
			o->rapl.n);
	else
		fprintf(f,
			"Energy: not measured on this machine (%s); omitted, never estimated.\n\n",
			o->rapl.why);
	fprintf(f,
		"## At a glance\n\nEndpoint scenarios: rnsc→rnsc against reference→reference; "
		"relay scenarios: rnsc daemon as relay against the reference's rnsd as relay, the "
		"same wire driver for both.\n\n| scenario | rnsc | reference | ratio |\n"
		"|---|---:|---:|---:|\n");
	for (size_t k = 0; k < N_SCENARIOS; k++) {
		const scenario_def *sc = &SCENARIOS[k];
		const cell *a = find_cell(cells, n, sc, IMPL_RNSC, IMPL_RNSC);
		const cell *b = find_cell(cells, n, sc, IMPL_REF, IMPL_REF);
		if (!a && !b)
			continue;
		fprintf(f, "| %u. %s | ", sc->ops->number, sc->name);
		md_rate(f, a);
		fprintf(f, " | ");
		md_rate(f, b);
		if (a && b && a->conformant && b->conformant && b->rate_med > 0)
			fprintf(f, " | %.2f× |\n", a->rate_med / b->rate_med);
		else
			fprintf(f, " | — |\n");
		if (sc->ops->topology == RNSC_SCENARIO_RELAY && a && b && a->conformant &&
		    b->conformant && b->per_cpu_med > 0)
			fprintf(f,
				"| %u. %s, per relay CPU-second | %.0f frames | %.0f frames | %.2f× |\n",
				sc->ops->number, sc->name, a->per_cpu_med, b->per_cpu_med,
				a->per_cpu_med / b->per_cpu_med);
	}
	for (size_t k = 0; k < N_SCENARIOS; k++) {
		const scenario_def *sc = &SCENARIOS[k];
		int any = 0, relay = sc->ops->topology == RNSC_SCENARIO_RELAY;
		for (size_t i = 0; i < n; i++)
			any |= cells[i].sc == sc;
		if (!any)
			continue;
		fprintf(f, "\n## %u. %s (%s %s)\n\n%s.\n\n", sc->ops->number, sc->ops->title,
			sc->name, sc->version, sc->ops->desc);
		if (svg_prefix)
			fprintf(f, "![%s](%s-%s.svg)\n\n", sc->name, svg_prefix, sc->name);
		fprintf(f,
			"| %s | interface policy | link MTU | conformant | rate (min–max) | goodput | "
			"RTT p50 / p99 (µs) | RSS %s (MiB) | CPU %s (s) |\n"
			"|---|---|---:|---|---:|---:|---:|---:|---:|\n",
			relay ? "relay under test" : "initiator → responder",
			relay ? "driver / relay" : "initiator / responder",
			relay ? "driver / relay" : "initiator / responder");

		for (size_t i = 0; i < n; i++) {
			const cell *c = &cells[i];
			if (c->sc != sc)
				continue;
			int okn = 0;
			for (int j = 0; j < c->n; j++)
				okn += c->s[j].v.ok;
			char label[160], mtu[32];
			cell_label(c, label, sizeof(label), "→");
			if (c->skip[0]) {
				fprintf(f, "| %s | not run: %s | — | — | — | — | — | — | — |\n",
					label, c->skip);
				continue;
			}
			if (c->link_mtu)
				snprintf(mtu, sizeof(mtu), "%u", c->link_mtu);
			else
				snprintf(mtu, sizeof(mtu), "—");
			fprintf(f,
				"| %s | %s | %s | %d/%d | %.1f (%.1f–%.1f) %s | %.1f KiB/s | %.0f / %.0f | "
				"%.1f / %.1f | %.2f / %.2f |\n",
				label,
				c->ifc && !c->ifc->plugin_own ? c->ifc->policy
							      : sc->ops->iface_policy,
				mtu, okn, c->n, c->rate_med, c->rate_min, c->rate_max,
				sc->ops->unit, c->goodput_med / 1024, c->p50_med, c->p99_med,
				c->rss_med[0] / 1024.0, c->rss_med[1] / 1024.0, c->cpu_med[0],
				c->cpu_med[1]);
		}
		if (o->rapl.n) {
			fprintf(f, "\nPackage energy per sample (J, median):");
			for (size_t i = 0; i < n; i++)
				if (cells[i].sc == sc && cells[i].energy_med >= 0) {
					char label[160];
					cell_label(&cells[i], label, sizeof(label), "→");
					fprintf(f, " %s %.1f;", label, cells[i].energy_med);
				}
			fprintf(f, "\n");
		}
		if (relay) {
			fprintf(f,
				"\nCarried frames per CPU-second of the relay (median; the CPU time "
				"covers the relay's whole run: set-up, the driver's calibration, "
				"warm-up, timed traffic):");
			for (size_t i = 0; i < n; i++)
				if (cells[i].sc == sc && cells[i].conformant)
					fprintf(f, " %s %.0f;", impl_name[cells[i].relay],
						cells[i].per_cpu_med);
			fprintf(f, "\n");
		}
		for (size_t i = 0; i < n; i++)
			for (int j = 0; j < cells[i].n; j++)
				if (cells[i].sc == sc && !cells[i].s[j].v.ok) {
					char label[160];
					cell_label(&cells[i], label, sizeof(label), "->");
					fprintf(f, "\n- %s sample %d failed: %s\n", label, j + 1,
						cells[i].s[j].v.why);
				}
	}
}

/* One bar per cell of sc (or of every scenario when sc is NULL). */
static void write_svg(FILE *f, const cell *cells, size_t n, const scenario_def *sc)
{
	double max = 1;
	size_t rows = 0;
	for (size_t i = 0; i < n; i++)
		if (!sc || cells[i].sc == sc) {
			rows++;
			if (cells[i].rate_max > max)
				max = cells[i].rate_max;
		}
	const int row = 24, left = 260, width = 520, top = 34;
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"10\" y=\"18\" "
		"font-size=\"14\">%s%s rate per cell (median, whiskers min–max)</text>\n",
		left + width + 140, top + (int)rows * row + 10, sc ? sc->name : "",
		sc ? ":" : "Scenarios:");
	size_t r = 0;
	for (size_t i = 0; i < n; i++) {
		const cell *c = &cells[i];
		if (sc && c->sc != sc)
			continue;
		int y = top + (int)r++ * row;
		char label[160];
		cell_label(c, label, sizeof(label), "→");
		fprintf(f, "<text x=\"10\" y=\"%d\">%s %s</text>\n", y + 14, c->sc->name, label);
		double w = c->rate_med / max * width;
		int rnsc = is_relay(c) ? c->relay == IMPL_RNSC : c->pr->initiator == IMPL_RNSC;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"%s\"/>\n",
			left, y + 3, w, rnsc ? "#2a6fb0" : "#c9822b");
		double x0 = left + c->rate_min / max * width, x1 = left + c->rate_max / max * width;
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>"
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>"
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>\n",
			x0, y + 10, x1, y + 10, x0, y + 5, x0, y + 15, x1, y + 5, x1, y + 15);
		if (c->conformant)
			fprintf(f, "<text x=\"%.1f\" y=\"%d\">%.0f %s</text>\n", x1 + 6, y + 14,
				c->rate_med, c->sc->ops->unit);
		else if (c->skip[0])
			fprintf(f, "<text x=\"%.1f\" y=\"%d\">not run</text>\n", x1 + 6, y + 14);
		else
			fprintf(f, "<text x=\"%.1f\" y=\"%d\">not conformant</text>\n", x1 + 6,
				y + 14);
	}
	fprintf(f, "</svg>\n");
}

/* ---- the matrix: heat map and best combinations ----------------------------------------- */

/* The combinations (interface, crypto order) in first-seen order; row r of the heat map. */
static size_t combos(const cell *cells, size_t n, const cell **first, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		for (; j < k; j++)
			if (first[j]->ifc == cells[i].ifc && first[j]->crypto == cells[i].crypto)
				break;
		if (j == k && k < cap)
			first[k++] = &cells[i];
	}
	return k;
}

static const cell *cell_at(const cell *cells, size_t n, const cell *combo, const scenario_def *sc,
			   const pairing *pr, int relay)
{
	for (size_t i = 0; i < n; i++)
		if (cells[i].ifc == combo->ifc && cells[i].crypto == combo->crypto &&
		    cells[i].sc == sc && cells[i].pr == pr && cells[i].relay == relay)
			return &cells[i];
	return NULL;
}

/* The columns: (scenario, pairing or relay) in cell order. */
typedef struct mcol {
	const scenario_def *sc;
	const pairing *pr;
	int relay;
} mcol;

static size_t columns(const cell *cells, size_t n, mcol *cols, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		for (; j < k; j++)
			if (cols[j].sc == cells[i].sc && cols[j].pr == cells[i].pr &&
			    cols[j].relay == cells[i].relay)
				break;
		if (j == k && k < cap)
			cols[k++] = (mcol){cells[i].sc, cells[i].pr, cells[i].relay};
	}
	return k;
}

static void combo_name(const cell *c, char *out, size_t cap)
{
	snprintf(out, cap, "%s, %s", c->ifc ? c->ifc->name : "backbone",
		 c->crypto ? c->crypto : "default order");
}

static void col_name(const mcol *m, char *out, size_t cap, const char *arrow)
{
	if (m->pr)
		snprintf(out, cap, "%s %s%s%s", m->sc->name,
			 m->pr->initiator == IMPL_REF ? "ref" : "rnsc", arrow,
			 m->pr->responder == IMPL_REF ? "ref" : "rnsc");
	else
		snprintf(out, cap, "%s relay %s", m->sc->name, impl_name[m->relay]);
}

#define MAX_COMBOS 128
#define MAX_COLS 128

/* Rate relative to the baseline combination (the first: the first interface with the first
 * order) in the same column; cells not run are grey, failed ones red. */
static void write_heatmap(FILE *f, const cell *cells, size_t n)
{
	const cell *cmb[MAX_COMBOS];
	mcol cols[MAX_COLS];
	size_t nr = combos(cells, n, cmb, MAX_COMBOS), nc = columns(cells, n, cols, MAX_COLS);
	const int cw = 86, rh = 22, left = 300, top = 120;
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"10\" y=\"18\" "
		"font-size=\"14\">rate relative to the baseline row (",
		left + (int)nc * cw + 20, top + (int)nr * rh + 40);
	char b[160];
	if (nr)
		combo_name(cmb[0], b, sizeof(b));
	else
		snprintf(b, sizeof(b), "none");
	fprintf(f, "%s), same column; grey: not run, red: not conformant</text>\n", b);
	for (size_t j = 0; j < nc; j++) {
		char cn[160];
		col_name(&cols[j], cn, sizeof(cn), "→");
		int x = left + (int)j * cw + cw / 2;
		fprintf(f, "<text transform=\"translate(%d,%d) rotate(-40)\">%s</text>\n", x,
			top - 6, cn);
	}
	for (size_t r = 0; r < nr; r++) {
		char rn[160];
		combo_name(cmb[r], rn, sizeof(rn));
		int y = top + (int)r * rh;
		fprintf(f, "<text x=\"10\" y=\"%d\">%s</text>\n", y + 15, rn);
		for (size_t j = 0; j < nc; j++) {
			const cell *c =
				cell_at(cells, n, cmb[r], cols[j].sc, cols[j].pr, cols[j].relay);
			const cell *base =
				cell_at(cells, n, cmb[0], cols[j].sc, cols[j].pr, cols[j].relay);
			int x = left + (int)j * cw;
			const char *fill = "#dddddd";
			char txt[32] = "n/r";
			if (c && !c->skip[0] && !c->conformant) {
				fill = "#d9534f";
				snprintf(txt, sizeof(txt), "fail");
			} else if (c && c->conformant && base && base->conformant &&
				   base->rate_med > 0) {
				double q = c->rate_med / base->rate_med;
				/* blue above the baseline, orange below, saturating at 2x / 0.5x */
				double t =
					q >= 1 ? (q > 2 ? 1 : q - 1) : (q < 0.5 ? 1 : (1 - q) * 2);
				int lo = (int)(255 - t * 150);
				char col[16];
				if (q >= 1)
					snprintf(col, sizeof(col), "#%02x%02xff", lo, lo);
				else
					snprintf(col, sizeof(col), "#ff%02x%02x", lo, lo - lo / 3);
				fprintf(f,
					"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
					"fill=\"%s\" stroke=\"#fff\"/>\n",
					x, y, cw, rh, col);
				fprintf(f,
					"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%.2f×</text>\n",
					x + cw / 2, y + 15, q);
				continue;
			} else if (c && c->conformant) {
				fill = "#eeeeff";
				snprintf(txt, sizeof(txt), "%.0f", c->rate_med);
			}
			fprintf(f,
				"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
				"stroke=\"#fff\"/>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
				"%s</text>\n",
				x, y, cw, rh, fill, x + cw / 2, y + 15, txt);
		}
	}
	fprintf(f, "</svg>\n");
}

static void write_matrix_md(FILE *f, const cell *cells, size_t n, const run_opts *o)
{
	const cell *cmb[MAX_COMBOS];
	mcol cols[MAX_COLS];
	size_t nr = combos(cells, n, cmb, MAX_COMBOS), nc = columns(cells, n, cols, MAX_COLS);
	char b[160];
	fprintf(f,
		"# rnsc bench matrix\n\n%s: every interface x crypto order x scenario x "
		"pairing below, %g s timed traffic per cell, %d sample(s), in one run on one "
		"machine. Rates are relative to the baseline row (the first combination) in the "
		"same column; `n/r` is a cell that cannot run (why: scenarios.md), `fail` a cell "
		"whose accounting did not hold. The crypto order applies to rnsc's side; the "
		"reference always uses its own.\n\n![heat map](matrix.svg)\n\n",
		G_MATRIX.smoke ? "Smoke run (conformance only, no timing asserted)" : "Matrix run",
		o->seconds, o->samples);
	fprintf(f, "| interface, crypto |");
	for (size_t j = 0; j < nc; j++) {
		col_name(&cols[j], b, sizeof(b), "→");
		fprintf(f, " %s |", b);
	}
	fprintf(f, "\n|---|");
	for (size_t j = 0; j < nc; j++)
		fprintf(f, "---:|");
	fprintf(f, "\n");
	for (size_t r = 0; r < nr; r++) {
		combo_name(cmb[r], b, sizeof(b));
		fprintf(f, "| %s |", b);
		for (size_t j = 0; j < nc; j++) {
			const cell *c =
				cell_at(cells, n, cmb[r], cols[j].sc, cols[j].pr, cols[j].relay);
			const cell *base =
				cell_at(cells, n, cmb[0], cols[j].sc, cols[j].pr, cols[j].relay);
			if (!c || c->skip[0])
				fprintf(f, " n/r |");
			else if (!c->conformant)
				fprintf(f, " fail |");
			else if (base && base->conformant && base->rate_med > 0)
				fprintf(f, " %.0f (%.2f×) |", c->rate_med,
					c->rate_med / base->rate_med);
			else
				fprintf(f, " %.0f |", c->rate_med);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\n## Best combination per column\n\nBy median rate; CPU-seconds per side "
		   "(initiator / responder, or driver / relay) over the whole sample bound what a "
		   "combination can do on a shared machine.\n\n| column | best | rate | CPU s |\n"
		   "|---|---|---:|---:|\n");
	for (size_t j = 0; j < nc; j++) {
		const cell *best = NULL;
		for (size_t r = 0; r < nr; r++) {
			const cell *c =
				cell_at(cells, n, cmb[r], cols[j].sc, cols[j].pr, cols[j].relay);
			if (c && !c->skip[0] && c->conformant &&
			    (!best || c->rate_med > best->rate_med))
				best = c;
		}
		col_name(&cols[j], b, sizeof(b), "→");
		if (!best) {
			fprintf(f, "| %s | none conformant | — | — |\n", b);
			continue;
		}
		char cn[160];
		combo_name(best, cn, sizeof(cn));
		fprintf(f, "| %s | %s | %.1f %s | %.2f / %.2f |\n", b, cn, best->rate_med,
			best->sc->ops->unit, best->cpu_med[0], best->cpu_med[1]);
	}
}

/* ---- scenario plugins ------------------------------------------------------------------- */

/* Accepts a scenario plugin only when the runner can drive it. */
static int scenario_usable(const rnsc_plugin_rec *r)
{
	const rnsc_scenario_ops *o = r->desc->ops;
	if (!RNSC_OPS_HAS(o, rnsc_scenario_ops, interfaces) ||
	    !RNSC_OPS_HAS(o, rnsc_scenario_ops, check) || !o->title || !o->desc || !o->unit ||
	    !o->iface_policy || !o->mode ||
	    (o->topology != RNSC_SCENARIO_ENDPOINTS && o->topology != RNSC_SCENARIO_RELAY)) {
		fprintf(stderr,
			"rnsc bench: scenario plugin '%s' (%s) lacks ops the runner needs; "
			"ignored\n",
			r->desc->name, r->file);
		return 0;
	}
	return 1;
}

static int scen_cmp(const void *a, const void *b)
{
	const scenario_def *x = a, *y = b;
	if (x->ops->number != y->ops->number)
		return x->ops->number < y->ops->number ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void collect_scenarios(const rnsc_plugin_host *h)
{
	N_SCENARIOS = 0;
	for (size_t i = 0; i < rnsc_plugin_host_count(h) && N_SCENARIOS < MAX_SCENARIOS; i++) {
		const rnsc_plugin_rec *r = rnsc_plugin_host_at(h, i);
		if (r->status != 0 || !r->desc || r->desc->kind != RNSC_PLUGIN_SCENARIO ||
		    !scenario_usable(r))
			continue;
		SCENARIOS[N_SCENARIOS++] = (scenario_def){.name = r->desc->name,
							  .version = r->desc->version,
							  .file = r->file,
							  .ops = r->desc->ops,
							  .inst = r->inst};
	}
	qsort(SCENARIOS, N_SCENARIOS, sizeof(SCENARIOS[0]), scen_cmp);
}

/* ---- command line ----------------------------------------------------------------------- */

/* Sets order on ctx and, when it leaves a primitive the stack needs unserved (libsodium has
 * no AES-256-CBC), appends the first other loaded backend serving it, as the runtime's own
 * fallback would, so "sodium" means "sodium, then what it lacks". out gets the order used.
 * Returns 0, or -1 when the order names a backend that is not loaded. */
static int complete_order(rnsc_ctx *ctx, const char *order, char *out, size_t cap)
{
	snprintf(out, cap, "%s", order);
	if (rnsc_crypto_set_order(ctx, out) != 0)
		return -1;
	for (int p = 0; p <= RNSC_PRIM_ED25519; p++) {
		if (rnsc_crypto_provider(ctx, (enum rnsc_prim)p))
			continue;
		/* openssl first, as in the default order, then the rest in load order */
		for (size_t k = 0; k <= 2 * 64; k++) {
			const rnsc_crypto_backend *be =
				k == 0 ? rnsc_crypto_backend_find(ctx, "openssl")
				       : rnsc_crypto_backend_at(ctx, (k - 1) % 64);
			if (k > 64)
				break;
			if (!be || (k > 0 && !strcmp(be->name, "openssl")) ||
			    !(be->prims & RNSC_PRIM_BIT(p)))
				continue;
			size_t l = strlen(out);
			snprintf(out + l, cap - l, ",%s", be->name);
			if (rnsc_crypto_set_order(ctx, out) != 0)
				return -1;
			fprintf(stderr,
				"rnsc bench: crypto order '%s' lacks %s: running it as '%s'\n",
				order, rnsc_prim_name((enum rnsc_prim)p), out);
			break;
		}
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc bench [--quick] [--scenario LIST] [--pairing LIST] [--relay LIST]\n"
		"                  [--seconds S] [--drain S] [--samples N] [--json FILE]\n"
		"                  [--report DIR] [--keep-logs DIR] [--iface LIST] [--crypto LIST]\n"
		"       rnsc bench crypto|echo|iface|matrix [OPTIONS]   (see their --help)\n\n"
		"Runs the Reticulum benchmark scenarios with rnsc and the reference (the pinned rns\n"
		"in the venv, driven through its public API by bench/participants/rnsc_bench_ref.py)\n"
		"as separate processes over loopback interfaces, measured in the same run: endpoint\n"
		"scenarios in every initiator/responder pairing, relay scenarios with rnsc's daemon\n"
		"and the reference's rnsd as the relay under test, driven by rnsc's wire driver. A\n"
		"sample counts only when the scenario's accounting holds exactly; it is never\n"
		"retried once timing starts. Scenarios are plugins (kind scenario, see `rnsc\n"
		"plugins`) found on the plugin path.\n\n"
		"  --scenario LIST  scenarios (default all):");
	for (size_t i = 0; i < N_SCENARIOS; i++)
		fprintf(f, " %s", SCENARIOS[i].name);
	fprintf(f,
		"\n  --pairing LIST   initiator-responder pairs (default all): rnsc-rnsc, rnsc-ref,\n"
		"                   ref-rnsc, ref-ref\n"
		"  --relay LIST     relays under test (default all): rnsc, ref\n"
		"  --seconds S      timed traffic per sample (default 30)\n"
		"  --drain S        drain limit, counted in elapsed time (default 30)\n"
		"  --samples N      samples per cell (default 3, at most %d)\n"
		"  --quick          2 s, drain 10 s, 1 sample; the participants are told, and a\n"
		"                   scenario may run its stated quick variant (resource-stream:\n"
		"                   4 segments instead of 64)\n"
		"  --json FILE      raw results (- for stdout)\n"
		"  --report DIR     DIR/scenarios.md, DIR/scenarios.json, DIR/scenarios.svg and\n"
		"                   DIR/scenarios-NAME.svg per scenario\n"
		"  --keep-logs DIR  keep every participant's log in DIR\n"
		"  --iface LIST     interfaces carrying the endpoint scenarios (default: each\n"
		"                   scenario's own, Backbone): backbone, tcp, udp, local (shared\n"
		"                   instance), pipe, tls, websocket (tls and websocket are rnsc\n"
		"                   only: cells with the reference are reported not run, with\n"
		"                   why); relay scenarios run over backbone only; auto (two\n"
		"                   network namespaces and a veth pair: root), serial and kiss\n"
		"                   (a pty pair), rnode (two RNode simulators on one simulated\n"
		"                   channel, SF5 / 1625 kHz; scenarios with payloads above 64 KiB\n"
		"                   are reported not run there)\n"
		"  --crypto LIST    crypto backend orders for the rnsc side, separated by ';'\n"
		"                   (e.g. 'sodium;openssl;nettle,openssl'); each is RNSC_CRYPTO\n"
		"                   of rnsc's participants, daemon and driver; one lacking a\n"
		"                   primitive is completed from the other backends, aloud. The\n"
		"                   reference keeps its own crypto: ref-ref cells run once,\n"
		"                   under the first order, and are reported not run for the rest\n\n"
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

enum list_kind { LIST_SCENARIO, LIST_PAIRING, LIST_RELAY };

static int list_valid(const char *list, enum list_kind kind)
{
	static const char *const what[] = {"scenario", "pairing", "relay"};
	if (!list)
		return 1;
	char *copy = strdup(list), *save = NULL;
	int ok = copy != NULL;
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t;
	     t = strtok_r(NULL, ",", &save)) {
		int found = 0;
		if (kind == LIST_SCENARIO) {
			for (size_t i = 0; i < N_SCENARIOS; i++)
				found |= !strcmp(t, SCENARIOS[i].name);
		} else if (kind == LIST_PAIRING) {
			for (size_t i = 0; i < N_PAIRINGS; i++)
				found |= !strcmp(t, PAIRINGS[i].name);
		} else {
			for (size_t i = 0; i < 2; i++)
				found |= !strcmp(t, RELAY_NAMES[i]);
		}
		if (!found) {
			fprintf(stderr, "rnsc bench: unknown %s '%s'\n", what[kind], t);
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

static int run(int argc, char **argv)
{
	static const struct option opts[] = {{"quick", no_argument, NULL, 'q'},
					     {"scenario", required_argument, NULL, 's'},
					     {"pairing", required_argument, NULL, 'p'},
					     {"seconds", required_argument, NULL, 'S'},
					     {"drain", required_argument, NULL, 'D'},
					     {"samples", required_argument, NULL, 'n'},
					     {"json", required_argument, NULL, 'j'},
					     {"report", required_argument, NULL, 'r'},
					     {"keep-logs", required_argument, NULL, 'k'},
					     {"relay", required_argument, NULL, 'R'},
					     {"iface", required_argument, NULL, 'I'},
					     {"crypto", required_argument, NULL, 'C'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	run_opts o = {.seconds = 30, .drain = 30, .setup_timeout = 60, .samples = 3};
	const char *scen = NULL, *pair = NULL, *relay = NULL, *json = NULL, *report = NULL;
	const char *iface_list = NULL, *crypto_list = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			o.seconds = 2, o.drain = 10, o.samples = 1, o.quick = 1;
			break;
		case 's':
			scen = optarg;
			break;
		case 'p':
			pair = optarg;
			break;
		case 'R':
			relay = optarg;
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
		case 'I':
			iface_list = optarg;
			break;
		case 'C':
			crypto_list = optarg;
			break;
		case 'h':
			usage(stdout);
			return BENCH_OK;
		default:
			usage(stderr);
			return BENCH_USAGE;
		}
	}
	if (optind != argc || o.seconds <= 0 || o.drain <= 0 || o.samples < 1 ||
	    o.samples > MAX_SAMPLES || !list_valid(scen, LIST_SCENARIO) ||
	    !list_valid(pair, LIST_PAIRING) || !list_valid(relay, LIST_RELAY)) {
		usage(stderr);
		return BENCH_USAGE;
	}
	/* the dimensions: interfaces by name, crypto orders checked against what loaded */
	const bench_iface *ifcs[16];
	const char *orders[16];
	char *crypto_copy = crypto_list ? strdup(crypto_list) : NULL;
	size_t n_ifc = 0, n_ord = 0;
	int dims_ok = 1;
	if (iface_list) {
		char *copy = strdup(iface_list), *save = NULL;
		for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t;
		     t = strtok_r(NULL, ",", &save)) {
			const bench_iface *fi = bench_iface_find(t);
			if (!fi) {
				fprintf(stderr, "rnsc bench: unknown interface '%s' (known:", t);
				for (size_t i = 0; bench_iface_at(i); i++)
					fprintf(stderr, " %s", bench_iface_at(i)->name);
				fprintf(stderr, ")\n");
				dims_ok = 0;
			} else if (n_ifc < 16) {
				ifcs[n_ifc++] = fi;
			}
		}
		free(copy);
		dims_ok &= n_ifc > 0;
	}
	static char order_buf[16][512];
	if (crypto_list) {
		char *save = NULL;
		for (char *t = crypto_copy ? strtok_r(crypto_copy, ";", &save) : NULL; t;
		     t = strtok_r(NULL, ";", &save)) {
			if (n_ord == 16)
				break;
			if (!G_CTX ||
			    complete_order(G_CTX, t, order_buf[n_ord], sizeof(order_buf[0])) != 0) {
				fprintf(stderr,
					"rnsc bench: crypto order '%s' names a backend that is "
					"not loaded (see 'rnsc plugins -v')\n",
					t);
				dims_ok = 0;
			} else {
				orders[n_ord] = order_buf[n_ord];
				n_ord++;
			}
		}
		dims_ok &= n_ord > 0;
	}
	if (!dims_ok) {
		free(crypto_copy);
		usage(stderr);
		return BENCH_USAGE;
	}
	if (!N_SCENARIOS) {
		fprintf(stderr,
			"rnsc bench: no scenario plugin found on the plugin path (see `rnsc "
			"plugins`)\n");
		return BENCH_SETUP;
	}
	char self[PATH_MAX], python[PATH_MAX], script[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *venv = rnsc_pyref_venv_dir(), *src = rnsc_pyref_src_dir();
	if (sl <= 0 || !venv || !src) {
		fprintf(stderr, "rnsc bench: RNSC_VENV or RNSC_SRCDIR unknown (set them)\n");
		return BENCH_SETUP;
	}
	self[sl] = '\0';
	snprintf(python, sizeof(python), "%s/bin/python", venv);
	snprintf(script, sizeof(script), "%s/bench/participants/rnsc_bench_ref.py", src);
	if (access(python, X_OK) != 0 || access(script, R_OK) != 0) {
		fprintf(stderr,
			"rnsc bench: the reference participant needs %s and %s (run `make "
			"venv`, or set RNSC_VENV / RNSC_SRCDIR)\n",
			python, script);
		return BENCH_SETUP;
	}
	char helper[PATH_MAX];
	snprintf(helper, sizeof(helper), "%s/bench/participants/pipe_relay.py", src);
	char pty_helper[PATH_MAX], rnode_sim[PATH_MAX];
	snprintf(pty_helper, sizeof(pty_helper), "%s/bench/participants/pty_pair.py", src);
	snprintf(rnode_sim, sizeof(rnode_sim), "%s/tests/common/rnode_sim.py", src);
	o.self = self, o.python = python, o.ref_script = script, o.pipe_helper = helper;
	o.pty_helper = pty_helper, o.rnode_sim = rnode_sim;
	static const char *const IP_PATHS[] = {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip",
					       "/bin/ip"};
	for (size_t i = 0; i < sizeof(IP_PATHS) / sizeof(IP_PATHS[0]) && !o.ip_cmd; i++)
		if (access(IP_PATHS[i], X_OK) == 0)
			o.ip_cmd = IP_PATHS[i];
	o.env_crypto = getenv("RNSC_CRYPTO");
	(void)rnsc_rapl_open(&o.rapl);
	if (o.keep_dir && mkdir(o.keep_dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "rnsc bench: cannot create %s: %s\n", o.keep_dir, strerror(errno));
		return BENCH_SETUP;
	}
	/* the reference's version, for the reports */
	char ref_version[64] = "unknown";
	{
		char cmd[PATH_MAX + 128];
		snprintf(cmd, sizeof(cmd),
			 "'%s' -c 'import RNS; print(RNS.__version__)' 2>/dev/null", python);
		FILE *p = popen(cmd, "r");
		if (p) {
			if (fgets(ref_version, sizeof(ref_version), p))
				ref_version[strcspn(ref_version, "\n")] = '\0';
			pclose(p);
		}
	}
	/* every interface x crypto order x scenario x pairing (or relay); a cell that cannot
	 * run is kept, with why, so nothing disappears from the report */
	size_t n_i = n_ifc ? n_ifc : 1, n_o = n_ord ? n_ord : 1, n = 0;
	cell *cells = calloc(n_i * n_o * MAX_SCENARIOS * N_PAIRINGS, sizeof(cell));
	if (!cells) {
		free(crypto_copy);
		fprintf(stderr, "rnsc bench: out of memory\n");
		return BENCH_SETUP;
	}
	for (size_t fi = 0; fi < n_i; fi++)
		for (size_t oi = 0; oi < n_o; oi++)
			for (size_t i = 0; i < N_SCENARIOS; i++) {
				if (!in_list(scen, SCENARIOS[i].name))
					continue;
				const bench_iface *ifc = n_ifc ? ifcs[fi] : NULL;
				const char *ord = n_ord ? orders[oi] : NULL;
				int relay_sc = SCENARIOS[i].ops->topology == RNSC_SCENARIO_RELAY;
				size_t m = relay_sc ? 2 : N_PAIRINGS;
				for (size_t j = 0; j < m; j++) {
					if (relay_sc ? !in_list(relay, RELAY_NAMES[j])
						     : !in_list(pair, PAIRINGS[j].name))
						continue;
					cell *x = &cells[n++];
					x->sc = &SCENARIOS[i];
					x->pr = relay_sc ? NULL : &PAIRINGS[j];
					x->relay = relay_sc ? (int)j : -1;
					x->ifc = ifc, x->crypto = ord;
					int has_ref =
						relay_sc ? j == IMPL_REF
							 : (PAIRINGS[j].initiator == IMPL_REF ||
							    PAIRINGS[j].responder == IMPL_REF);
					int all_ref =
						relay_sc ? 0
							 : (PAIRINGS[j].initiator == IMPL_REF &&
							    PAIRINGS[j].responder == IMPL_REF);
					if (ifc && ifc->cannot)
						snprintf(x->skip, sizeof(x->skip), "%s",
							 ifc->cannot);
					else if (ifc && ifc->carrier == BENCH_CARRIER_RNODE &&
						 SCENARIOS[i].ops->size_lo > RADIO_MAX_PAYLOAD)
						snprintf(
							x->skip, sizeof(x->skip),
							"a %u-byte payload (twice: warm-up and timed) "
							"takes minutes at the simulated radio's rate; "
							"the radio runs payloads of at most %d bytes",
							(unsigned)SCENARIOS[i].ops->size_lo,
							RADIO_MAX_PAYLOAD);
					else if (relay_sc && ifc && !ifc->plugin_own)
						snprintf(
							x->skip, sizeof(x->skip),
							"relay scenarios run over backbone only (the wire "
							"driver and the scenario's relay config speak it)");
					else if (ifc && !ifc->ref_has && has_ref)
						snprintf(
							x->skip, sizeof(x->skip),
							"the reference (rns %s) has no %s interface: "
							"rnsc-rnsc only",
							"1.5.4", ifc->name);
					else if (G_MATRIX.smoke && ifc &&
						 ifc->carrier == BENCH_CARRIER_RNODE)
						snprintf(
							x->skip, sizeof(x->skip),
							"smoke mode: the simulated radio is half duplex "
							"and loses packets to collisions, so exact "
							"accounting is not a CI check; it runs in the "
							"full matrix");
					else if (G_MATRIX.smoke && ifc &&
						 ifc->carrier != BENCH_CARRIER_NONE && oi > 0)
						snprintf(
							x->skip, sizeof(x->skip),
							"smoke mode: the %s carrier is checked under "
							"the first order only",
							ifc->name);
					else if (G_MATRIX.smoke && !relay_sc &&
						 PAIRINGS[j].initiator == IMPL_RNSC &&
						 PAIRINGS[j].responder == IMPL_RNSC &&
						 (!ifc || ifc->ref_has))
						snprintf(
							x->skip, sizeof(x->skip),
							"smoke mode: this interface and order are covered "
							"by rnsc -> reference");
					else if (ord && oi > 0 && all_ref)
						snprintf(
							x->skip, sizeof(x->skip),
							"both sides are the reference, whose crypto is its "
							"own: measured once, under '%s'",
							orders[0]);
				}
			}
	/* widths: the longest scenario name and unit ("resource-segment-matched",
	 * "resources/s") */
	printf("%-24s %-24s %-11s %24s %12s %12s\n", "scenario", "cell", "conformant", "rate",
	       "p50 (us)", "p99 (us)");
	int need_tls = 0;
	for (size_t i = 0; i < n; i++)
		need_tls |= !cells[i].skip[0] && cells[i].ifc && !strcmp(cells[i].ifc->name, "tls");
	char tls_why[200];
	if (need_tls && make_tls_cert(&o, tls_why, sizeof(tls_why)) != 0)
		for (size_t i = 0; i < n; i++)
			if (!cells[i].skip[0] && cells[i].ifc && !strcmp(cells[i].ifc->name, "tls"))
				snprintf(cells[i].skip, sizeof(cells[i].skip), "%s", tls_why);
	int all = 1;
	for (size_t i = 0; i < n; i++) {
		cell *x = &cells[i];
		char label[160];
		cell_label(x, label, sizeof(label), "->");
		if (x->skip[0]) {
			printf("%-24s %-24s not run: %s\n", x->sc->name, label, x->skip);
			fflush(stdout);
			continue;
		}
		for (int k = 0; k < o.samples; k++) {
			run_sample(&o, x, k, &x->s[k]);
			x->n++;
			if (!x->s[k].v.ok)
				fprintf(stderr, "rnsc bench: %s %s sample %d failed: %s\n",
					x->sc->name, label, k + 1, x->s[k].v.why);
		}
		reduce(x);
		all &= x->conformant;
		printf("%-24s %-24s %-11s %11.1f %-12s %12.0f %12.0f\n", x->sc->name, label,
		       x->conformant ? "yes" : "NO", x->rate_med, x->sc->ops->unit, x->p50_med,
		       x->p99_med);
		fflush(stdout);
	}
	int rc = all ? BENCH_OK : BENCH_FAIL;
	if (json) {
		FILE *f = strcmp(json, "-") ? fopen(json, "w") : stdout;
		if (!f) {
			fprintf(stderr, "rnsc bench: cannot write %s: %s\n", json, strerror(errno));
			rc = BENCH_SETUP;
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
			rc = BENCH_SETUP;
		}
		if ((f = open_out(report, "scenarios.md", path, sizeof(path)))) {
			write_md(f, cells, n, &o, ref_version, "scenarios");
			fclose(f);
		} else {
			rc = BENCH_SETUP;
		}
		if ((f = open_out(report, "scenarios.svg", path, sizeof(path)))) {
			write_svg(f, cells, n, NULL);
			fclose(f);
		} else {
			rc = BENCH_SETUP;
		}
		if (G_MATRIX.active && (f = open_out(report, "matrix.svg", path, sizeof(path)))) {
			write_heatmap(f, cells, n);
			fclose(f);
		} else if (G_MATRIX.active) {
			rc = BENCH_SETUP;
		}
		if (G_MATRIX.active && (f = open_out(report, "matrix.md", path, sizeof(path)))) {
			write_matrix_md(f, cells, n, &o);
			fclose(f);
		} else if (G_MATRIX.active) {
			rc = BENCH_SETUP;
		}
		for (size_t k = 0; k < N_SCENARIOS; k++) {
			int any = 0;
			for (size_t i = 0; i < n; i++)
				any |= cells[i].sc == &SCENARIOS[k];
			if (!any)
				continue;
			char name[128];
			snprintf(name, sizeof(name), "scenarios-%s.svg", SCENARIOS[k].name);
			if ((f = open_out(report, name, path, sizeof(path)))) {
				write_svg(f, cells, n, &SCENARIOS[k]);
				fclose(f);
			} else {
				rc = BENCH_SETUP;
			}
		}
	}
	if (o.tls_dir[0])
		rm_tree(o.tls_dir);
	free(cells);
	free(crypto_copy);
	return rc;
}

static void matrix_usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc bench matrix [--quick | --smoke] [rnsc bench options]\n\n"
		"The scenario runner over a grid: every interface (backbone, tcp, udp, local, pipe,\n"
		"tls, websocket, auto, serial, kiss, rnode) x every crypto order (each loaded\n"
		"backend alone, completed where it lacks a primitive, and the default order) x\n"
		"the core scenarios (single, link, request, resource-segment) x every pairing.\n"
		"Any `rnsc bench` option given after the mode narrows or replaces a dimension.\n"
		"With --report DIR it also writes\n"
		"DIR/matrix.md (rates relative to the first combination, the best combination per\n"
		"column with CPU-seconds per side) and DIR/matrix.svg (heat map).\n\n"
		"  --quick  1 s per cell, drain 10 s, 1 sample\n"
		"  --smoke  conformance only, for CI: scenario single, 0.5 s per cell, every\n"
		"           interface x order once (rnsc -> reference, or rnsc -> rnsc where the\n"
		"           reference lacks the interface; auto, serial and kiss under the\n"
		"           first order only, rnode reported not run: a half-duplex radio\n"
		"           loses packets to collisions); exit 0 only when every cell that\n"
		"           can run is conformant; no timing is asserted\n\n"
		"Exit status: 0 when every cell that ran was conformant, 1 otherwise, 2 usage,\n"
		"3 setup.\n");
}

static int bench_matrix(int argc, char **argv)
{
	static char orders[1024];
	int quick = 0, smoke = 0, k = 1;
	for (; k < argc; k++) {
		if (!strcmp(argv[k], "--quick"))
			quick = 1;
		else if (!strcmp(argv[k], "--smoke"))
			smoke = 1;
		else if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) {
			matrix_usage(stdout);
			return BENCH_OK;
		} else
			break;
	}
	if (quick && smoke) {
		matrix_usage(stderr);
		return BENCH_USAGE;
	}
	/* each loaded backend that serves the Reticulum primitives, alone, then the default */
	orders[0] = '\0';
	/* openssl first: the first row is the heat map's baseline (backbone, openssl) */
	for (size_t i = 0; G_CTX && i <= 64; i++) {
		const rnsc_crypto_backend *be = i == 0 ? rnsc_crypto_backend_find(G_CTX, "openssl")
						       : rnsc_crypto_backend_at(G_CTX, i - 1);
		if (i > 0 && !be)
			break;
		if (!be || (i > 0 && !strcmp(be->name, "openssl")) ||
		    !(be->prims & RNSC_PRIM_BIT(RNSC_PRIM_ED25519)))
			continue;
		size_t l = strlen(orders);
		snprintf(orders + l, sizeof(orders) - l, "%s%s", l ? ";" : "", be->name);
	}
	const char *dflt = getenv("RNSC_CRYPTO");
	const char *px = G_CTX ? rnsc_crypto_provider(G_CTX, RNSC_PRIM_X25519) : NULL;
	const char *pe = G_CTX ? rnsc_crypto_provider(G_CTX, RNSC_PRIM_ED25519) : NULL;
	const char *pa = G_CTX ? rnsc_crypto_provider(G_CTX, RNSC_PRIM_AES256_CBC) : NULL;
	if (!smoke && px && pe && pa) {
		size_t l = strlen(orders);
		/* the command's context was opened with the default order: name its providers
		 * (the smoke leaves it out: it only mixes backends the other rows cover) */
		snprintf(orders + l, sizeof(orders) - l, "%sx25519=%s,ed25519=%s,%s", l ? ";" : "",
			 px, pe, dflt && *dflt ? dflt : pa);
	}
	if (!orders[0]) {
		fprintf(stderr, "rnsc bench matrix: no crypto backend serving Ed25519 loaded\n");
		return BENCH_SETUP;
	}
	char *av[64];
	int n = 0;
	av[n++] = (char *)"bench";
	av[n++] = (char *)"--iface";
	av[n++] = (char *)"backbone,tcp,udp,local,pipe,tls,websocket,auto,serial,kiss,rnode";
	av[n++] = (char *)"--crypto";
	av[n++] = orders;
	if (smoke) {
		av[n++] = (char *)"--quick";
		av[n++] = (char *)"--seconds";
		av[n++] = (char *)"0.5";
		av[n++] = (char *)"--drain";
		av[n++] = (char *)"5";
		av[n++] = (char *)"--scenario";
		av[n++] = (char *)"single";
		av[n++] = (char *)"--pairing";
		av[n++] = (char *)"rnsc-rnsc,rnsc-ref";
	} else {
		if (quick) {
			av[n++] = (char *)"--quick";
			av[n++] = (char *)"--seconds";
			av[n++] = (char *)"1";
		}
		av[n++] = (char *)"--scenario";
		av[n++] = (char *)"single,link,request,resource-segment";
	}
	for (; k < argc && n < 63; k++)
		av[n++] = argv[k];
	if (k < argc) {
		fprintf(stderr, "rnsc bench matrix: too many options\n");
		return BENCH_USAGE;
	}
	av[n] = NULL;
	G_MATRIX.active = 1, G_MATRIX.smoke = smoke;
	int rc = run(n, av);
	G_MATRIX.active = 0, G_MATRIX.smoke = 0;
	return rc;
}

int rnsc_bench_scenarios_main(int argc, char **argv)
{
	/* the scenarios come from the plugin host, like interfaces and crypto backends */
	rnsc_env env;
	int rc = rnsc_env_open(&env, NULL, 0, stderr) == 0 ? BENCH_OK : BENCH_SETUP;
	if (rc)
		return rc;
	collect_scenarios(env.host);
	G_CTX = env.ctx;
	if (argc > 1 && !strcmp(argv[1], "matrix"))
		rc = bench_matrix(argc - 1, argv + 1);
	else
		rc = run(argc, argv);
	G_CTX = NULL;
	rnsc_env_close(&env);
	return rc;
}
