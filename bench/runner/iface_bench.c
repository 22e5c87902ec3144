/* SPDX-License-Identifier: MIT */
/*
 * `rnsc bench iface`: what an interface plugin costs on its own, apart from the stack.
 * Two rnsc runtimes (this process and a forked child, each with its own context, plugin
 * host, loop and interface host) open the plugin from a config section as the daemon
 * would, and exchange raw frames through the iface ABI: no transport, no Reticulum crypto.
 * The child echoes every frame on the interface it came in on; this side keeps a window
 * of frames in flight, checks every echo byte for byte against what it sent and times it.
 * Reported per interface and frame size (64 B, 500 B, the interface's HW_MTU): round trips
 * per second, round-trip time p50/p99 and CPU-seconds per side.
 *
 * Frames: a 4-byte big-endian sequence number, then a slice of a fixed pattern picked by
 * the sequence number (so a frame delivered to the wrong slot or cut short is caught).
 * A frame whose echo has not come back after the loss timeout is counted lost; an echo
 * that does not match is counted corrupt; nothing is retried once timing has started.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_iface.h"
#include "cfgfile.h"
#include "bench.h"
#include "env.h"
#include "strfmt.h"
#include "iface_host.h"
#include "loop.h"
#include "pyref.h"
#include "scenario_abi.h"

#define IB_MAX_WINDOW 64
#define IB_MAX_SIZES 8
#define IB_PATTERN 251 /* a prime: consecutive frames start the pattern at different offsets */

static const char *const IB_DEFAULT_IFACES =
	"tcp,backbone,udp,local,pipe,tls,websocket,auto,serial,rnode";

typedef struct ib_opts {
	double seconds, loss_timeout, setup_timeout;
	int window;
	const char *python, *helper;
	char tls_dir[64], tls_cert[96], tls_key[96], tls_pin[128];
} ib_opts;

/* One interface x frame size. */
typedef struct ib_result {
	const char *iface;
	char size_label[16];
	size_t size, hw_mtu;
	char why[512];          /* not run, or failed: why (empty: ran) */
	int attempted, ran, ok; /* attempted but not ran: it failed before timing */
	int beyond;             /* the frame size is beyond what the interface takes */
	uint64_t sent, received, lost, corrupt, late, send_err, echoed, echo_err, warm_sent;
	double elapsed, rate, p50_us, p99_us, cpu_ini, cpu_resp;
} ib_result;

/* ---- config ------------------------------------------------------------------------- */

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

#define PUT(buf, cap, ...) (snprintf(buf, cap, __VA_ARGS__) >= (int)(cap) ? -1 : 0)

/* The [interfaces] text for one side. Backbone and the local shared instance are written
 * here (the scenario runner gets them from the scenario plugin and the [reticulum]
 * section); the others are the scenario runner's own sections. */
static int ib_config(const bench_iface *f, int srv, const int *ports, const ib_opts *o, char *out,
		     size_t cap)
{
	if (!strcmp(f->name, "backbone"))
		return srv ? PUT(out, cap,
				 "[interfaces]\n  [[bench server]]\n    type = BackboneInterface\n"
				 "    enabled = yes\n    listen_ip = 127.0.0.1\n    listen_port = %d\n",
				 ports[0])
			   : PUT(out, cap,
				 "[interfaces]\n  [[bench client]]\n    type = BackboneInterface\n"
				 "    enabled = yes\n    target_host = 127.0.0.1\n    target_port = %d\n",
				 ports[0]);
	if (!strcmp(f->name, "local"))
		return PUT(out, cap,
			   "[interfaces]\n  [[bench local]]\n    type = %s\n    enabled = yes\n"
			   "    port = %d\n",
			   srv ? "LocalServerInterface" : "LocalClientInterface", ports[0]);
	bench_iface_env env = {.python = o->python,
			       .helper = o->helper,
			       .tls_cert = o->tls_cert[0] ? o->tls_cert : NULL,
			       .tls_key = o->tls_key[0] ? o->tls_key : NULL,
			       .tls_pin = o->tls_pin[0] ? o->tls_pin : NULL};
	char ret[512];
	return bench_iface_config(f,
				  srv ? RNSC_SCENARIO_ROLE_RESPONDER : RNSC_SCENARIO_ROLE_INITIATOR,
				  ports, &env, ret, sizeof(ret), out, cap);
}

