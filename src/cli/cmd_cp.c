/* SPDX-License-Identifier: MIT */
/* rnsc cp: the reference's rncp (RNS/Utilities/rncp.py, rns 1.5.4) on an in-process node.
 * Send a file as a resource (with the file name as metadata, as rncp does) to a listener, or
 * listen (-l) for files from allowed identities. Fetching rides on requests (linkapp_request.h):
 * -f asks the listener's "fetch_file" handler for a path (a str), the listener (-F, jailed by
 * -j) answers True and sends the file as an ordinary resource with the name as metadata, or
 * answers False (not found), None (remote error) or 0xF0 (REQ_FETCH_NOT_ALLOWED: outside the
 * jail), as rncp does; the fetcher accepts every resource on its link (ACCEPT_ALL) and saves
 * it as the listener saves received files. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "crypto.h"
#include "destination.h"
#include "link.h"
#include "linkapp.h"
#include "linkapp_request.h"
#include "msgpack.h"
#include "node.h"
#include "store.h"
#include "transport.h"

#define APP_NAME "rncp"
#define PATH_REQUEST_TIMEOUT_S 15.0 /* Transport.PATH_REQUEST_TIMEOUT */
#define IFACE_WAIT_MS 5000u
#define MAX_ALLOWED 256
#define ERASE "\33[2K\r"
#define REQ_FETCH_NOT_ALLOWED 0xF0
static const char *const syms[] = {"⢄", "⢂", "⢁", "⡁", "⡈", "⡐", "⡠"};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc cp [-h] [--config path] [-v] [-q] [-S] [-l] [-C] [-F] [-f] [-j path]\n"
		"               [-s path] [-O] [-b seconds] [-a allowed_hash] [-n] [-p]\n"
		"               [-i identity] [-w seconds] [-P] [--version] [file] [destination]\n\n"
		"Reticulum File Transfer Utility (the reference's rncp, same options and wire\n"
		"format: either side of a transfer may be rncp).\n\n"
		"Send FILE to the listener whose destination hash is DESTINATION (32 hex digits):\n"
		"a path is requested when none is known, a link is opened, this identity is\n"
		"revealed on it and the file goes over as one resource carrying its name as\n"
		"metadata. With -l, listen on the rncp.receive destination of this identity and\n"
		"save files from allowed identities under their sent names (a numeric suffix is\n"
		"added instead of overwriting unless -O).\n\n"
		"positional arguments:\n"
		"  file                  file to be transferred\n"
		"  destination           hexadecimal hash of the receiver\n\n"
		"options:\n"
		"  -h, --help            show this help message and exit\n"
		"  --config path         path to alternative Reticulum config directory\n"
		"  -v, --verbose         increase verbosity\n"
		"  -q, --quiet           decrease verbosity\n"
		"  -S, --silent          disable transfer progress output\n"
		"  -l, --listen          listen for incoming transfer requests\n"
		"  -C, --no-compress     disable automatic compression\n"
		"  -F, --allow-fetch     allow authenticated clients to fetch files\n"
		"  -f, --fetch           fetch file from remote listener instead of sending\n"
		"  -j, --jail path       restrict fetch requests to specified path\n"
		"  -s, --save path       save received files in specified path\n"
		"  -O, --overwrite       Allow overwriting received files, instead of adding postfix\n"
		"  -b seconds            announce interval, 0 to only announce at startup\n"
		"  -a allowed_hash       allow this identity (or add in ~/.rncp/allowed_identities)\n"
		"  -n, --no-auth         accept requests from anyone\n"
		"  -p, --print-identity  print identity and destination info and exit\n"
		"  -i identity           path to identity to use\n"
		"  -w seconds            sender timeout before giving up (default 15)\n"
		"  -P, --phy-rates       display physical layer transfer rates\n"
		"  --version             show program's version number and exit\n\n"
		"Progress is drawn on a terminal; with -S, or when standard output is not a\n"
		"terminal, one line per step is printed instead.\n"
		"The identity lives in <config>/storage/identities/rncp unless -i names a file; it is\n"
		"created on first use. Allowed identities are also read from\n"
		"/etc/rncp/allowed_identities, ~/.config/rncp/allowed_identities or\n"
		"~/.rncp/allowed_identities (the first that exists; one 32-hex-digit hash a line).\n\n"
		"Examples:\n"
		"  rnsc cp -l -s ~/incoming -a 5ac06657b187cc2e3dbbf6ea0f8d9bbf\n"
		"      receive files from that identity into ~/incoming\n"
		"  rnsc cp -p                 print this identity and its rncp.receive destination\n"
		"  rnsc cp report.pdf 4713f8f1010810a7302e6ac993b1d398\n"
		"      send report.pdf to the listener with that destination hash\n\n"
		"Exit status (as rncp): 0 success, 1 failure (bad destination, file not found, no\n"
		"path, link timeout, transfer refused or failed), 2 unusable identity file or an\n"
		"unsupported option, 3 the save folder does not exist, 4 it is not writable.\n");
}

/* rncp's size_str */
static void size_str(char *out, size_t cap, double num, char suffix)
{
	static const char *units[] = {"", "K", "M", "G", "T", "P", "E", "Z"};
	if (suffix == 'b')
		num *= 8;
	for (size_t i = 0; i < 8; i++) {
		if (fabs(num) < 1000.0) {
			if (i == 0)
				snprintf(out, cap, "%.0f %s%c", num, units[i], suffix);
			else
				snprintf(out, cap, "%.2f %s%c", num, units[i], suffix);
			return;
		}
		num /= 1000.0;
	}
	snprintf(out, cap, "%.2fY%c", num, suffix);
}

static void pretty(char *out, const uint8_t *h)
{
	out[0] = '<';
	cli_hex(out + 1, h, RNSC_TRUNCATED_HASHLEN);
	strcat(out, ">");
}

typedef struct cp_state {
	rnsc_ctx *ctx;
	rnsc_node *n;
	rnsc_linkapp *la;
	rnsc_linkreq *lr;
	/* fetch: the listener's handlers and jail; the fetcher's request state */
	rnsc_request_handlers *hs;
	int no_compress, have_jail;
	char jail[PATH_MAX];
	int fetching, req_done, req_status; /* req_status: 0 failed, else the answer (below) */
	/* sender */
	int fd;
	uint8_t link_id[RNSC_TRUNCATED_HASHLEN];
	int link_up, link_closed;
	rnsc_resource *res;
	int res_status, res_done, phy_rates;
	uint64_t phy_bytes; /* part bytes sent, resends included (-P) */
	/* listener */
	int allow_all, overwrite;
	uint8_t allowed[MAX_ALLOWED][RNSC_TRUNCATED_HASHLEN];
	size_t n_allowed;
	char save_path[PATH_MAX];
	int have_save;
} cp_state;

typedef struct cp_rx {
	cp_state *s;
	int fd;
	char tmp[PATH_MAX + 96];
	char *name; /* from metadata */
	uint64_t bytes;
	uint8_t link_id[RNSC_TRUNCATED_HASHLEN];
} cp_rx;

