/* SPDX-License-Identifier: MIT */
/*
 * Where the file lives: the reference's search for the configuration folder, the
 * default file rnsc writes when there is none, and rnsc_config_open, which ties both
 * to rnsc_config_load.
 */
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfgfile_internal.h"
#include "store.h"

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int put(char *out, size_t cap, const char *a, const char *b)
{
	int n = snprintf(out, cap, "%s%s", a, b);
	return n < 0 || (size_t)n >= cap ? RNSC_ERR_BUFSIZE : 0;
}

/* os.path.expanduser("~") */
static int home_dir(char *out, size_t cap)
{
	const char *h = getenv("HOME");
	char pwbuf[4096];
	if (!h) {
		struct passwd pw, *res = NULL;
		if (getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &res) != 0 || !res)
			return RNSC_ERR_NOENT;
		h = res->pw_dir;
	}
	size_t n = strlen(h);
	while (n > 0 && h[n - 1] == '/')
		n--;
	if (n == 0)
		return put(out, cap, "/", "");
	if (n >= cap)
		return RNSC_ERR_BUFSIZE;
	memcpy(out, h, n);
	out[n] = '\0';
	return 0;
}

int rnsc_config_locate_in(const char *override_dir, const char *etc_dir, const char *home,
			  char *out, size_t cap)
{
	char buf[PATH_MAX], hb[PATH_MAX];
	if (!out || !cap)
		return RNSC_ERR_INVAL;
	if (override_dir)
		return put(out, cap, override_dir, "");
	const char *etc = etc_dir ? etc_dir : "/etc/reticulum";
	if (put(buf, sizeof(buf), etc, "/config") == 0 && is_dir(etc) && is_file(buf))
		return put(out, cap, etc, "");
	if (!home) {
		int rc = home_dir(hb, sizeof(hb));
		if (rc)
			return rc;
		home = hb;
	}
	char dir[PATH_MAX];
	if (put(dir, sizeof(dir), home, "/.config/reticulum") == 0 &&
	    put(buf, sizeof(buf), dir, "/config") == 0 && is_dir(dir) && is_file(buf))
		return put(out, cap, dir, "");
	return put(out, cap, home, "/.reticulum");
}

int rnsc_config_locate(const char *override_dir, char *out, size_t cap)
{
	return rnsc_config_locate_in(override_dir, NULL, NULL, out, cap);
}

static const char default_text[] =
	"# Reticulum configuration, written by rnsc because none was found.\n"
	"# The format is the one the Python reference reads, so the file works with\n"
	"# either implementation. Options left out keep their built-in defaults;\n"
	"# the Reticulum manual lists them all.\n"
	"\n"
	"[reticulum]\n"
	"\n"
	"# Forward packets, announces and path requests for other nodes. Only worth\n"
	"# enabling on a node that stays in one place and is always on.\n"
	"enable_transport = False\n"
	"\n"
	"# The first program started on this machine becomes the shared instance: it\n"
	"# opens the interfaces below, and programs started later reach the network\n"
	"# through it over a local socket.\n"
	"share_instance = Yes\n"
	"\n"
	"# Several independent shared instances on one machine need distinct names.\n"
	"instance_name = default\n"
	"\n"
	"# Where local domain sockets are unavailable, instances are told apart by\n"
	"# port numbers instead:\n"
	"# shared_instance_port = 37428\n"
	"# instance_control_port = 37429\n"
	"\n"
	"# Use TCP on the loopback for the shared instance even where domain sockets\n"
	"# are available:\n"
	"# shared_instance_type = tcp\n"
	"\n"
	"# Collect interface announcements made by transport nodes on the network:\n"
	"# discover_interfaces = No\n"
	"\n"
	"# Exit instead of carrying on without it when an interface fails for good,\n"
	"# for instance when its hardware is unplugged:\n"
	"# panic_on_interface_error = No\n"
	"\n"
	"# Ignore announces from identities that these blackhole list publishers have\n"
	"# listed (a comma-separated list of 32-character identity hashes):\n"
	"# blackhole_sources = <identity hash>, <identity hash>\n"
	"\n"
	"\n"
	"[logging]\n"
	"\n"
	"# 0 critical, 1 error, 2 warning, 3 notice, 4 info, 5 verbose, 6 debug,\n"
	"# 7 path, 8 extreme. Each level includes the ones below it.\n"
	"loglevel = 4\n"
	"\n"
	"\n"
	"# One [[subsection]] per interface: \"type\" chooses the kind of interface and\n"
	"# \"enabled\" switches it on or off.\n"
	"[interfaces]\n"
	"\n"
	"  # Finds other Reticulum nodes on the local network by itself over IPv6\n"
	"  # link-local multicast; it needs no router, DHCP or configured address.\n"
	"  [[Default Interface]]\n"
	"    type = AutoInterface\n"
	"    enabled = Yes\n";

const char *rnsc_config_default_text(size_t *len)
{
	if (len)
		*len = sizeof(default_text) - 1;
	return default_text;
}

int rnsc_config_write_default(const char *configdir)
{
	char path[PATH_MAX];
	if (!configdir || !*configdir)
		return RNSC_ERR_INVAL;
	if (put(path, sizeof(path), configdir, "/config") != 0)
		return RNSC_ERR_INVAL;
	int rc = rnsc_store_mkdirs(configdir);
	if (rc)
		return rc;
	return rnsc_store_write_atomic(path, default_text, sizeof(default_text) - 1, 0666);
}

int rnsc_config_open(rnsc_ctx *ctx, const char *override_dir, char *dir_out, size_t dir_cap,
		     int *created, rnsc_config **out, rnsc_config_error *err)
{
	char dir[PATH_MAX], path[PATH_MAX];
	rnsc_cfg_clear_err(err);
	if (!out)
		return rnsc_cfg_set_err(err, RNSC_ERR_INVAL, 0, "invalid argument");
	*out = NULL;
	if (created)
		*created = 0;
	int rc = rnsc_config_locate(override_dir, dir, sizeof(dir));
	if (rc)
		return rnsc_cfg_set_err(err, rc, 0, "cannot locate the configuration folder: %s",
					rnsc_strerror(rc));
	if (dir_out && put(dir_out, dir_cap, dir, "") != 0)
		return rnsc_cfg_set_err(err, RNSC_ERR_BUFSIZE, 0, "folder name too long");
	if (put(path, sizeof(path), dir, "/config") != 0)
		return rnsc_cfg_set_err(err, RNSC_ERR_INVAL, 0, "%s: path too long", dir);
	if (is_file(path))
		return rnsc_config_load(ctx, path, out, err);
	rc = rnsc_config_write_default(dir);
	if (rc)
		return rnsc_cfg_set_err(err, rc, 0,
					"%s: cannot write the default configuration: %s", path,
					rnsc_strerror(rc));
	if (created)
		*created = 1;
	return rnsc_config_parse(ctx, default_text, sizeof(default_text) - 1, path, out, err);
}
