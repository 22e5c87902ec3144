/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the "websocket" interface plugin's session logic
 * (plugins/iface/websocket.c on the stream engine): the server's opening handshake,
 * frame buffering, fragment reassembly, control frames and the close paths, driven
 * through the plugin's own input function with a mock host and a socketpair standing in
 * for the TCP connection.
 *
 * Input: byte 0 picks the role (bit 0: client, else a server's connection; bit 1: start
 * with the opening handshake, servers only), byte 1 the chunk size (1..256) the rest is
 * fed in. Properties beyond "no crash, no UB, no leak": every delivered message is
 * within [20, HW_MTU + IFAC] bytes, and every counted drop has a known reason.
 */
#include "../../plugins/iface/websocket.c"

#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static size_t max_frame;

static void *m_alloc(void *c, size_t n)
{
	(void)c;
	return malloc(n);
}
static void m_free(void *c, void *p)
{
	(void)c;
	free(p);
}
static int w_add(void *h, int fd, unsigned ev, rnsc_iface_io_fn fn, void *ud,
		 rnsc_iface_watch **out)
{
	(void)h, (void)fd, (void)ev, (void)fn, (void)ud;
	*out = (rnsc_iface_watch *)1;
	return 0;
}
static int w_mod(void *h, rnsc_iface_watch *w, unsigned ev)
{
	(void)h, (void)w, (void)ev;
	return 0;
}
static void w_rm(void *h, rnsc_iface_watch *w)
{
	(void)h, (void)w;
}
static int t_new(void *h, rnsc_iface_timer_fn fn, void *ud, rnsc_iface_timer **out)
{
	(void)h, (void)fn, (void)ud;
	*out = NULL;
	return 0;
}
static int t_start(void *h, rnsc_iface_timer *t, uint64_t d, uint64_t p)
{
	(void)h, (void)t, (void)d, (void)p;
	return 0;
}
static void t_stop(void *h, rnsc_iface_timer *t)
{
	(void)h, (void)t;
}
static uint64_t now(void *h)
{
	(void)h;
	return 0;
}
static void deliver(void *h, const uint8_t *f, size_t len)
{
	(void)h;
	if (len < WS_MIN_MESSAGE || len > max_frame)
		abort();
	volatile uint8_t sink = f[0] ^ f[len - 1]; /* ASan checks the whole span is readable */
	(void)sink;
}
static void set_online(void *h, int on)
{
	(void)h, (void)on;
}
static int spawn(void *h, void *c, const char *n, const rnsc_iface_host_api **api)
{
	(void)h, (void)c, (void)n, (void)api;
	return RNSC_ERR_STATE;
}
static void req_close(void *h)
{
	(void)h;
}
static void hlog(void *h, int level, const char *msg)
{
	(void)h, (void)level, (void)msg;
}
static void drop(void *h, unsigned reason, uint64_t n)
{
	(void)h;
	if (reason >= RNSC_IFACE_DROP_COUNT || n == 0)
		abort();
}

static rnsc_host_api api = {.struct_size = sizeof(rnsc_host_api), .alloc = m_alloc, .free = m_free};
static rnsc_stream_inst inst = {.api = &api};
static const rnsc_iface_host_api hapi = {
	.struct_size = sizeof(rnsc_iface_host_api),
	.watch_add = w_add,
	.watch_modify = w_mod,
	.watch_remove = w_rm,
	.timer_new = t_new,
	.timer_start = t_start,
	.timer_stop = t_stop,
	.timer_del = t_stop,
	.now_ns = now,
	.deliver = deliver,
	.set_online = set_online,
	.spawn = spawn,
	.request_close = req_close,
	.log = hlog,
	.drop = drop,
};

static void drain(int fd)
{
	uint8_t buf[4096];
	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	int client = data[0] & 1, handshake = !client && (data[0] & 2);
	size_t chunk = (size_t)data[1] + 1;
	data += 2;
	size = size - 2;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
		abort();
	rnsc_stream *t = calloc(1, sizeof(*t));
	ws_cfg *cfg = calloc(1, sizeof(*cfg));
	if (!t || !cfg)
		abort();
	strcpy(cfg->path, "/rns");
	t->proto = &ws_proto;
	t->inst = &inst;
	t->host = &hapi;
	t->kind = client ? RNSC_STREAM_CLIENT : RNSC_STREAM_CHILD;
	t->fd = sv[0];
	t->hw_mtu = 1024; /* small, so oversize and reassembly paths are reached quickly */
	t->ifac_size = 16;
	t->max_frame = max_frame = t->hw_mtu + t->ifac_size;
	t->pcfg = cfg;
	snprintf(t->addr, sizeof(t->addr), "127.0.0.1");
	if (rnsc_tlsio_start(&t->io, NULL, NULL, sv[0], !client, NULL) != 0 || ws_new(t) != 0)
		abort();
	t->piped = 1;
	t->w = (rnsc_iface_watch *)1;
	if (!handshake) {
		((ws_state *)t->fs)->phase = PH_OPEN;
		t->online = 1;
	}
	for (size_t off = 0; off < size && t->fd >= 0; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		ws_input(t, data + off, n);
		drain(sv[1]);
	}
	if (t->kind == RNSC_STREAM_CHILD) { /* children borrow pcfg from their server */
		free(cfg);
		t->pcfg = NULL;
	}
	rnsc_stream_close(t);
	close(sv[1]);
	return 0;
}
