/* SPDX-License-Identifier: MIT */
#include "machine.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The value after "prefix ... :" on the first matching line of path (the whole first line
 * when prefix is NULL), trimmed. */
static void read_line(const char *path, const char *prefix, char *out, size_t cap)
{
	out[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[4096];
	size_t pl = prefix ? strlen(prefix) : 0;
	while (fgets(line, sizeof(line), f)) {
		if (prefix && strncmp(line, prefix, pl) != 0)
			continue;
		char *s = line + pl;
		if (prefix) {
			s = strchr(line, ':');
			s = s ? s + 1 : line + pl;
		}
		while (*s == ' ' || *s == '\t')
			s++;
		s[strcspn(s, "\n")] = '\0';
		snprintf(out, cap, "%s", s);
		break;
	}
	fclose(f);
}

/* "always [madvise] never" -> "madvise" */
static void bracketed(const char *path, char *out, size_t cap)
{
	char line[256];
	read_line(path, NULL, line, sizeof(line));
	char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
	const char *v = line[0] ? line : "unavailable";
	if (a && b) {
		*b = '\0';
		v = a + 1;
	}
	size_t n = strlen(v) < cap ? strlen(v) : cap - 1; /* settings are short; cut, don't warn */
	memcpy(out, v, n);
	out[n] = '\0';
}

double rnsc_machine_load1(void)
{
	char v[64];
	read_line("/proc/loadavg", NULL, v, sizeof(v));
	return v[0] ? atof(v) : -1.0;
}

void rnsc_machine_read(rnsc_machine *m)
{
	memset(m, 0, sizeof(*m));
	read_line("/proc/cpuinfo", "model name", m->cpu, sizeof(m->cpu));
	if (!m->cpu[0])
		snprintf(m->cpu, sizeof(m->cpu), "unknown");
	char all[4096];
	read_line("/proc/cpuinfo", "flags", all, sizeof(all));
	/* The flags that decide crypto and RandomX speed: AES rounds, vector width, SHA
	 * extensions, 1 GiB pages. */
	static const char *const wanted[] = {"aes",  "vaes",    "sse2", "ssse3",   "sse4_1", "avx",
					     "avx2", "avx512f", "bmi2", "pdpe1gb", "sha_ni"};
	char padded[4100];
	snprintf(padded, sizeof(padded), " %s ", all);
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
		char pat[32];
		snprintf(pat, sizeof(pat), " %s ", wanted[i]);
		if (strstr(padded, pat)) {
			if (m->flags[0])
				strncat(m->flags, " ", sizeof(m->flags) - strlen(m->flags) - 1);
			strncat(m->flags, wanted[i], sizeof(m->flags) - strlen(m->flags) - 1);
		}
	}
	struct utsname u;
	if (uname(&u) == 0) {
		snprintf(m->kernel, sizeof(m->kernel), "%s %s %s", u.sysname, u.release, u.machine);
		snprintf(m->release, sizeof(m->release), "%s", u.release);
	}
	bracketed("/sys/kernel/mm/transparent_hugepage/enabled", m->thp, sizeof(m->thp));
	bracketed("/sys/kernel/mm/transparent_hugepage/defrag", m->defrag, sizeof(m->defrag));
	char v[64];
	read_line("/proc/meminfo", "HugePages_Total", v, sizeof(v));
	m->huge_total = atol(v);
	read_line("/proc/meminfo", "HugePages_Free", v, sizeof(v));
	m->huge_free = atol(v);
	read_line("/proc/meminfo", "Hugepagesize", v, sizeof(v));
	m->huge_kb = atol(v);
	m->cores = sysconf(_SC_NPROCESSORS_ONLN);
	m->page_size = sysconf(_SC_PAGESIZE);
	read_line("/proc/loadavg", NULL, m->loadavg, sizeof(m->loadavg));
	m->load1 = m->loadavg[0] ? atof(m->loadavg) : -1.0;
	if (!m->loadavg[0])
		snprintf(m->loadavg, sizeof(m->loadavg), "unknown");
#if defined(__clang__)
	snprintf(m->compiler, sizeof(m->compiler), "clang %s", __clang_version__);
#elif defined(__GNUC__)
	snprintf(m->compiler, sizeof(m->compiler), "gcc %s", __VERSION__);
#else
	snprintf(m->compiler, sizeof(m->compiler), "unknown");
#endif
}
