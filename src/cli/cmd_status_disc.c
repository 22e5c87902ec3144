/* SPDX-License-Identifier: MIT */
/*
 * rnsc status -d / -D (and -j): the discovered interfaces in <config>/storage/discovery/
 * interfaces, listed and printed as rnstatus 1.5.4 prints them (program_setup's
 * discovered_interfaces branch). The daemon's announce handler writes the records
 * (src/runtime/discovery_store.c); the reference's rnstatus reads the same folder.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cmd_status_disc.h"
#include "discovery.h"
#include "discovery_store.h"
#include "status_json.h"

/* RNS.prettytime(t, compact=True): whole seconds, at most two components. */
static void prettytime_compact(char *out, size_t cap, double t)
{
	int neg = t < 0;
	if (neg)
		t = -t;
	long long days = (long long)floor(t / 86400);
	t = fmod(t, 86400);
	long long hours = (long long)floor(t / 3600);
	t = fmod(t, 3600);
	long long mins = (long long)floor(t / 60);
	t = fmod(t, 60);
	long long secs = (long long)t;
	char comp[4][32];
	int n = 0;
	if (days > 0 && n < 2)
		snprintf(comp[n++], 32, "%lldd", days);
	if (hours > 0 && n < 2)
		snprintf(comp[n++], 32, "%lldh", hours);
	if (mins > 0 && n < 2)
		snprintf(comp[n++], 32, "%lldm", mins);
	if (secs > 0 && n < 2)
		snprintf(comp[n++], 32, "%llds", secs);
	if (n == 0) {
		snprintf(out, cap, "0s");
		return;
	}
	if (n == 1)
		snprintf(out, cap, "%s%s", neg ? "-" : "", comp[0]);
	else
		snprintf(out, cap, "%s%s and %s", neg ? "-" : "", comp[0], comp[1]);
}

/* str(round(x, 4)) */
static void round4(char *out, size_t cap, double x)
{
	char b[64];
	snprintf(b, sizeof b, "%.4f", x);
	rnsc_py_float_repr(out, cap, strtod(b, NULL));
}

static int tok_num(const rnsc_mp_token *t, double *d)
{
	switch (t->type) {
	case RNSC_MP_FLOAT64:
		*d = t->f64;
		return 1;
	case RNSC_MP_FLOAT32:
		*d = t->f32;
		return 1;
	case RNSC_MP_UINT:
		*d = (double)t->u;
		return 1;
	case RNSC_MP_INT:
		*d = (double)t->i;
		return 1;
	default:
		return 0;
	}
}

