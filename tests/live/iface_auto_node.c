/* SPDX-License-Identifier: MIT */
/*
 * A test node for tests/live/iface_auto_test.sh: opens an AutoInterface (devices = DEV)
 * through the runtime's interface host with the "auto" plugin, inside whatever network
 * namespace it was started in, and plays one role:
 *
 *   iface_auto_node echo  DEV   echo every frame back through the child it came from
 *   iface_auto_node drive DEV   wait for a peer, send the test frames (resending the
 *                               unanswered ones every 1.5 s), check the echoes are
 *                               byte-exact, then wait for the peer to time out
 *   iface_auto_node multi DEV1,DEV2
 *                               two adapters: wait for a peer on each (the far
 *                               side's two link-local addresses), send a distinct
 *                               frame through each child and check its echo
 *   iface_auto_node readdr DEV NEWADDR
 *                               as drive, but after the echoes (the test script
 *                               then moves the far side to link-local NEWADDR) wait
 *                               for a peer at NEWADDR and exchange frames with it
 *   iface_auto_node errors DEV  config checks: a missing device is one error naming
 *                               the section and "devices"; a device without a
 *                               link-local address, or only ignored devices, leave
 *                               the interface offline; DEV allowed comes online
 *
 * Same stdout protocol as tests/live/iface_auto_peer.py. Every wait is bounded; the exit
 * status is 0 only when every step passed. Single-threaded.
 */
#include "iface_test_util.h"

/* Same list as tests/live/iface_auto_peer.py: up to HW_MTU 1196 + IFAC 16. */
static const size_t LENGTHS[] = {20,   21,   22,   31,   63,   64,   100,  127, 128,
				 255,  256,  400,  500,  501,  511,  512,  700, 1000,
				 1023, 1024, 1064, 1100, 1195, 1196, 1211, 1212};
#define NFRAMES (sizeof(LENGTHS) / sizeof(LENGTHS[0]))

static int echo_mode;
static int got[NFRAMES];
static int foreign;

static void on_rx(void *ud, rnsc_iface *iface, const uint8_t *frame, size_t len, uint64_t now)
{
	(void)ud;
	(void)now;
	if (echo_mode) {
		rnsc_iface_send(iface, frame, len);
		return;
	}
	uint8_t want[1212];
	for (unsigned i = 0; i < NFRAMES; i++) {
		size_t n = tu_make_frame(LENGTHS, i, want);
		if (n == len && memcmp(want, frame, n) == 0) {
			got[i] = 1;
			return;
		}
	}
	foreign++;
}

static int have_child(void *a)
{
	(void)a;
	return last_child != NULL;
}
static int no_child(void *a)
{
	(void)a;
	return last_child == NULL;
}
static int all_got(void *a)
{
	(void)a;
	for (unsigned i = 0; i < NFRAMES; i++)
		if (!got[i])
			return 0;
	return 1;
}
/* The open children, for the multi role (the helper header tracks only the last). */
static rnsc_iface *kids[8];
static size_t nkids;

static void on_event(void *ud, rnsc_iface *iface, int ev)
{
	tu_on_event(ud, iface, ev);
	if (!rnsc_iface_parent(iface))
		return;
	if (ev == RNSC_IFACE_ADDED && nkids < 8)
		kids[nkids++] = iface;
	if (ev == RNSC_IFACE_REMOVED)
		for (size_t k = 0; k < nkids; k++)
			if (kids[k] == iface)
				kids[k] = kids[--nkids];
}

static int two_kids(void *a)
{
	(void)a;
	return nkids >= 2;
}

static int got_one(void *a)
{
	return got[*(unsigned *)a];
}

