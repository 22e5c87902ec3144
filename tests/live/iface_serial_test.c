/* SPDX-License-Identifier: MIT */
/*
 * The "serial" plugin (SerialInterface, KISSInterface) through the runtime's interface
 * host on pseudo-terminals the test creates. rnsc opens a pty slave through a symlink;
 * the test holds the master, so it can play the far end itself (frames, line noise,
 * the TNC's READY), pull the cable (close the pty, point the symlink at a new one) and
 * read exactly what rnsc writes. For interop a second pty pair carries the pinned
 * reference's own SerialInterface / KISSInterface (tests/live/iface_serial_peer.py with the
 * venv's python and pyserial), and the test relays bytes between the two masters.
 * Every wait is bounded; a missing reference or pyserial fails the test.
 */
#include <pty.h>
#include <termios.h>

#include "iface_test_util.h"
#include "hdlc.h"
#include "kiss.h"

/* Same generator as tests/live/iface_serial_peer.py. */
static const size_t LENGTHS[] = {20, 21, 64, 100, 255, 256, 500, 563, 564};
#define NFRAMES (sizeof(LENGTHS) / sizeof(LENGTHS[0]))

static size_t make_frame(unsigned i, uint8_t *out)
{
	size_t n = LENGTHS[i];
	for (size_t j = 0; j < n; j++)
		out[j] = (uint8_t)((i * 31 + j * 7) & 0xFF);
	static const uint8_t special[] = {0x7E, 0x7D, 0x5E, 0xC0, 0xDB, 0xDC};
	memcpy(out + 1, special, sizeof(special));
	return n;
}

static int frames_match(rnsc_iface *iface, unsigned times)
{
	return tu_frames_match(make_frame, NFRAMES, 600, iface, times);
}

/* ---- pseudo-terminals -------------------------------------------------------------- */

typedef struct pty {
	int m;
	char slave[128];
} pty;

static char tmpdir[64];

static int pty_new(pty *p)
{
	struct termios t;
	memset(&t, 0, sizeof(t));
	cfmakeraw(&t); /* raw from the start: no echo of what the master writes */
	cfsetispeed(&t, B115200);
	cfsetospeed(&t, B115200);
	t.c_cflag |= CLOCAL | CREAD;
	int s;
	if (openpty(&p->m, &s, p->slave, &t, NULL) != 0)
		return -1;
	close(s); /* rnsc or the reference opens it by name */
	fcntl(p->m, F_SETFL, fcntl(p->m, F_GETFL) | O_NONBLOCK);
	fcntl(p->m, F_SETFD, FD_CLOEXEC);
	return 0;
}

static void pty_close(pty *p)
{
	if (p->m >= 0)
		close(p->m);
	p->m = -1;
}

/* Points dir/name at the pty's slave (replacing what was there). */
static const char *pty_link(const pty *p, const char *name)
{
	static char path[2][256];
	static int k;
	k ^= 1;
	snprintf(path[k], sizeof(path[k]), "%s/%s", tmpdir, name);
	unlink(path[k]);
	if (p && symlink(p->slave, path[k]) != 0)
		fprintf(stderr, "symlink %s: %s\n", path[k], strerror(errno));
	return path[k];
}

/* Reads whatever the master has (EIO while no slave is open is just "nothing"). */
static size_t pty_read(pty *p, uint8_t *buf, size_t cap)
{
	ssize_t n = read(p->m, buf, cap);
	return n > 0 ? (size_t)n : 0;
}

static void pty_write(pty *p, const uint8_t *b, size_t n)
{
	uint64_t end = mono_ms() + 5000;
	while (n && mono_ms() < end) {
		ssize_t w = write(p->m, b, n);
		if (w > 0) {
			b += w;
			n -= (size_t)w;
		} else {
			rnsc_loop_run_once(L, 2);
		}
	}
	CU_ASSERT_EQUAL(n, 0);
}

/* What rnsc wrote to the master: collected by the pump. */
static uint8_t got[65536];
static size_t ngot;
static pty *far; /* the pty rnsc talks to, when the test plays the far end */

/* The relay between rnsc's pty and the reference's. */
static pty *relay_a, *relay_b;
static uint8_t pend_ab[65536], pend_ba[65536];
static size_t npend_ab, npend_ba;

static void relay_dir(pty *from, pty *to, uint8_t *pend, size_t *npend)
{
	size_t n = pty_read(from, pend + *npend, 65536 - *npend);
	*npend += n;
	if (*npend) {
		ssize_t w = write(to->m, pend, *npend);
		if (w > 0) {
			memmove(pend, pend + w, *npend - (size_t)w);
			*npend -= (size_t)w;
		}
	}
}

