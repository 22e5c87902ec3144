/* SPDX-License-Identifier: MIT */
#include "discovery_announcer.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#include "cfgfile.h"
#include "destination.h"
#include "discovery.h"
#include "loop.h"
#include "store.h"
#include "transport.h"

static const char *WHO = "discovery";
static const char *const ASPECTS[] = {"discovery", "interface"};

#define JOB_INTERVAL_MS 60000u                      /* InterfaceAnnouncer.JOB_INTERVAL */
#define MIN_INTERVAL_MS (5ull * 60 * 1000)          /* announce_interval floor */
#define DEFAULT_INTERVAL_MS (6ull * 60 * 60 * 1000) /* when announce_interval is absent */
#define APP_DATA_MAX 1024

typedef struct disc_iface {
	char name[128];
	uint64_t interval_ms;
	uint64_t last_ms; /* 0: never, so due at the first job (the reference's 0) */
	uint8_t *data;    /* app_data, built at the first announce */
	size_t len;
	int failed; /* could not be built: logged once, never retried (config is static) */
	/* what the announce carries */
	char type[32];
	char *disc_name, *reachable_on, *netname, *netkey; /* sanitized; NULL: absent */
	int64_t port;
	int stamp_value;
	rnsc_disc_val lat, lon, hgt;
	int has_op;
	uint8_t op[16];
} disc_iface;

struct rnsc_disc_announcer {
	rnsc_ctx *ctx;
	rnsc_node *n;
	rnsc_identity id;
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	rnsc_timer *job;
	disc_iface *ifs;
	size_t n_ifs;
};

/* InterfaceAnnouncer.sanitize: newlines and carriage returns out, then str.strip(). */
static char *sanitize(const char *in)
{
	if (!in)
		return NULL;
	size_t len = strlen(in);
	char *o = malloc(len + 1);
	if (!o)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < len; i++)
		if (in[i] != '\n' && in[i] != '\r')
			o[k++] = in[i];
	o[k] = 0;
	size_t s = 0;
	while (s < k && isspace((unsigned char)o[s]))
		s++;
	while (k > s && isspace((unsigned char)o[k - 1]))
		k--;
	memmove(o, o + s, k - s);
	o[k - s] = 0;
	return o;
}

static void iface_free(disc_iface *f)
{
	free(f->data);
	free(f->disc_name);
	free(f->reachable_on);
	free(f->netname);
	free(f->netkey);
}

static const char *opt_str(const rnsc_config_section *s, const char *key)
{
	const char *v = NULL;
	if (rnsc_config_get_str(s, key, &v, NULL))
		return NULL;
	return v;
}

