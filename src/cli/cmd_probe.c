/* SPDX-License-Identifier: MIT */
/* rnsc probe: the reference's rnprobe on an in-process node (a shared instance is not
 * attached yet): requests a path when needed, sends probes to a PROVE_ALL destination and
 * reports replies, round-trip times and loss with rnprobe's wording and exit codes. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cli.h"
#include "config.h"
#include "crypto.h"
#include "destination.h"
#include "node.h"
#include "packet.h"
#include "rpc.h"
#include "msgpack.h"

#define DEFAULT_PROBE_SIZE 16
/* rnprobe: DEFAULT_TIMEOUT (12 s) plus the first hop's timeout (at least the 6 s
 * per-hop default of Reticulum). */
#define DEFAULT_TIMEOUT_S (12.0 + 6.0)
/* How long the node may take to bring its interfaces up before the first request. */
#define IFACE_WAIT_MS 5000u

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc probe [--config DIR] [-s SIZE] [-n PROBES] [-t SECONDS] [-w SECONDS]\n"
		"                  [-v] [--version] [-h] FULL_NAME DESTINATION_HASH\n\n"
		"Reticulum probe utility (the reference's rnprobe). Starts a node from the\n"
		"configuration, requests a path to DESTINATION_HASH if none is known, then sends\n"
		"PROBES packets of SIZE random bytes to the destination FULL_NAME (dotted, e.g.\n"
		"rnstransport.probe) and waits for each one's proof. Like rnprobe it attaches to\n"
		"the running shared instance (an rnsc daemon or rnsd) when there is one, and\n"
		"otherwise opens the configured interfaces itself.\n\n"
		"Options:\n"
		"      --config DIR          configuration folder (default: the reference's search)\n"
		"  -s, --size SIZE           probe payload in bytes (default %d)\n"
		"  -n, --probes PROBES       number of probes to send (default 1)\n"
		"  -t, --timeout SECONDS     give up on a path or a reply after this long\n"
		"                            (default %.0f)\n"
		"  -w, --wait SECONDS        pause between probes (default 0)\n"
		"  -v, --verbose             show next hop and interface, log more (repeatable)\n"
		"      --version             print the version and exit\n"
		"  -h, --help                show this help\n\n"
		"Exit status (as rnprobe): 0 every probe was answered, 1 no path was found (or a\n"
		"bad argument), 2 some probes were lost, 3 the probe does not fit the MTU or the\n"
		"node could not start.\n",
		DEFAULT_PROBE_SIZE, DEFAULT_TIMEOUT_S);
}

typedef struct probe_state {
	uint8_t hash[RNSC_HASHLEN];
	int waiting, result; /* result: 1 proved, 0 timed out in the engine */
	uint64_t done_ns;
} probe_state;

static void on_receipt(void *ud, const uint8_t packet_hash[RNSC_HASHLEN], int proved)
{
	probe_state *ps = ud;
	if (ps->waiting && memcmp(ps->hash, packet_hash, RNSC_HASHLEN) == 0) {
		ps->waiting = 0;
		ps->result = proved;
		ps->done_ns = rnsc_monotonic_ns();
	}
}

/* Python's str(round(x, digits)) for the values printed here. */
static void pyfloat(char *out, size_t cap, double x, int digits)
{
	snprintf(out, cap, "%.*f", digits, x);
	char *dot = strchr(out, '.');
	if (!dot)
		return;
	char *e = out + strlen(out) - 1;
	while (e > dot + 1 && *e == '0')
		*e-- = '\0';
}