static void pump(void)
{
	if (far && ngot < sizeof(got))
		ngot += pty_read(far, got + ngot, sizeof(got) - ngot);
	if (relay_a && relay_b) {
		relay_dir(relay_a, relay_b, pend_ab, &npend_ab);
		relay_dir(relay_b, relay_a, pend_ba, &npend_ba);
	}
}

static int got_at_least(void *a)
{
	return ngot >= *(size_t *)a;
}

static rnsc_iface *open_serial(const char *type, const char *name, const char *port,
			       const char *extra)
{
	char text[2048];
	rnsc_config_error err;
	snprintf(text, sizeof(text),
		 "[interfaces]\n  [[%s]]\n    type = %s\n    enabled = yes\n    port = %s\n"
		 "    speed = 115200\n%s",
		 name, type, port, extra ? extra : "");
	int rc = open_text(text, &err);
	if (rc != 1)
		fprintf(stderr, "open_serial: %d %s\n", rc, err.msg);
	return rnsc_iface_host_find(H, name);
}

static void test_setup(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	pump_hook = pump;
	far = relay_a = relay_b = NULL;
	ngot = npend_ab = npend_ba = 0;
}

static void test_teardown(void)
{
	tu_teardown();
	far = relay_a = relay_b = NULL;
}

/* Decodes what rnsc wrote (HDLC or KISS data frames) and compares with frames i. */
static int cb_count(void *ud, const uint8_t *f, size_t n)
{
	static uint8_t want[600];
	unsigned *seen = ud;
	for (unsigned i = 0; i < NFRAMES; i++)
		if (make_frame(i, want) == n && memcmp(want, f, n) == 0) {
			seen[i]++;
			return 0;
		}
	seen[NFRAMES]++;
	return 0;
}

static int kcb_count(void *ud, uint8_t type, const uint8_t *f, size_t n)
{
	if (RNSC_KISS_CMD(type) != RNSC_KISS_CMD_DATA)
		return 0;
	return cb_count(ud, f, n);
}

static int wire_has_all(int kiss)
{
	unsigned seen[NFRAMES + 1] = {0};
	uint8_t buf[600];
	if (kiss) {
		rnsc_kiss_decoder d;
		rnsc_kiss_decoder_init(&d, buf, sizeof(buf));
		rnsc_kiss_decoder_feed(&d, got, ngot, kcb_count, seen);
	} else {
		rnsc_hdlc_decoder d;
		rnsc_hdlc_decoder_init(&d, buf, sizeof(buf));
		rnsc_hdlc_decoder_feed(&d, got, ngot, cb_count, seen);
	}
	for (unsigned i = 0; i < NFRAMES; i++)
		if (seen[i] != 1)
			return 0;
	return seen[NFRAMES] == 0;
}

static int encode(int kiss, uint8_t *out, size_t cap, const uint8_t *p, size_t n)
{
	return kiss ? rnsc_kiss_encode(out, cap, p, n) : rnsc_hdlc_encode(out, cap, p, n);
}

/* ---- tests ----------------------------------------------------------------------------- */

static void test_plugin_found(void)
{
	const rnsc_plugin_rec *r = rnsc_plugin_host_find_iface(P, "SerialInterface");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_STRING_EQUAL(r->desc->name, "serial");
	CU_ASSERT_PTR_EQUAL(rnsc_plugin_host_find_iface(P, "KISSInterface"), r);
}