/* str(value) of a scalar; {:,} when commas and the value is an int. */
static void tok_str(char *out, size_t cap, const rnsc_mp_token *t, int commas)
{
	char b[64];
	switch (t->type) {
	case RNSC_MP_NIL:
		snprintf(out, cap, "None");
		return;
	case RNSC_MP_BOOL:
		snprintf(out, cap, "%s", t->boolean ? "True" : "False");
		return;
	case RNSC_MP_STR:
		snprintf(out, cap, "%.*s", (int)t->len, (const char *)t->p);
		return;
	case RNSC_MP_FLOAT64:
	case RNSC_MP_FLOAT32:
		rnsc_py_float_repr(out, cap, t->type == RNSC_MP_FLOAT64 ? t->f64 : t->f32);
		return;
	case RNSC_MP_UINT:
		snprintf(b, sizeof b, "%llu", (unsigned long long)t->u);
		break;
	case RNSC_MP_INT:
		snprintf(b, sizeof b, "%lld", (long long)t->i);
		break;
	default:
		snprintf(out, cap, "?");
		return;
	}
	if (!commas) {
		snprintf(out, cap, "%s", b);
		return;
	}
	size_t o = 0, l = strlen(b), start = b[0] == '-';
	for (size_t i = 0; i < l && o + 2 < cap; i++) {
		if (i > start && (l - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = b[i];
	}
	out[o] = 0;
}

/* Left-aligned in width code points, as a Python format spec pads. */
static void padl(const char *s, int width)
{
	int cps = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		cps += (*p & 0xc0) != 0x80;
	fputs(s, stdout);
	for (int i = cps; i < width; i++)
		putchar(' ');
}

static int get_str(const uint8_t *p, size_t l, const char *k, char *out, size_t cap)
{
	rnsc_mp_token t;
	if (!rnsc_discovery_rec_get(p, l, k, &t) || t.type != RNSC_MP_STR)
		return 0;
	snprintf(out, cap, "%.*s", (int)t.len, (const char *)t.p);
	return 1;
}

static void location(const uint8_t *p, size_t l, char *out, size_t cap, int with_height,
		     const char *none)
{
	rnsc_mp_token la, lo, h;
	double lat, lon, hv;
	if (rnsc_discovery_rec_get(p, l, "latitude", &la) && tok_num(&la, &lat) &&
	    rnsc_discovery_rec_get(p, l, "longitude", &lo) && tok_num(&lo, &lon)) {
		char a[64], b[64], hs[96] = "";
		round4(a, sizeof a, lat);
		round4(b, sizeof b, lon);
		if (with_height && rnsc_discovery_rec_get(p, l, "height", &h) &&
		    h.type != RNSC_MP_NIL && tok_num(&h, &hv)) {
			char x[64];
			rnsc_py_float_repr(x, sizeof x, hv);
			if (h.type == RNSC_MP_UINT || h.type == RNSC_MP_INT)
				tok_str(x, sizeof x, &h, 0);
			snprintf(hs, sizeof hs, ", %sm h", x);
		}
		snprintf(out, cap, "%s, %s%s", a, b, hs);
	} else {
		snprintf(out, cap, "%s", none);
	}
}

static void print_details(const uint8_t *p, size_t l, int idx, double now)
{
	char name[RNSC_DISC_NAME_MAX], type[64], status[32], tid[64] = "", nid[64] = "",
							     lx[64] = "", loc[256], a[128], b[128];
	rnsc_mp_token t;
	if (!get_str(p, l, "name", name, sizeof name) ||
	    !get_str(p, l, "type", type, sizeof type) ||
	    !get_str(p, l, "status", status, sizeof status))
		return;
	const char *sd = !strcmp(status, "available") ? "Available"
			 : !strcmp(status, "unknown") ? "Unknown"
			 : !strcmp(status, "stale")   ? "Stale"
						      : status;
	double disc = 0, lh = 0;
	if (!rnsc_discovery_rec_get(p, l, "discovered", &t) || !tok_num(&t, &disc) ||
	    !rnsc_discovery_rec_get(p, l, "last_heard", &t) || !tok_num(&t, &lh))
		return;
	prettytime_compact(a, sizeof a, now - disc);
	prettytime_compact(b, sizeof b, now - lh);
	int transport = rnsc_discovery_rec_get(p, l, "transport", &t) && t.type == RNSC_MP_BOOL &&
			t.boolean;
	location(p, l, loc, sizeof loc, 1, "Unknown");
	int has_lx = get_str(p, l, "operator_lxmf_address", lx, sizeof lx);
	int has_tid = get_str(p, l, "transport_id", tid, sizeof tid);
	int has_nid = get_str(p, l, "network_id", nid, sizeof nid);
	if (idx > 0) {
		printf("\n");
		for (int i = 0; i < 47; i++)
			putchar('=');
		printf("\n\n");
	}
	if (has_tid && has_nid && strcmp(tid, nid))
		printf("Network   ID : %s\n", nid);
	if (has_tid && tid[0])
		printf("Transport ID : %s\n", tid);
	if (has_lx && lx[0])
		printf("LXMF address : %s\n", lx);
	printf("Name         : %s\n", name);
	printf("Type         : %s\n", type);
	printf("Status       : %s\n", sd);
	printf("Transport    : %s\n", transport ? "Enabled" : "Disabled");
	unsigned long long hops = 0;
	if (rnsc_discovery_rec_get(p, l, "hops", &t) && t.type == RNSC_MP_UINT)
		hops = t.u;
	printf("Distance     : %llu hop%s\n", hops, hops == 1 ? "" : "s");
	printf("Discovered   : %s ago\n", a);
	printf("Last Heard   : %s ago\n", b);
	printf("Location     : %s\n", loc);
	static const struct {
		const char *key, *label, *unit;
		int commas;
	} f[] = {
		{"frequency", "Frequency    : ", " Hz", 1},
		{"bandwidth", "Bandwidth    : ", " Hz", 1},
		{"sf", "Sprd. Factor : ", "", 0},
		{"cr", "Coding Rate  : ", "", 0},
		{"modulation", "Modulation   : ", "", 0},
		{"reachable_on", "Address      : ", "", 0},
		{"port", "Port         : ", "", 0},
	};
	for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
		if (!rnsc_discovery_rec_get(p, l, f[i].key, &t))
			continue;
		char v[256];
		tok_str(v, sizeof v, &t, f[i].commas);
		printf("%s%s%s\n", f[i].label, v, f[i].unit);
	}
	char v[64];
	if (rnsc_discovery_rec_get(p, l, "value", &t))
		tok_str(v, sizeof v, &t, 0);
	else
		snprintf(v, sizeof v, "?");
	printf("Stamp Value  : %s\n", v);
	printf("\nConfiguration Entry:\n");
	if (rnsc_discovery_rec_get(p, l, "config_entry", &t) && t.type == RNSC_MP_STR) {
		const char *s = (const char *)t.p, *e = s + t.len;
		for (;;) {
			const char *nl = memchr(s, '\n', (size_t)(e - s));
			printf("  %.*s\n", (int)((nl ? nl : e) - s), s);
			if (!nl)
				break;
			s = nl + 1;
		}
	}
}

static void print_row(const uint8_t *p, size_t l, double now)
{
	char name[RNSC_DISC_NAME_MAX + 8], type[64], status[32], loc[256], lhd[32], v[32];
	rnsc_mp_token t;
	if (!get_str(p, l, "name", name, sizeof name) ||
	    !get_str(p, l, "type", type, sizeof type) ||
	    !get_str(p, l, "status", status, sizeof status))
		return;
	size_t cps = 0, cut = 0;
	for (size_t i = 0; name[i]; i++)
		if (((unsigned char)name[i] & 0xc0) != 0x80 && ++cps == 25)
			cut = i;
	if (cps > 24)
		snprintf(name + cut, sizeof name - cut, "\xe2\x80\xa6");
	char *it = strstr(type, "Interface");
	if (it)
		memmove(it, it + 9, strlen(it + 9) + 1);
	const char *sd = !strcmp(status, "available") ? "\xe2\x9c\x93 Available"
			 : !strcmp(status, "unknown") ? "? Unknown"
			 : !strcmp(status, "stale")   ? "\xc3\x97 Stale"
						      : status;
	double lh;
	if (!rnsc_discovery_rec_get(p, l, "last_heard", &t) || !tok_num(&t, &lh))
		return;
	double diff = now - lh;
	if (diff < 60)
		snprintf(lhd, sizeof lhd, "Just now");
	else if (diff < 3600)
		snprintf(lhd, sizeof lhd, "%dm ago", (int)(diff / 60));
	else if (diff < 86400)
		snprintf(lhd, sizeof lhd, "%dh ago", (int)(diff / 3600));
	else
		snprintf(lhd, sizeof lhd, "%dd ago", (int)(diff / 86400));
	if (!rnsc_discovery_rec_get(p, l, "value", &t))
		return;
	tok_str(v, sizeof v, &t, 0);
	location(p, l, loc, sizeof loc, 0, "N/A");
	padl(name, 25);
	putchar(' ');
	padl(type, 12);
	putchar(' ');
	padl(sd, 12);
	putchar(' ');
	padl(lhd, 12);
	putchar(' ');
	padl(v, 8);
	putchar(' ');
	padl(loc, 15);
	putchar('\n');
}

static int name_match(const uint8_t *p, size_t l, const char *filter)
{
	if (!filter)
		return 1;
	char name[RNSC_DISC_NAME_MAX];
	if (!get_str(p, l, "name", name, sizeof name))
		return 0; /* the reference's name.lower() raises on None: the listing stops */
	for (char *c = name; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	char f[1024];
	snprintf(f, sizeof f, "%s", filter);
	for (char *c = f; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	return strstr(name, f) != NULL;
}

int status_discovered(rnsc_ctx *ctx, const rnsc_config_settings *set, const char *cdir, int json,
		      int details, const char *filter)
{
	char storage[4200];
	snprintf(storage, sizeof storage, "%s/storage", cdir);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	double now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	uint8_t *list = NULL;
	size_t ll = 0, n = 0;
	int rc = rnsc_discovery_store_list(ctx, storage, now, &set->interface_discovery_sources,
					   &list, &ll, &n);
	if (rc < 0) {
		fprintf(stderr, "rnsc status: %s\n", rnsc_strerror(rc));
		return 2;
	}
	printf("\n");
	if (json) {
		char *js = NULL;
		size_t jl = 0;
		rc = rnsc_status_json_from_mp(list, ll, &js, &jl);
		if (rc == 0)
			printf("%s\n", js);
		free(js);
		free(list);
		return rc == 0 ? 0 : 2;
	}
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, list, ll);
	size_t cnt = 0;
	rnsc_mp_read_array(&r, &cnt);
	if (!details) {
		printf("%-25s %-12s %-12s %-12s %-8s %-15s\n", "Name", "Type", "Status",
		       "Last Heard", "Value", "Location");
		for (int i = 0; i < 89; i++)
			putchar('-');
		putchar('\n');
	}
	int idx = 0;
	for (size_t i = 0; i < cnt; i++) {
		size_t p0 = r.pos;
		if (rnsc_mp_skip(&r) < 0)
			break;
		const uint8_t *p = list + p0;
		size_t l = r.pos - p0;
		if (!name_match(p, l, filter))
			continue;
		if (details)
			print_details(p, l, idx++, now);
		else
			print_row(p, l, now);
	}
	free(list);
	return 0;
}