/* A self-signed certificate for the TLS server, pinned by the client. 0 or -1. */
static int ib_tls_cert(ib_opts *o)
{
	snprintf(o->tls_dir, sizeof(o->tls_dir), "/tmp/rnsc-bench-iface.XXXXXX");
	if (!mkdtemp(o->tls_dir)) {
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
		o->tls_cert[0] = o->tls_key[0] = '\0';
		return -1;
	}
	snprintf(o->tls_pin, sizeof(o->tls_pin), "%s", eq + 1);
	o->tls_pin[strcspn(o->tls_pin, "\r\n")] = '\0';
	return 0;
}

/* ---- one runtime -------------------------------------------------------------------- */

typedef struct ib_side {
	rnsc_env env;
	rnsc_loop *loop;
	rnsc_iface_host *h;
	rnsc_config *cfg;
} ib_side;

static void side_close(ib_side *s)
{
	rnsc_iface_host_del(s->h);
	rnsc_loop_del(s->loop);
	rnsc_config_del(s->cfg);
	if (s->env.ctx)
		rnsc_env_close(&s->env);
	memset(s, 0, sizeof(*s));
}

/* Opens a runtime and the interfaces of text. 0, or -1 with why. */
static int side_open(ib_side *s, const char *text, char *why, size_t cap)
{
	memset(s, 0, sizeof(*s));
	rnsc_config_error err = {0};
	if (rnsc_env_open(&s->env, NULL, 0, stderr) != 0) {
		snprintf(why, cap, "cannot open rnsc's context and plugins");
		return -1;
	}
	int rc = rnsc_loop_new(s->env.ctx, &s->loop);
	if (!rc)
		rc = rnsc_iface_host_new(s->env.ctx, s->env.host, s->loop, &s->h);
	if (rc) {
		snprintf(why, cap, "cannot create the loop or the interface host (%d)", rc);
		return -1;
	}
	if (rnsc_config_parse(s->env.ctx, text, strlen(text), "bench iface", &s->cfg, &err) ||
	    rnsc_iface_host_open_config(s->h, s->cfg, &err) < 1) {
		snprintf(why, cap, "%s", err.msg[0] ? err.msg : "no interface opened");
		return -1;
	}
	return 0;
}

/* ---- the echoing side (the child) --------------------------------------------------- */

typedef struct ib_echo {
	uint64_t echoed, errors;
} ib_echo;

static void echo_rx(void *ud, rnsc_iface *iface, const uint8_t *frame, size_t len, uint64_t now)
{
	(void)now;
	ib_echo *e = ud;
	if (rnsc_iface_send(iface, frame, len) == 0)
		e->echoed++;
	else
		e->errors++;
}

static void echo_ctl(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned ev, void *ud)
{
	(void)w, (void)ev, (void)ud;
	char b[16];
	ssize_t n = read(fd, b, sizeof(b));
	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
		rnsc_loop_stop(loop); /* the measuring side closed its end: done */
}

/* Runs in the child: open, say "ready" on st, echo until ctl closes, report, exit. */
static void echo_main(const char *text, int ctl, int st)
{
	ib_side s;
	ib_echo e = {0};
	char why[512], line[640];
	if (side_open(&s, text, why, sizeof(why))) {
		snprintf(line, sizeof(line), "error %s\n", why);
	} else {
		rnsc_iface_host_set_rx(s.h, echo_rx, &e);
		if (rnsc_loop_watch_add(s.loop, ctl, RNSC_EV_READ, echo_ctl, NULL, NULL)) {
			snprintf(line, sizeof(line), "error cannot watch the control pipe\n");
		} else {
			if (write(st, "ready\n", 6) != 6)
				_exit(1);
			rnsc_loop_run(s.loop);
			snprintf(line, sizeof(line), "echoed %llu %llu\n",
				 (unsigned long long)e.echoed, (unsigned long long)e.errors);
		}
	}
	size_t l = strlen(line);
	ssize_t wr = write(st, line, l);
	side_close(&s);
	_exit(wr == (ssize_t)l ? 0 : 1);
}

/* ---- the measuring side ------------------------------------------------------------- */

typedef struct ib_slot {
	uint32_t seq;
	uint64_t t0;
	int used;
} ib_slot;

