/* SPDX-License-Identifier: MIT */
/* rnsc x: the reference's rnx (RNS/Utilities/rnx.py, rns 1.5.4), remote command execution on
 * an in-process node. The listener (-l) serves the "command" request on rnx.execute of its
 * identity (allow-list of identities, or -n for anyone); the client links to a listener,
 * identifies (unless -N) and sends one request per command.
 *
 * Wire (as rnx): request data [command (bin, UTF-8), timeout (float or nil), stdout limit
 * (int or nil), stderr limit (int or nil), stdin (bin or nil)]; response [executed (bool),
 * return code (int or nil), stdout (bin), stderr (bin), stdout length, stderr length,
 * started (float, s), concluded (float or nil: the command timed out)].
 *
 * The command runs without a shell, as rnx's Popen(shlex.split(command)) does: the string
 * is split by POSIX shell-like quoting rules, the first word looked up in PATH. A command
 * that cannot be split or started is answered with executed = False.
 * Commands of several clients run side by side (rnx runs each in its interface's thread);
 * the listener answers each when its process ends. */
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
#include <strings.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "crypto.h"
#include "destination.h"
#include "link.h"
#include "linkapp.h"
#include "linkapp_request.h"
#include "msgpack.h"
#include "linkport.h"
#include "request.h"
#include "../../plugins/iface/shlex.h"
#include "node.h"
#include "store.h"
#include "transport.h"
#include "x_wire.h"

#define APP_NAME "rnx"
#define PATH_REQUEST_TIMEOUT_S 15.0 /* Transport.PATH_REQUEST_TIMEOUT */
#define REMOTE_EXEC_GRACE_S 2.0     /* rnx's remote_exec_grace */
#define IFACE_WAIT_MS 5000u
#define MAX_ALLOWED 256
#define MAX_OUTPUT (8u * 1024u * 1024u) /* per stream kept by the listener */

static const char *const syms[] = {"⢄", "⢂", "⢁", "⡁", "⡈", "⡐", "⡠"};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rnsc x [-h] [--config path] [-v] [-q] [-p] [-l] [-i identity] [-x] [-b]\n"
		"              [-a allowed_hash] [-n] [-N] [-d] [-m] [-w seconds] [-W seconds]\n"
		"              [--stdin STDIN] [--stdout STDOUT] [--stderr STDERR] [--version]\n"
		"              [destination] [command]\n\n"
		"Reticulum Remote Execution Utility (like rnx)\n\n"
		"Run COMMAND on the listener whose destination hash is DESTINATION (32 hex digits)\n"
		"and print its output, or listen (-l) for commands from allowed identities on the\n"
		"rnx.execute destination of this identity. The listener runs a command WITHOUT a\n"
		"shell, as rnx does: the string is split by shell-like quoting rules (Python's\n"
		"shlex.split), the first word is looked up in PATH; pipes, redirections and\n"
		"variables are not interpreted (run \"sh -c '...'\" for those).\n\n"
		"positional arguments:\n"
		"  destination           hexadecimal hash of the listener\n"
		"  command               command to be execute\n\n"
		"options:\n"
		"  -h, --help            show this help message and exit\n"
		"  --config path         path to alternative Reticulum config directory\n"
		"  -v, --verbose         increase verbosity\n"
		"  -q, --quiet           decrease verbosity\n"
		"  -p, --print-identity  print identity and destination info and exit\n"
		"  -l, --listen          listen for incoming commands\n"
		"  -i identity           path to identity to use\n"
		"  -x, --interactive     enter interactive mode\n"
		"  -b, --no-announce     don't announce at program start\n"
		"  -a allowed_hash       accept from this identity (or add in\n"
		"                        ~/.rnx/allowed_identities)\n"
		"  -n, --noauth          accept commands from anyone\n"
		"  -N, --noid            don't identify to listener\n"
		"  -d, --detailed        show detailed result output\n"
		"  -m                    mirror exit code of remote command\n"
		"  -w seconds            connect and request timeout before giving up (15)\n"
		"  -W seconds            max result download time\n"
		"  --stdin STDIN         pass input to stdin\n"
		"  --stdout STDOUT       max size in bytes of returned stdout\n"
		"  --stderr STDERR       max size in bytes of returned stderr\n"
		"  --version             show program's version number and exit\n\n"
		"Allowed identities are also read from the first of /etc/rnx/allowed_identities,\n"
		"~/.config/rnx/allowed_identities and ~/.rnx/allowed_identities (one 32-hex-digit\n"
		"hash a line). Client exit codes (as rnx): 241 bad destination, 242 no path, 243 no\n"
		"link, 244 request failed, 245 no result, 246 result transfer failed, 247 invalid\n"
		"result, 248 the remote could not execute the command, 249 no response; with -m\n"
		"the remote command's exit code (240 when it has none).\n");
}

static void pretty(char *out, const uint8_t *h)
{
	out[0] = '<';
	cli_hex(out + 1, h, RNSC_TRUNCATED_HASHLEN);
	strcat(out, ">");
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double mono_s(void)
{
	return (double)rnsc_monotonic_ns() / 1e9;
}

/* rnx's prepare_identity: the file when it loads, else a new identity saved there. */
static int prepare_identity(rnsc_ctx *ctx, rnsc_node *n, const char *path, rnsc_identity *id)
{
	char def[PATH_MAX];
	if (!path) {
		snprintf(def, sizeof(def), "%s/storage/identities", rnsc_node_config_dir(n));
		(void)rnsc_store_mkdirs(def);
		snprintf(def, sizeof(def), "%s/storage/identities/" APP_NAME,
			 rnsc_node_config_dir(n));
		path = def;
	}
	struct stat st;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    rnsc_identity_load_file(ctx, id, path) == 0)
		return 0;
	rnsc_log(ctx, RNSC_LOG_INFO, "x", "No valid saved identity found, creating new...");
	if (rnsc_identity_generate(ctx, id) != 0)
		return 1;
	if (rnsc_identity_save_file(id, path) != 0)
		rnsc_log(ctx, RNSC_LOG_ERROR, "x", "Could not save the identity to %s", path);
	return 0;
}

static void x_log_level(rnsc_ctx *ctx, int verbosity)
{
	int lv = 3 + verbosity;
	rnsc_ctx_set_log_level(ctx, lv < 0 ? 0 : lv > 7 ? 7 : lv);
}

static int ifaces_ready(rnsc_node *n)
{
	rnsc_iface_host *ih = rnsc_node_ifaces(n);
	size_t cnt = rnsc_iface_host_count(ih);
	for (size_t i = 0; i < cnt; i++) {
		rnsc_iface *f = rnsc_iface_host_at(ih, i);
		if (!rnsc_iface_parent(f) && !rnsc_iface_online(f))
			return 0;
	}
	return 1;
}

