/* SPDX-License-Identifier: MIT */
/* rnsc daemon: the rnsd of rnsc. Runs a node from the Reticulum configuration until
 * SIGINT or SIGTERM. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "config.h"
#include "blackhole_svc.h"
#include "discovery_announcer.h"
#include "remote_mgmt.h"
#include "http_status.h"
#include "mem_trim.h"
#include "logfile.h"
#include "node.h"
#include "store.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc daemon [--config DIR] [-v ...] [-q ...] [-s] [--version] [-h]\n\n"
		"Runs a Reticulum node (the counterpart of the reference's rnsd): reads the\n"
		"configuration, opens the configured interfaces, routes when enable_transport is\n"
		"set, answers probes when respond_to_probes is also set, and keeps running until\n"
		"it receives SIGINT or SIGTERM, when it saves its tables and exits cleanly.\n\n"
		"Shared instance (share_instance = yes, the default): the daemon listens for\n"
		"programs on the abstract socket @rns/<instance_name> (or TCP 127.0.0.1:\n"
		"shared_instance_port with shared_instance_type = tcp) and serves the reference's\n"
		"RPC to rnstatus, rnpath, rnsc status and rnsc path on @rns/<instance_name>/rpc\n"
		"(or instance_control_port), keyed by rpc_key or the transport identity. When a\n"
		"shared instance already runs there, the daemon attaches to it instead, as rnsd\n"
		"does, and opens no interfaces of its own.\n\n"
		"Options:\n"
		"      --config DIR    configuration folder; without it the first of\n"
		"                      /etc/reticulum, ~/.config/reticulum (each only if it holds\n"
		"                      a file named config) and ~/.reticulum is used. A missing\n"
		"                      config file is created with the reference's defaults.\n"
		"  -v, --verbose       log more (repeatable): raises [logging] loglevel by one\n"
		"  -q, --quiet         log less (repeatable): lowers it by one\n"
		"  -s, --service       log to DIR/logfile instead of standard output, at the\n"
		"                      configured loglevel (-v and -q are then ignored, as in rnsd);\n"
		"                      beyond 5 MiB it is renamed logfile.1 and a new one begun\n"
		"      --http PORT     serve GET /status (JSON) and GET /metrics (Prometheus\n"
		"                      text) on PORT (0: any free port, logged); off by default\n"
		"      --http-bind ADDR  address for --http (default 127.0.0.1, loopback only)\n"
		"      --https-cert FILE --https-key FILE\n"
		"                      serve HTTPS instead, with this PEM certificate and key\n"
		"      --version       print the version and exit\n"
		"  -h, --help          show this help\n\n"
		"Files (in the configuration folder):\n"
		"  config                          the reference's configuration format\n"
		"  storage/transport_identity      the node's identity (created on first start)\n"
		"  storage/known_destinations      identities learnt from announces (msgpack,\n"
		"                                  the reference's layout; rewritten every 5 min)\n\n"
		"Exit status: 0 after a clean shutdown, 3 when the configuration or an interface\n"
		"cannot be used (the message names the section and option), 1 on a runtime error.\n");
}

/* The reference's "[timestamp] [Level] message" lines, to standard output or, with
 * --service, to the rotated log file (logfile.h). */
static void sink(void *ud, int level, const char *who, const char *msg)
{
	rnsc_logfile_write(ud, level, who, msg);
}