typedef struct ib_run {
	rnsc_iface *iface;
	size_t size;
	int window, sending;
	uint32_t next_seq, first_timed;
	ib_slot slots[IB_MAX_WINDOW];
	uint8_t *buf, *pattern;
	uint64_t sent, received, lost, corrupt, late, send_err, warm_echoes;
	double *rtt;
	size_t nrtt, caprtt;
	int stalled; /* the plugin refused a send: wait for the next tick */
} ib_run;

static void fill(const ib_run *r, uint32_t seq, uint8_t *out)
{
	out[0] = (uint8_t)(seq >> 24), out[1] = (uint8_t)(seq >> 16);
	out[2] = (uint8_t)(seq >> 8), out[3] = (uint8_t)seq;
	memcpy(out + 4, r->pattern + seq % IB_PATTERN, r->size - 4);
}

static void send_free_slots(ib_run *r, uint64_t now)
{
	for (int k = 0; r->sending && !r->stalled && k < r->window; k++) {
		uint32_t seq = r->next_seq;
		ib_slot *sl = &r->slots[seq % (uint32_t)r->window];
		if (sl->used)
			return; /* sequence numbers fill slots in order: the next one is busy */
		fill(r, seq, r->buf);
		if (rnsc_iface_send(r->iface, r->buf, r->size) != 0) {
			r->send_err++, r->stalled = 1;
			return;
		}
		r->next_seq++;
		sl->seq = seq, sl->t0 = now, sl->used = 1;
		r->sent++;
	}
}

static void ini_rx(void *ud, rnsc_iface *iface, const uint8_t *f, size_t len, uint64_t now)
{
	(void)iface;
	ib_run *r = ud;
	now = rnsc_monotonic_ns();
	if (len < 4) {
		r->corrupt++;
		return;
	}
	uint32_t seq = (uint32_t)f[0] << 24 | (uint32_t)f[1] << 16 | (uint32_t)f[2] << 8 | f[3];
	ib_slot *sl = &r->slots[seq % (uint32_t)r->window];
	if (!sl->used || sl->seq != seq) {
		if (seq < r->first_timed)
			r->warm_echoes++;
		else
			r->late++; /* after its loss timeout, or never sent */
		return;
	}
	sl->used = 0;
	if (len != r->size || memcmp(f + 4, r->pattern + seq % IB_PATTERN, len - 4) != 0) {
		r->corrupt++;
	} else if (seq >= r->first_timed) {
		r->received++;
		if (r->nrtt < r->caprtt)
			r->rtt[r->nrtt++] = (double)(now - sl->t0) / 1e3;
	} else {
		r->warm_echoes++;
	}
	send_free_slots(r, now);
}

/* Frames older than the loss timeout are lost; the plugin gets another try. */
static void tick(ib_run *r, uint64_t now, uint64_t loss_ns)
{
	for (int k = 0; k < r->window; k++) {
		ib_slot *sl = &r->slots[k];
		if (sl->used && now - sl->t0 > loss_ns) {
			sl->used = 0;
			if (sl->seq >= r->first_timed)
				r->lost++;
		}
	}
	r->stalled = 0;
	send_free_slots(r, now);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double cpu_of(const struct rusage *u)
{
	return (double)u->ru_utime.tv_sec + (double)u->ru_utime.tv_usec / 1e6 +
	       (double)u->ru_stime.tv_sec + (double)u->ru_stime.tv_usec / 1e6;
}

/* Reads one line from fd within timeout_s. 0 or -1. */
static int read_line(int fd, double timeout_s, char *buf, size_t cap)
{
	size_t n = 0;
	uint64_t end = rnsc_monotonic_ns() + (uint64_t)(timeout_s * 1e9);
	while (n + 1 < cap) {
		uint64_t now = rnsc_monotonic_ns();
		if (now >= end)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int pr = poll(&p, 1, (int)((end - now) / 1000000 + 1));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;
		ssize_t k = read(fd, buf + n, 1);
		if (k <= 0)
			break;
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return 0;
		}
		n++;
	}
	buf[n] = '\0';
	return -1;
}

/* Runs the loop for up to s seconds, or until done(r) holds. */
static void pump(ib_side *s, ib_run *r, double secs, uint64_t loss_ns, int (*done)(const ib_run *))
{
	uint64_t end = rnsc_monotonic_ns() + (uint64_t)(secs * 1e9);
	for (;;) {
		uint64_t now = rnsc_monotonic_ns();
		if (now >= end || (done && done(r)))
			return;
		rnsc_loop_run_once(s->loop, 10);
		tick(r, rnsc_monotonic_ns(), loss_ns);
	}
}