/* rnx's destination check; prints its message. 0 or -1. */
static int parse_hash(const char *s, uint8_t out[RNSC_TRUNCATED_HASHLEN])
{
	if (strlen(s) != 32) {
		printf("Allowed destination length is invalid, must be 32 hexadecimal characters "
		       "(16 bytes).\n");
		return -1;
	}
	if (cli_unhex(out, RNSC_TRUNCATED_HASHLEN, s) != RNSC_TRUNCATED_HASHLEN) {
		printf("Invalid destination entered. Check your input.\n");
		return -1;
	}
	return 0;
}

/* shlex.split (POSIX mode, no comments): plugins/iface/shlex.c, PipeInterface's splitter.
 * Into one allocation (*out, freed by the caller): 0, or -1 on an unclosed quote / trailing
 * escape (shlex's ValueError) or no memory. */
static int shlex_split(const char *s, char ***out)
{
	size_t n = strlen(s), max_args = n / 2 + 1;
	char **argv = malloc((max_args + 1) * sizeof(char *) + n + 1);
	if (!argv)
		return -1;
	if (rnsc_shlex_split(s, (char *)(argv + max_args + 1), n + 1, argv, max_args, NULL) < 0) {
		free(argv);
		return -1;
	}
	*out = argv;
	return 0;
}

/* ---- the listener ---------------------------------------------------------------------------- */

/* A running command: rnx runs each in the receiving thread of its interface, so commands of
 * different clients run side by side; here each is a child process served from the
 * listener's loop, and its response is sent when it ends. */
typedef struct x_buf {
	uint8_t *p;
	size_t len, total;
} x_buf;

typedef struct x_job {
	struct x_job *next;
	pid_t pid;
	int in_fd, out_fd, err_fd, status, killed, timed_out;
	const uint8_t *in; /* into in_copy */
	uint8_t *in_copy;
	size_t in_len, in_off;
	x_buf out, err;
	double timeout_s, started_mono, next_check, started;
	int has_o, has_e;
	int64_t o_limit, e_limit;
	char *command;
	char who[40];
	uint8_t link_id[RNSC_TRUNCATED_HASHLEN], request_id[RNSC_TRUNCATED_HASHLEN];
} x_job;

typedef struct x_listener {
	rnsc_ctx *ctx;
	rnsc_node *n;
	rnsc_linkapp *la;
	rnsc_linkreq *lr;
	rnsc_request_handlers *hs;
	int allow_all;
	uint8_t allowed[MAX_ALLOWED][RNSC_TRUNCATED_HASHLEN];
	size_t n_allowed;
	uint8_t resp[64]; /* the answer for a command that could not start */
	x_job *jobs;
} x_listener;

static void buf_add(x_buf *b, const uint8_t *p, size_t len)
{
	b->total += len;
	if (b->len + len > MAX_OUTPUT)
		len = MAX_OUTPUT - b->len;
	if (!len)
		return;
	uint8_t *q = realloc(b->p, b->len + len);
	if (!q)
		return;
	memcpy(q + b->len, p, len);
	b->p = q;
	b->len += len;
}