static void pretty(char *out, const uint8_t *h)
{
	out[0] = '<';
	cli_hex(out + 1, h, RNSC_TRUNCATED_HASHLEN);
	strcat(out, ">");
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

/* Runs the loop until done(ud) or the deadline (monotonic ns) or a signal. */
static int run_until(rnsc_node *n, uint64_t deadline, int (*done)(rnsc_node *, void *), void *ud)
{
	while (!done(n, ud)) {
		uint64_t now = rnsc_monotonic_ns();
		if (now >= deadline || rnsc_node_stopping(n))
			return 0;
		uint64_t left = (deadline - now) / RNSC_NS_PER_MS;
		rnsc_node_run_once(n, left > 100 ? 100 : (int)left + 1);
	}
	return 1;
}

static int done_ifaces(rnsc_node *n, void *ud)
{
	(void)ud;
	return ifaces_ready(n);
}

static int done_path(rnsc_node *n, void *ud)
{
	return rnsc_transport_has_path(rnsc_node_transport(n), ud);
}

static int done_receipt(rnsc_node *n, void *ud)
{
	(void)n;
	return !((probe_state *)ud)->waiting;
}

static int parse_num(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

/* One {"get": what, "destination_hash": dest} call to the shared instance; *resp malloc'd. */
static int shared_get(rnsc_node *n, rnsc_ctx *ctx, const char *what, const uint8_t *dest,
		      uint8_t **resp, size_t *rlen)
{
	struct sockaddr_storage addr;
	unsigned alen;
	uint8_t key[64], req[96];
	size_t klen;
	int rc = rnsc_rpc_endpoint(ctx, rnsc_node_settings(n), rnsc_node_config_dir(n), &addr,
				   &alen, key, &klen);
	if (rc)
		return rc;
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, req, sizeof(req));
	rnsc_mp_write_map(&w, 2);
	rnsc_mp_write_cstr(&w, "get");
	rnsc_mp_write_cstr(&w, what);
	rnsc_mp_write_cstr(&w, "destination_hash");
	rnsc_mp_write_bin(&w, dest, RNSC_TRUNCATED_HASHLEN);
	int rl = rnsc_mp_writer_finish(&w);
	rc = rl < 0 ? rl
		    : rnsc_rpc_call(ctx, &addr, alen, key, klen, req, (size_t)rl, resp, rlen,
				    10000);
	memset(key, 0, sizeof(key));
	return rc;
}

/* -v attached to a shared instance: rnprobe asks that instance for the next hop and its
 * interface name (get_next_hop, get_next_hop_if_name over the RPC), not its own table; a
 * None hop or the name "None" prints nothing. */
static void shared_more(rnsc_node *n, rnsc_ctx *ctx, const uint8_t *dest, char *more, size_t cap)
{
	uint8_t *r = NULL;
	size_t rl = 0;
	const uint8_t *b;
	const char *sv;
	size_t bl, sl;
	char via[64] = "", on[128] = "";
	if (shared_get(n, ctx, "next_hop", dest, &r, &rl) == 0) {
		rnsc_mp_reader rd;
		rnsc_mp_reader_init(&rd, r, rl);
		if (rnsc_mp_read_bin(&rd, &b, &bl) == 0 && bl == RNSC_TRUNCATED_HASHLEN) {
			char nh[2 * RNSC_TRUNCATED_HASHLEN + 3];
			pretty(nh, b);
			snprintf(via, sizeof(via), " via %s", nh);
		}
	}
	free(r);
	r = NULL;
	if (shared_get(n, ctx, "next_hop_if_name", dest, &r, &rl) == 0) {
		rnsc_mp_reader rd;
		rnsc_mp_reader_init(&rd, r, rl);
		if (rnsc_mp_read_str(&rd, &sv, &sl) == 0 &&
		    !(sl == 4 && memcmp(sv, "None", 4) == 0))
			snprintf(on, sizeof(on), " on %.*s", (int)(sl > 100 ? 100 : sl), sv);
	}
	free(r);
	snprintf(more, cap, "%s%s", via, on);
}

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
					     {"size", required_argument, NULL, 's'},
					     {"probes", required_argument, NULL, 'n'},
					     {"timeout", required_argument, NULL, 't'},
					     {"wait", required_argument, NULL, 'w'},
					     {"verbose", no_argument, NULL, 'v'},
					     {"version", no_argument, NULL, 'V'},
					     {"help", no_argument, NULL, 'h'},
					     {0, 0, 0, 0}};
	const char *dir = NULL;
	long size = DEFAULT_PROBE_SIZE, probes = 1;
	double timeout = 0, wait = 0, v;
	int verbose = 0, c;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:n:t:w:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			dir = optarg;
			break;
		case 's':
			size = strtol(optarg, &end, 10);
			if (*end || end == optarg || size < 0) {
				fprintf(stderr, "rnsc probe: invalid size '%s'\n", optarg);
				return CLI_USAGE;
			}
			break;
		case 'n':
			probes = strtol(optarg, &end, 10);
			if (*end || end == optarg) {
				fprintf(stderr, "rnsc probe: invalid probe count '%s'\n", optarg);
				return CLI_USAGE;
			}
			break;
		case 't':
			if (parse_num(optarg, &v) || v < 0) {
				fprintf(stderr, "rnsc probe: invalid timeout '%s'\n", optarg);
				return CLI_USAGE;
			}
			timeout = v;
			break;
		case 'w':
			if (parse_num(optarg, &v) || v < 0) {
				fprintf(stderr, "rnsc probe: invalid wait '%s'\n", optarg);
				return CLI_USAGE;
			}
			wait = v;
			break;
		case 'v':
			verbose++;
			break;
		case 'V':
			printf("rnsc probe %s\n", PACKAGE_VERSION);
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
		fprintf(stderr, "rnsc probe: unexpected argument '%s'\n", argv[optind + 2]);
		return CLI_USAGE;
	}
	if (npos < 2) { /* rnprobe prints its help when no hash is given */
		printf("\n");
		usage(stdout);
		printf("\n");
		return CLI_OK;
	}
	const char *full_name = argv[optind], *hexhash = argv[optind + 1];
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	if (strlen(hexhash) != 2 * RNSC_TRUNCATED_HASHLEN) {
		printf("Destination length is invalid, must be %d hexadecimal characters (%d "
		       "bytes).\n",
		       2 * RNSC_TRUNCATED_HASHLEN, RNSC_TRUNCATED_HASHLEN);
		return CLI_FAIL;
	}
	if (cli_unhex(dest, sizeof(dest), hexhash) != RNSC_TRUNCATED_HASHLEN) {
		printf("Invalid destination entered. Check your input.\n");
		return CLI_FAIL;
	}
	if (!*full_name || strchr(full_name, '.') == NULL || full_name[0] == '.') {
		printf("The full destination name including application name aspects must be "
		       "specified for the destination\n");
		return CLI_FAIL;
	}

	cli_env env;
	int rc = cli_env_open(&env, NULL, 0);
	if (rc)
		return rc;
	int more_output = verbose > 0;
	rnsc_ctx_set_log_level(env.ctx, 2 + verbose); /* rnprobe: loglevel 3 + verbosity - 1 */
	rnsc_node_options no = {.config_dir = dir, .handle_signals = 1};
	rnsc_node *n = NULL;
	rnsc_config_error err;
	int ret = CLI_OK;
	if ((rc = rnsc_node_new(env.ctx, env.host, &no, &n, &err))) {
		fprintf(stderr, "rnsc probe: %s\n", err.msg[0] ? err.msg : rnsc_strerror(rc));
		ret = CLI_SETUP;
		goto out;
	}
	probe_state ps = {0};
	rnsc_node_hooks hooks = {.ud = &ps, .on_receipt = on_receipt};
	rnsc_node_set_hooks(n, &hooks);
	rnsc_transport *t = rnsc_node_transport(n);
	uint64_t tmo_ns = (uint64_t)((timeout > 0 ? timeout : DEFAULT_TIMEOUT_S) * 1e9);
	run_until(n, rnsc_monotonic_ns() + IFACE_WAIT_MS * RNSC_NS_PER_MS, done_ifaces, NULL);

	char ph[2 * RNSC_TRUNCATED_HASHLEN + 3];
	pretty(ph, dest);
	if (!rnsc_transport_has_path(t, dest)) {
		if ((rc = rnsc_transport_request_path(t, dest, 0, 0, rnsc_node_now_ms()))) {
			fprintf(stderr, "rnsc probe: path request failed: %s\n", rnsc_strerror(rc));
			ret = CLI_FAIL;
			goto out;
		}
		rnsc_node_flush(n);
		printf("Path to %s requested  \n", ph);
		fflush(stdout);
	}
	if (!run_until(n, rnsc_monotonic_ns() + tmo_ns, done_path, dest)) {
		printf("Path request timed out\n");
		ret = CLI_FAIL;
		goto out;
	}
	/* The packet goes to the destination named by full_name and the recalled identity. */
	rnsc_identity remote;
	uint8_t named[RNSC_TRUNCATED_HASHLEN];
	if ((rc = rnsc_transport_recall(t, dest, &remote, NULL, NULL)) ||
	    (rc = rnsc_destination_hash_from_name(env.ctx, named, remote.hash, full_name))) {
		printf("%s\n", rc == RNSC_ERR_NAME ? rnsc_strerror(rc)
						   : "Could not recall the destination's identity");
		ret = CLI_FAIL;
		goto out;
	}
	rnsc_identity_free(&remote);
	if (memcmp(named, dest, sizeof(dest)) != 0) {
		printf("The destination %s is not %s of the identity that announced it\n", ph,
		       full_name);
		ret = CLI_FAIL;
		goto out;
	}

	long sent = 0, replies = 0;
	uint8_t *payload = malloc(size ? (size_t)size : 1);
	if (!payload) {
		ret = CLI_SETUP;
		goto out;
	}
	while (probes > 0 && !rnsc_node_stopping(n)) {
		if (sent > 0 && wait > 0) {
			uint64_t until = rnsc_monotonic_ns() + (uint64_t)(wait * 1e9);
			while (rnsc_monotonic_ns() < until && !rnsc_node_stopping(n))
				rnsc_node_run_once(n, 50);
		}
		if ((rc = rnsc_random(env.ctx, payload, (size_t)size))) {
			fprintf(stderr, "rnsc probe: %s\n", rnsc_strerror(rc));
			ret = CLI_SETUP;
			break;
		}
		rc = rnsc_transport_send(t, dest, payload, (size_t)size, ps.hash,
					 rnsc_node_now_ms());
		if (rc == RNSC_ERR_TOOBIG) {
			/* header, then the ephemeral key and the token's IV, padding and HMAC
			 * (rnsc_identity_token_len counts the ephemeral key already) */
			size_t raw = 2 + 1 + RNSC_TRUNCATED_HASHLEN +
				     rnsc_identity_token_len((size_t)size);
			printf("Error: Probe packet size of %zu bytes exceed MTU of %d bytes\n",
			       raw, RNSC_MTU);
			ret = CLI_SETUP;
			break;
		}
		if (rc) {
			fprintf(stderr, "rnsc probe: cannot send: %s\n", rnsc_strerror(rc));
			ret = CLI_FAIL;
			break;
		}
		uint64_t t0 = rnsc_monotonic_ns();
		ps.waiting = 1;
		rnsc_node_flush(n);
		sent++;
		char more[160] = "";
		if (more_output && rnsc_node_connected_to_shared(n)) {
			shared_more(n, env.ctx, dest, more, sizeof(more));
		} else if (more_output) {
			rnsc_transport_path p;
			if (rnsc_transport_path_get(t, dest, &p) == 0) {
				char nh[2 * RNSC_TRUNCATED_HASHLEN + 3];
				pretty(nh, p.next_hop);
				/* rnprobe names the interface by its str(), as rnpath does */
				const char *ifn = rnsc_node_iface_name(n, p.iface);
				rnsc_iface *f =
					ifn ? rnsc_iface_host_find(rnsc_node_ifaces(n), ifn) : NULL;
				char desc[96] = "";
				if (f && rnsc_iface_describe(f, desc, sizeof(desc)) <= 0)
					snprintf(desc, sizeof(desc), "%s", ifn);
				snprintf(more, sizeof(more), " via %s%s%s", nh,
					 desc[0] ? " on " : "", desc);
			}
		}
		printf("Sent probe %ld (%ld bytes) to %s%s  \n", sent, size, ph, more);
		fflush(stdout);
		if (!run_until(n, t0 + tmo_ns, done_receipt, &ps) || !ps.result) {
			ps.waiting = 0;
			printf("Probe timed out\n");
		} else {
			replies++;
			rnsc_transport_path p;
			unsigned hops = rnsc_transport_path_get(t, dest, &p) == 0
						? p.hops
						: RNSC_PATHFINDER_M;
			double rtt = (double)(ps.done_ns - t0) / 1e9;
			char num[64];
			if (rtt >= 1) {
				pyfloat(num, sizeof(num), rtt, 3);
				strcat(num, " seconds");
			} else {
				pyfloat(num, sizeof(num), rtt * 1000, 3);
				strcat(num, " milliseconds");
			}
			printf("Valid reply from %s\nRound-trip time is %s over %u hop%s\n\n", ph,
			       num, hops, hops == 1 ? "" : "s");
		}
		fflush(stdout);
		probes--;
	}
	free(payload);
	if (ret == CLI_OK) {
		double loss = sent ? (1.0 - (double)replies / (double)sent) * 100.0 : 0.0;
		char ls[32];
		pyfloat(ls, sizeof(ls), loss, 2);
		printf("Sent %ld, received %ld, packet loss %s%%\n", sent, replies, ls);
		if (sent && loss > 0)
			ret = 2;
	}
out:
	rnsc_node_del(n);
	cli_env_close(&env);
	return ret;
}