static int role_multi(void)
{
	if (!run_until(two_kids, NULL, 20000)) {
		printf("PEERS %zu\n", nkids);
		return 1;
	}
	char d0[128], d1[128];
	rnsc_iface_describe(kids[0], d0, sizeof(d0));
	rnsc_iface_describe(kids[1], d1, sizeof(d1));
	printf("PEERS 2 %s %s\n", d0, d1);
	if (nkids != 2 || strstr(d0, "/") == NULL ||
	    strcmp(strchr(d0, '/'), strchr(d1, '/')) == 0) {
		printf("MULTI fail expected two peers with different addresses\n");
		return 1;
	}
	uint8_t f[1212];
	for (unsigned k = 0; k < 2; k++) {
		/* frames 5 and 9: one per child; resent until echoed (the far side may not
		 * have heard our announce on that adapter yet) */
		unsigned i = k ? 9 : 5;
		uint64_t end = mono_ms() + 15000;
		while (!got[i] && mono_ms() < end) {
			rnsc_iface_send(kids[k], f, tu_make_frame(LENGTHS, i, f));
			run_until(got_one, &i, 1500);
		}
		if (!got[i] || foreign) {
			printf("MULTI fail no echo through %s (foreign %d)\n", k ? d1 : d0,
			       foreign);
			return 1;
		}
	}
	printf("MULTI ok\n");
	return 0;
}

static const char *want_addr;
static rnsc_iface *new_peer;
static int peer_at(void *a)
{
	(void)a;
	char d[128], pat[80];
	snprintf(pat, sizeof(pat), "/%s]", want_addr);
	for (size_t k = 0; k < nkids; k++) {
		rnsc_iface_describe(kids[k], d, sizeof(d));
		if (strstr(d, pat)) {
			new_peer = kids[k];
			return 1;
		}
	}
	return 0;
}

/* After the far side's link-local address changed: its new address must be
 * discovered (its tokens now carry it) and reached (its data socket moved). */
static int role_readdr(const char *addr)
{
	want_addr = addr;
	if (!run_until(peer_at, NULL, 40000)) {
		printf("READDR fail no peer at %s\n", addr);
		return 1;
	}
	printf("READDR peer %s\n", addr);
	memset(got, 0, sizeof(got));
	uint8_t f[1212];
	uint64_t end = mono_ms() + 15000;
	while (!all_got(NULL) && mono_ms() < end && peer_at(NULL)) {
		for (unsigned i = 0; i < NFRAMES; i++)
			if (!got[i])
				rnsc_iface_send(new_peer, f, tu_make_frame(LENGTHS, i, f));
		run_until(all_got, NULL, 1500);
	}
	if (!all_got(NULL) || foreign) {
		printf("READDR fail frames through the new address (foreign %d)\n", foreign);
		return 1;
	}
	printf("READDR ok\n");
	return 0;
}

static int never(void *a)
{
	(void)a;
	return 0;
}