static int warm_done(const ib_run *r)
{
	return r->warm_echoes > 0;
}

static int drained(const ib_run *r)
{
	for (int k = 0; k < r->window; k++)
		if (r->slots[k].used)
			return 0;
	return 1;
}

static int online_any(const ib_side *s)
{
	for (size_t i = 0; i < rnsc_iface_host_count(s->h); i++)
		if (rnsc_iface_online(rnsc_iface_host_at(s->h, i)))
			return 1;
	return 0;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(res->why, sizeof(res->why), __VA_ARGS__);                                 \
		goto out;                                                                          \
	} while (0)

/* This bench joins two runtimes over loopback only; an interface that needs a carrier set up
 * between the ends (rnsc bench matrix builds those per sample) is reported not run, with why. */
static const char *carrier_why(const bench_iface *f)
{
	switch (f->carrier) {
	case BENCH_CARRIER_NETNS:
		return "AutoInterface needs two network namespaces joined by a veth pair (rnsc bench "
		       "matrix sets them up per sample; this bench joins two runtimes on loopback)";
	case BENCH_CARRIER_PTY:
		return "a serial line needs a pty pair between the two ends (rnsc bench matrix sets "
		       "one up per sample; this bench joins two runtimes on loopback)";
	case BENCH_CARRIER_RNODE:
		return "RNodeInterface needs the RNode simulator (tests/common/rnode_sim.py; rnsc bench "
		       "matrix starts it per sample; this bench joins two runtimes on loopback)";
	default:
		return NULL;
	}
}