/* ---- identity --------------------------------------------------------------------------- */

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
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		if (rnsc_identity_load_file(ctx, id, path) != 0) {
			rnsc_log(
				ctx, RNSC_LOG_ERROR, "cp",
				"Could not load identity for rncp. The identity file at \"%s\" may "
				"be corrupt or unreadable.",
				path);
			return 2;
		}
		return 0;
	}
	rnsc_log(ctx, RNSC_LOG_INFO, "cp", "No valid saved identity found, creating new...");
	if (rnsc_identity_generate(ctx, id) != 0)
		return 2;
	if (rnsc_identity_save_file(id, path) != 0)
		rnsc_log(ctx, RNSC_LOG_ERROR, "cp", "Could not save the identity to %s", path);
	return 0;
}

/* ---- node helpers ------------------------------------------------------------------------ */

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

/* rncp starts Reticulum with loglevel=3+verbose-quiet, which takes precedence over the
 * config's [logging] loglevel (clamped to critical..extreme). rnsc's own transfer figures
 * (advertised / advertisement / received / bytes in) are info lines: -v shows them. */
static void cp_log_level(rnsc_ctx *ctx, int verbosity)
{
	int lv = 3 + verbosity;
	rnsc_ctx_set_log_level(ctx, lv < 0 ? 0 : lv > 7 ? 7 : lv);
}

static void spin(int show, unsigned *i, const char *prefix)
{
	if (!show)
		return;
	printf("%s%s%s ", prefix ? prefix : "\b\b", syms[*i % 7], prefix ? "" : "");
	fflush(stdout);
	(*i)++;
}

/* ---- sender ------------------------------------------------------------------------------- */

static void s_est(void *ud, const uint8_t id[RNSC_TRUNCATED_HASHLEN],
		  const uint8_t dest[RNSC_TRUNCATED_HASHLEN], int initiator)
{
	(void)dest;
	cp_state *s = ud;
	if (initiator && memcmp(id, s->link_id, sizeof(s->link_id)) == 0)
		s->link_up = 1;
}

static void s_closed(void *ud, const uint8_t id[RNSC_TRUNCATED_HASHLEN], int reason)
{
	(void)reason;
	cp_state *s = ud;
	if (memcmp(id, s->link_id, sizeof(s->link_id)) == 0)
		s->link_closed = 1;
}

static int s_read(void *ud, uint64_t off, uint8_t *buf, size_t len)
{
	cp_state *s = ud;
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(s->fd, buf + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return RNSC_ERR_IO;
		got += (size_t)n;
	}
	return (int)len;
}

static void s_concluded(void *ud, rnsc_resource *r)
{
	cp_state *s = ud;
	s->res_status = rnsc_resource_status(r);
	s->res_done = 1;
	s->res = NULL;
}

static void progress_line(cp_state *s, unsigned *i, uint64_t total, double started, int done)
{
	double prg = done ? 1.0 : (s->res ? rnsc_resource_progress(s->res) : 0);
	double el = (double)rnsc_monotonic_ns() / 1e9 - started;
	double speed = el > 0 ? prg * (double)total / el : 0;
	char cs[32], ts[32], ss[32], ps[32], phy[64] = "";
	if (s->res) {
		rnsc_resource_stats st;
		rnsc_resource_stats_get(s->res, &st);
		s->phy_bytes = st.bytes;
	}
	if (s->phy_rates && !done) {
		size_str(ps, sizeof(ps), el > 0 ? (double)s->phy_bytes / el : 0, 'b');
		snprintf(phy, sizeof(phy), " (%sps at physical layer)", ps);
	}
	size_str(cs, sizeof(cs), floor(prg * (double)total), 'B');
	size_str(ts, sizeof(ts), (double)total, 'B');
	size_str(ss, sizeof(ss), speed, 'b');
	if (!done)
		printf(ERASE "Transferring file %s %.1f%% - %s of %s - %sps%s  ", syms[*i % 7],
		       round(prg * 1000.0) / 10.0, cs, ts, ss, phy);
	else
		printf(ERASE "Transfer complete  %.1f%% - %s of %s - %sps  ", 100.0, cs, ts, ss);
	fflush(stdout);
	(*i)++;
}

static int fetch_file(cp_state *s, const char *file, const char *ph, int anim);
static int l_advertised(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			const rnsc_resource_adv *adv, rnsc_resource_callbacks *cb, void **cb_ud);

static void f_response(void *ud, const rnsc_request_receipt *r)
{
	cp_state *s = ud;
	s->req_done = 1;
	/* rncp: False -> not found, None -> remote error, 0xF0 -> not allowed, else found */
	if (r->response_len == 1 && r->response[0] == 0xc2)
		s->req_status = 2;
	else if (r->response_len == 1 && r->response[0] == 0xc0)
		s->req_status = 3;
	else if ((r->response_len == 1 && r->response[0] == REQ_FETCH_NOT_ALLOWED) ||
		 (r->response_len == 2 && r->response[0] == 0xcc &&
		  r->response[1] == REQ_FETCH_NOT_ALLOWED))
		s->req_status = 4;
	else
		s->req_status = 1;
}

static void f_failed(void *ud, const rnsc_request_receipt *r)
{
	(void)r;
	cp_state *s = ud;
	s->req_done = 1;
	s->req_status = 0;
}

/* What the steps of one rnsc cp run share for the terminal: the destination as rncp prints
 * it, whether the line animates, and the spinner's state. */
typedef struct cp_ui {
	char ph[2 * RNSC_TRUNCATED_HASHLEN + 3];
	int anim;
	unsigned spin_i;
	uint64_t last;
} cp_ui;

/* Runs the node for up to 100 ms and turns the spinner (or the progress line) at 10 Hz. */
static void cp_tick(cp_state *s, cp_ui *u, uint64_t total, double started, int progress)
{
	rnsc_node_run_once(s->n, 100);
	if (u->anim && rnsc_monotonic_ns() - u->last > 100 * RNSC_NS_PER_MS) {
		u->last = rnsc_monotonic_ns();
		if (progress)
			progress_line(s, &u->spin_i, total, started, 0);
		else
			spin(1, &u->spin_i, NULL);
	}
}