static int opt_float(const rnsc_config_section *s, const char *key, rnsc_disc_val *out)
{
	if (!rnsc_config_has(s, key))
		return 0;
	double d;
	int rc = rnsc_config_get_float(s, key, &d, NULL);
	if (rc)
		return rc;
	*out = (rnsc_disc_val){.present = 1, .type = RNSC_MP_FLOAT64, .d = d};
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Reads one discoverable section as Reticulum.py's loader does. 1: announce it, 0: skip
 * (logged), < 0: error. */
static int read_iface(rnsc_disc_announcer *a, const rnsc_config_iface *ci, disc_iface *f)
{
	const rnsc_config_section *s = ci->section;
	snprintf(f->name, sizeof f->name, "%s", ci->name);
	if (strcmp(ci->type, "TCPServerInterface") && strcmp(ci->type, "BackboneInterface")) {
		rnsc_log(a->ctx, RNSC_LOG_WARNING, WHO,
			 "interface \"%s\" is discoverable, but rnsc announces only "
			 "TCPServerInterface and BackboneInterface; not announced",
			 ci->name);
		return 0;
	}
	snprintf(f->type, sizeof f->type, "%s", ci->type);
	int64_t v;
	f->interval_ms = DEFAULT_INTERVAL_MS;
	if (!rnsc_config_get_int(s, "announce_interval", &v, NULL)) {
		f->interval_ms = v * 60 * 1000 < (int64_t)MIN_INTERVAL_MS ? MIN_INTERVAL_MS
									  : (uint64_t)v * 60 * 1000;
	}
	if (!rnsc_config_get_int(s, "discovery_stamp_value", &v, NULL))
		f->stamp_value = v > 0 && v < 256 ? (int)v : 0; /* falsy: the default */
	int enc = 0;
	if (!rnsc_config_get_bool(s, "discovery_encrypt", &enc, NULL) && enc) {
		/* The reference aborts this announce without a network identity. */
		rnsc_log(a->ctx, RNSC_LOG_ERROR, WHO,
			 "discovery encryption requested for \"%s\", but no network identity "
			 "configured (rnsc does not load one); not announced",
			 ci->name);
		return 0;
	}
	if (rnsc_config_has(s, "location_cmd"))
		rnsc_log(a->ctx, RNSC_LOG_WARNING, WHO,
			 "interface \"%s\": location_cmd is not run by rnsc; the configured "
			 "latitude/longitude/height are announced",
			 ci->name);
	int rc;
	if ((rc = opt_float(s, "latitude", &f->lat)) || (rc = opt_float(s, "longitude", &f->lon)) ||
	    (rc = opt_float(s, "height", &f->hgt)))
		return rc;
	const char *lx = opt_str(s, "discovery_lxmf_address");
	if (lx) {
		if (strlen(lx) == 32) {
			int okx = 1;
			for (int i = 0; i < 16 && okx; i++) {
				int h = hexval(lx[2 * i]), l = hexval(lx[2 * i + 1]);
				if (h < 0 || l < 0)
					okx = 0;
				else
					f->op[i] = (uint8_t)(h << 4 | l);
			}
			if (okx)
				f->has_op = 1;
			else
				rnsc_log(a->ctx, RNSC_LOG_ERROR, WHO,
					 "Invalid interface discovery LXMF address: %s", lx);
		} else
			rnsc_log(a->ctx, RNSC_LOG_ERROR, WHO,
				 "Invalid length for interface discovery LXMF address: %s", lx);
	}
	const char *dn = opt_str(s, "discovery_name");
	if (dn && !(f->disc_name = sanitize(dn)))
		return RNSC_ERR_NOMEM;
	const char *ro = opt_str(s, "reachable_on");
	if (!ro) {
		rnsc_log(a->ctx, RNSC_LOG_ERROR, WHO,
			 "interface \"%s\" is discoverable but has no reachable_on; not announced",
			 ci->name);
		return 0;
	}
	if (!(f->reachable_on = sanitize(ro)))
		return RNSC_ERR_NOMEM;
	size_t rl = strlen(f->reachable_on);
	if (!rnsc_discovery_is_ip(f->reachable_on, rl) &&
	    !rnsc_discovery_is_hostname(f->reachable_on, rl)) {
		rnsc_log(a->ctx, RNSC_LOG_ERROR, WHO,
			 "The configured reachable_on parameter \"%s\" for \"%s\" is not a valid "
			 "IP address or hostname (rnsc runs no reachable_on executables); not "
			 "announced",
			 f->reachable_on, ci->name);
		return 0;
	}
	/* bind_port: "port" wins over "listen_port" (TCPServerInterface, BackboneInterface) */
	if (rnsc_config_get_int(s, "port", &f->port, NULL) &&
	    rnsc_config_get_int(s, "listen_port", &f->port, NULL)) {
		rnsc_log(a->ctx, RNSC_LOG_ERROR, WHO, "interface \"%s\" has no port; not announced",
			 ci->name);
		return 0;
	}
	int pub = 0;
	if (!rnsc_config_get_bool(s, "publish_ifac", &pub, NULL) && pub) {
		/* the loader's ifac_netname / ifac_netkey: the later spelling wins, "" is None */
		const char *nn = NULL, *nk = NULL, *t;
		if ((t = opt_str(s, "networkname")) && *t)
			nn = t;
		if ((t = opt_str(s, "network_name")) && *t)
			nn = t;
		if ((t = opt_str(s, "passphrase")) && *t)
			nk = t;
		if ((t = opt_str(s, "pass_phrase")) && *t)
			nk = t;
		if ((nn && !(f->netname = sanitize(nn))) || (nk && !(f->netkey = sanitize(nk))))
			return RNSC_ERR_NOMEM;
	}
	return 1;
}

static int build(rnsc_disc_announcer *a, disc_iface *f)
{
	rnsc_disc_announce da = {
		.type = f->type,
		.transport = rnsc_node_settings(a->n)->enable_transport ? 1 : 0,
		.impl = "rnsc",
		.version = PACKAGE_VERSION,
		.name = f->disc_name,
		.latitude = f->lat,
		.longitude = f->lon,
		.height = f->hgt,
		.op_addr = f->has_op ? f->op : NULL,
		.reachable_on = f->reachable_on,
		.port = f->port,
		.ifac_netname = f->netname,
		.ifac_netkey = f->netkey,
	};
	memcpy(da.transport_id, a->id.hash, 16);
	uint8_t *buf = malloc(APP_DATA_MAX);
	if (!buf)
		return RNSC_ERR_NOMEM;
	int rc = rnsc_discovery_announce_data(a->ctx, buf, APP_DATA_MAX, &da, f->stamp_value, NULL);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	f->data = buf;
	f->len = (size_t)rc;
	return 0;
}

static void job_cb(rnsc_loop *loop, rnsc_timer *tm, void *ud)
{
	(void)loop;
	(void)tm;
	rnsc_disc_announcer *a = ud;
	uint64_t now = rnsc_node_now_ms();
	disc_iface *sel = NULL;
	for (size_t i = 0; i < a->n_ifs; i++) {
		disc_iface *f = &a->ifs[i];
		if (f->failed || !(now > f->last_ms + f->interval_ms || f->last_ms == 0))
			continue;
		if (!sel ||
		    f->last_ms < sel->last_ms) /* longest wait first, config order on ties */
			sel = f;
	}
	if (!sel)
		return;
	sel->last_ms = now;
	rnsc_log(a->ctx, RNSC_LOG_DEBUG, WHO, "Preparing interface discovery announce for %s",
		 sel->name);
	if (!sel->data) {
		int rc = build(a, sel);
		if (rc) {
			sel->failed = 1;
			rnsc_log(a->ctx, RNSC_LOG_ERROR, WHO,
				 "Could not generate interface discovery announce data for %s: %s",
				 sel->name, rnsc_strerror(rc));
			return;
		}
	}
	rnsc_log(a->ctx, RNSC_LOG_DEBUG, WHO,
		 "Sending interface discovery announce for %s with %zuB payload", sel->name,
		 sel->len);
	if (rnsc_transport_announce(rnsc_node_transport(a->n), a->dest, sel->data, sel->len,
				    rnsc_node_now_ms()) == 0)
		rnsc_node_flush(a->n);
}

void rnsc_disc_announcer_stop(rnsc_disc_announcer *a)
{
	if (!a)
		return;
	if (a->job)
		rnsc_loop_timer_cancel(rnsc_node_loop(a->n), a->job);
	for (size_t i = 0; i < a->n_ifs; i++)
		iface_free(&a->ifs[i]);
	free(a->ifs);
	rnsc_identity_free(&a->id);
	free(a);
}

int rnsc_disc_announcer_start(rnsc_ctx *ctx, rnsc_node *n, rnsc_disc_announcer **out)
{
	if (!ctx || !n || !out)
		return RNSC_ERR_INVAL;
	*out = NULL;
	if (rnsc_node_connected_to_shared(n))
		return 0;
	const rnsc_config *cfg = rnsc_node_config(n);
	size_t cnt = rnsc_config_iface_count(cfg);
	rnsc_disc_announcer *a = calloc(1, sizeof(*a));
	if (!a)
		return RNSC_ERR_NOMEM;
	a->ctx = ctx;
	a->n = n;
	int rc = 0;
	if (cnt && !(a->ifs = calloc(cnt, sizeof(*a->ifs))))
		rc = RNSC_ERR_NOMEM;
	for (size_t k = 0; !rc && k < cnt; k++) {
		rnsc_config_iface ci;
		int disc = 0;
		if (rnsc_config_iface_at(cfg, k, &ci, NULL) || !ci.enabled || !ci.type)
			continue;
		if (rnsc_config_get_bool(ci.section, "discoverable", &disc, NULL) || !disc)
			continue;
		int r = read_iface(a, &ci, &a->ifs[a->n_ifs]);
		if (r == 1)
			a->n_ifs++;
		else {
			iface_free(&a->ifs[a->n_ifs]);
			memset(&a->ifs[a->n_ifs], 0, sizeof(a->ifs[0]));
			if (r < 0)
				rc = r;
		}
	}
	if (rc || a->n_ifs == 0) {
		rnsc_disc_announcer_stop(a);
		return rc;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%.*s/storage/transport_identity", PATH_MAX - 40,
		 rnsc_node_config_dir(n));
	uint8_t prv[RNSC_KEYSIZE];
	rc = rnsc_store_read_exact(path, prv, sizeof(prv));
	if (!rc)
		rc = rnsc_identity_from_private(ctx, &a->id, prv, sizeof(prv));
	rnsc_memzero(prv, sizeof(prv));
	if (!rc)
		rc = rnsc_transport_dest_add(rnsc_node_transport(n), RNSC_DEST_SINGLE, &a->id,
					     RNSC_DISC_APP_NAME, ASPECTS, 2, 0, a->dest);
	uint64_t job_ms = JOB_INTERVAL_MS;
	const char *env = getenv("RNSC_DISC_JOB_INTERVAL");
	if (env && atoi(env) > 0)
		job_ms = (uint64_t)atoi(env) * 1000;
	if (!rc)
		rc = rnsc_loop_timer_add(rnsc_node_loop(n), job_ms * RNSC_NS_PER_MS,
					 job_ms * RNSC_NS_PER_MS, job_cb, a, &a->job);
	if (rc) {
		rnsc_disc_announcer_stop(a);
		return rc;
	}
	char hx[33];
	for (int i = 0; i < 16; i++)
		snprintf(hx + 2 * i, 3, "%02x", a->dest[i]);
	rnsc_log(ctx, RNSC_LOG_NOTICE, WHO, "announcing %zu discoverable interface%s on <%s:%s>",
		 a->n_ifs, a->n_ifs == 1 ? "" : "s", RNSC_DISC_FULL_NAME, hx);
	*out = a;
	return 0;
}
