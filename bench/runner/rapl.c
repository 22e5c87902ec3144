/* SPDX-License-Identifier: MIT */
#include "rapl.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_u64(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int ok = fscanf(f, "%" SCNu64, v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static int read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int ok = fgets(buf, (int)cap, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok ? 0 : -1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int rnsc_rapl_open(rnsc_rapl *r)
{
	memset(r, 0, sizeof(*r));
	const char *root = getenv("RNSC_POWERCAP_ROOT");
	if (!root || !*root)
		root = "/sys/class/powercap";
	DIR *d = opendir(root);
	if (!d) {
		snprintf(r->why, sizeof(r->why), "%s: %s (no RAPL powercap interface)", root,
			 strerror(errno));
		return 0;
	}
	char *names[64];
	size_t nn = 0;
	struct dirent *e;
	/* top-level zones only: "intel-rapl:0", not the sub-zones "intel-rapl:0:1" */
	while ((e = readdir(d)) && nn < 64) {
		const char *c = strchr(e->d_name, ':');
		if (strncmp(e->d_name, "intel-rapl:", 11) == 0 && c && !strchr(c + 1, ':'))
			names[nn++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, nn, sizeof(names[0]), by_name);
	int unreadable = 0;
	for (size_t i = 0; i < nn; i++) {
		char p[PATH_MAX], name[64];
		uint64_t v;
		snprintf(p, sizeof(p), "%s/%s/name", root, names[i]);
		if (read_line(p, name, sizeof(name)) == 0 && strncmp(name, "package", 7) == 0 &&
		    r->n < RNSC_RAPL_MAX_ZONES) {
			snprintf(r->path[r->n], sizeof(r->path[r->n]), "%s/%s/energy_uj", root,
				 names[i]);
			if (read_u64(r->path[r->n], &v) != 0) {
				unreadable++;
			} else {
				snprintf(p, sizeof(p), "%s/%s/max_energy_range_uj", root, names[i]);
				if (read_u64(p, &r->range_uj[r->n]) != 0)
					r->range_uj[r->n] = 0;
				r->n++;
			}
		}
		free(names[i]);
	}
	if (!r->n)
		snprintf(r->why, sizeof(r->why), "%s",
			 unreadable ? "RAPL package zones present but "
				      "energy_uj is not readable (permissions)"
				    : "no RAPL package zone under the "
				      "powercap interface");
	return r->n;
}

void rnsc_rapl_mark_now(const rnsc_rapl *r, rnsc_rapl_mark *m)
{
	memset(m, 0, sizeof(*m));
	m->ok = r->n > 0;
	for (int i = 0; i < r->n; i++)
		if (read_u64(r->path[i], &m->uj[i]) != 0)
			m->ok = 0;
}

double rnsc_rapl_joules(const rnsc_rapl *r, const rnsc_rapl_mark *a, const rnsc_rapl_mark *b)
{
	if (!r->n || !a->ok || !b->ok)
		return -1;
	double j = 0;
	for (int i = 0; i < r->n; i++) {
		uint64_t d;
		if (b->uj[i] >= a->uj[i])
			d = b->uj[i] - a->uj[i];
		else if (r->range_uj[i] >= a->uj[i])
			d = r->range_uj[i] - a->uj[i] + b->uj[i]; /* wrapped once */
		else
			return -1; /* wrapped with no known range: unknown, not guessed */
		j += (double)d / 1e6;
	}
	return j;
}