/* rncp's path request and link establishment, with its timeouts: 0 with the link up. */
static int cp_connect(cp_state *s, cp_ui *u, const uint8_t *dest, double timeout)
{
	rnsc_transport *t = rnsc_node_transport(s->n);
	int anim = u->anim;
	const char *ph = u->ph;
	/* -w counts from here, as rncp's from its start: the wait for interfaces (rncp's TCP
	 * clients connect inside its startup; a refused one is just offline) is within it */
	uint64_t t0 = rnsc_monotonic_ns();
	uint64_t tmo_ns = timeout > 0 ? (uint64_t)(timeout * 1e9) : 0;
	uint64_t until = t0 + IFACE_WAIT_MS * RNSC_NS_PER_MS;
	if (until > t0 + tmo_ns)
		until = t0 + tmo_ns;
	while (!ifaces_ready(s->n) && rnsc_monotonic_ns() < until && !rnsc_node_stopping(s->n))
		rnsc_node_run_once(s->n, 50);
	/* rncp waits max(-w, medium_path_timeout()): at least ~6 s once an interface is up */
	double mpt = rnsc_node_medium_path_timeout_s(s->n);
	if (mpt * 1e9 > (double)tmo_ns)
		tmo_ns = (uint64_t)(mpt * 1e9);
	uint64_t estab = t0 + tmo_ns;
	if (!rnsc_transport_has_path(t, dest)) {
		(void)rnsc_transport_request_path(t, dest, 0, 0, rnsc_node_now_ms());
		rnsc_node_flush(s->n);
		if (!anim)
			printf("Path to %s requested\n", ph);
		else
			printf("Path to %s requested  ", ph);
		fflush(stdout);
	}
	while (!rnsc_transport_has_path(t, dest) && rnsc_monotonic_ns() < estab &&
	       !rnsc_node_stopping(s->n))
		cp_tick(s, u, 0, 0, 0);
	if (!rnsc_transport_has_path(t, dest)) {
		printf("%sPath not found\n", anim ? ERASE : "");
		return 1;
	}
	printf(anim ? ERASE "Establishing link with %s  " : "Establishing link with %s\n", ph);
	fflush(stdout);
	if (rnsc_transport_link_open(t, dest, s->link_id, rnsc_node_now_ms())) {
		printf("%sLink establishment with %s timed out\n", anim ? ERASE : "", ph);
		return 1;
	}
	rnsc_node_flush(s->n);
	const rnsc_link *lk = rnsc_transport_link_get(t, s->link_id);
	uint64_t lt = lk ? rnsc_link_establishment_timeout_ms(lk) * RNSC_NS_PER_MS : 0;
	if (rnsc_monotonic_ns() + lt > estab)
		estab = rnsc_monotonic_ns() + lt;
	while (!s->link_up && !s->link_closed && rnsc_monotonic_ns() < estab &&
	       !rnsc_node_stopping(s->n))
		cp_tick(s, u, 0, 0, 0);
	if (!s->link_up) {
		printf("%sLink establishment with %s timed out\n", anim ? ERASE : "", ph);
		return 1;
	}
	return 0;
}

/* rncp's send: the file advertised as a resource with its name in the metadata, then
 * transferred with the progress line; 0 when the receiver has it all. */
static int cp_send_file(cli_env *env, cp_state *s, cp_ui *u, const char *file, uint64_t size,
			int no_compress)
{
	int anim = u->anim;
	const char *ph = u->ph;
	/* metadata = {"name": basename.encode("utf-8")} */
	char fcopy[PATH_MAX];
	snprintf(fcopy, sizeof(fcopy), "%s", file);
	const char *base = basename(fcopy);
	uint8_t meta[PATH_MAX + 16];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, meta, sizeof(meta));
	rnsc_mp_write_map(&w, 1);
	rnsc_mp_write_cstr(&w, "name");
	rnsc_mp_write_bin(&w, (const uint8_t *)base, strlen(base));
	int mlen = rnsc_mp_writer_finish(&w);
	rnsc_resource_params rp = {.size = size,
				   .metadata = meta,
				   .metadata_len = mlen > 0 ? (size_t)mlen : 0,
				   .auto_compress = !no_compress};
	rnsc_resource_callbacks rcb = {.read = s_read, .concluded = s_concluded};
	int rc = rnsc_linkapp_send_resource(s->la, s->link_id, &rcb, s, &rp, &s->res);
	if (rc) {
		printf("Could not start transfer: %s\n", rnsc_strerror(rc));
		return 1;
	}
	uint64_t total = rnsc_resource_total_size(s->res);
	rnsc_log(env->ctx, RNSC_LOG_INFO, "cp",
		 "advertised: %u segment%s, first transfer size %llu, data size %llu, flags 0x%02x",
		 rnsc_resource_segments(s->res), rnsc_resource_segments(s->res) == 1 ? "" : "s",
		 (unsigned long long)rnsc_resource_transfer_size(s->res), (unsigned long long)total,
		 (unsigned)rnsc_resource_flags(s->res));
	while (!s->res_done && s->res &&
	       rnsc_resource_status(s->res) < RNSC_RESOURCE_TRANSFERRING &&
	       !rnsc_node_stopping(s->n))
		cp_tick(s, u, 0, 0, 0);
	double started = (double)rnsc_monotonic_ns() / 1e9;
	if (s->res_done ? s->res_status > RNSC_RESOURCE_COMPLETE
			: rnsc_resource_status(s->res) > RNSC_RESOURCE_COMPLETE) {
		printf("%sFile was not accepted by %s\n", anim ? ERASE : "", ph);
		return 1;
	}
	printf(anim ? ERASE "Transferring file  " : "Transferring file...\n");
	fflush(stdout);
	while (!s->res_done && !rnsc_node_stopping(s->n))
		cp_tick(s, u, total, started, 1);
	if (!s->res_done && s->res) { /* interrupted: rncp cancels the resource */
		rnsc_linkapp_cancel_resource(s->la, s->res);
		printf("\n");
	}
	if (anim && s->res_done && s->res_status == RNSC_RESOURCE_COMPLETE)
		progress_line(s, &u->spin_i, total, started, 1);
	if (!s->res_done || s->res_status != RNSC_RESOURCE_COMPLETE) {
		printf("%sThe transfer failed\n", anim ? ERASE : "");
		return 1;
	}
	double el = (double)rnsc_monotonic_ns() / 1e9 - started;
	char ss[32];
	size_str(ss, sizeof(ss), el > 0 ? (double)total / el : 0, 'b');
	printf(anim ? "\n%s copied to %s\n" : "%s copied to %s\n", file, ph);
	rnsc_log(env->ctx, RNSC_LOG_INFO, "cp", "%llu bytes in %.3f s (%sps)",
		 (unsigned long long)total, el, ss);
	return 0;
}