static int cloexec_pipe(int p[2])
{
	if (pipe(p) != 0)
		return -1;
	(void)fcntl(p[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(p[1], F_SETFD, FD_CLOEXEC);
	(void)fcntl(p[0], F_SETFL, O_NONBLOCK);
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Popen(shlex.split(command), stdin/stdout/stderr piped): 0 with j->pid and the pipes, or
 * -1 when the command cannot be split or started (rnx: executed False). */
static int job_start(x_job *j)
{
	char **argv = NULL;
	if (shlex_split(j->command, &argv) != 0)
		return -1;
	if (!argv[0]) {
		free(argv);
		return -1;
	}
	int pi[2] = {-1, -1}, po[2] = {-1, -1}, pe[2] = {-1, -1}, px[2] = {-1, -1};
	int ret = -1;
	if (cloexec_pipe(pi) || cloexec_pipe(po) || cloexec_pipe(pe) || cloexec_pipe(px))
		goto out;
	(void)fcntl(px[0], F_SETFL, 0);
	pid_t pid = fork();
	if (pid < 0)
		goto out;
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL); /* the node blocks SIGTERM in its thread */
		signal(SIGPIPE, SIG_DFL);
		(void)fcntl(pi[0], F_SETFL, 0);
		dup2(pi[0], 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execvp(argv[0], argv);
		int e = errno;
		ssize_t wr = write(px[1], &e, sizeof(e));
		(void)wr;
		_exit(127);
	}
	close_fd(&pi[0]);
	close_fd(&po[1]);
	close_fd(&pe[1]);
	close_fd(&px[1]);
	int e = 0;
	ssize_t r;
	while ((r = read(px[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	if (r == (ssize_t)sizeof(e)) { /* exec failed: Popen raises */
		while (waitpid(pid, &j->status, 0) < 0 && errno == EINTR)
			;
		goto out;
	}
	ret = 0;
	j->pid = pid;
	j->out_fd = po[0];
	j->err_fd = pe[0];
	po[0] = pe[0] = -1;
	if (j->in_len) {
		(void)fcntl(pi[1], F_SETFL, O_NONBLOCK);
		j->in_fd = pi[1];
		pi[1] = -1;
	}
out:
	for (int i = 0; i < 2; i++) {
		close_fd(&pi[i]);
		close_fd(&po[i]);
		close_fd(&pe[i]);
		close_fd(&px[i]);
	}
	free(argv);
	return ret;
}

/* Python's slicing for the output limits: [0:limit] of a negative limit counts from the end */
static size_t limited(size_t len, int has_limit, int64_t limit)
{
	if (!has_limit || (int64_t)len <= limit)
		return len;
	if (limit >= 0)
		return (size_t)limit;
	return (int64_t)len + limit > 0 ? (size_t)((int64_t)len + limit) : 0;
}

typedef struct x_out {
	uint8_t *p;
	size_t len;
} x_out;

static int out_read(void *ud, uint64_t off, uint8_t *buf, size_t len)
{
	x_out *o = ud;
	if (off > o->len || len > o->len - off)
		return RNSC_ERR_INVAL;
	memcpy(buf, o->p + off, len);
	return (int)len;
}

static void out_done(void *ud, rnsc_resource *r)
{
	(void)r;
	x_out *o = ud;
	free(o->p);
	free(o);
}

/* The response of a finished job, as the request manager would send it: one RESPONSE packet
 * when it fits the link MDU, else a resource flagged as the response to the request. */
static void job_respond(x_listener *s, x_job *j)
{
	double concluded = wall_s();
	if (j->timed_out)
		rnsc_log(s->ctx, RNSC_LOG_INFO, "x",
			 "Command [%s] timed out and is being killed...", j->command);
	size_t ol = limited(j->out.len, j->has_o, j->o_limit);
	size_t el = limited(j->err.len, j->has_e, j->e_limit);
	size_t cap = 96 + ol + el;
	uint8_t *v = malloc(cap), *packed = NULL;
	if (!v)
		return;
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, v, cap);
	rnsc_mp_write_array(&w, 8);
	rnsc_mp_write_bool(&w, 1);
	/* Popen.returncode: the exit status, or minus the signal */
	rnsc_mp_write_int(&w,
			  WIFSIGNALED(j->status) ? -WTERMSIG(j->status) : WEXITSTATUS(j->status));
	rnsc_mp_write_bin(&w, j->out.p, ol);
	rnsc_mp_write_bin(&w, j->err.p, el);
	rnsc_mp_write_uint(&w, j->out.total);
	rnsc_mp_write_uint(&w, j->err.total);
	rnsc_mp_write_double(&w, j->started);
	if (j->timed_out) /* rnx: no concluded time once past the timeout */
		rnsc_mp_write_nil(&w);
	else
		rnsc_mp_write_double(&w, concluded);
	int vl = rnsc_mp_writer_finish(&w);
	int pl = vl < 0 ? vl : rnsc_response_pack(NULL, 0, j->request_id, v, (size_t)vl);
	if (pl > 0 && (packed = malloc((size_t)pl)) != NULL)
		pl = rnsc_response_pack(packed, (size_t)pl, j->request_id, v, (size_t)vl);
	free(v);
	if (pl <= 0 || !packed) {
		free(packed);
		return;
	}
	rnsc_transport *t = rnsc_node_transport(s->n);
	rnsc_linkport port;
	rnsc_linkport_on_transport(&port, t, j->link_id);
	if (rnsc_linkport_status(&port) != RNSC_LINK_ACTIVE) {
		free(packed);
		return; /* the link went away: nobody to answer */
	}
	rnsc_log(s->ctx, RNSC_LOG_INFO, "x", "Delivering result of command [%s] to %s", j->command,
		 j->who);
	int rc;
	if ((size_t)pl <= rnsc_linkport_mdu(&port)) {
		rc = rnsc_transport_link_send_packet(t, j->link_id, RNSC_PKT_DATA,
						     RNSC_CTX_RESPONSE, packed, (size_t)pl, NULL,
						     rnsc_node_now_ms());
		free(packed);
	} else {
		x_out *o = malloc(sizeof(*o));
		rc = RNSC_ERR_NOMEM;
		if (o) {
			o->p = packed;
			o->len = (size_t)pl;
			rnsc_resource_params rp = {.size = (uint64_t)pl,
						   .auto_compress = 1,
						   .request_id = j->request_id,
						   .request_id_len = RNSC_TRUNCATED_HASHLEN,
						   .is_response = 1};
			rnsc_resource_callbacks rcb = {.read = out_read, .concluded = out_done};
			rc = rnsc_linkapp_send_resource(s->la, j->link_id, &rcb, o, &rp, NULL);
			if (rc)
				free(o);
		}
		if (rc)
			free(packed);
	}
	if (rc)
		rnsc_log(s->ctx, RNSC_LOG_ERROR, "x", "Could not send the result of [%s]: %s",
			 j->command, rnsc_strerror(rc));
	rnsc_node_flush(s->n);
}

static void job_free(x_job *j)
{
	close_fd(&j->in_fd);
	close_fd(&j->out_fd);
	close_fd(&j->err_fd);
	free(j->out.p);
	free(j->err.p);
	free(j->in_copy);
	free(j->command);
	free(j);
}

static void read_into(int *fd, x_buf *b)
{
	uint8_t chunk[16384];
	for (int i = 0; i < 64 && *fd >= 0; i++) {
		ssize_t k = read(*fd, chunk, sizeof(chunk));
		if (k > 0) {
			buf_add(b, chunk, (size_t)k);
			continue;
		}
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		close_fd(fd); /* EOF or error */
	}
}

/* One turn over the running jobs: stdin written, output read, the timeout checked once a
 * second (rnx's communicate(timeout=1) loop: SIGTERM, then wait), finished jobs answered. */
static void jobs_service(x_listener *s, int wait_ms)
{
	struct pollfd fds[96];
	nfds_t nf = 0;
	for (x_job *j = s->jobs; j && nf + 3 <= 96; j = j->next) {
		if (j->out_fd >= 0)
			fds[nf++] = (struct pollfd){.fd = j->out_fd, .events = POLLIN};
		if (j->err_fd >= 0)
			fds[nf++] = (struct pollfd){.fd = j->err_fd, .events = POLLIN};
		if (j->in_fd >= 0)
			fds[nf++] = (struct pollfd){.fd = j->in_fd, .events = POLLOUT};
	}
	if (nf)
		(void)poll(fds, nf, wait_ms);
	for (x_job **pp = &s->jobs; *pp;) {
		x_job *j = *pp;
		if (j->in_fd >= 0) {
			ssize_t k = write(j->in_fd, j->in + j->in_off, j->in_len - j->in_off);
			if (k > 0)
				j->in_off += (size_t)k;
			if ((k < 0 && errno != EINTR && errno != EAGAIN) || j->in_off >= j->in_len)
				close_fd(&j->in_fd);
		}
		read_into(&j->out_fd, &j->out);
		read_into(&j->err_fd, &j->err);
		double now = mono_s();
		if (now >= j->next_check) {
			j->next_check += 1.0;
			if (!j->killed && !isnan(j->timeout_s) &&
			    now > j->started_mono + j->timeout_s) {
				kill(j->pid, SIGTERM);
				j->killed = j->timed_out = 1;
			}
		}
		int done = 0;
		if (j->out_fd < 0 && j->err_fd < 0) {
			pid_t r = waitpid(j->pid, &j->status, WNOHANG);
			done = r == j->pid || (r < 0 && errno == ECHILD);
		}
		if (!done) {
			pp = &j->next;
			continue;
		}
		if (!isnan(j->timeout_s) && mono_s() > j->started_mono + j->timeout_s)
			j->timed_out = 1;
		*pp = j->next;
		job_respond(s, j);
		job_free(j);
	}
}

/* The "command" handler: starts the command and answers when it ends (jobs_service), or
 * answers executed = False at once when it cannot start. */
static int exec_handler(void *ud, const rnsc_request_info *req, const uint8_t **resp,
			size_t *resp_len)
{
	x_listener *s = ud;
	rnsc_x_request q;
	x_job *j = calloc(1, sizeof(*j));
	if (!j)
		return 0;
	j->in_fd = j->out_fd = j->err_fd = -1;
	/* rnx indexes data[0..4] and decodes data[0]: anything else raises, no answer */
	if (rnsc_x_parse_request(req->data, req->data_len, &q) != 0)
		goto drop;
	const uint8_t *cmd = q.cmd, *in = q.in;
	size_t cmd_len = q.cmd_len, in_len = q.in_len;
	j->timeout_s = q.timeout;
	j->has_o = q.has_o;
	j->o_limit = q.o_limit;
	j->has_e = q.has_e;
	j->e_limit = q.e_limit;
	if (!(j->command = malloc(cmd_len + 1)))
		goto drop;
	memcpy(j->command, cmd, cmd_len);
	j->command[cmd_len] = 0;
	if (in_len) {
		if (!(j->in_copy = malloc(in_len)))
			goto drop;
		memcpy(j->in_copy, in, in_len);
		j->in = j->in_copy;
		j->in_len = in_len;
	}
	snprintf(j->who, sizeof(j->who), "unknown requestor");
	if (req->remote_identity)
		pretty(j->who, req->remote_identity->hash);
	memcpy(j->link_id, req->link_id, RNSC_TRUNCATED_HASHLEN);
	memcpy(j->request_id, req->request_id, RNSC_TRUNCATED_HASHLEN);
	rnsc_log(s->ctx, RNSC_LOG_INFO, "x", "Executing command [%s] for %s", j->command, j->who);
	j->started = wall_s();
	j->started_mono = mono_s();
	j->next_check = j->started_mono + 1.0;
	if (job_start(j) != 0) {
		/* [False, None x5, started, None] */
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, s->resp, sizeof(s->resp));
		rnsc_mp_write_array(&w, 8);
		rnsc_mp_write_bool(&w, 0);
		for (int i = 0; i < 5; i++)
			rnsc_mp_write_nil(&w);
		rnsc_mp_write_double(&w, j->started);
		rnsc_mp_write_nil(&w);
		int len = rnsc_mp_writer_finish(&w);
		job_free(j);
		if (len < 0)
			return 0;
		*resp = s->resp;
		*resp_len = (size_t)len;
		return 1;
	}
	j->next = s->jobs;
	s->jobs = j;
	return 0; /* answered by jobs_service when the command ends */
drop:
	job_free(j);
	return 0;
}

static int is_allowed(const x_listener *s, const uint8_t *h)
{
	for (size_t i = 0; i < s->n_allowed; i++)
		if (memcmp(s->allowed[i], h, RNSC_TRUNCATED_HASHLEN) == 0)
			return 1;
	return 0;
}

static void l_est(void *ud, const uint8_t id[RNSC_TRUNCATED_HASHLEN],
		  const uint8_t dest[RNSC_TRUNCATED_HASHLEN], int initiator)
{
	(void)dest;
	x_listener *s = ud;
	if (initiator)
		return;
	char h[40];
	pretty(h, id);
	rnsc_log(s->ctx, RNSC_LOG_INFO, "x", "Command link %s established", h);
	if (rnsc_linkreq_attach(s->lr, id, s->hs, NULL) != 0)
		rnsc_log(s->ctx, RNSC_LOG_ERROR, "x", "cannot set up requests on the link");
}

/* The request slot in front of linkreq's: a peer's LINKIDENTIFY and REQUEST can reach the
 * node before its link-established hook (rnx identifies as soon as its side is active), so
 * the link gets its handlers on its first request packet as well. */
static void l_request_slot(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN], int packet_type,
			   int context, const uint8_t *data, size_t len,
			   const uint8_t packet_hash[RNSC_HASHLEN])
{
	x_listener *s = ud;
	(void)rnsc_linkreq_attach(s->lr, link_id, s->hs, NULL);
	rnsc_linkreq_packet(s->lr, link_id, packet_type, context, data, len, packet_hash);
}

static void l_identified(void *ud, const uint8_t id[RNSC_TRUNCATED_HASHLEN],
			 const rnsc_identity *who)
{
	x_listener *s = ud;
	char l[40], h[40];
	pretty(l, id);
	pretty(h, who->hash);
	rnsc_log(s->ctx, RNSC_LOG_INFO, "x", "Initiator of link %s identified as %s", l, h);
	if (!s->allow_all && !is_allowed(s, who->hash)) {
		rnsc_log(s->ctx, RNSC_LOG_INFO, "x", "Identity %s not allowed, tearing down link",
			 h);
		(void)rnsc_transport_link_close(rnsc_node_transport(s->n), id, rnsc_node_now_ms());
		rnsc_node_flush(s->n);
	}
}

static void l_closed(void *ud, const uint8_t id[RNSC_TRUNCATED_HASHLEN], int reason)
{
	(void)reason;
	x_listener *s = ud;
	char h[40];
	pretty(h, id);
	rnsc_log(s->ctx, RNSC_LOG_INFO, "x", "Command link %s closed", h);
	rnsc_linkreq_detach(s->lr, id);
}

static void load_allowed_file(x_listener *s)
{
	const char *home = getenv("HOME");
	char p[3][PATH_MAX];
	snprintf(p[0], sizeof(p[0]), "/etc/rnx/allowed_identities");
	snprintf(p[1], sizeof(p[1]), "%s/.config/rnx/allowed_identities", home ? home : "");
	snprintf(p[2], sizeof(p[2]), "%s/.rnx/allowed_identities", home ? home : "");
	for (int i = 0; i < 3; i++) {
		FILE *f = fopen(p[i], "r");
		if (!f)
			continue;
		char line[256];
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\r\n")] = 0;
			if (strlen(line) == 32 && s->n_allowed < MAX_ALLOWED &&
			    cli_unhex(s->allowed[s->n_allowed], 16, line) == 16)
				s->n_allowed++;
		}
		fclose(f);
		return;
	}
}

static int do_listen(cli_env *env, const char *cfg, const char *idpath, int verbosity,
		     char **allowed, size_t n_allowed, int print_identity, int no_auth,
		     int no_announce)
{
	x_listener s = {.ctx = env->ctx, .allow_all = no_auth};
	rnsc_node_options no = {.config_dir = cfg, .handle_signals = 1};
	x_log_level(env->ctx, verbosity);
	rnsc_config_error cerr;
	if (rnsc_node_new(env->ctx, env->host, &no, &s.n, &cerr)) {
		fprintf(stderr, "rnsc x: %s\n", cerr.msg[0] ? cerr.msg : "cannot start the node");
		return CLI_SETUP;
	}
	int ret = 0, have_id = 0;
	rnsc_identity id;
	if (prepare_identity(env->ctx, s.n, idpath, &id) != 0) {
		ret = CLI_SETUP;
		goto out;
	}
	have_id = 1;
	rnsc_transport *t = rnsc_node_transport(s.n);
	uint8_t dh[RNSC_TRUNCATED_HASHLEN];
	static const char *const asp[] = {"execute"};
	if (rnsc_transport_dest_add(t, RNSC_DEST_SINGLE, &id, APP_NAME, asp, 1, 0, dh)) {
		ret = CLI_SETUP;
		goto out;
	}
	char ph[40], ih[40];
	pretty(ph, dh);
	pretty(ih, id.hash);
	if (print_identity) {
		printf("Identity     : %s\nListening on : %s\n", ih, ph);
		goto out;
	}
	if (!no_auth) {
		for (size_t i = 0; i < n_allowed; i++) {
			if (s.n_allowed >= MAX_ALLOWED ||
			    parse_hash(allowed[i], s.allowed[s.n_allowed]) != 0) {
				ret = 1;
				goto out;
			}
			s.n_allowed++;
		}
		load_allowed_file(&s);
		if (s.n_allowed < 1)
			printf("Warning: No allowed identities configured, rncx will not accept any "
			       "commands!\n");
		fflush(stdout);
	}
	rnsc_node_hooks hooks = {.ud = &s,
				 .on_link_established = l_est,
				 .on_link_identified = l_identified,
				 .on_link_closed = l_closed};
	int rc = rnsc_linkapp_new(env->ctx, s.n, NULL, &hooks, &s.la);
	if (!rc)
		rc = rnsc_linkreq_new(env->ctx, s.n, s.la, &s.lr);
	if (!rc)
		rc = rnsc_request_handlers_new(env->ctx, &s.hs);
	if (!rc)
		rnsc_linkapp_set_request_slot(s.la, l_request_slot, &s);
	if (!rc)
		rc = no_auth ? rnsc_request_handlers_register(s.hs, "command", exec_handler, &s,
							      RNSC_REQUEST_ALLOW_ALL, NULL, 0, 1)
			     : rnsc_request_handlers_register(
				       s.hs, "command", exec_handler, &s, RNSC_REQUEST_ALLOW_LIST,
				       (const uint8_t(*)[RNSC_TRUNCATED_HASHLEN])s.allowed,
				       s.n_allowed, 1);
	if (rc) {
		fprintf(stderr, "rnsc x: %s\n", rnsc_strerror(rc));
		ret = CLI_SETUP;
		goto out;
	}
	rnsc_log(env->ctx, RNSC_LOG_NOTICE, "x", "rnx listening for commands on %s", ph);
	uint64_t until = rnsc_monotonic_ns() + IFACE_WAIT_MS * RNSC_NS_PER_MS;
	while (!ifaces_ready(s.n) && rnsc_monotonic_ns() < until && !rnsc_node_stopping(s.n))
		rnsc_node_run_once(s.n, 50);
	if (!no_announce) {
		(void)rnsc_transport_announce(t, dh, NULL, 0, rnsc_node_now_ms());
		rnsc_node_flush(s.n);
	}
	while (!rnsc_node_stopping(s.n)) {
		/* with commands running, short turns: their pipes are polled in between */
		rnsc_node_run_once(s.n, s.jobs ? 10 : 200);
		(void)rnsc_linkreq_tick(s.lr, rnsc_node_now_ms());
		if (s.jobs)
			jobs_service(&s, 10);
	}
out:
	while (s.jobs) { /* stopping: the commands still running go with the listener */
		x_job *j = s.jobs;
		s.jobs = j->next;
		if (j->pid > 0) {
			kill(j->pid, SIGTERM);
			while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
		job_free(j);
	}
	if (have_id)
		rnsc_identity_free(&id);
	rnsc_linkapp_del(s.la);
	rnsc_linkreq_del(s.lr);
	rnsc_request_handlers_del(s.hs);
	rnsc_node_del(s.n);
	return ret;
}

/* ---- the client --------------------------------------------------------------------------- */

enum { ST_FAILED = 0, ST_SENT = 1, ST_DELIVERED = 2, ST_RECEIVING = 3, ST_READY = 4 };

typedef struct x_client {
	rnsc_ctx *ctx;
	rnsc_node *n;
	rnsc_linkapp *la;
	rnsc_linkreq *lr;
	rnsc_identity id;
	int have_id;
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	uint8_t link_id[RNSC_TRUNCATED_HASHLEN];
	int link_open, link_closed, did_identify, path_offline;
	/* the current request */
	int st;
	double progress;
	size_t transfer_size, response_size, request_size;
	uint64_t sent_at, concluded_at;
	uint8_t *resp;
	size_t resp_len;
	int have_resp;
	/* options */
	int detailed, mirror, noid, timeout_given;
	double timeout, result_timeout; /* result_timeout NAN: none */
	int has_ol, has_el;
	int64_t ol, el;
} x_client;

static void c_progress(void *ud, const rnsc_request_receipt *r)
{
	x_client *c = ud;
	c->st = r->status;
	c->progress = r->progress;
	c->transfer_size = r->response_transfer_size;
}

static void c_response(void *ud, const rnsc_request_receipt *r)
{
	x_client *c = ud;
	free(c->resp);
	c->resp = malloc(r->response_len ? r->response_len : 1);
	if (c->resp) {
		memcpy(c->resp, r->response, r->response_len);
		c->resp_len = r->response_len;
		c->have_resp = 1;
	}
	c->st = ST_READY;
	c->response_size = r->response_size;
	c->request_size = r->request_size;
	c->sent_at = r->sent_at;
	c->concluded_at = r->concluded_at ? r->concluded_at : rnsc_node_now_ms();
}

static void c_failed(void *ud, const rnsc_request_receipt *r)
{
	(void)r;
	x_client *c = ud;
	c->st = ST_FAILED;
}

static void c_closed(void *ud, const uint8_t id[RNSC_TRUNCATED_HASHLEN], int reason)
{
	(void)reason;
	x_client *c = ud;
	if (memcmp(id, c->link_id, RNSC_TRUNCATED_HASHLEN) == 0) {
		c->link_closed = 1;
		rnsc_linkreq_detach(c->lr, id);
	}
}

typedef int (*until_fn)(x_client *c);

/* rnx's spin(): the message, a spinner every 0.1 s on stdout, then the line cleared.
 * timeout_s < 0: none. 1 when until() held, 0 on timeout. */
static int spin(x_client *c, until_fn until, const char *msg, double timeout_s)
{
	double end = mono_s() + timeout_s;
	printf("%s   ", msg);
	fflush(stdout);
	unsigned i = 0;
	while ((timeout_s < 0 || mono_s() < end) && !until(c) && !rnsc_node_stopping(c->n)) {
		rnsc_node_run_once(c->n, 100);
		(void)rnsc_linkreq_tick(c->lr, rnsc_node_now_ms());
		printf("\b\b%s ", syms[i++ % 7]);
		fflush(stdout);
	}
	printf("\r%*s  \r", (int)strlen(msg), "");
	fflush(stdout);
	return !(timeout_s >= 0 && mono_s() > end);
}

static void size_str(char *out, size_t cap, double num, char suffix)
{
	static const char *units[] = {"", "K", "M", "G", "T", "P", "E", "Z"};
	if (suffix == 'b')
		num *= 8;
	for (size_t i = 0; i < 8; i++) {
		if (fabs(num) < 1000.0) {
			snprintf(out, cap, i == 0 ? "%.0f %s%c" : "%.2f %s%c", num, units[i],
				 suffix);
			return;
		}
		num /= 1000.0;
	}
	snprintf(out, cap, "%.2fY%c", num, suffix);
}

/* str(round(x, 3)) as Python prints it: shortest digits, at least one decimal */
static void py_round3(char *out, size_t cap, double x)
{
	snprintf(out, cap, "%.3f", round(x * 1000.0) / 1000.0);
	char *d = strchr(out, '.');
	if (!d)
		return;
	char *e = out + strlen(out) - 1;
	while (e > d + 1 && *e == '0')
		*e-- = 0;
}

static int u_path(x_client *c)
{
	/* a request sent before the interface was up is lost (the reference's TCP clients
	 * connect before it asks): asked again once it is */
	if (c->path_offline && ifaces_ready(c->n)) {
		c->path_offline = 0;
		(void)rnsc_transport_request_path(rnsc_node_transport(c->n), c->dest, 0, 0,
						  rnsc_node_now_ms());
		rnsc_node_flush(c->n);
	}
	return rnsc_transport_has_path(rnsc_node_transport(c->n), c->dest);
}

static int u_active(x_client *c)
{
	const rnsc_link *l = rnsc_transport_link_get(rnsc_node_transport(c->n), c->link_id);
	return l && rnsc_link_status(l) == RNSC_LINK_ACTIVE;
}

static int u_sent(x_client *c)
{
	return c->link_closed || (c->st != ST_FAILED && c->st != ST_SENT);
}

static int u_delivered(x_client *c)
{
	return c->st != ST_DELIVERED;
}

static int u_receiving(x_client *c)
{
	return c->st != ST_RECEIVING;
}

/* rnx's execute(): the exit code; interactive: INT_MIN where rnx returns None, else the
 * remote's return code with -m (INT_MIN when it has none), 0 without. */
static int execute(x_client *c, const char *command, const char *stdin_s, int interactive)
{
	char ph[40];
	pretty(ph, c->dest);
	char msg[128];
	rnsc_transport *t = rnsc_node_transport(c->n);
	c->have_resp = 0;
	if (!u_path(c)) {
		c->path_offline = !ifaces_ready(c->n);
		(void)rnsc_transport_request_path(t, c->dest, 0, 0, rnsc_node_now_ms());
		rnsc_node_flush(c->n);
		double mpt = rnsc_node_medium_path_timeout_s(c->n);
		snprintf(msg, sizeof(msg), "Path to %s requested", ph);
		if (!spin(c, u_path, msg, c->timeout > mpt ? c->timeout : mpt)) {
			printf("Path not found\n");
			return 242;
		}
	}
	if (!c->link_open || c->link_closed || !u_active(c)) {
		if (c->link_open && !c->link_closed)
			(void)rnsc_transport_link_close(t, c->link_id, rnsc_node_now_ms());
		c->link_closed = 0;
		c->did_identify = 0;
		if (rnsc_transport_link_open(t, c->dest, c->link_id, rnsc_node_now_ms()) != 0) {
			printf("Could not establish link with %s\n", ph);
			return 243;
		}
		c->link_open = 1;
		rnsc_node_flush(c->n);
	}
	const rnsc_link *lk = rnsc_transport_link_get(t, c->link_id);
	double et = lk ? (double)rnsc_link_establishment_timeout_ms(lk) / 1000.0 : 0;
	snprintf(msg, sizeof(msg), "Establishing link with %s", ph);
	if (!spin(c, u_active, msg, c->timeout > et ? c->timeout : et) || !u_active(c)) {
		printf("Could not establish link with %s\n", ph);
		return 243;
	}
	if (!c->noid && !c->did_identify) {
		(void)rnsc_transport_link_identify(t, c->link_id, &c->id, rnsc_node_now_ms());
		rnsc_node_flush(c->n);
		c->did_identify = 1;
	}
	size_t cl = strlen(command), sl = stdin_s ? strlen(stdin_s) : 0;
	size_t cap = 64 + cl + sl;
	uint8_t *rq = malloc(cap);
	if (!rq)
		return CLI_SETUP;
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, rq, cap);
	rnsc_mp_write_array(&w, 5);
	rnsc_mp_write_bin(&w, (const uint8_t *)command, cl);
	if (c->timeout_given)
		rnsc_mp_write_double(&w, c->timeout);
	else /* rnx's default -w is the integer Transport.PATH_REQUEST_TIMEOUT, sent as such */
		rnsc_mp_write_int(&w, (int64_t)c->timeout);
	if (c->has_ol)
		rnsc_mp_write_int(&w, c->ol);
	else
		rnsc_mp_write_nil(&w);
	if (c->has_el)
		rnsc_mp_write_int(&w, c->el);
	else
		rnsc_mp_write_nil(&w);
	if (stdin_s)
		rnsc_mp_write_bin(&w, (const uint8_t *)stdin_s, sl);
	else
		rnsc_mp_write_nil(&w);
	int rl_len = rnsc_mp_writer_finish(&w);
	lk = rnsc_transport_link_get(t, c->link_id);
	double rtt = lk ? rnsc_link_rtt(lk) : 0;
	double rexec_timeout = c->timeout + rtt * 4 + REMOTE_EXEC_GRACE_S;
	free(c->resp);
	c->resp = NULL;
	c->have_resp = 0;
	c->st = ST_SENT;
	c->progress = 0;
	rnsc_request_link *rl = NULL;
	/* rns 1.5.4 never times out a request still SENT (an unanswered one ends in "No
	 * response" once the spins below run out); rnsc's receipts do, so this one gets the
	 * whole wait of those spins */
	rnsc_request_params p = {
		.timeout_ms = (uint64_t)((rexec_timeout + 0.5 + c->timeout + 1.0) * 1000.0),
		.response = c_response,
		.failed = c_failed,
		.progress = c_progress,
		.ud = c};
	int rc = rl_len < 0 ? rl_len : rnsc_linkreq_attach(c->lr, c->link_id, NULL, &rl);
	if (!rc)
		rc = rnsc_request_link_send(rl, "command", rq, (size_t)rl_len, &p, NULL,
					    rnsc_node_now_ms());
	free(rq);
	if (rc)
		c->st = ST_FAILED;
	rnsc_node_flush(c->n);
	spin(c, u_sent, "Sending execution request", rexec_timeout + 0.5);
	if (c->link_closed) {
		printf("Could not request remote execution, link was closed\n");
		return 244;
	}
	if (c->st == ST_FAILED) {
		printf("Could not request remote execution\n");
		return interactive ? INT_MIN : 244;
	}
	spin(c, u_delivered, "Command delivered, awaiting result", c->timeout);
	if (c->st == ST_FAILED) {
		printf("No result was received\n");
		return interactive ? INT_MIN : 245;
	}
	/* rnx's spin_stat: the result's download progress */
	{
		double end = mono_s() + (isnan(c->result_timeout) ? 0 : c->result_timeout);
		unsigned i = 0;
		int shown = 0;
		while ((isnan(c->result_timeout) || mono_s() < end) && !u_receiving(c) &&
		       !rnsc_node_stopping(c->n)) {
			rnsc_node_run_once(c->n, 100);
			(void)rnsc_linkreq_tick(c->lr, rnsc_node_now_ms());
			char a[32], b[32];
			size_str(a, sizeof(a), floor(c->progress * (double)c->transfer_size), 'B');
			size_str(b, sizeof(b), (double)c->transfer_size, 'B');
			printf("\r%82s\rReceiving result %s %.1f%% - %s of %s ", "", syms[i++ % 7],
			       round(c->progress * 1000.0) / 10.0, a, b);
			fflush(stdout);
			shown = 1;
		}
		if (shown || c->st == ST_READY) {
			printf("\r%82s\r", "");
			fflush(stdout);
		}
	}
	if (c->st == ST_FAILED) {
		printf("Receiving result failed\n");
		return interactive ? INT_MIN : 246;
	}
	if (!c->have_resp) {
		printf("No response\n");
		return interactive ? INT_MIN : 249;
	}
	/* the response: [executed, retval, stdout, stderr, outlen, errlen, started, concluded] */
	rnsc_x_result res;
	int bad = rnsc_x_parse_result(c->resp, c->resp_len, &res) != 0;
	int executed = res.executed, has_ret = res.has_ret, has_olen = res.has_olen;
	int has_elen = res.has_elen;
	int64_t retval = res.retval, outlen = res.outlen, errlen = res.errlen;
	const uint8_t *so = res.so, *se = res.se;
	size_t so_len = res.so_len, se_len = res.se_len;
	double started = res.started, concluded = res.concluded;
	if (bad) {
		printf("Received invalid result\n");
		return interactive ? INT_MIN : 247;
	}
	if (!executed) {
		printf("Remote could not execute command\n");
		return interactive ? INT_MIN : 248;
	}
	fflush(stdout);
	if (so_len)
		fwrite(so, 1, so_len, stdout);
	fflush(stdout);
	if (se_len)
		fwrite(se, 1, se_len, stderr);
	fflush(stderr);
	if (c->detailed) {
		printf("\n--- End of remote output, rnx done ---\n");
		if (!isnan(started) && !isnan(concluded)) {
			double cmd_d = round((concluded - started) * 1000.0) / 1000.0;
			char a[32], b[64], d[32], sp[32];
			py_round3(a, sizeof(a), cmd_d);
			printf("Remote command execution took %s seconds\n", a);
			double total = (double)c->response_size + (double)c->request_size;
			double td =
				round(((double)(c->concluded_at - c->sent_at) / 1000.0 - cmd_d) *
				      1000.0) /
				1000.0;
			py_round3(d, sizeof(d), td);
			if (td == 1)
				snprintf(b, sizeof(b), " in 1 second");
			else if (td < 10)
				snprintf(b, sizeof(b), " in %s seconds", d);
			else {
				char pt[48];
				cli_prettytime(pt, sizeof(pt), td);
				snprintf(b, sizeof(b), " in %s", pt);
			}
			size_str(a, sizeof(a), total, 'B');
			size_str(sp, sizeof(sp), td != 0 ? total / td : 0, 'b');
			printf("Transferred %s%s, effective rate %sps\n", a, b, sp);
		}
		if (has_olen && so) {
			char ts[48] = "";
			if ((int64_t)so_len < outlen)
				snprintf(ts, sizeof(ts), ", %zu bytes displayed", so_len);
			printf("Remote wrote %lld bytes to stdout%s\n", (long long)outlen, ts);
		}
		if (has_elen && se) {
			char ts[48] = "";
			if ((int64_t)se_len < errlen)
				snprintf(ts, sizeof(ts), ", %zu bytes displayed", se_len);
			printf("Remote wrote %lld bytes to stderr%s\n", (long long)errlen, ts);
		}
	} else if (((!c->has_ol || c->ol != 0) && (int64_t)so_len < outlen) ||
		   ((!c->has_el || c->el != 0) && (int64_t)se_len < errlen)) {
		printf("\nOutput truncated before being returned:\n");
		if (so_len != 0 && (int64_t)so_len < outlen)
			printf("  stdout truncated to %zu bytes\n", so_len);
		if (se_len != 0 && (int64_t)se_len < errlen)
			printf("  stderr truncated to %zu bytes\n", se_len);
	}
	fflush(stdout);
	if (!interactive) {
		(void)rnsc_transport_link_close(t, c->link_id, rnsc_node_now_ms());
		rnsc_node_flush(c->n);
	}
	if (interactive)
		return c->mirror && has_ret ? (int)retval : INT_MIN;
	if (c->mirror)
		return has_ret ? (int)(retval & 0xff) : 240; /* exit(-15) leaves 241 */
	return 0;
}

static int do_client(cli_env *env, const char *cfg, const char *idpath, int verbosity, x_client *c,
		     const char *dest, const char *command, const char *stdin_s, int interactive)
{
	if (parse_hash(dest, c->dest) != 0)
		return 241;
	c->ctx = env->ctx;
	rnsc_node_options no = {.config_dir = cfg, .handle_signals = 1};
	x_log_level(env->ctx, verbosity);
	rnsc_config_error cerr;
	if (rnsc_node_new(env->ctx, env->host, &no, &c->n, &cerr)) {
		fprintf(stderr, "rnsc x: %s\n", cerr.msg[0] ? cerr.msg : "cannot start the node");
		return CLI_SETUP;
	}
	int ret = CLI_SETUP;
	rnsc_node_hooks hooks = {.ud = c, .on_link_closed = c_closed};
	if (prepare_identity(env->ctx, c->n, idpath, &c->id) != 0)
		goto out;
	c->have_id = 1;
	if (rnsc_linkapp_new(env->ctx, c->n, NULL, &hooks, &c->la) ||
	    rnsc_linkreq_new(env->ctx, c->n, c->la, &c->lr))
		goto out;
	uint64_t t0 = rnsc_monotonic_ns();
	uint64_t until = t0 + IFACE_WAIT_MS * RNSC_NS_PER_MS;
	while (!ifaces_ready(c->n) && rnsc_monotonic_ns() < until && !rnsc_node_stopping(c->n))
		rnsc_node_run_once(c->n, 50);
	if (command) { /* with -x too: rnx runs it and exits before its interactive loop */
		ret = execute(c, command, stdin_s, 0);
		goto out;
	}
	int code = INT_MIN;
	char line[8192];
	ret = 0;
	for (;;) {
		if (code != 0 && code != INT_MIN)
			printf("%d> ", code);
		else
			printf("> ");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			break;
		line[strcspn(line, "\n")] = 0;
		if (!strcasecmp(line, "exit") || !strcasecmp(line, "quit"))
			break;
		if (!strcasecmp(line, "clear")) {
			printf("\033c");
			continue;
		}
		int r = execute(c, line, NULL, 1);
		/* rnx exits on these even in interactive mode (244: the link was closed) */
		if (r != INT_MIN && r >= 241 && r <= 244 && !(c->mirror && c->have_resp)) {
			ret = r;
			break;
		}
		code = r;
	}
out:
	if (c->link_open && !c->link_closed) {
		(void)rnsc_transport_link_close(rnsc_node_transport(c->n), c->link_id,
						rnsc_node_now_ms());
		rnsc_node_flush(c->n);
	}
	if (c->have_id)
		rnsc_identity_free(&c->id);
	rnsc_linkapp_del(c->la);
	rnsc_linkreq_del(c->lr);
	rnsc_node_del(c->n);
	free(c->resp);
	return ret;
}

static int parse_double(const char *opt, const char *s, double *out)
{
	char *end;
	*out = strtod(s, &end);
	if (*end || end == s || isnan(*out)) {
		fprintf(stderr, "rnsc x: argument %s: invalid float value: '%s'\n", opt, s);
		return -1;
	}
	return 0;
}

static int parse_int(const char *opt, const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (*end || end == s || errno) {
		fprintf(stderr, "rnsc x: argument %s: invalid int value: '%s'\n", opt, s);
		return -1;
	}
	return 0;
}

int cmd_x(int argc, char **argv)
{
	enum { OPT_CONFIG = 1000, OPT_VERSION, OPT_STDIN, OPT_STDOUT, OPT_STDERR };
	static const struct option opts[] = {{"config", required_argument, NULL, OPT_CONFIG},
					     {"verbose", no_argument, NULL, 'v'},
					     {"quiet", no_argument, NULL, 'q'},
					     {"print-identity", no_argument, NULL, 'p'},
					     {"listen", no_argument, NULL, 'l'},
					     {"interactive", no_argument, NULL, 'x'},
					     {"no-announce", no_argument, NULL, 'b'},
					     {"noauth", no_argument, NULL, 'n'},
					     {"noid", no_argument, NULL, 'N'},
					     {"detailed", no_argument, NULL, 'd'},
					     {"stdin", required_argument, NULL, OPT_STDIN},
					     {"stdout", required_argument, NULL, OPT_STDOUT},
					     {"stderr", required_argument, NULL, OPT_STDERR},
					     {"version", no_argument, NULL, OPT_VERSION},
					     {"help", no_argument, NULL, 'h'},
					     {0, 0, 0, 0}};
	const char *cfg = NULL, *idpath = NULL, *stdin_s = NULL;
	int verbose = 0, quiet = 0, print_id = 0, listen = 0, interactive = 0, no_announce = 0;
	int no_auth = 0, ch;
	char *allowed[MAX_ALLOWED];
	size_t n_allowed = 0;
	x_client c = {.timeout = PATH_REQUEST_TIMEOUT_S, .result_timeout = NAN};
	optind = 1;
	while ((ch = getopt_long(argc, argv, "vqpli:xba:nNdmw:W:h", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_CONFIG:
			cfg = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'q':
			quiet++;
			break;
		case 'p':
			print_id = 1;
			break;
		case 'l':
			listen = 1;
			break;
		case 'i':
			idpath = optarg;
			break;
		case 'x':
			interactive = 1;
			break;
		case 'b':
			no_announce = 1;
			break;
		case 'a':
			if (n_allowed >= MAX_ALLOWED) {
				fprintf(stderr, "rnsc x: at most %d -a\n", MAX_ALLOWED);
				return CLI_USAGE;
			}
			allowed[n_allowed++] = optarg;
			break;
		case 'n':
			no_auth = 1;
			break;
		case 'N':
			c.noid = 1;
			break;
		case 'd':
			c.detailed = 1;
			break;
		case 'm':
			c.mirror = 1;
			break;
		case 'w':
			if (parse_double("-w", optarg, &c.timeout))
				return CLI_USAGE;
			c.timeout_given = 1;
			break;
		case 'W':
			if (parse_double("-W", optarg, &c.result_timeout))
				return CLI_USAGE;
			break;
		case OPT_STDIN:
			stdin_s = optarg;
			break;
		case OPT_STDOUT:
			if (parse_int("--stdout", optarg, &c.ol))
				return CLI_USAGE;
			c.has_ol = 1;
			break;
		case OPT_STDERR:
			if (parse_int("--stderr", optarg, &c.el))
				return CLI_USAGE;
			c.has_el = 1;
			break;
		case OPT_VERSION:
			printf("rnsc x %s\n", PACKAGE_VERSION);
			return CLI_OK;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	int npos = argc - optind;
	if (npos > 2) {
		fprintf(stderr, "rnsc x: unrecognized arguments: %s\n", argv[optind + 2]);
		return CLI_USAGE;
	}
	const char *dest = npos > 0 ? argv[optind] : NULL;
	const char *command = npos > 1 ? argv[optind + 1] : NULL;
	if (!listen && !print_id && !(dest && (command || interactive))) {
		printf("\n");
		usage(stdout);
		printf("\n");
		return CLI_OK;
	}
	cli_env env;
	int rc = cli_env_open(&env, NULL, 0);
	if (rc)
		return rc;
	int ret;
	if (listen || print_id)
		ret = do_listen(&env, cfg, idpath, verbose - quiet, allowed, n_allowed, print_id,
				no_auth, no_announce);
	else
		ret = do_client(&env, cfg, idpath, verbose - quiet, &c, dest, command, stdin_s,
				interactive);
	cli_env_close(&env);
	return ret;
}