/* One interface at one frame size ("max": its HW_MTU). */
static void run_one(const bench_iface *f, const char *size_tok, const ib_opts *o, ib_result *res)
{
	int ports[2] = {free_port(), free_port()};
	char srv_cfg[2048], cli_cfg[2048], why[512], line[640];
	int ctl[2] = {-1, -1}, st[2] = {-1, -1};
	pid_t pid = -1;
	ib_side s = {0};
	ib_run r = {0};
	res->iface = f->name;
	res->attempted = 1;
	snprintf(res->size_label, sizeof(res->size_label), "%.15s", size_tok);
	if (ports[0] < 0 || ports[1] < 0 || ports[0] == ports[1])
		FAIL("no free loopback ports");
	if (ib_config(f, 1, ports, o, srv_cfg, sizeof(srv_cfg)) ||
	    ib_config(f, 0, ports, o, cli_cfg, sizeof(cli_cfg)))
		FAIL("cannot write the %s config (for tls: the openssl command is needed)",
		     f->name);
	if (pipe2(ctl, O_CLOEXEC) || pipe2(st, O_CLOEXEC))
		FAIL("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		close(ctl[1]), close(st[0]);
		echo_main(srv_cfg, ctl[0], st[1]);
	}
	close(ctl[0]), close(st[1]);
	ctl[0] = st[1] = -1;
	if (read_line(st[0], o->setup_timeout, line, sizeof(line)) || strcmp(line, "ready"))
		FAIL("echoing side: %.400s", line[0] ? line : "no answer");
	if (side_open(&s, cli_cfg, why, sizeof(why)))
		FAIL("measuring side: %.400s", why);
	uint64_t t_end = rnsc_monotonic_ns() + (uint64_t)(o->setup_timeout * 1e9);
	while (!online_any(&s) && rnsc_monotonic_ns() < t_end)
		rnsc_loop_run_once(s.loop, 20);
	if (!online_any(&s))
		FAIL("the %s interface did not come online within %g s", f->name, o->setup_timeout);
	for (size_t i = 0; i < rnsc_iface_host_count(s.h); i++)
		if (rnsc_iface_online(rnsc_iface_host_at(s.h, i)))
			r.iface = rnsc_iface_host_at(s.h, i);
	rnsc_iface_status ist;
	if (rnsc_iface_status_get(r.iface, &ist) == 0)
		res->hw_mtu = ist.stats.hw_mtu;
	if (!strcmp(size_tok, "max")) {
		if (!res->hw_mtu) {
			res->attempted = 0, res->beyond = 1;
			FAIL("the interface's HW_MTU is None: no largest frame to send");
		}
		res->size = res->hw_mtu;
	} else {
		res->size = (size_t)strtoul(size_tok, NULL, 10);
		if (res->hw_mtu && res->size > res->hw_mtu) {
			res->attempted = 0, res->beyond = 1; /* cannot run, not failed */
			FAIL("%zu B is above the interface's HW_MTU (%zu B)", res->size,
			     res->hw_mtu);
		}
	}
	r.size = res->size;
	r.window = o->window;
	r.buf = malloc(r.size);
	r.pattern = malloc(r.size + IB_PATTERN);
	r.caprtt = 1u << 20;
	r.rtt = malloc(r.caprtt * sizeof(double));
	if (!r.buf || !r.pattern || !r.rtt)
		FAIL("out of memory");
	for (size_t k = 0; k < r.size + IB_PATTERN; k++)
		r.pattern[k] = (uint8_t)(k * 131u + 7u);
	rnsc_iface_host_set_rx(s.h, ini_rx, &r);
	uint64_t loss_ns = (uint64_t)(o->loss_timeout * 1e9);
	/* warm-up: one frame at a time, resent each second, until one comes back (the pipe
	 * relay, the WebSocket upgrade and a UDP peer may still be settling) */
	{
		int w = r.window;
		r.first_timed = UINT32_MAX; /* every echo until timing starts is a warm-up one */
		r.window = 1, r.sending = 1;
		pump(&s, &r, o->setup_timeout, 1000000000ull, warm_done);
		r.sending = 0;
		pump(&s, &r, 0.2, 1000000000ull, NULL);
		r.window = w;
		memset(r.slots, 0, sizeof(r.slots));
		if (!r.warm_echoes)
			FAIL("no frame came back within %g s (warm-up)", o->setup_timeout);
	}
	r.first_timed = r.next_seq;
	res->warm_sent = r.next_seq; /* every frame sent so far was a warm-up one */
	r.late = r.corrupt = r.lost = r.sent = 0;
	struct rusage u0, u1;
	getrusage(RUSAGE_SELF, &u0);
	uint64_t t0 = rnsc_monotonic_ns();
	r.sending = 1;
	send_free_slots(&r, t0);
	pump(&s, &r, o->seconds, loss_ns, NULL);
	uint64_t t1 = rnsc_monotonic_ns();
	r.sending = 0;
	pump(&s, &r, o->loss_timeout + 1, loss_ns, drained);
	getrusage(RUSAGE_SELF, &u1);
	res->ran = 1;
	res->elapsed = (double)(t1 - t0) / 1e9;
	res->sent = r.sent, res->received = r.received, res->lost = r.lost;
	res->corrupt = r.corrupt, res->late = r.late, res->send_err = r.send_err;
	res->rate = res->elapsed > 0 ? (double)r.received / res->elapsed : 0;
	res->cpu_ini = cpu_of(&u1) - cpu_of(&u0);
	if (r.nrtt) {
		qsort(r.rtt, r.nrtt, sizeof(double), cmp_d);
		res->p50_us = r.rtt[r.nrtt / 2];
		res->p99_us = r.rtt[(size_t)((double)(r.nrtt - 1) * 0.99)];
	}
out:
	side_close(&s);
	free(r.buf), free(r.pattern), free(r.rtt);
	if (ctl[1] >= 0)
		close(ctl[1]); /* tells the echoing side to stop and report */
	if (pid > 0) {
		if (st[0] >= 0 && read_line(st[0], 30, line, sizeof(line)) == 0) {
			unsigned long long e = 0, er = 0;
			if (sscanf(line, "echoed %llu %llu", &e, &er) == 2)
				res->echoed = e, res->echo_err = er;
			else if (!res->why[0])
				snprintf(res->why, sizeof(res->why), "echoing side: %.400s", line);
		}
		struct rusage cu;
		int status = 0;
		if (wait4(pid, &status, 0, &cu) == pid)
			res->cpu_resp = cpu_of(&cu);
	}
	if (st[0] >= 0)
		close(st[0]);
	if (ctl[0] >= 0) /* fork failed: the child's ends are still here */
		close(ctl[0]);
	if (st[1] >= 0)
		close(st[1]);
	res->ok = res->ran && !res->why[0] && res->corrupt == 0 && res->late == 0 &&
		  res->sent == res->received + res->lost;
	if (res->ran && !res->why[0] && !res->ok)
		snprintf(res->why, sizeof(res->why), "accounting did not hold");
}

/* ---- reports ------------------------------------------------------------------------ */