static int do_send(cli_env *env, const char *cfg, const char *idpath, int verbosity,
		   const char *dest_hex, const char *file, double timeout, int silent,
		   int no_compress, int phy_rates, int fetch, const char *save, int overwrite)
{
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	if (strlen(dest_hex) != 2 * RNSC_TRUNCATED_HASHLEN) {
		printf("Allowed destination length is invalid, must be %d hexadecimal characters "
		       "(%d bytes).\n",
		       2 * RNSC_TRUNCATED_HASHLEN, RNSC_TRUNCATED_HASHLEN);
		return 1;
	}
	if (cli_unhex(dest, sizeof(dest), dest_hex) != RNSC_TRUNCATED_HASHLEN) {
		printf("Invalid destination entered. Check your input.\n");
		return 1;
	}
	struct stat st = {0};
	cp_ui u = {.anim = !silent && isatty(STDOUT_FILENO)};
	int anim = u.anim;
	cp_state s = {.ctx = env->ctx,
		      .fd = -1,
		      .phy_rates = phy_rates,
		      .fetching = fetch,
		      .overwrite = overwrite};
	if (fetch && save) { /* rncp checks the output directory first */
		if (!realpath(save, s.save_path) || stat(s.save_path, &st) != 0 ||
		    !S_ISDIR(st.st_mode)) {
			rnsc_log(env->ctx, RNSC_LOG_ERROR, "cp", "Output directory not found");
			return 3;
		}
		if (access(s.save_path, W_OK) != 0) {
			rnsc_log(env->ctx, RNSC_LOG_ERROR, "cp", "Output directory not writable");
			return 4;
		}
		s.have_save = 1;
	}
	if (!fetch && (stat(file, &st) != 0 || !S_ISREG(st.st_mode))) {
		printf("File not found\n");
		return 1;
	}
	if (!fetch && (s.fd = open(file, O_RDONLY | O_CLOEXEC)) < 0) {
		printf("File not found\n");
		return 1;
	}
	rnsc_node_options no = {.config_dir = cfg, .handle_signals = 1};
	cp_log_level(env->ctx, verbosity);
	rnsc_config_error err;
	int ret = 1;
	rnsc_identity id;
	int have_id = 0;
	if (rnsc_node_new(env->ctx, env->host, &no, &s.n, &err)) {
		fprintf(stderr, "rnsc cp: %s\n", err.msg[0] ? err.msg : "cannot start the node");
		close(s.fd);
		return 1;
	}
	rnsc_node_hooks hooks = {
		.ud = &s, .on_link_established = s_est, .on_link_closed = s_closed};
	rnsc_linkapp_callbacks fcb = {.ud = &s, .resource_advertised = l_advertised};
	if (rnsc_linkapp_new(env->ctx, s.n, fetch ? &fcb : NULL, &hooks, &s.la) ||
	    (fetch && rnsc_linkreq_new(env->ctx, s.n, s.la, &s.lr))) {
		ret = 1;
		goto out;
	}
	if ((ret = prepare_identity(env->ctx, s.n, idpath, &id)) != 0)
		goto out;
	have_id = 1;
	ret = 1;
	pretty(u.ph, dest);
	if (cp_connect(&s, &u, dest, timeout) != 0)
		goto out;
	rnsc_transport *t = rnsc_node_transport(s.n);
	const char *ph = u.ph;
	if (fetch) {
		printf(anim ? ERASE "Requesting file from remote  "
			    : "Requesting file from remote...\n");
		fflush(stdout);
		(void)rnsc_transport_link_identify(t, s.link_id, &id, rnsc_node_now_ms());
		rnsc_node_flush(s.n);
		ret = fetch_file(&s, file, ph, anim);
		goto out;
	}
	printf(anim ? ERASE "Advertising file resource  " : "Advertising file resource...\n");
	fflush(stdout);
	(void)rnsc_transport_link_identify(t, s.link_id, &id, rnsc_node_now_ms());
	rnsc_node_flush(s.n);
	ret = cp_send_file(env, &s, &u, file, (uint64_t)st.st_size, no_compress);
out:
	if (s.n && s.link_up && !s.link_closed) {
		(void)rnsc_transport_link_close(rnsc_node_transport(s.n), s.link_id,
						rnsc_node_now_ms());
		rnsc_node_flush(s.n);
		uint64_t end = rnsc_monotonic_ns() + 250 * RNSC_NS_PER_MS;
		while (rnsc_monotonic_ns() < end)
			rnsc_node_run_once(s.n, 50);
	}
	if (have_id)
		rnsc_identity_free(&id);
	rnsc_linkapp_del(s.la);
	rnsc_linkreq_del(s.lr);
	rnsc_node_del(s.n);
	if (s.fd >= 0)
		close(s.fd);
	return ret;
}

/* rncp's fetch(): the request, its answer, then the file's resource. Exit codes as rncp: 0 for
 * the refusals it reports, 1 when the transfer failed. */
static int fetch_file(cp_state *s, const char *file, const char *ph, int anim)
{
	rnsc_request_link *rl = NULL;
	uint8_t mp[PATH_MAX + 8];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, mp, sizeof(mp));
	rnsc_mp_write_str(&w, file, strlen(file));
	int ml = rnsc_mp_writer_finish(&w);
	rnsc_request_params p = {.response = f_response, .failed = f_failed, .ud = s};
	int rc = ml < 0 ? ml : rnsc_linkreq_attach(s->lr, s->link_id, NULL, &rl);
	if (!rc)
		rc = rnsc_request_link_send(rl, "fetch_file", mp, (size_t)ml, &p, NULL,
					    rnsc_node_now_ms());
	if (rc) {
		printf("%sFetch request failed: %s\n", anim ? ERASE : "", rnsc_strerror(rc));
		return 1;
	}
	rnsc_node_flush(s->n);
	unsigned spin_i = 0;
	uint64_t last = 0;
	while (!s->req_done && !rnsc_node_stopping(s->n)) {
		rnsc_node_run_once(s->n, 100);
		(void)rnsc_linkreq_tick(s->lr, rnsc_node_now_ms());
		if (s->link_closed && !s->req_done) {
			s->req_done = 1;
			s->req_status = 0;
		}
		if (anim && rnsc_monotonic_ns() - last > 100 * RNSC_NS_PER_MS) {
			last = rnsc_monotonic_ns();
			spin(1, &spin_i, NULL);
		}
	}
	if (!s->req_done)
		return 1;
	if (s->req_status != 1) {
		printf("%s", anim ? ERASE : "");
		if (s->req_status == 4)
			printf("Fetch request failed, fetching the file %s was not allowed by the "
			       "remote\n",
			       file);
		else if (s->req_status == 2)
			printf("Fetch request failed, the file %s was not found on the remote\n",
			       file);
		else if (s->req_status == 3)
			printf("Fetch request failed due to an error on the remote system\n");
		else
			printf("Fetch request failed due to an unknown error (probably not "
			       "authorised)\n");
		return 0;
	}
	if (anim)
		printf(ERASE);
	double started = (double)rnsc_monotonic_ns() / 1e9;
	while (!s->res_done && !s->link_closed && !rnsc_node_stopping(s->n)) {
		rnsc_node_run_once(s->n, 100);
		if (anim && rnsc_monotonic_ns() - last > 100 * RNSC_NS_PER_MS) {
			last = rnsc_monotonic_ns();
			if (s->res)
				progress_line(s, &spin_i, rnsc_resource_total_size(s->res), started,
					      0);
			else
				printf(ERASE "Waiting for transfer to start %s ",
				       syms[spin_i++ % 7]);
			fflush(stdout);
		}
	}
	if (!s->res_done || s->res_status != RNSC_RESOURCE_COMPLETE) {
		printf("%sThe transfer failed\n", anim ? ERASE : "");
		return 1;
	}
	printf(anim ? "\n%s fetched from %s\n" : "%s fetched from %s\n", file, ph);
	return 0;
}