/* The test plays the far end: frames both ways, then line noise between frames. */
static void exchange_and_noise(int kiss)
{
	test_setup();
	pty a;
	CU_ASSERT_FATAL(pty_new(&a) == 0);
	far = &a;
	const char *type = kiss ? "KISSInterface" : "SerialInterface";
	rnsc_iface *i = open_serial(type, "ser", pty_link(&a, "tty0"), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(i);
	CU_ASSERT(!rnsc_iface_online(i)); /* settling, as the reference sleeps */
	uint8_t f[600];
	CU_ASSERT_EQUAL(rnsc_iface_send(i, f, make_frame(0, f)), RNSC_ERR_STATE);
	CU_ASSERT_FATAL(run_until(is_online, i, 10000));
	char d[64];
	rnsc_iface_describe(i, d, sizeof(d));
	CU_ASSERT_STRING_EQUAL(d, kiss ? "KISSInterface[ser]" : "SerialInterface[ser]");
	if (kiss) { /* the TNC configuration comes first: defaults 350, 20, 64, 20 ms */
		static const uint8_t conf[] = {0xC0, 0x01, 35,   0xC0, 0xC0, 0x04, 2,
					       0xC0, 0xC0, 0x02, 64,   0xC0, 0xC0, 0x03,
					       2,    0xC0, 0xC0, 0x0F, 1,    0xC0};
		size_t want = sizeof(conf);
		CU_ASSERT(run_until(got_at_least, &want, 5000));
		CU_ASSERT(ngot == sizeof(conf) && memcmp(got, conf, sizeof(conf)) == 0);
		ngot = 0;
	}

	/* rnsc -> far end */
	uint64_t wire = 0, payload = 0;
	for (unsigned k = 0; k < NFRAMES; k++) {
		size_t n = make_frame(k, f);
		CU_ASSERT_EQUAL(rnsc_iface_send(i, f, n), 0);
		payload += n;
		wire += rnsc_hdlc_encoded_len(f, n);
	}
	uint64_t t_end = mono_ms() + 10000;
	while (!wire_has_all(kiss) && mono_ms() < t_end)
		tick();
	CU_ASSERT(wire_has_all(kiss));

	/* far end -> rnsc, with line noise between the frames */
	uint8_t enc[1300], noise[2000];
	uint32_t x = 2024u + (unsigned)kiss;
	const uint8_t delim = kiss ? 0xC0 : 0x7E;
	unsigned chunks = 0;
	for (unsigned k = 0; k < NFRAMES; k++) {
		size_t n = make_frame(k, f);
		int e = encode(kiss, enc, sizeof(enc), f, n);
		CU_ASSERT_FATAL(e > 0);
		pty_write(&a, enc, (size_t)e);
		/* 1..19 random bytes (a runt at worst), the delimiter kept out so no noise
		 * can merge with a frame; every third gap a long burst (an oversize). */
		x = x * 1103515245u + 12345u;
		size_t nn = k % 3 == 2 ? sizeof(noise) : 1 + (x >> 16) % 19;
		for (size_t j = 0; j < nn; j++) {
			x = x * 1103515245u + 12345u;
			noise[j] = (uint8_t)(x >> 16);
			if (noise[j] == delim)
				noise[j] ^= 0x01;
		}
		pty_write(&a, noise, nn);
		chunks++;
		tick();
	}
	size_t want = NFRAMES;
	CU_ASSERT(run_until(have_rx, &want, 10000));
	run_for(200);
	CU_ASSERT_EQUAL(nrx, NFRAMES);
	CU_ASSERT(frames_match(i, 1));

	/* Half a frame, then silence: forgotten after 100 ms, as the reference does, so the
	 * next frame is not glued to it. */
	int e = encode(kiss, enc, sizeof(enc), f, make_frame(4, f));
	pty_write(&a, enc, (size_t)e / 2);
	run_for(300);
	pty_write(&a, enc, (size_t)e);
	want = NFRAMES + 1;
	CU_ASSERT(run_until(have_rx, &want, 5000));
	CU_ASSERT(nrx == NFRAMES + 1 && rx[NFRAMES].len == LENGTHS[4] &&
		  memcmp(rx[NFRAMES].data, f, LENGTHS[4]) == 0);
	uint64_t rx_payload = payload + LENGTHS[4];

	rnsc_iface_status st;
	rnsc_iface_status_get(i, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_PARTIAL], 1);
	uint64_t drops = st.drops[RNSC_IFACE_DROP_RUNT] + st.drops[RNSC_IFACE_DROP_OVERSIZE] +
			 st.drops[RNSC_IFACE_DROP_GARBAGE];
	fprintf(stderr, "%s noise: runt %llu oversize %llu garbage %llu\n", type,
		(unsigned long long)st.drops[RNSC_IFACE_DROP_RUNT],
		(unsigned long long)st.drops[RNSC_IFACE_DROP_OVERSIZE],
		(unsigned long long)st.drops[RNSC_IFACE_DROP_GARBAGE]);
	CU_ASSERT(drops > 0);
	CU_ASSERT(st.drops[RNSC_IFACE_DROP_OVERSIZE] >= 1);
	CU_ASSERT_EQUAL(st.stats.rx_packets, NFRAMES + 1);
	CU_ASSERT_EQUAL(st.stats.tx_packets, NFRAMES);
	CU_ASSERT_EQUAL(st.stats.rx_bytes, rx_payload);
	/* txb as the reference: framed bytes for Serial, payload bytes for KISS */
	CU_ASSERT_EQUAL(st.stats.tx_bytes, kiss ? payload : wire);
	CU_ASSERT_EQUAL(st.stats.hw_mtu, 564);
	CU_ASSERT_EQUAL(st.stats.bitrate, kiss ? 1200 : 115200);
	test_teardown();
	pty_close(&a);
}