static void write_json(FILE *f, const ib_result *rs, size_t n, const ib_opts *o)
{
	fprintf(f, "{\n\"benchmark\": \"rnsc bench iface\",\n");
	rnsc_env_json(f);
	fprintf(f,
		",\n\"settings\": {\"seconds\": %g, \"window\": %d, \"loss_timeout_s\": %g},\n"
		"\"results\": [",
		o->seconds, o->window, o->loss_timeout);
	for (size_t i = 0; i < n; i++) {
		const ib_result *r = &rs[i];
		fprintf(f, "%s\n {\"interface\": ", i ? "," : "");
		rnsc_json_str(f, r->iface);
		fprintf(f, ", \"size\": ");
		rnsc_json_str(f, r->size_label);
		fprintf(f, ", \"frame_bytes\": %zu, \"hw_mtu\": %zu", r->size, r->hw_mtu);
		if (!r->ran) {
			fprintf(f, ", \"%s\": ", r->attempted ? "failed" : "not_run");
			rnsc_json_str(f, r->why);
			fprintf(f, "}");
			continue;
		}
		fprintf(f,
			", \"ok\": %s, \"sent\": %llu, \"received\": %llu, \"lost\": %llu, "
			"\"corrupt\": %llu, \"late\": %llu, \"send_refused\": %llu, \"echoed\": %llu, "
			"\"echo_refused\": %llu, \"warmup_sent\": %llu, \"seconds\": %.3f, \"round_trips_per_s\": %.1f, "
			"\"rtt_p50_us\": %.1f, \"rtt_p99_us\": %.1f, \"cpu_s_measuring\": %.3f, "
			"\"cpu_s_echoing\": %.3f",
			r->ok ? "true" : "false", (unsigned long long)r->sent,
			(unsigned long long)r->received, (unsigned long long)r->lost,
			(unsigned long long)r->corrupt, (unsigned long long)r->late,
			(unsigned long long)r->send_err, (unsigned long long)r->echoed,
			(unsigned long long)r->echo_err, (unsigned long long)r->warm_sent,
			r->elapsed, r->rate, r->p50_us, r->p99_us, r->cpu_ini, r->cpu_resp);
		if (r->why[0]) {
			fprintf(f, ", \"why\": ");
			rnsc_json_str(f, r->why);
		}
		fprintf(f, "}");
	}
	fprintf(f, "\n]\n}\n");
}

static void write_md(FILE *f, const ib_result *rs, size_t n, const ib_opts *o)
{
	fprintf(f,
		"# rnsc bench iface\n\nEach interface plugin on its own: two rnsc runtimes "
		"(two processes) on 127.0.0.1 exchange raw frames through the iface ABI, no "
		"transport and no Reticulum crypto. One side keeps %d frames in flight for "
		"%g s, the other echoes each; every echo is checked byte for byte. A round "
		"trip crosses the plugin four times (send and receive on both sides). CPU "
		"seconds: the measuring side over the timed part, the echoing side over its "
		"whole life (set-up included). `max` is the interface's HW_MTU.\n\n",
		o->window, o->seconds);
	fprintf(f, "| interface | frame | round trips/s | RTT p50 (us) | RTT p99 (us) | sent | "
		   "echoed back | lost | CPU s measuring / echoing |\n"
		   "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < n; i++) {
		const ib_result *r = &rs[i];
		char sz[48];
		if (!strcmp(r->size_label, "max"))
			snprintf(sz, sizeof(sz), "%zu B (max)", r->size);
		else
			snprintf(sz, sizeof(sz), "%s B", r->size_label);
		if (!r->ran) {
			fprintf(f, "| %s | %s | %s: %s | | | | | | |\n", r->iface, sz,
				r->attempted ? "failed" : "not run", r->why);
			continue;
		}
		fprintf(f,
			"| %s | %s | %.0f%s | %.0f | %.0f | %llu | %llu | %llu | %.2f / %.2f |\n",
			r->iface, sz, r->rate, r->ok ? "" : " (fail)", r->p50_us, r->p99_us,
			(unsigned long long)r->sent, (unsigned long long)r->received,
			(unsigned long long)r->lost, r->cpu_ini, r->cpu_resp);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc bench iface [--iface LIST] [--sizes LIST] [--seconds S] [--window N]\n"
		"                        [--report DIR] [--json FILE]\n\n"
		"Interface plugin cost on its own: two rnsc runtimes (this process and a forked\n"
		"child) open the plugin from a config section on 127.0.0.1, as the daemon does, and\n"
		"exchange raw frames through the iface ABI (no transport, no Reticulum crypto): one\n"
		"side keeps N frames in flight, the other echoes them; every echo is checked byte\n"
		"for byte. Reports round trips/s, round-trip time p50/p99 and CPU-seconds per side.\n\n"
		"  --iface LIST    interfaces (default: tcp, backbone, udp, local, pipe, tls,\n"
		"                  websocket; auto, serial and rnode are reported not run, with why)\n"
		"  --sizes LIST    frame sizes in bytes, 'max' for the interface's HW_MTU\n"
		"                  (default 64,500,max; at least 4)\n"
		"  --seconds S     timed traffic per interface and size (default 3)\n"
		"  --window N      frames in flight, 1-%d (default 8)\n"
		"  --report DIR    write DIR/iface.md and DIR/iface.json\n"
		"  --json FILE     write the JSON report to FILE\n\n"
		"Exit status: 0 when every interface that can run here ran and kept exact\n"
		"accounting (sent = echoed back + lost, nothing corrupt or late), 1 otherwise,\n"
		"2 for a bad command line, 3 when the report cannot be written.\n",
		IB_MAX_WINDOW);
}