/* ---- listener ----------------------------------------------------------------------------- */

static int allowed_id(cp_state *s, const uint8_t *hash)
{
	for (size_t i = 0; i < s->n_allowed; i++)
		if (memcmp(s->allowed[i], hash, RNSC_TRUNCATED_HASHLEN) == 0)
			return 1;
	return 0;
}

static const rnsc_identity *remote_of(cp_state *s, const uint8_t id[RNSC_TRUNCATED_HASHLEN])
{
	const rnsc_link *l = rnsc_transport_link_get(rnsc_node_transport(s->n), id);
	return l ? rnsc_link_remote_identity(l) : NULL;
}

static void l_identified(void *ud, const uint8_t id[RNSC_TRUNCATED_HASHLEN],
			 const rnsc_identity *who)
{
	cp_state *s = ud;
	if (allowed_id(s, who->hash)) {
		rnsc_log(s->ctx, RNSC_LOG_VERBOSE, "cp", "Authenticated sender");
	} else if (!s->allow_all) {
		rnsc_log(s->ctx, RNSC_LOG_VERBOSE, "cp", "Sender not allowed, tearing down link");
		(void)rnsc_transport_link_close(rnsc_node_transport(s->n), id, rnsc_node_now_ms());
	}
}

static void l_est(void *ud, const uint8_t id[RNSC_TRUNCATED_HASHLEN],
		  const uint8_t dest[RNSC_TRUNCATED_HASHLEN], int initiator)
{
	(void)dest;
	cp_state *s = ud;
	if (!initiator) {
		rnsc_log(s->ctx, RNSC_LOG_VERBOSE, "cp", "Incoming link established");
		/* requests on the link: fetch_file when -F (s->hs), none otherwise */
		if (rnsc_linkreq_attach(s->lr, id, s->hs, NULL) != 0)
			rnsc_log(s->ctx, RNSC_LOG_ERROR, "cp",
				 "cannot set up requests on the link");
	}
}

static int rx_write(void *ud, const uint8_t *p, size_t len)
{
	cp_rx *x = ud;
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(x->fd, p + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return RNSC_ERR_IO;
		done += (size_t)n;
	}
	x->bytes += len;
	return 0;
}

static void rx_metadata(void *ud, rnsc_resource *r, const uint8_t *p, size_t len)
{
	(void)r;
	cp_rx *x = ud;
	rnsc_mp_reader rd;
	rnsc_mp_reader_init(&rd, p, len);
	size_t pairs;
	if (rnsc_mp_read_map(&rd, &pairs))
		return;
	for (size_t i = 0; i < pairs; i++) {
		const char *k;
		size_t kl;
		rnsc_mp_token v;
		if (rnsc_mp_read_str(&rd, &k, &kl)) {
			if (rnsc_mp_skip(&rd) || rnsc_mp_skip(&rd))
				return;
			continue;
		}
		if (rnsc_mp_peek(&rd, &v))
			return;
		if (kl == 4 && memcmp(k, "name", 4) == 0 &&
		    (v.type == RNSC_MP_BIN || v.type == RNSC_MP_STR) && v.len < PATH_MAX &&
		    rnsc_mp_utf8_valid(v.p, v.len)) {
			free(x->name);
			x->name = calloc(1, v.len + 1);
			if (x->name)
				memcpy(x->name, v.p, v.len);
		}
		if (rnsc_mp_skip(&rd))
			return;
	}
}

static void rx_concluded(void *ud, rnsc_resource *r)
{
	cp_rx *x = ud;
	cp_state *s = x->s;
	/* str(resource) as rncp logs it: <full hash of this segment/link id> */
	char hx[2 * 32 + 1 + 2 * RNSC_TRUNCATED_HASHLEN + 1];
	cli_hex(hx, rnsc_resource_hash(r), 32);
	hx[64] = '/';
	cli_hex(hx + 65, x->link_id, RNSC_TRUNCATED_HASHLEN);
	close(x->fd);
	x->fd = -1;
	if (rnsc_resource_status(r) != RNSC_RESOURCE_COMPLETE) {
		rnsc_log(s->ctx, RNSC_LOG_INFO, "cp", "Resource failed");
		unlink(x->tmp);
		goto done;
	}
	rnsc_resource_stats rs;
	rnsc_resource_stats_get(r, &rs);
	rnsc_log(s->ctx, RNSC_LOG_INFO, "cp", "Incoming resource <%s> completed", hx);
	rnsc_log(s->ctx, RNSC_LOG_INFO, "cp",
		 "received %llu bytes in %u segment%s: %llu part requests, %llu retries",
		 (unsigned long long)x->bytes, rnsc_resource_segments(r),
		 rnsc_resource_segments(r) == 1 ? "" : "s", (unsigned long long)rs.requests,
		 (unsigned long long)rs.retries);
	if (!x->name) {
		rnsc_log(s->ctx, RNSC_LOG_WARNING, "cp",
			 "Invalid data received, ignoring resource");
		unlink(x->tmp);
		goto done;
	}
	char nc[PATH_MAX];
	snprintf(nc, sizeof(nc), "%s", x->name);
	const char *fname = basename(nc);
	if (!*fname || strcmp(fname, ".") == 0 || strcmp(fname, "..") == 0 ||
	    strcmp(fname, "/") == 0) {
		rnsc_log(s->ctx, RNSC_LOG_ERROR, "cp", "Invalid save path %s, ignoring", x->name);
		unlink(x->tmp);
		goto done;
	}
	char saved[PATH_MAX + 8], full[PATH_MAX + 40];
	if (s->have_save)
		snprintf(saved, sizeof(saved), "%s/%s", s->save_path, fname);
	else
		snprintf(saved, sizeof(saved), "%s", fname);
	snprintf(full, sizeof(full), "%s", saved);
	struct stat st;
	if (s->overwrite && stat(full, &st) == 0 && S_ISREG(st.st_mode) && unlink(full) != 0)
		rnsc_log(s->ctx, RNSC_LOG_ERROR, "cp",
			 "Could not overwrite existing file %s, renaming instead", full);
	for (unsigned counter = 1; stat(full, &st) == 0; counter++)
		snprintf(full, sizeof(full), "%s.%u", saved, counter);
	if (rename(x->tmp, full) != 0) {
		rnsc_log(s->ctx, RNSC_LOG_ERROR, "cp",
			 "An error occurred while saving received resource: %s", strerror(errno));
		unlink(x->tmp);
		goto done;
	}
	rnsc_log(s->ctx, RNSC_LOG_NOTICE, "cp", "Saved received file to %s", full);
	if (s->fetching)
		s->res_status = RNSC_RESOURCE_COMPLETE;
done:
	if (s->fetching) {
		s->res_done = 1;
		if (s->res_status != RNSC_RESOURCE_COMPLETE)
			s->res_status = RNSC_RESOURCE_FAILED;
		s->res = NULL;
	}
	free(x->name);
	free(x);
}