static void test_serial_exchange_noise(void)
{
	exchange_and_noise(0);
}
static void test_kiss_exchange_noise(void)
{
	exchange_and_noise(1);
}

static int reconnected(void *a)
{
	rnsc_iface_status st;
	rnsc_iface_status_get(a, &st);
	return st.stats.online && st.stats.reconnects >= 1;
}

/* Cable pull: the device vanishes; a new one appears under the same name. */
static void cable_pull(int kiss)
{
	test_setup();
	pty a, b;
	CU_ASSERT_FATAL(pty_new(&a) == 0);
	far = &a;
	const char *type = kiss ? "KISSInterface" : "SerialInterface";
	const char *path = pty_link(&a, "tty1");
	rnsc_iface *i = open_serial(type, "pull", path,
				    "    reconnect_wait = 0.2\n"
				    "    preamble = 500\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(i);
	CU_ASSERT_FATAL(run_until(is_online, i, 10000));
	uint8_t f[600], enc[1300];
	/* Half a frame, then the cable goes. */
	int e = encode(kiss, enc, sizeof(enc), f, make_frame(6, f));
	pty_write(&a, enc, 100);
	run_for(50);
	far = NULL;
	pty_close(&a);
	pty_link(NULL, "tty1"); /* dangling: the device node is gone */
	CU_ASSERT_FATAL(run_until(is_offline, i, 5000));
	CU_ASSERT_EQUAL(rnsc_iface_send(i, f, make_frame(0, f)), RNSC_ERR_STATE);
	run_for(700); /* a few failed reopen attempts */
	CU_ASSERT(!rnsc_iface_online(i));

	CU_ASSERT_FATAL(pty_new(&b) == 0);
	pty_link(&b, "tty1");
	far = &b;
	ngot = 0;
	CU_ASSERT_FATAL(run_until(reconnected, i, 10000));
	if (kiss) { /* configured again on the new device */
		size_t want = 20;
		CU_ASSERT(run_until(got_at_least, &want, 5000));
		static const uint8_t txdelay[] = {0xC0, 0x01, 50, 0xC0};
		CU_ASSERT(ngot >= 4 && memcmp(got, txdelay, 4) == 0);
		ngot = 0;
	}
	e = encode(kiss, enc, sizeof(enc), f, make_frame(3, f));
	pty_write(&b, enc, (size_t)e);
	size_t want = 1;
	CU_ASSERT(run_until(have_rx, &want, 5000));
	CU_ASSERT(nrx == 1 && rx[0].len == LENGTHS[3] && memcmp(rx[0].data, f, LENGTHS[3]) == 0);
	CU_ASSERT_EQUAL(rnsc_iface_send(i, f, make_frame(3, f)), 0);
	want = (size_t)e;
	CU_ASSERT(run_until(got_at_least, &want, 5000));
	CU_ASSERT(ngot == (size_t)e && memcmp(got, enc, (size_t)e) == 0);
	rnsc_iface_status st;
	rnsc_iface_status_get(i, &st);
	CU_ASSERT_EQUAL(st.stats.reconnects, 1);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_PARTIAL], 1);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OFFLINE], 1);
	CU_ASSERT(offline_events >= 1);
	test_teardown();
	pty_close(&b);
	pty_link(NULL, "tty1");
}

static void test_serial_cable_pull(void)
{
	cable_pull(0);
}
static void test_kiss_cable_pull(void)
{
	cable_pull(1);
}

