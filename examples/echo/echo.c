/* SPDX-License-Identifier: MIT */
/*
 * An announce-and-echo service on librnsc, built out of tree against an installed rnsc
 * (pkg-config --cflags --libs rnsc). It connects to a Reticulum node's TCPServerInterface
 * (for example an rnsc daemon's), registers the SINGLE destination rnsc_example.echo with
 * proofs for every packet (so `rnsc probe rnsc_example.echo HASH` or the reference's rnprobe
 * get an answer through that node), announces it, and prints what arrives.
 *
 * The protocol core is sans-I/O: this program owns the socket, the clock and the HDLC
 * framing, hands received frames to rnsc_transport_ingest() and writes out what
 * rnsc_transport_outbox_pop() gives it. Crypto comes from the installed crypto plugins.
 *
 *   rnsc-example-echo HOST PORT [SECONDS]
 */
#include <rnsc/ctx.h>
#include <rnsc/crypto.h>
#include <rnsc/destination.h>
#include <rnsc/hdlc.h>
#include <rnsc/identity.h>
#include <rnsc/packet.h>
#include <rnsc/plugin_host.h>
#include <rnsc/transport.h>

#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define IFACE_ID 1
#define ANNOUNCE_EVERY_MS 10000

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int dial(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		fprintf(stderr, "echo: %s:%s: %s\n", host, port, gai_strerror(rc));
		return -1;
	}
	int fd = -1;
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
		if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		perror("echo: connect");
	return fd;
}

struct app {
	rnsc_transport *t;
	int fd;
	unsigned received;
};

static int on_frame(void *ud, const uint8_t *frame, size_t len)
{
	struct app *a = ud;
	int rc = rnsc_transport_ingest(a->t, IFACE_ID, frame, len, now_ms());
	if (rc != 0)
		fprintf(stderr, "echo: frame dropped: %s\n", rnsc_strerror(rc));
	return 0;
}

static void on_data(void *ud, const uint8_t dest[RNSC_TRUNCATED_HASHLEN], const uint8_t *data,
		    size_t len, const uint8_t packet_hash[RNSC_HASHLEN], uint32_t iface)
{
	struct app *a = ud;
	(void)dest, (void)data, (void)packet_hash, (void)iface;
	a->received++;
	printf("received %zu bytes (packet %u), proved\n", len, a->received);
	fflush(stdout);
}

/* Writes every queued frame, HDLC-framed, to the socket. */
static int flush_outbox(struct app *a)
{
	uint8_t frame[RNSC_MTU], wire[2 * RNSC_MTU + 2];
	uint32_t iface;
	int n;
	while ((n = rnsc_transport_outbox_pop(a->t, &iface, frame, sizeof(frame))) > 0) {
		int w = rnsc_hdlc_encode(wire, sizeof(wire), frame, (size_t)n);
		if (w < 0 || write(a->fd, wire, (size_t)w) != w)
			return -1;
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "Usage: %s HOST PORT [SECONDS]\n", argv[0]);
		return 2;
	}
	int seconds = argc > 3 ? atoi(argv[3]) : 0;
	rnsc_ctx *ctx = NULL;
	rnsc_plugin_host *host = NULL;
	if (rnsc_ctx_new(&ctx) != 0 || rnsc_plugin_host_new(ctx, &host) != 0 ||
	    rnsc_plugin_host_add_default_dirs(host) != 0) {
		fprintf(stderr, "echo: out of memory\n");
		return 1;
	}
	rnsc_plugin_host_scan(host);
	if (!rnsc_crypto_provider(ctx, RNSC_PRIM_ED25519)) {
		fprintf(stderr, "echo: no crypto plugin found (set RNSC_PLUGIN_PATH)\n");
		return 1;
	}
	rnsc_identity id;
	struct app a = {0};
	static const char *const aspects[] = {"echo"};
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	if (rnsc_identity_generate(ctx, &id) != 0 ||
	    rnsc_transport_new(ctx, &a.t, &id, NULL) != 0 ||
	    rnsc_transport_iface_add(a.t, IFACE_ID, RNSC_TRANSPORT_MODE_FULL, 0, 0) != 0 ||
	    rnsc_transport_dest_add(a.t, RNSC_DEST_SINGLE, &id, "rnsc_example", aspects, 1, 1,
				    dest) != 0) {
		fprintf(stderr, "echo: could not set up the destination\n");
		return 1;
	}
	rnsc_transport_callbacks cb = {.ud = &a, .on_data = on_data};
	rnsc_transport_set_callbacks(a.t, &cb);
	if ((a.fd = dial(argv[1], argv[2])) < 0)
		return 1;
	printf("rnsc_example.echo ");
	for (size_t i = 0; i < sizeof(dest); i++)
		printf("%02x", dest[i]);
	printf("\n");
	fflush(stdout);

	static uint8_t buf[RNSC_MTU];
	rnsc_hdlc_decoder dec;
	rnsc_hdlc_decoder_init(&dec, buf, sizeof(buf));
	uint64_t start = now_ms(), next_announce = start;
	int rc = 0;
	while (!seconds || now_ms() - start < (uint64_t)seconds * 1000) {
		uint64_t now = now_ms();
		if (now >= next_announce) {
			rnsc_transport_announce(a.t, dest, NULL, 0, now);
			next_announce = now + ANNOUNCE_EVERY_MS;
		}
		rnsc_transport_tick(a.t, now);
		if (flush_outbox(&a) < 0) {
			perror("echo: write");
			rc = 1;
			break;
		}
		struct pollfd p = {.fd = a.fd, .events = POLLIN};
		if (poll(&p, 1, 250) > 0) {
			uint8_t chunk[4096];
			ssize_t n = read(a.fd, chunk, sizeof(chunk));
			if (n <= 0) {
				fprintf(stderr, "echo: the node closed the connection\n");
				rc = 1;
				break;
			}
			rnsc_hdlc_decoder_feed(&dec, chunk, (size_t)n, on_frame, &a);
			if (flush_outbox(&a) < 0) {
				rc = 1;
				break;
			}
		}
	}
	close(a.fd);
	rnsc_transport_del(a.t);
	rnsc_identity_free(&id);
	rnsc_plugin_host_del(host);
	rnsc_ctx_del(ctx);
	return rc;
}