static void rx_progress(void *ud, rnsc_resource *r)
{
	cp_rx *x = ud;
	if (x->s->fetching)
		x->s->res = r;
}

static int l_advertised(void *ud, const uint8_t link_id[RNSC_TRUNCATED_HASHLEN],
			const rnsc_resource_adv *adv, rnsc_resource_callbacks *cb, void **cb_ud)
{
	cp_state *s = ud;
	const rnsc_identity *who = remote_of(s, link_id);
	/* the fetcher's link takes every resource (rncp: Link.ACCEPT_ALL) */
	if (!s->fetching && !(who && allowed_id(s, who->hash)) && !s->allow_all)
		return 0;
	cp_rx *x = calloc(1, sizeof(*x));
	if (!x)
		return 0;
	x->s = s;
	char hx[2 * 32 + 1];
	memcpy(x->link_id, link_id, sizeof(x->link_id));
	cli_hex(hx, adv->o, 16);
	snprintf(x->tmp, sizeof(x->tmp), "%s/.rnsc-cp-%s.XXXXXX", s->have_save ? s->save_path : ".",
		 hx);
	x->fd = mkstemp(x->tmp);
	if (x->fd < 0) {
		rnsc_log(s->ctx, RNSC_LOG_ERROR, "cp", "Cannot create %s: %s", x->tmp,
			 strerror(errno));
		free(x);
		return 0;
	}
	char idh[48] = "";
	if (who) {
		strcpy(idh, " from <");
		cli_hex(idh + 7, who->hash, RNSC_TRUNCATED_HASHLEN);
		strcat(idh, ">");
	}
	/* mkstemp's 0600 would outlive the rename: rncp's files get the umask's mode */
	mode_t um = umask(0);
	umask(um);
	(void)fchmod(x->fd, 0666 & ~um);
	cli_hex(hx, adv->h, 32); /* RNS.prettyhexrep(resource.hash): all 32 bytes */
	rnsc_log(s->ctx, RNSC_LOG_INFO, "cp", "Starting resource transfer <%s>%s", hx, idh);
	rnsc_log(s->ctx, RNSC_LOG_INFO, "cp",
		 "advertisement <%s>: segment %llu of %llu, transfer size %llu, data size %llu, "
		 "flags 0x%02llx",
		 hx, (unsigned long long)adv->i, (unsigned long long)adv->l,
		 (unsigned long long)adv->t, (unsigned long long)adv->d,
		 (unsigned long long)adv->f);
	cb->write = rx_write;
	cb->metadata = rx_metadata;
	cb->concluded = rx_concluded;
	cb->progress = rx_progress;
	*cb_ud = x;
	return 1;
}

static int load_allowed_file(cp_state *s)
{
	const char *home = getenv("HOME");
	char p[3][PATH_MAX];
	snprintf(p[0], sizeof(p[0]), "/etc/rncp/allowed_identities");
	snprintf(p[1], sizeof(p[1]), "%s/.config/rncp/allowed_identities", home ? home : "");
	snprintf(p[2], sizeof(p[2]), "%s/.rncp/allowed_identities", home ? home : "");
	for (int i = 0; i < 3; i++) {
		FILE *f = fopen(p[i], "r");
		if (!f)
			continue;
		char line[256];
		size_t n = 0;
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\r\n")] = 0;
			if (strlen(line) == 32 && s->n_allowed < MAX_ALLOWED &&
			    cli_unhex(s->allowed[s->n_allowed], 16, line) == 16) {
				s->n_allowed++;
				n++;
			}
		}
		fclose(f);
		rnsc_log(s->ctx, RNSC_LOG_VERBOSE, "cp", "Loaded %zu allowed identit%s from %s", n,
			 n == 1 ? "y" : "ies", p[i]);
		return 0;
	}
	return 0;
}

/* ---- fetch: the listener's "fetch_file" handler -------------------------------------------- */

/* os.path.abspath(os.path.expanduser(p)): a leading ~ is $HOME, relative paths are taken
 * from the working directory, then "." / ".." / repeated slashes are folded lexically (no
 * symlinks resolved), as Python's normpath does. 0, or -1 when it does not fit. */
static int py_abspath(char *out, size_t cap, const char *p)
{
	char in[2 * PATH_MAX + 2];
	const char *home = getenv("HOME");
	if (p[0] == '~' && (p[1] == '/' || !p[1]) && home) {
		snprintf(in, sizeof(in), "%s%s", home, p + 1);
	} else if (p[0] != '/') {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			return -1;
		snprintf(in, sizeof(in), "%s/%s", cwd, p);
	} else {
		snprintf(in, sizeof(in), "%s", p);
	}
	size_t o = 0;
	out[0] = 0;
	for (char *save = NULL, *c = strtok_r(in, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			out[o] = 0;
			continue;
		}
		size_t l = strlen(c);
		if (o + 1 + l + 1 > cap)
			return -1;
		out[o++] = '/';
		memcpy(out + o, c, l);
		o += l;
		out[o] = 0;
	}
	if (o == 0)
		snprintf(out, cap, "/");
	return 0;
}

typedef struct cp_tx {
	int fd;
} cp_tx;

static int tx_read(void *ud, uint64_t off, uint8_t *buf, size_t len)
{
	cp_tx *x = ud;
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(x->fd, buf + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return RNSC_ERR_IO;
		got += (size_t)n;
	}
	return (int)len;
}

static void tx_concluded(void *ud, rnsc_resource *r)
{
	cp_tx *x = ud;
	(void)r;
	close(x->fd);
	free(x);
}

static const uint8_t mp_true = 0xc3, mp_false = 0xc2, mp_not_allowed[2] = {0xcc, 0xF0};

/* rncp's fetch_request: answers True once the file's resource is on its way, False when there
 * is no such file, REQ_FETCH_NOT_ALLOWED outside the jail, nothing (None) when the link is
 * gone. */