static void test_kiss_flow_control(void)
{
	test_setup();
	pty a;
	CU_ASSERT_FATAL(pty_new(&a) == 0);
	far = &a;
	rnsc_iface *i = open_serial("KISSInterface", "fc", pty_link(&a, "tty2"),
				    "    flow_control = yes\n    parity = odd\n"
				    "    reconnect_wait = 0.2\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(i);
	CU_ASSERT_FATAL(run_until(is_online, i, 10000));
	size_t want = 20;
	CU_ASSERT(run_until(got_at_least, &want, 5000));
	ngot = 0;
	uint8_t f[600], enc[3][1300];
	int e[3];
	for (unsigned k = 0; k < 3; k++) {
		size_t n = make_frame(k, f);
		e[k] = rnsc_kiss_encode(enc[k], sizeof(enc[k]), f, n);
		CU_ASSERT_EQUAL(rnsc_iface_send(i, f, n), 0);
	}
	want = (size_t)e[0];
	CU_ASSERT(run_until(got_at_least, &want, 5000));
	run_for(300);
	CU_ASSERT(ngot == (size_t)e[0] && memcmp(got, enc[0], (size_t)e[0]) == 0);
	static const uint8_t ready[] = {0xC0, 0x0F, 0x01, 0xC0};
	pty_write(&a, ready, sizeof(ready)); /* the TNC takes the next one */
	want = (size_t)(e[0] + e[1]);
	CU_ASSERT(run_until(got_at_least, &want, 5000));
	run_for(300);
	CU_ASSERT(ngot == want && memcmp(got + e[0], enc[1], (size_t)e[1]) == 0);
	/* No READY now: after 5 s the interface unlocks by itself, as the reference. */
	uint64_t t0 = mono_ms();
	want += (size_t)e[2];
	CU_ASSERT(run_until(got_at_least, &want, 8000));
	uint64_t waited = mono_ms() - t0;
	CU_ASSERT(waited >= 4000);
	CU_ASSERT(memcmp(got + e[0] + e[1], enc[2], (size_t)e[2]) == 0);
	/* The unlocked frame locked the interface again: these wait for READY, and are lost
	 * (and counted) when the cable goes. */
	for (unsigned k = 0; k < 3; k++)
		CU_ASSERT_EQUAL(rnsc_iface_send(i, f, make_frame(k, f)), 0);
	run_for(100);
	far = NULL;
	pty_close(&a);
	CU_ASSERT(run_until(is_offline, i, 5000));
	rnsc_iface_status st;
	rnsc_iface_status_get(i, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OFFLINE], 3);
	CU_ASSERT_EQUAL(st.stats.tx_packets, 3);
	test_teardown();
	pty_link(NULL, "tty2");
}

static int peer_said(void *a);

static size_t count_seq(const uint8_t *h, size_t n, const uint8_t *needle, size_t m)
{
	size_t c = 0;
	for (size_t k = 0; k + m <= n; k++)
		if (memcmp(h + k, needle, m) == 0)
			c++;
	return c;
}

/* Station identification: id_interval after traffic the callsign goes out padded to 15
 * bytes; a short callsign makes it repeat (the reference's comparison of the escaped
 * frame with the callsign), checked against the reference itself. */