/* Reports are written whole to a temporary name, then renamed into place. */
typedef void (*ib_writer)(FILE *, const ib_result *, size_t, const ib_opts *);
static int write_report(const char *path, ib_writer fn, const ib_result *rs, size_t n,
			const ib_opts *o)
{
	char tmp[PATH_MAX + 8];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	fn(f, rs, n, o);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

int rnsc_bench_iface_main(int argc, char **argv)
{
	ib_opts o = {.seconds = 3, .loss_timeout = 2, .setup_timeout = 20, .window = 8};
	const char *ifaces = IB_DEFAULT_IFACES, *sizes = "64,500,max", *report = NULL, *json = NULL;
	static const struct option lo[] = {
		{"iface", required_argument, NULL, 'i'},   {"sizes", required_argument, NULL, 'z'},
		{"seconds", required_argument, NULL, 's'}, {"window", required_argument, NULL, 'w'},
		{"report", required_argument, NULL, 'r'},  {"json", required_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			ifaces = optarg;
			break;
		case 'z':
			sizes = optarg;
			break;
		case 's':
			o.seconds = atof(optarg);
			break;
		case 'w':
			o.window = atoi(optarg);
			break;
		case 'r':
			report = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		case 'h':
			usage(stdout);
			return BENCH_OK;
		default:
			usage(stderr);
			return BENCH_USAGE;
		}
	}
	if (optind != argc || o.seconds <= 0 || o.window < 1 || o.window > IB_MAX_WINDOW) {
		usage(stderr);
		return BENCH_USAGE;
	}
	/* the dimensions, checked before anything runs */
	const bench_iface *fs[16];
	char size_toks[IB_MAX_SIZES][16];
	size_t nf = 0, nz = 0;
	char *copy = strdup(ifaces), *save = NULL;
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t;
	     t = strtok_r(NULL, ",", &save)) {
		const bench_iface *f = bench_iface_find(t);
		if (!f || nf == 16) {
			fprintf(stderr, "rnsc bench iface: unknown interface '%s' (known:", t);
			for (size_t i = 0; bench_iface_at(i); i++)
				fprintf(stderr, " %s", bench_iface_at(i)->name);
			fprintf(stderr, ")\n");
			free(copy);
			return BENCH_USAGE;
		}
		fs[nf++] = f;
	}
	free(copy);
	copy = strdup(sizes), save = NULL;
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t;
	     t = strtok_r(NULL, ",", &save)) {
		char *end = NULL;
		unsigned long v = strtoul(t, &end, 10);
		if (nz == IB_MAX_SIZES ||
		    (strcmp(t, "max") && (!*t || *end || v < 4 || v > (64u << 20)))) {
			fprintf(stderr,
				"rnsc bench iface: bad frame size '%s' (bytes, 4 to 64 MiB, or "
				"'max')\n",
				t);
			free(copy);
			return BENCH_USAGE;
		}
		snprintf(size_toks[nz++], sizeof(size_toks[0]), "%s", t);
	}
	free(copy);
	if (!nf || !nz) {
		usage(stderr);
		return BENCH_USAGE;
	}
	/* the pipe interface's byte relay and the TLS certificate, as the scenario runner */
	char python[PATH_MAX] = "", helper[PATH_MAX] = "";
	const char *venv = rnsc_pyref_venv_dir(), *src = rnsc_pyref_src_dir();
	if (venv && src) {
		snprintf(python, sizeof(python), "%s/bin/python", venv);
		snprintf(helper, sizeof(helper), "%s/bench/participants/pipe_relay.py", src);
	}
	o.python = python, o.helper = helper;
	int need_tls = 0;
	for (size_t i = 0; i < nf; i++)
		need_tls |= !strcmp(fs[i]->name, "tls");
	int tls_ok = need_tls && ib_tls_cert(&o) == 0;
	signal(SIGPIPE, SIG_IGN);

	ib_result *rs = calloc(nf * nz, sizeof(*rs));
	if (!rs)
		return BENCH_SETUP;
	size_t n = 0;
	int all_ok = 1;
	printf("%-10s %-12s %14s %12s %12s %9s %9s %6s %s\n", "interface", "frame", "round trips/s",
	       "p50 (us)", "p99 (us)", "sent", "echoed", "lost", "CPU s meas/echo");
	for (size_t i = 0; i < nf; i++)
		for (size_t j = 0; j < nz; j++) {
			ib_result *r = &rs[n++];
			r->iface = fs[i]->name;
			snprintf(r->size_label, sizeof(r->size_label), "%.15s", size_toks[j]);
			const char *carrier = carrier_why(fs[i]);
			if (fs[i]->cannot)
				snprintf(r->why, sizeof(r->why), "%s", fs[i]->cannot);
			else if (carrier)
				snprintf(r->why, sizeof(r->why), "%s", carrier);
			else if (!strcmp(fs[i]->name, "tls") && !tls_ok)
				snprintf(r->why, sizeof(r->why),
					 "the openssl command could not make a "
					 "certificate (Debian package 'openssl')");
			else if (!strcmp(fs[i]->name, "pipe") &&
				 (access(python, X_OK) || access(helper, R_OK)))
				snprintf(r->why, sizeof(r->why),
					 "the pipe relay needs the venv's python "
					 "and bench/participants/pipe_relay.py "
					 "(set RNSC_VENV / RNSC_SRCDIR)");
			else
				run_one(fs[i], size_toks[j], &o, r);
			if (!r->ran) {
				if (!fs[i]->cannot && !carrier && !r->beyond)
					all_ok = 0; /* it should have run */
				printf("%-10s %-12s %s: %s\n", r->iface, r->size_label,
				       r->attempted ? "FAILED" : "not run", r->why);
				fflush(stdout);
				continue;
			}
			all_ok &= r->ok;
			char sz[32];
			snprintf(sz, sizeof(sz), "%zu%s", r->size,
				 strcmp(r->size_label, "max") ? "" : " (max)");
			printf("%-10s %-12s %14.0f %12.0f %12.0f %9llu %9llu %6llu %.2f/%.2f%s%s\n",
			       r->iface, sz, r->rate, r->p50_us, r->p99_us,
			       (unsigned long long)r->sent, (unsigned long long)r->received,
			       (unsigned long long)r->lost, r->cpu_ini, r->cpu_resp,
			       r->ok ? "" : "  FAILED: ", r->ok ? "" : r->why);
			fflush(stdout);
		}
	char path[PATH_MAX] = "";
	int io_ok = 1;
	if (report) {
		snprintf(path, sizeof(path), "%s/iface.md", report);
		io_ok &= write_report(path, write_md, rs, n, &o) == 0;
		snprintf(path, sizeof(path), "%s/iface.json", report);
		io_ok &= write_report(path, write_json, rs, n, &o) == 0;
	}
	if (json && io_ok) {
		snprintf(path, sizeof(path), "%s", json);
		io_ok &= write_report(path, write_json, rs, n, &o) == 0;
	}
	if (!io_ok)
		fprintf(stderr, "rnsc bench iface: cannot write the report (%s)\n", path);
	if (o.tls_dir[0]) {
		unlink(o.tls_cert), unlink(o.tls_key);
		rmdir(o.tls_dir);
	}
	free(rs);
	return !io_ok ? BENCH_SETUP : all_ok ? BENCH_OK : BENCH_FAIL;
}