static int fetch_handler(void *ud, const rnsc_request_info *req, const uint8_t **resp, size_t *len)
{
	cp_state *s = ud;
	rnsc_mp_reader rd;
	const char *p;
	size_t pl;
	rnsc_mp_reader_init(&rd, req->data, req->data_len);
	/* rncp calls str methods on the data: anything else raises there, and no answer goes */
	if (rnsc_mp_read_str(&rd, &p, &pl) || pl >= PATH_MAX || memchr(p, 0, pl))
		return 0;
	char data[PATH_MAX], file_path[PATH_MAX];
	memcpy(data, p, pl);
	data[pl] = 0;
	*resp = &mp_false;
	*len = 1;
	if (s->have_jail) {
		/* data.replace(jail + "/", "") when it starts with it: every occurrence goes */
		char pre[PATH_MAX + 2];
		snprintf(pre, sizeof(pre), "%s/", s->jail);
		size_t prl = strlen(pre);
		if (strncmp(data, pre, prl) == 0) {
			char tmp[PATH_MAX];
			size_t o = 0;
			for (const char *c = data; *c;) {
				if (strncmp(c, pre, prl) == 0) {
					c += prl;
					continue;
				}
				tmp[o++] = *c++;
			}
			tmp[o] = 0;
			memcpy(data, tmp, o + 1);
		}
		char joined[2 * PATH_MAX + 2];
		snprintf(joined, sizeof(joined), "%s/%s", s->jail, data);
		if (py_abspath(file_path, sizeof(file_path), joined) != 0 ||
		    strncmp(file_path, pre, prl) != 0) {
			rnsc_log(s->ctx, RNSC_LOG_WARNING, "cp",
				 "Disallowing fetch request for %s outside of fetch jail %s",
				 file_path, s->jail);
			*resp = mp_not_allowed;
			*len = sizeof(mp_not_allowed);
			return 1;
		}
	} else if (py_abspath(file_path, sizeof(file_path), data) != 0) {
		return 1;
	}
	struct stat st;
	if (stat(file_path, &st) != 0 || !S_ISREG(st.st_mode)) {
		rnsc_log(s->ctx, RNSC_LOG_VERBOSE, "cp", "Client-requested file not found: %s",
			 file_path);
		return 1;
	}
	if (!rnsc_transport_link_get(rnsc_node_transport(s->n), req->link_id))
		return 0; /* rncp: no such active link -> None */
	rnsc_log(s->ctx, RNSC_LOG_VERBOSE, "cp", "Sending file %s to client", file_path);
	cp_tx *x = calloc(1, sizeof(*x));
	if (!x)
		return 1;
	x->fd = open(file_path, O_RDONLY | O_CLOEXEC);
	if (x->fd < 0) {
		rnsc_log(s->ctx, RNSC_LOG_ERROR, "cp",
			 "Could not send file to client. The contained exception was: %s",
			 strerror(errno));
		free(x);
		return 1;
	}
	char fcopy[PATH_MAX];
	snprintf(fcopy, sizeof(fcopy), "%s", file_path);
	const char *base = basename(fcopy);
	uint8_t meta[PATH_MAX + 16];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, meta, sizeof(meta));
	rnsc_mp_write_map(&w, 1);
	rnsc_mp_write_cstr(&w, "name");
	rnsc_mp_write_bin(&w, (const uint8_t *)base, strlen(base));
	int mlen = rnsc_mp_writer_finish(&w);
	rnsc_resource_params rp = {.size = (uint64_t)st.st_size,
				   .metadata = meta,
				   .metadata_len = mlen > 0 ? (size_t)mlen : 0,
				   .auto_compress = !s->no_compress};
	rnsc_resource_callbacks rcb = {.read = tx_read, .concluded = tx_concluded};
	int rc = rnsc_linkapp_send_resource(s->la, req->link_id, &rcb, x, &rp, NULL);
	if (rc) {
		rnsc_log(s->ctx, RNSC_LOG_ERROR, "cp",
			 "Could not send file to client. The contained exception was: %s",
			 rnsc_strerror(rc));
		close(x->fd);
		free(x);
		return 1;
	}
	*resp = &mp_true;
	return 1;
}

static void l_closed(void *ud, const uint8_t id[RNSC_TRUNCATED_HASHLEN], int reason)
{
	(void)reason;
	cp_state *s = ud;
	rnsc_linkreq_detach(s->lr, id);
}

static int do_listen(cli_env *env, const char *cfg, const char *idpath, int verbosity,
		     char **allowed, size_t n_allowed, int print_identity, int no_auth,
		     const char *save, int announce, int overwrite, int allow_fetch,
		     const char *jail, int no_compress)
{
	cp_state s = {.ctx = env->ctx,
		      .fd = -1,
		      .allow_all = no_auth,
		      .overwrite = overwrite,
		      .no_compress = no_compress};
	rnsc_node_options no = {.config_dir = cfg, .handle_signals = 1};
	cp_log_level(env->ctx, verbosity);
	rnsc_config_error err;
	if (rnsc_node_new(env->ctx, env->host, &no, &s.n, &err)) {
		fprintf(stderr, "rnsc cp: %s\n", err.msg[0] ? err.msg : "cannot start the node");
		return 1;
	}
	int ret = 0;
	rnsc_identity id;
	int have_id = 0;
	if (save) {
		char sp[PATH_MAX];
		if (!realpath(save, sp)) {
			rnsc_log(env->ctx, RNSC_LOG_ERROR, "cp", "Output directory not found");
			ret = 3;
			goto out;
		}
		struct stat st;
		if (stat(sp, &st) != 0 || !S_ISDIR(st.st_mode)) {
			rnsc_log(env->ctx, RNSC_LOG_ERROR, "cp", "Output directory not found");
			ret = 3;
			goto out;
		}
		if (access(sp, W_OK) != 0) {
			rnsc_log(env->ctx, RNSC_LOG_ERROR, "cp", "Output directory not writable");
			ret = 4;
			goto out;
		}
		snprintf(s.save_path, sizeof(s.save_path), "%s", sp);
		s.have_save = 1;
		rnsc_log(env->ctx, RNSC_LOG_VERBOSE, "cp", "Saving received files in \"%s\"", sp);
	}
	if ((ret = prepare_identity(env->ctx, s.n, idpath, &id)) != 0)
		goto out;
	have_id = 1;
	rnsc_transport *t = rnsc_node_transport(s.n);
	uint8_t dh[RNSC_TRUNCATED_HASHLEN];
	const char *asp[] = {"receive"};
	if (rnsc_transport_dest_add(t, RNSC_DEST_SINGLE, &id, APP_NAME, asp, 1, 0, dh)) {
		ret = 1;
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
		load_allowed_file(&s);
		for (size_t i = 0; i < n_allowed; i++) {
			if (strlen(allowed[i]) != 32) {
				rnsc_log(
					env->ctx, RNSC_LOG_ERROR, "cp",
					"Could not apply allowed identity: Allowed destination length "
					"is invalid, must be 32 hexadecimal characters (16 bytes).");
				ret = 1;
				goto out;
			}
			if (s.n_allowed >= MAX_ALLOWED ||
			    cli_unhex(s.allowed[s.n_allowed], 16, allowed[i]) != 16) {
				rnsc_log(env->ctx, RNSC_LOG_ERROR, "cp",
					 "Could not apply allowed identity: Invalid destination "
					 "entered. Check your input.");
				ret = 1;
				goto out;
			}
			s.n_allowed++;
		}
		if (s.n_allowed < 1)
			rnsc_log(
				env->ctx, RNSC_LOG_WARNING, "cp",
				"No allowed identities configured, rncp will not accept any files!");
	}
	if (jail) {
		if (py_abspath(s.jail, sizeof(s.jail), jail) != 0) {
			ret = 1;
			goto out;
		}
		s.have_jail = 1;
		rnsc_log(env->ctx, RNSC_LOG_VERBOSE, "cp",
			 "Restricting fetch requests to paths under \"%s\"", s.jail);
	}
	rnsc_node_hooks hooks = {.ud = &s,
				 .on_link_established = l_est,
				 .on_link_identified = l_identified,
				 .on_link_closed = l_closed};
	rnsc_linkapp_callbacks lcb = {.ud = &s, .resource_advertised = l_advertised};
	if (rnsc_linkapp_new(env->ctx, s.n, &lcb, &hooks, &s.la) ||
	    rnsc_linkreq_new(env->ctx, s.n, s.la, &s.lr)) {
		ret = 1;
		goto out;
	}
	if (allow_fetch) {
		int rc = rnsc_request_handlers_new(env->ctx, &s.hs);
		if (!rc && no_auth) {
			rnsc_log(env->ctx, RNSC_LOG_WARNING, "cp",
				 "Allowing unauthenticated fetch requests");
			rc = rnsc_request_handlers_register(s.hs, "fetch_file", fetch_handler, &s,
							    RNSC_REQUEST_ALLOW_ALL, NULL, 0, 1);
		} else if (!rc) {
			rc = rnsc_request_handlers_register(
				s.hs, "fetch_file", fetch_handler, &s, RNSC_REQUEST_ALLOW_LIST,
				(const uint8_t(*)[RNSC_TRUNCATED_HASHLEN])s.allowed, s.n_allowed,
				1);
		}
		if (rc) {
			ret = 1;
			goto out;
		}
	}
	rnsc_log(env->ctx, RNSC_LOG_INFO, "cp", "rncp listening on %s", ph);
	uint64_t until = rnsc_monotonic_ns() + IFACE_WAIT_MS * RNSC_NS_PER_MS;
	while (!ifaces_ready(s.n) && rnsc_monotonic_ns() < until && !rnsc_node_stopping(s.n))
		rnsc_node_run_once(s.n, 50);
	/* rncp announces at startup whatever -b says (its "announce >= 0" test is true for the
	 * False it sets for negative values), then every -b seconds when positive */
	uint64_t next_announce = 0;
	while (!rnsc_node_stopping(s.n)) {
		uint64_t now = rnsc_monotonic_ns();
		if (now >= next_announce && next_announce != UINT64_MAX) {
			(void)rnsc_transport_announce(t, dh, NULL, 0, rnsc_node_now_ms());
			rnsc_node_flush(s.n);
			next_announce = announce > 0 ? now + (uint64_t)announce * 1000000000ull
						     : UINT64_MAX;
		}
		rnsc_node_run_once(s.n, 200);
		(void)rnsc_linkreq_tick(s.lr, rnsc_node_now_ms());
	}
out:
	if (have_id)
		rnsc_identity_free(&id);
	rnsc_linkapp_del(s.la);
	rnsc_linkreq_del(s.lr);
	rnsc_request_handlers_del(s.hs);
	rnsc_node_del(s.n);
	return ret;
}