static void test_kiss_id_beacon(void)
{
	test_setup();
	pty a, b;
	CU_ASSERT_FATAL(pty_new(&a) == 0);
	far = &a;
	rnsc_iface *i = open_serial("KISSInterface", "id", pty_link(&a, "tty9"),
				    "    id_interval = 1\n    id_callsign = N0CALL\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(i);
	CU_ASSERT_FATAL(run_until(is_online, i, 10000));
	size_t want = 20;
	CU_ASSERT(run_until(got_at_least, &want, 5000));
	ngot = 0;
	static const uint8_t beacon[] = {0xC0, 0x00, 'N', '0', 'C', 'A', 'L', 'L', 0,
					 0,    0,    0,   0,   0,   0,   0,   0,   0xC0};
	uint8_t f[600];
	run_for(1300); /* no traffic yet: no identification */
	CU_ASSERT_EQUAL(ngot, 0);
	CU_ASSERT_EQUAL(rnsc_iface_send(i, f, make_frame(0, f)), 0);
	uint64_t t0 = mono_ms();
	run_for(2600);
	size_t n_rnsc = count_seq(got, ngot, beacon, sizeof(beacon));
	fprintf(stderr, "rnsc: %zu identifications in 2.6 s\n", n_rnsc);
	CU_ASSERT_EQUAL(n_rnsc, 2); /* at 1 s and 2 s: the short callsign repeats */
	CU_ASSERT(mono_ms() - t0 >= 2600);
	rnsc_iface_status st;
	rnsc_iface_status_get(i, &st);
	CU_ASSERT_EQUAL(st.stats.tx_packets, 1 + n_rnsc);
	test_teardown();
	pty_close(&a);

	/* The reference with the same settings: its frames, then the same repetition. */
	test_setup();
	CU_ASSERT_FATAL(pty_new(&b) == 0);
	far = &b;
	peer pr;
	const char *args[] = {"kiss", pty_link(&b, "tty9"), "id_interval=1", "id_callsign=N0CALL",
			      NULL};
	CU_ASSERT_FATAL(peer_startv(&pr, src_file("tests/live/iface_serial_peer.py"), args) == 0);
	cur_peer = &pr;
	CU_ASSERT(run_until(peer_said, (void *)"ONLINE", 30000));
	ngot = 0;
	peer_say(&pr, "SEND\n");
	run_for(2600);
	size_t n_ref = count_seq(got, ngot, beacon, sizeof(beacon));
	fprintf(stderr, "reference: %zu identifications in 2.6 s\n", n_ref);
	CU_ASSERT_EQUAL(n_ref, n_rnsc);
	peer_stop(&pr);
	test_teardown();
	pty_close(&b);

	/* A callsign of 15 bytes or more is recognised: one identification per burst. */
	test_setup();
	CU_ASSERT_FATAL(pty_new(&a) == 0);
	far = &a;
	i = open_serial("KISSInterface", "id2", pty_link(&a, "tty9"),
			"    id_interval = 1\n    id_callsign = N0CALL-7 RNSC ID\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(i);
	CU_ASSERT_FATAL(run_until(is_online, i, 10000));
	CU_ASSERT(run_until(got_at_least, &want, 5000));
	ngot = 0;
	CU_ASSERT_EQUAL(rnsc_iface_send(i, f, make_frame(0, f)), 0);
	run_for(2600);
	static const uint8_t long_id[] = "\xC0\x00N0CALL-7 RNSC ID\xC0";
	CU_ASSERT_EQUAL(count_seq(got, ngot, long_id, sizeof(long_id) - 1), 1);
	test_teardown();
	pty_close(&a);
	pty_link(NULL, "tty9");
}

/* The far end stops reading: the device buffer fills, the queue grows to its limit and
 * further frames are dropped and counted; once read again, everything queued arrives. */
static void test_serial_backpressure(void)
{
	test_setup();
	pty a;
	CU_ASSERT_FATAL(pty_new(&a) == 0);
	rnsc_iface *i = open_serial("SerialInterface", "slow", pty_link(&a, "tty8"), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(i);
	CU_ASSERT_FATAL(run_until(is_online, i, 10000)); /* far == NULL: nobody reads */
	uint8_t f[600];
	memset(f, 0x55, sizeof(f));
	int refused = 0, sent = 0;
	for (int k = 0; k < 2000 && !refused; k++) {
		int rc = rnsc_iface_send(i, f, 564);
		if (rc == RNSC_ERR_TOOBIG)
			refused = 1;
		else if (rc == 0)
			sent++;
		if (k % 32 == 0)
			rnsc_loop_run_once(L, 1);
	}
	CU_ASSERT(refused);
	rnsc_iface_status st;
	rnsc_iface_status_get(i, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_TXQUEUE], 1);
	CU_ASSERT(st.stats.tx_bytes < (uint64_t)sent * 566);
	far = &a; /* read again: the queue drains through write readiness */
	size_t want = (size_t)sent * 566;
	static uint8_t all[1 << 20];
	size_t nall = 0;
	uint64_t end = mono_ms() + 20000;
	while (nall < want && mono_ms() < end) {
		rnsc_loop_run_once(L, 1);
		nall += pty_read(&a, all + nall, sizeof(all) - nall);
	}
	CU_ASSERT_EQUAL(nall, want);
	rnsc_iface_status_get(i, &st);
	CU_ASSERT_EQUAL(st.stats.tx_bytes, want);
	far = NULL;
	test_teardown();
	pty_close(&a);
	pty_link(NULL, "tty8");
}

static void test_config_errors(void)
{
	test_setup();
	char text[1024];
	const char *missing = pty_link(NULL, "nodev");
	snprintf(text, sizeof(text),
		 "[interfaces]\n [[S]]\n type = SerialInterface\n enabled = yes\n port = %s\n",
		 missing);
	tu_expect_error(text, RNSC_ERR_NOENT, "[[S]] option \"port\"", "No such file");
	tu_expect_error("[interfaces]\n [[S]]\n type = SerialInterface\n enabled = yes\n"
			" port = /dev/null\n",
			RNSC_ERR_IO, "\"port\"", "not a serial port");
	tu_expect_error("[interfaces]\n [[S]]\n type = SerialInterface\n enabled = yes\n",
			RNSC_ERR_CONFIG_VALUE, "[[S]]", "No port specified");
	tu_expect_error("[interfaces]\n [[S]]\n type = SerialInterface\n enabled = yes\n"
			" port = /dev/null\n speed = 12345\n",
			RNSC_ERR_CONFIG_VALUE, "\"speed\"", NULL);
	tu_expect_error("[interfaces]\n [[S]]\n type = SerialInterface\n enabled = yes\n"
			" port = /dev/null\n databits = 9\n",
			RNSC_ERR_CONFIG_VALUE, "\"databits\"", NULL);
	tu_expect_error("[interfaces]\n [[S]]\n type = SerialInterface\n enabled = yes\n"
			" port = /dev/null\n stopbits = 3\n",
			RNSC_ERR_CONFIG_VALUE, "\"stopbits\"", NULL);
	tu_expect_error("[interfaces]\n [[K]]\n type = KISSInterface\n enabled = yes\n"
			" port = /dev/null\n preamble = long\n",
			RNSC_ERR_CONFIG_VALUE, "preamble", NULL);
	tu_expect_error("[interfaces]\n [[K]]\n type = KISSInterface\n enabled = yes\n"
			" port = /dev/null\n reconnect_wait = 0\n",
			RNSC_ERR_CONFIG_VALUE, "\"reconnect_wait\"", NULL);
	tu_expect_error("[interfaces]\n [[K]]\n type = KISSInterface\n enabled = yes\n"
			" port = /dev/null\n id_interval = -5\n",
			RNSC_ERR_CONFIG_VALUE, "\"id_interval\"", NULL);
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 0);

	/* Line settings the reference accepts: parity names, 7E2; bitrate override. */
	pty a;
	CU_ASSERT_FATAL(pty_new(&a) == 0);
	rnsc_iface *i = open_serial("SerialInterface", "7e2", pty_link(&a, "tty3"),
				    "    databits = 7\n    parity = even\n    stopbits = 2\n"
				    "    bitrate = 4800\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(i);
	int fd = open(pty_link(&a, "tty3"), O_RDWR | O_NOCTTY);
	struct termios t;
	CU_ASSERT_FATAL(fd >= 0 && tcgetattr(fd, &t) == 0);
	/* Linux ptys force CS8 and no parity whatever is asked (pty_set_termios), so only
	 * the stop bits and the raw mode can be seen here. */
	CU_ASSERT(t.c_cflag & CSTOPB);
	CU_ASSERT(t.c_cflag & CLOCAL);
	CU_ASSERT(!(t.c_iflag & (ICRNL | IXON)));
	CU_ASSERT(!(t.c_oflag & OPOST));
	CU_ASSERT(!(t.c_lflag & (ICANON | ECHO | ISIG)));
	CU_ASSERT_EQUAL(cfgetospeed(&t), B115200);
	close(fd);
	rnsc_iface_status st;
	rnsc_iface_status_get(i, &st);
	CU_ASSERT_EQUAL(st.stats.bitrate, 4800);
	test_teardown();
	pty_close(&a);
}

/* ---- interop ------------------------------------------------------------------------- */

static int peer_said(void *a)
{
	return peer_has(cur_peer, (const char *)a) || peer_has(cur_peer, "RESULT fail");
}

static void interop(int kiss)
{
	test_setup();
	pty a, b;
	CU_ASSERT_FATAL(pty_new(&a) == 0);
	CU_ASSERT_FATAL(pty_new(&b) == 0);
	relay_a = &a;
	relay_b = &b;
	const char *type = kiss ? "KISSInterface" : "SerialInterface";
	rnsc_iface *i = open_serial(type, "to ref", pty_link(&a, "tty4"), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(i);
	peer pr;
	const char *args[] = {kiss ? "kiss" : "serial", pty_link(&b, "tty5"), NULL};
	CU_ASSERT_FATAL(peer_startv(&pr, src_file("tests/live/iface_serial_peer.py"), args) == 0);
	cur_peer = &pr;
	CU_ASSERT(run_until(is_online, i, 10000));
	CU_ASSERT(run_until(peer_said, (void *)"ONLINE", 30000));
	CU_ASSERT_PTR_NULL(strstr(pr.buf, "RESULT fail"));
	/* The reference's frames first, then ours (it echoes each of ours). */
	peer_say(&pr, "SEND\n");
	size_t want = NFRAMES;
	CU_ASSERT(run_until(have_rx, &want, 20000));
	uint8_t f[600];
	for (unsigned k = 0; k < NFRAMES; k++)
		CU_ASSERT_EQUAL(rnsc_iface_send(i, f, make_frame(k, f)), 0);
	want = 2 * NFRAMES;
	CU_ASSERT(run_until(peer_done, &want, 30000));
	run_for(200);
	CU_ASSERT(frames_match(i, 2));
	CU_ASSERT_PTR_NOT_NULL(strstr(pr.buf, "RESULT ok 9\n"));
	if (!strstr(pr.buf, "RESULT ok"))
		fprintf(stderr, "reference peer said: %s (rnsc got %zu frames)\n", pr.buf, nrx);
	rnsc_iface_status st;
	rnsc_iface_status_get(i, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_RUNT] + st.drops[RNSC_IFACE_DROP_OVERSIZE], 0);
	peer_stop(&pr);
	test_teardown();
	pty_close(&a);
	pty_close(&b);
	pty_link(NULL, "tty4");
	pty_link(NULL, "tty5");
}

static void test_interop_serial(void)
{
	interop(0);
}
static void test_interop_kiss(void)
{
	interop(1);
}

/* The TNC configuration bytes, byte for byte against the reference's. */
static void test_kiss_config_matches_reference(void)
{
	test_setup();
	pty a, b;
	CU_ASSERT_FATAL(pty_new(&a) == 0);
	CU_ASSERT_FATAL(pty_new(&b) == 0);
	far = &a;
	rnsc_iface *i = open_serial("KISSInterface", "conf", pty_link(&a, "tty6"),
				    "    preamble = 1234\n    txtail = 5\n    persistence = 300\n"
				    "    slottime = 99\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(i);
	peer pr;
	const char *args[] = {"kiss",     pty_link(&b, "tty7"), "preamble=1234",
			      "txtail=5", "persistence=300",    "slottime=99",
			      NULL};
	CU_ASSERT_FATAL(peer_startv(&pr, src_file("tests/live/iface_serial_peer.py"), args) == 0);
	cur_peer = &pr;
	size_t want = 20;
	CU_ASSERT(run_until(got_at_least, &want, 10000));
	CU_ASSERT(run_until(peer_said, (void *)"ONLINE", 30000));
	uint8_t ref[64];
	size_t nref = 0;
	uint64_t end = mono_ms() + 5000;
	while (nref < 20 && mono_ms() < end) {
		nref += pty_read(&b, ref + nref, sizeof(ref) - nref);
		tick();
	}
	static const uint8_t expect[] = {0xC0, 0x01, 123,  0xC0, 0xC0, 0x04, 0,
					 0xC0, 0xC0, 0x02, 255,  0xC0, 0xC0, 0x03,
					 9,    0xC0, 0xC0, 0x0F, 1,    0xC0};
	CU_ASSERT_EQUAL(nref, 20);
	CU_ASSERT_EQUAL(ngot, 20);
	CU_ASSERT(nref == 20 && memcmp(ref, expect, 20) == 0);
	CU_ASSERT(ngot == 20 && memcmp(got, ref, 20) == 0);
	peer_stop(&pr);
	test_teardown();
	pty_close(&a);
	pty_close(&b);
	pty_link(NULL, "tty6");
	pty_link(NULL, "tty7");
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/rnsc-serial.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("iface_serial", NULL, NULL);
	if (tu_suite_init("serial.so")) {
		fprintf(stderr, "cannot load the serial plugin\n");
		return 1;
	}
	CU_add_test(s, "plugin serves SerialInterface and KISSInterface", test_plugin_found);
	CU_add_test(s, "serial: frames both ways, line noise counted", test_serial_exchange_noise);
	CU_add_test(s, "kiss: configuration, frames both ways, line noise",
		    test_kiss_exchange_noise);
	CU_add_test(s, "serial: cable pull and reconnect", test_serial_cable_pull);
	CU_add_test(s, "kiss: cable pull, reconnect and reconfigure", test_kiss_cable_pull);
	CU_add_test(s, "kiss: flow control waits for READY, unlocks after 5 s",
		    test_kiss_flow_control);
	CU_add_test(s, "serial: back-pressure, queue limit, drain", test_serial_backpressure);
	CU_add_test(s, "kiss: station identification, as the reference", test_kiss_id_beacon);
	CU_add_test(s, "config errors and line settings", test_config_errors);
	CU_add_test(s, "interop: reference SerialInterface", test_interop_serial);
	CU_add_test(s, "interop: reference KISSInterface", test_interop_kiss);
	CU_add_test(s, "kiss: TNC configuration bytes match the reference",
		    test_kiss_config_matches_reference);
	int rc = rnsc_cu_run();
	tu_suite_fini();
	rmdir(tmpdir);
	return rc;
}