static int role_errors(const char *dev)
{
	rnsc_config_error err = {0};
	char text[512];
	snprintf(text, sizeof(text),
		 "[interfaces]\n  [[Auto Bad]]\n    type = AutoInterface\n    enabled = yes\n"
		 "    devices = %s, nosuchdev%d\n",
		 dev, (int)getpid() % 1000);
	int rc = open_text(text, &err);
	int fails = 0;
	if (rc != RNSC_ERR_CONFIG_VALUE || !strstr(err.msg, "Auto Bad") ||
	    !strstr(err.msg, "devices") || !strstr(err.msg, "nosuchdev")) {
		printf("ERRORS fail missing device: rc %d msg \"%s\"\n", rc, err.msg);
		fails++;
	}
	/* lo has no link-local address: no usable adapter, the interface stays offline */
	rnsc_iface *i = open_iface("Auto Lo", "AutoInterface", "    devices = lo\n");
	if (!i) {
		printf("ERRORS fail devices = lo did not open\n");
		return 1;
	}
	run_for(2500);
	if (rnsc_iface_online(i)) {
		printf("ERRORS fail an AutoInterface without adapters came online\n");
		fails++;
	}
	/* the one allowed device also ignored: nothing left, offline */
	snprintf(text, sizeof(text), "    devices = %s\n    ignored_devices = lo, %s\n", dev, dev);
	rnsc_iface *ig = open_iface("Auto Ignored", "AutoInterface", text);
	if (!ig) {
		printf("ERRORS fail devices + ignored_devices did not open\n");
		return 1;
	}
	run_for(2500);
	rnsc_iface_status st;
	rnsc_iface_status_get(ig, &st);
	if (rnsc_iface_online(ig) || st.stats.local_port != 0) {
		printf("ERRORS fail an ignored device was used\n");
		fails++;
	}
	/* and the same device allowed: it is adopted (the data port is bound) */
	snprintf(text, sizeof(text), "    devices = %s\n    ignored_devices = lo\n", dev);
	rnsc_iface *ok = open_iface("Auto Allowed", "AutoInterface", text);
	run_for(2500);
	if (!ok || !rnsc_iface_online(ok)) {
		printf("ERRORS fail the allowed device was not adopted\n");
		fails++;
	}
	snprintf(text, sizeof(text),
		 "[interfaces]\n  [[Auto Scope]]\n    type = AutoInterface\n    enabled = yes\n"
		 "    devices = %s\n    discovery_scope = planet\n",
		 dev);
	rc = open_text(text, &err);
	if (rc != RNSC_ERR_CONFIG_VALUE || !strstr(err.msg, "discovery_scope")) {
		printf("ERRORS fail bad scope: rc %d msg \"%s\"\n", rc, err.msg);
		fails++;
	}
	if (!fails)
		printf("ERRORS ok\n");
	return fails != 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s echo|drive|errors DEV\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	echo_mode = strcmp(argv[1], "echo") == 0;
	if (tu_suite_init("auto.so") || tu_setup()) {
		printf("SETUP fail\n");
		return 1;
	}
	rnsc_iface_host_set_rx(H, on_rx, NULL);
	rnsc_iface_host_set_event(H, on_event, NULL);
	int rc = 1;
	if (strcmp(argv[1], "errors") == 0) {
		rc = role_errors(argv[2]);
		goto out;
	}
	char opts[256], devs[128];
	snprintf(devs, sizeof(devs), "%s", argv[2]);
	for (char *c = devs; *c; c++)
		if (*c == ',')
			*c = 0;
	/* "a,b" on the command line: a two-item list in the config */
	snprintf(opts, sizeof(opts), "    devices = %s%s%s\n", devs,
		 strchr(argv[2], ',') ? ", " : "",
		 strchr(argv[2], ',') ? strchr(argv[2], ',') + 1 : "");
	rnsc_iface *a = open_iface("Auto", "AutoInterface", opts);
	if (!a) {
		printf("OPEN fail\n");
		goto out;
	}
	if (strcmp(argv[1], "multi") == 0) {
		rc = role_multi();
		goto out;
	}
	if (!run_until(have_child, NULL, 20000)) {
		printf("PEER none\n");
		goto out;
	}
	char d[128];
	rnsc_iface_describe(last_child, d, sizeof(d));
	printf("PEER %s\n", d);
	if (echo_mode) {
		run_until(never, NULL, 120000);
		rc = 0;
		goto out;
	}
	uint8_t f[1212];
	uint64_t end = mono_ms() + 20000;
	while (!all_got(NULL) && mono_ms() < end && last_child) {
		for (unsigned i = 0; i < NFRAMES; i++)
			if (!got[i])
				rnsc_iface_send(last_child, f, tu_make_frame(LENGTHS, i, f));
		run_until(all_got, NULL, 1500);
	}
	if (foreign || !all_got(NULL)) {
		printf("ECHO fail foreign %d missing", foreign);
		for (unsigned i = 0; i < NFRAMES; i++)
			if (!got[i])
				printf(" %zu", LENGTHS[i]);
		printf("\n");
		goto out;
	}
	printf("ECHO ok %zu\n", NFRAMES);
	if (strcmp(argv[1], "readdr") == 0) {
		rc = role_readdr(argc > 3 ? argv[3] : "");
		goto out;
	}
	if (!run_until(no_child, NULL, 40000)) {
		printf("TIMEOUT fail\n");
		goto out;
	}
	printf("TIMEOUT ok\n");
	rc = 0;
out:
	tu_teardown();
	tu_suite_fini();
	return rc;
}