int cmd_cp(int argc, char **argv)
{
	enum { OPT_CONFIG = 1000, OPT_VERSION };
	static const struct option opts[] = {{"config", required_argument, NULL, OPT_CONFIG},
					     {"verbose", no_argument, NULL, 'v'},
					     {"quiet", no_argument, NULL, 'q'},
					     {"silent", no_argument, NULL, 'S'},
					     {"listen", no_argument, NULL, 'l'},
					     {"no-compress", no_argument, NULL, 'C'},
					     {"allow-fetch", no_argument, NULL, 'F'},
					     {"fetch", no_argument, NULL, 'f'},
					     {"jail", required_argument, NULL, 'j'},
					     {"save", required_argument, NULL, 's'},
					     {"overwrite", no_argument, NULL, 'O'},
					     {"no-auth", no_argument, NULL, 'n'},
					     {"print-identity", no_argument, NULL, 'p'},
					     {"phy-rates", no_argument, NULL, 'P'},
					     {"version", no_argument, NULL, OPT_VERSION},
					     {"help", no_argument, NULL, 'h'},
					     {0, 0, 0, 0}};
	const char *cfg = NULL, *save = NULL, *idpath = NULL, *jail = NULL;
	int verbose = 0, quiet = 0, silent = 0, listen = 0, no_compress = 0, allow_fetch = 0;
	int fetch = 0, overwrite = 0, no_auth = 0, print_id = 0, phy_rates = 0, c;
	long announce = -1;
	double wait = PATH_REQUEST_TIMEOUT_S;
	char *allowed[MAX_ALLOWED];
	size_t n_allowed = 0;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vqSlCFfj:s:Ob:a:npi:w:Ph", opts, NULL)) != -1) {
		switch (c) {
		case OPT_CONFIG:
			cfg = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'q':
			quiet++;
			break;
		case 'S':
			silent = 1;
			break;
		case 'l':
			listen = 1;
			break;
		case 'C':
			no_compress = 1;
			break;
		case 'F':
			allow_fetch = 1;
			break;
		case 'f':
			fetch = 1;
			break;
		case 'j':
			jail = optarg;
			break; /* only meaningful with -F */
		case 's':
			save = optarg;
			break;
		case 'O':
			overwrite = 1;
			break;
		case 'b':
			announce = strtol(optarg, &end, 10);
			if (*end || end == optarg) {
				fprintf(stderr, "rnsc cp: argument -b: invalid int value: '%s'\n",
					optarg);
				return CLI_USAGE;
			}
			break;
		case 'a':
			if (n_allowed < MAX_ALLOWED)
				allowed[n_allowed++] = optarg;
			break;
		case 'n':
			no_auth = 1;
			break;
		case 'p':
			print_id = 1;
			break;
		case 'i':
			idpath = optarg;
			break;
		case 'w':
			wait = strtod(optarg, &end);
			if (*end || end == optarg || !isfinite(wait)) {
				fprintf(stderr, "rnsc cp: argument -w: invalid float value: '%s'\n",
					optarg);
				return CLI_USAGE;
			}
			break;
		case 'P':
			phy_rates = 1;
			break;
		case OPT_VERSION:
			printf("rnsc cp %s\n", PACKAGE_VERSION);
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
		fprintf(stderr, "rnsc cp: unrecognized arguments: %s\n", argv[optind + 2]);
		return CLI_USAGE;
	}
	const char *file = npos > 0 ? argv[optind] : NULL;
	const char *dest = npos > 1 ? argv[optind + 1] : NULL;
	if (!listen && !print_id && (!file || !dest)) {
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
				no_auth, save, (int)announce, overwrite, allow_fetch, jail,
				no_compress);
	else
		ret = do_send(&env, cfg, idpath, verbose - quiet, dest, file, wait, silent,
			      no_compress, phy_rates, fetch, save, overwrite);
	cli_env_close(&env);
	return ret;
}