int cmd_daemon(int argc, char **argv)
{
	static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
					     {"verbose", no_argument, NULL, 'v'},
					     {"quiet", no_argument, NULL, 'q'},
					     {"service", no_argument, NULL, 's'},
					     {"version", no_argument, NULL, 'V'},
					     {"help", no_argument, NULL, 'h'},
					     {"http", required_argument, NULL, 'H'},
					     {"http-bind", required_argument, NULL, 'B'},
					     {"https-cert", required_argument, NULL, 'C'},
					     {"https-key", required_argument, NULL, 'K'},
					     {0, 0, 0, 0}};
	const char *dir = NULL;
	rnsc_http_status_options ho = {0};
	int http = 0;
	char *end;
	long port;
	int verbose = 0, quiet = 0, service = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vqsh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			dir = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'q':
			quiet++;
			break;
		case 's':
			service = 1;
			break;
		case 'H':
			port = strtol(optarg, &end, 10);
			if (*end || end == optarg || port < 0 || port > 65535) {
				fprintf(stderr,
					"rnsc daemon: --http needs a port 0-65535, not '%s'\n",
					optarg);
				return CLI_USAGE;
			}
			ho.port = (uint16_t)port;
			http = 1;
			break;
		case 'B':
			ho.bind = optarg;
			break;
		case 'C':
			ho.cert_file = optarg;
			break;
		case 'K':
			ho.key_file = optarg;
			break;
		case 'V':
			printf("rnsc daemon %s\n", PACKAGE_VERSION);
			return CLI_OK;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (!http && (ho.bind || ho.cert_file || ho.key_file)) {
		fprintf(stderr, "rnsc daemon: --http-bind and --https-* need --http PORT\n");
		return CLI_USAGE;
	}
	if (optind < argc) {
		fprintf(stderr, "rnsc daemon: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return CLI_USAGE;
	}
	cli_env env;
	int rc = cli_env_open(&env, NULL, 0);
	if (rc)
		return rc;
	rnsc_logfile ls;
	rnsc_logfile_open(&ls, NULL, 0);
	if (service) {
		char cdir[PATH_MAX], path[PATH_MAX + 16];
		if ((rc = rnsc_config_locate(dir, cdir, sizeof(cdir))) == 0) {
			snprintf(path, sizeof(path), "%s/logfile", cdir);
			rnsc_store_mkdirs(cdir);
			if (rnsc_logfile_open(&ls, path, RNSC_LOGFILE_MAXSIZE) != 0) {
				fprintf(stderr, "rnsc daemon: cannot open %s for logging\n", path);
				cli_env_close(&env);
				return CLI_SETUP;
			}
		}
	}
	rnsc_ctx_set_log(env.ctx, sink, &ls, RNSC_LOG_NOTICE);
	rnsc_node_options no = {
		.config_dir = dir,
		.handle_signals = 1,
		.apply_loglevel = 1,
		.verbosity = service ? 0 : verbose - quiet,
		.logtimestamps = &ls.timestamps,
	};
	rnsc_node *n = NULL;
	rnsc_config_error err;
	rc = rnsc_node_new(env.ctx, env.host, &no, &n, &err);
	int ret = CLI_OK;
	if (rc) {
		fprintf(stderr, "rnsc daemon: %s\n", err.msg[0] ? err.msg : rnsc_strerror(rc));
		ret = CLI_SETUP;
		goto out;
	}
	rnsc_http_status *hs = NULL;
	if (http) {
		char herr[256];
		if ((rc = rnsc_http_status_start(n, &ho, &hs, herr, sizeof(herr)))) {
			fprintf(stderr, "rnsc daemon: --http: %s\n", herr);
			rnsc_node_del(n);
			ret = CLI_SETUP;
			goto out;
		}
		rnsc_log(env.ctx, RNSC_LOG_NOTICE, "daemon",
			 "status endpoint on %s://%s%s%s:%u/status and /metrics",
			 ho.cert_file ? "https" : "http",
			 strchr(ho.bind ? ho.bind : "", ':') ? "[" : "",
			 ho.bind ? ho.bind : "127.0.0.1",
			 strchr(ho.bind ? ho.bind : "", ':') ? "]" : "",
			 (unsigned)rnsc_http_status_port(hs));
	}
	/* memory back to the system after bursts (mem_trim.h); without it the daemon runs on */
	rnsc_mem_trim *mt = NULL;
	if ((rc = rnsc_mem_trim_start(rnsc_node_loop(n), &mt)))
		rnsc_log(env.ctx, RNSC_LOG_WARNING, "daemon", "memory trimming: %s",
			 rnsc_strerror(rc));
	/* publish_blackhole / blackhole_sources: the /list destination and the updater */
	rnsc_blackhole_svc *bsvc = NULL;
	const rnsc_config_settings *bset = rnsc_node_settings(n);
	if ((bset->publish_blackhole || bset->blackhole_sources.n ||
	     bset->enable_remote_management) &&
	    (rc = rnsc_blackhole_svc_start(env.ctx, n, 1, &bsvc)))
		rnsc_log(env.ctx, RNSC_LOG_ERROR, "daemon", "blackhole list service: %s",
			 rnsc_strerror(rc));
	/* enable_remote_management: /status and /path, served through bsvc's links */
	rnsc_remote_mgmt *rmgmt = NULL;
	if (bsvc && (rc = rnsc_remote_mgmt_start(env.ctx, n, bsvc, &rmgmt)))
		rnsc_log(env.ctx, RNSC_LOG_ERROR, "daemon", "remote management: %s",
			 rnsc_strerror(rc));
	/* discoverable interfaces: InterfaceAnnouncer's announces */
	rnsc_disc_announcer *dann = NULL;
	if ((rc = rnsc_disc_announcer_start(env.ctx, n, &dann)))
		rnsc_log(env.ctx, RNSC_LOG_ERROR, "daemon", "interface discovery announcer: %s",
			 rnsc_strerror(rc));
	rnsc_log(env.ctx, RNSC_LOG_NOTICE, "daemon", "started rnsc daemon version %s",
		 PACKAGE_VERSION);
	if ((rc = rnsc_node_run(n))) {
		rnsc_log(env.ctx, RNSC_LOG_ERROR, "daemon", "event loop failed: %s",
			 rnsc_strerror(rc));
		ret = CLI_FAIL;
	}
	rnsc_node_log_stats(n);
	if (hs) {
		uint64_t ob, dl, gone;
		rnsc_http_status_closed(hs, &ob, &dl, &gone);
		rnsc_log(
			env.ctx, RNSC_LOG_NOTICE, "daemon",
			"status endpoint: %llu served, %llu refused; connections closed: %llu over "
			"the per-source budget, %llu past the deadline, %llu gone",
			(unsigned long long)rnsc_http_status_served(hs),
			(unsigned long long)rnsc_http_status_refused(hs), (unsigned long long)ob,
			(unsigned long long)dl, (unsigned long long)gone);
	}
	rnsc_http_status_stop(hs);
	rnsc_mem_trim_stop(mt);
	rnsc_disc_announcer_stop(dann);
	rnsc_blackhole_svc_stop(bsvc);
	rnsc_remote_mgmt_stop(rmgmt); /* after bsvc: its request links use the handlers */
	rnsc_node_del(n);
	rnsc_log(env.ctx, RNSC_LOG_NOTICE, "daemon", "stopped");
out:
	rnsc_ctx_set_log(env.ctx, NULL, NULL, 0);
	cli_env_close(&env);
	rnsc_logfile_close(&ls);
	return ret;
}
