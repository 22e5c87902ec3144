/* SPDX-License-Identifier: MIT */
/*
 * The "pipe" plugin (PipeInterface) through the runtime's interface host with real
 * child processes: frames echoed by an independent HDLC echo (tests/live/iface_pipe_peer.py
 * echo), respawn after the child exits and backoff when it keeps dying, no zombies, no
 * leaked fds, config errors (a command that cannot start among them), the command
 * splitter cross-checked against Python's shlex.split, and interop with the pinned
 * reference's own PipeInterface class (two PipeInterface children joined by a Unix
 * socket bridge). Every wait is bounded.
 */
#include <sys/stat.h>

#include "iface_test_util.h"
#include "hdlc.h"
#include "shlex.h"

/* Same generator as tests/live/iface_pipe_peer.py. */
static const size_t LENGTHS[] = {20, 21, 64, 100, 500, 563, 564, 1000, 1063, 1064};
#define NFRAMES (sizeof(LENGTHS) / sizeof(LENGTHS[0]))

static size_t make_frame(unsigned i, uint8_t *out)
{
	return tu_make_frame(LENGTHS, i, out);
}

/* Every frame i must appear exactly `times` times among the received, nothing else. */
static int frames_match(rnsc_iface *iface, unsigned times)
{
	return tu_frames_match(make_frame, NFRAMES, 2048, iface, times);
}

static rnsc_iface *open_pipe(const char *name, const char *command, const char *extra)
{
	char text[2048];
	rnsc_config_error err;
	snprintf(text, sizeof(text),
		 "[interfaces]\n  [[%s]]\n    type = PipeInterface\n    enabled = yes\n"
		 "    command = %s\n%s",
		 name, command, extra ? extra : "");
	int rc = open_text(text, &err);
	if (rc != 1)
		fprintf(stderr, "open_pipe: %d %s\n", rc, err.msg);
	return rnsc_iface_host_find(H, name);
}

static const char *echo_command(void)
{
	static char cmd[2200];
	snprintf(cmd, sizeof(cmd), "%s %s echo", venv_python(),
		 src_file("tests/live/iface_pipe_peer.py"));
	return cmd;
}

static int reconnects_at_least(void *a)
{
	rnsc_iface_status st;
	rnsc_iface_status_get(a, &st);
	return rnsc_iface_online(a) && st.stats.reconnects >= 1;
}

static void test_plugin_found(void)
{
	const rnsc_plugin_rec *r = rnsc_plugin_host_find_iface(P, "PipeInterface");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_STRING_EQUAL(r->desc->name, "pipe");
	CU_ASSERT_EQUAL(r->desc->kind, RNSC_PLUGIN_IFACE);
}

static void test_echo(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *p = open_pipe("echo", echo_command(), "    respawn_delay = 0.2\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT(rnsc_iface_online(p));
	char d[128];
	rnsc_iface_describe(p, d, sizeof(d));
	CU_ASSERT_STRING_EQUAL(d, "PipeInterface[echo]");

	static uint8_t f[2048];
	for (unsigned i = 0; i < NFRAMES; i++)
		CU_ASSERT_EQUAL(rnsc_iface_send(p, f, make_frame(i, f)), 0);
	size_t want = NFRAMES;
	CU_ASSERT(run_until(have_rx, &want, 20000));
	CU_ASSERT(frames_match(p, 1));

	rnsc_iface_status st;
	rnsc_iface_status_get(p, &st);
	uint64_t payload = 0, wire = 0;
	for (unsigned i = 0; i < NFRAMES; i++) {
		size_t n = make_frame(i, f);
		payload += n;
		wire += rnsc_hdlc_encoded_len(f, n);
	}
	CU_ASSERT_EQUAL(st.stats.tx_packets, NFRAMES);
	CU_ASSERT_EQUAL(st.stats.rx_packets, NFRAMES);
	CU_ASSERT_EQUAL(st.stats.rx_bytes, payload);
	CU_ASSERT_EQUAL(st.stats.tx_bytes, wire);
	CU_ASSERT_EQUAL(st.stats.hw_mtu, 1064);
	CU_ASSERT_EQUAL(st.stats.bitrate, 1000000);
	CU_ASSERT_EQUAL(st.stats.reconnects, 0);
	CU_ASSERT_EQUAL(st.delivered, NFRAMES);

	/* Beyond HW_MTU comes back as a counted oversize drop; a runt as a runt. */
	memset(f, 0x41, 1065);
	CU_ASSERT_EQUAL(rnsc_iface_send(p, f, 1065), 0);
	CU_ASSERT_EQUAL(rnsc_iface_send(p, f, 19), 0);
	CU_ASSERT_EQUAL(rnsc_iface_send(p, f, 20), 0);
	want = NFRAMES + 1;
	CU_ASSERT(run_until(have_rx, &want, 20000));
	rnsc_iface_status_get(p, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OVERSIZE], 1);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_RUNT], 1);
	CU_ASSERT_EQUAL(nrx, NFRAMES + 1);
	tu_teardown();
	int live, zombies;
	child_census(&live, &zombies);
	CU_ASSERT_EQUAL(live, 0);
	CU_ASSERT_EQUAL(zombies, 0);
}

static int no_children(void *unused)
{
	(void)unused;
	int live, zombies;
	child_census(&live, &zombies);
	return live + zombies == 0;
}

static void test_respawn(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	/* The delay leaves room for the offline checks on a loaded sanitizer run. */
	rnsc_iface *p = open_pipe("echo", echo_command(), "    respawn_delay = 2\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	static uint8_t f[64];
	memcpy(f, "EXIT and respawn, please......", 30);
	CU_ASSERT_EQUAL(rnsc_iface_send(p, f, 30), 0); /* the echo exits with status 3 */
	CU_ASSERT_FATAL(run_until(is_offline, p, 20000));
	/* Reaped while waiting for the respawn. */
	int live, zombies;
	CU_ASSERT(run_until(no_children, NULL, 1500));
	child_census(&live, &zombies);
	CU_ASSERT_EQUAL(zombies, 0);
	CU_ASSERT_EQUAL(live, 0);
	CU_ASSERT_EQUAL(rnsc_iface_send(p, f, make_frame(2, f)), RNSC_ERR_STATE);
	CU_ASSERT_FATAL(run_until(reconnects_at_least, p, 20000));
	rnsc_iface_status st;
	rnsc_iface_status_get(p, &st);
	CU_ASSERT_EQUAL(st.stats.reconnects, 1);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_OFFLINE], 1);
	CU_ASSERT(offline_events >= 1);
	CU_ASSERT(online_events >= 2);
	CU_ASSERT_EQUAL(rnsc_iface_send(p, f, make_frame(2, f)), 0);
	size_t want = 1;
	CU_ASSERT(run_until(have_rx, &want, 20000));
	CU_ASSERT(nrx == 1 && rx[0].len == 64 && memcmp(rx[0].data, f, 64) == 0);
	tu_teardown();
	child_census(&live, &zombies);
	CU_ASSERT_EQUAL(live + zombies, 0);
}

static void test_backoff(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	/* Dies at once, every time: the delays double from 0.1 s (0.1, 0.2, 0.4, 0.8, ...),
	 * so about 5 starts fit in 2 s where a fixed delay would make 20. */
	rnsc_iface *p = open_pipe("dying", "/bin/sh -c 'exit 3'", "    respawn_delay = 0.1\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	run_for(2000);
	rnsc_iface_status st;
	rnsc_iface_status_get(p, &st);
	fprintf(stderr, "backoff: %u respawns in 2 s\n", st.stats.reconnects);
	CU_ASSERT(st.stats.reconnects >= 2);
	CU_ASSERT(st.stats.reconnects <= 5);
	int live, zombies;
	child_census(&live, &zombies);
	CU_ASSERT_EQUAL(zombies, 0);
	tu_teardown();
	child_census(&live, &zombies);
	CU_ASSERT_EQUAL(live + zombies, 0);
}

static void test_cloexec(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	/* An fd the host forgot to mark close-on-exec must not reach the child. */
	int leak = open("/dev/null", O_RDONLY);
	CU_ASSERT_FATAL(leak > 2);
	char out[] = "/tmp/rnsc-pipe-pid.XXXXXX";
	int ofd = mkstemp(out);
	CU_ASSERT_FATAL(ofd >= 0);
	close(ofd);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "/bin/sh -c 'echo $$ > %s; exec cat'", out);
	rnsc_iface *p = open_pipe("fds", cmd, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	/* cat echoes raw bytes: a frame back means cat runs (with the shell's pid). */
	uint8_t f[64];
	CU_ASSERT_EQUAL(rnsc_iface_send(p, f, make_frame(2, f)), 0);
	size_t want = 1;
	CU_ASSERT(run_until(have_rx, &want, 20000));
	FILE *fp = fopen(out, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	int pid = 0;
	CU_ASSERT(fscanf(fp, "%d", &pid) == 1);
	fclose(fp);
	unlink(out);
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	DIR *d = opendir(dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	struct dirent *e;
	int n = 0, bad = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		if (atoi(e->d_name) > 2) {
			bad++;
			fprintf(stderr, "child inherited fd %s\n", e->d_name);
		}
	}
	closedir(d);
	close(leak);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_EQUAL(bad, 0);
	tu_teardown();
}

/* A child that never reads: the pipe fills, the queue grows to its limit, further
 * frames are dropped and counted; closing ends a child that ignores SIGTERM. */
static void test_stuck_child(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *p = open_pipe("stuck", "/bin/sh -c 'trap \"\" TERM; exec sleep 30'",
				  "    bitrate = 9600\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	static uint8_t f[1064];
	memset(f, 0x42, sizeof(f));
	int refused = 0;
	for (int k = 0; k < 1200 && !refused; k++) {
		int rc = rnsc_iface_send(p, f, sizeof(f));
		if (rc == RNSC_ERR_TOOBIG)
			refused = 1;
		else
			CU_ASSERT_EQUAL(rc, 0);
		if (k % 64 == 0)
			rnsc_loop_run_once(L, 1);
	}
	CU_ASSERT(refused);
	rnsc_iface_status st;
	rnsc_iface_status_get(p, &st);
	CU_ASSERT_EQUAL(st.drops[RNSC_IFACE_DROP_TXQUEUE], 1);
	CU_ASSERT_EQUAL(st.stats.bitrate, 9600);
	/* The pipe took what it could hold, the rest waits in the queue. */
	CU_ASSERT(st.stats.tx_bytes > 0);
	CU_ASSERT(st.stats.tx_bytes < (uint64_t)st.stats.tx_packets * sizeof(f));
	CU_ASSERT(rnsc_iface_online(p));
	uint64_t t0 = mono_ms();
	tu_teardown(); /* SIGTERM is ignored: the plugin must insist */
	CU_ASSERT(mono_ms() - t0 < 5000);
	int live, zombies;
	child_census(&live, &zombies);
	CU_ASSERT_EQUAL(live + zombies, 0);
}

/* A child that closes its stdin but keeps running: the broken pipe takes the
 * interface down, the child is killed and reaped, and a new one is started. */
static void test_child_closes_input(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	rnsc_iface *p = open_pipe("noinput", "/bin/sh -c 'exec 0<&- ; exec sleep 30'",
				  "    respawn_delay = 0.2\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	uint8_t f[64];
	run_for(200);
	(void)rnsc_iface_send(p, f, make_frame(2, f)); /* may meet the broken pipe */
	CU_ASSERT_FATAL(run_until(reconnects_at_least, p, 10000));
	int live, zombies;
	child_census(&live, &zombies);
	CU_ASSERT_EQUAL(zombies, 0);
	CU_ASSERT(live <= 1);
	tu_teardown();
	child_census(&live, &zombies);
	CU_ASSERT_EQUAL(live + zombies, 0);
}

/* The pid of this process's only live child (0 if none or several). */
static pid_t only_child(void)
{
	pid_t found = 0;
	int n = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[300], buf[512];
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		FILE *f = isdigit((unsigned char)e->d_name[0]) ? fopen(path, "r") : NULL;
		if (!f)
			continue;
		size_t k = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[k] = 0;
		char *rp = strrchr(buf, ')'), state;
		int ppid;
		if (rp && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == getpid() &&
		    state != 'Z') {
			found = (pid_t)atoi(e->d_name);
			n++;
		}
	}
	if (d)
		closedir(d);
	return n == 1 ? found : 0;
}

/* The command disappears after the first start: each respawn fails with a clear error
 * and is retried (backing off) until the program is back. */
static void test_respawn_command_missing(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	char prog[] = "/tmp/rnsc-pipe-prog.XXXXXX";
	int fd = mkstemp(prog);
	CU_ASSERT_FATAL(fd >= 0);
	static const char body[] = "#!/bin/sh\nexec cat\n";
	CU_ASSERT_FATAL(write(fd, body, sizeof(body) - 1) == (ssize_t)(sizeof(body) - 1));
	close(fd);
	chmod(prog, 0755);
	rnsc_iface *p = open_pipe("vanishing", prog, "    respawn_delay = 0.1\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	uint8_t f[64];
	memcpy(f, "hello through cat.......", 24);
	CU_ASSERT_EQUAL(rnsc_iface_send(p, f, 24), 0);
	size_t want = 1;
	CU_ASSERT(run_until(have_rx, &want, 10000)); /* the script runs: now take it away */
	unlink(prog);
	/* End the running cat from outside; respawning now fails. */
	pid_t cat = only_child();
	CU_ASSERT_FATAL(cat > 0);
	kill(cat, SIGTERM);
	CU_ASSERT_FATAL(run_until(is_offline, p, 10000));
	run_for(800);
	CU_ASSERT(!rnsc_iface_online(p));
	rnsc_iface_status st;
	rnsc_iface_status_get(p, &st);
	CU_ASSERT_EQUAL(st.stats.reconnects, 0);
	fd = open(prog, O_WRONLY | O_CREAT | O_EXCL, 0755);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(write(fd, body, sizeof(body) - 1) == (ssize_t)(sizeof(body) - 1));
	close(fd);
	CU_ASSERT(run_until(reconnects_at_least, p, 10000));
	tu_teardown();
	unlink(prog);
	int live, zombies;
	child_census(&live, &zombies);
	CU_ASSERT_EQUAL(live + zombies, 0);
}

static void test_config_errors(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	tu_expect_error("[interfaces]\n [[P]]\n type = PipeInterface\n enabled = yes\n"
			" command = rnsc-no-such-program --flag\n",
			RNSC_ERR_NOENT, "[[P]] option \"command\"", "rnsc-no-such-program");
	char noexec[] = "/tmp/rnsc-noexec.XXXXXX", text[256];
	int fd = mkstemp(noexec); /* mode 0600: not executable */
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	snprintf(text, sizeof(text),
		 "[interfaces]\n [[P]]\n type = PipeInterface\n enabled = yes\n command = %s\n",
		 noexec);
	tu_expect_error(text, RNSC_ERR_PERM, "[[P]] option \"command\"", "Permission denied");
	unlink(noexec);
	tu_expect_error("[interfaces]\n [[P]]\n type = PipeInterface\n enabled = yes\n",
			RNSC_ERR_CONFIG_VALUE, "[[P]]", "No command specified");
	tu_expect_error("[interfaces]\n [[P]]\n type = PipeInterface\n enabled = yes\n"
			" command = cat 'unclosed\n",
			RNSC_ERR_CONFIG_VALUE, "\"command\"", "No closing quotation");
	tu_expect_error("[interfaces]\n [[P]]\n type = PipeInterface\n enabled = yes\n"
			" command = cat\n respawn_delay = -1\n",
			RNSC_ERR_CONFIG_VALUE, "\"respawn_delay\"", NULL);
	tu_expect_error("[interfaces]\n [[P]]\n type = PipeInterface\n enabled = yes\n"
			" command = cat\n respawn_delay = soon\n",
			RNSC_ERR_CONFIG_VALUE, "respawn_delay", NULL);
	CU_ASSERT_EQUAL(rnsc_iface_host_count(H), 0);
	tu_teardown();
	int live, zombies;
	child_census(&live, &zombies);
	CU_ASSERT_EQUAL(live + zombies, 0);
}

/* rnsc_shlex_split against Python's shlex.split on the same inputs. */
static const char *const SHLEX_CASES[] = {
	"cat",
	"  a  b\tc  ",
	"",
	"   ",
	"a\"b c\"d",
	"'single quoted \\ and \"'",
	"\"double \\\" \\\\ \\x \\$ 'q'\"",
	"back\\ slash\\\\ x\\y",
	"\"\" '' a",
	"\"unterminated",
	"'unterminated",
	"trailing\\",
	"\"esc at end\\",
	"a#b # c",
	"x=\"1 2\" y='3'4",
	"\\'\\\"",
	"utf8 \xc3\xa9t\xc3\xa9 'caf\xc3\xa9 x'",
	"/usr/bin/python3 -c 'import sys; sys.exit(3)'",
};
#define NSHLEX (sizeof(SHLEX_CASES) / sizeof(SHLEX_CASES[0]))

static void test_shlex_matches_python(void)
{
	char script[] = "/tmp/rnsc-shlex.XXXXXX";
	int fd = mkstemp(script);
	CU_ASSERT_FATAL(fd >= 0);
	static const char py[] =
		"import shlex, sys\n"
		"for line in sys.stdin.buffer.read().split(b'\\0')[:-1]:\n"
		"    try:\n"
		"        toks = shlex.split(line.decode('utf-8'))\n"
		"        print(' '.join(['A'] + [t.encode('utf-8').hex() + '.' for t in toks]))\n"
		"    except ValueError as e:\n"
		"        print('E ' + str(e))\n";
	CU_ASSERT_FATAL(write(fd, py, sizeof(py) - 1) == (ssize_t)(sizeof(py) - 1));
	close(fd);
	char input[] = "/tmp/rnsc-shlex-in.XXXXXX";
	fd = mkstemp(input);
	CU_ASSERT_FATAL(fd >= 0);
	for (size_t k = 0; k < NSHLEX; k++)
		CU_ASSERT_FATAL(write(fd, SHLEX_CASES[k], strlen(SHLEX_CASES[k]) + 1) ==
				(ssize_t)strlen(SHLEX_CASES[k]) + 1);
	close(fd);
	char cmd[3000];
	snprintf(cmd, sizeof(cmd), "'%s' '%s' < '%s'", venv_python(), script, input);
	FILE *fp = popen(cmd, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	char line[4096];
	size_t k = 0;
	while (fgets(line, sizeof(line), fp) && k < NSHLEX) {
		line[strcspn(line, "\n")] = 0;
		char buf[512], mine[4096] = "A";
		char *argv[64];
		const char *why = NULL;
		int n = rnsc_shlex_split(SHLEX_CASES[k], buf, strlen(SHLEX_CASES[k]) + 1, argv, 63,
					 &why);
		if (n < 0) {
			CU_ASSERT_EQUAL(n, RNSC_ERR_MALFORMED);
			snprintf(mine, sizeof(mine), "E %s", why ? why : "?");
		} else {
			CU_ASSERT_PTR_NULL(argv[n]);
			for (int a = 0; a < n; a++) {
				strcat(mine, " ");
				for (const char *c = argv[a]; *c; c++)
					sprintf(mine + strlen(mine), "%02x", (unsigned char)*c);
				strcat(mine, ".");
			}
		}
		if (strcmp(mine, line) != 0)
			fprintf(stderr, "shlex case %zu [%s]: python %s, rnsc %s\n", k,
				SHLEX_CASES[k], line, mine);
		CU_ASSERT_STRING_EQUAL(mine, line);
		k++;
	}
	CU_ASSERT_EQUAL(pclose(fp), 0);
	CU_ASSERT_EQUAL(k, NSHLEX); /* python must have answered every case */
	unlink(script);
	unlink(input);

	/* Limits: a buffer too small and too many arguments. */
	char small[4];
	char *argv[4];
	CU_ASSERT_EQUAL(rnsc_shlex_split("abcdef", small, sizeof(small), argv, 3, NULL),
			RNSC_ERR_BUFSIZE);
	char big[64];
	CU_ASSERT_EQUAL(rnsc_shlex_split("a b c d", big, sizeof(big), argv, 3, NULL),
			RNSC_ERR_TOOBIG);
	CU_ASSERT_EQUAL(rnsc_shlex_split(NULL, big, sizeof(big), argv, 3, NULL), RNSC_ERR_INVAL);
}

/* rnsc's PipeInterface <-> the reference's PipeInterface, their children bridged. */
static void test_interop_reference(void)
{
	CU_ASSERT_FATAL(tu_setup() == 0);
	char sock[] = "/tmp/rnsc-pipe-sock.XXXXXX";
	CU_ASSERT_FATAL(mkdtemp(sock) != NULL);
	char path[256], cmd[2400];
	snprintf(path, sizeof(path), "%s/s", sock);
	snprintf(cmd, sizeof(cmd), "%s %s bridge listen %s", venv_python(),
		 src_file("tests/live/iface_pipe_peer.py"), path);
	rnsc_iface *p = open_pipe("to ref", cmd, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	peer pr;
	const char *args[] = {"ref", path, NULL};
	CU_ASSERT_FATAL(peer_startv(&pr, src_file("tests/live/iface_pipe_peer.py"), args) == 0);
	cur_peer = &pr;
	static uint8_t f[2048];
	for (unsigned i = 0; i < NFRAMES; i++)
		CU_ASSERT_EQUAL(rnsc_iface_send(p, f, make_frame(i, f)), 0);
	size_t want = 2 * NFRAMES; /* its own frames and the echoes of ours */
	CU_ASSERT(run_until(peer_done, &want, 40000));
	CU_ASSERT(frames_match(p, 2));
	CU_ASSERT_PTR_NOT_NULL(strstr(pr.buf, "RESULT ok 10\n"));
	if (!strstr(pr.buf, "RESULT ok"))
		fprintf(stderr, "reference peer said: %s\n", pr.buf);
	peer_stop(&pr);
	tu_teardown();
	unlink(path);
	rmdir(sock);
}

int main(void)
{
	signal(SIGPIPE, SIG_DFL); /* the plugin must cope without the host ignoring it */
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("iface_pipe", NULL, NULL);
	if (tu_suite_init("pipe.so")) {
		fprintf(stderr, "cannot load the pipe plugin\n");
		return 1;
	}
	CU_add_test(s, "plugin serves PipeInterface", test_plugin_found);
	CU_add_test(s, "frames echoed through a child process", test_echo);
	CU_add_test(s, "respawn after the child exits", test_respawn);
	CU_add_test(s, "backoff when the child keeps dying", test_backoff);
	CU_add_test(s, "the child inherits no stray fds", test_cloexec);
	CU_add_test(s, "a child that never reads: queue limit, SIGKILL at close", test_stuck_child);
	CU_add_test(s, "a child that closes its input is replaced", test_child_closes_input);
	CU_add_test(s, "respawn when the command has vanished", test_respawn_command_missing);
	CU_add_test(s, "config errors, command not found", test_config_errors);
	CU_add_test(s, "command splitting matches Python's shlex", test_shlex_matches_python);
	CU_add_test(s, "interop: rnsc pipe to reference pipe", test_interop_reference);
	int rc = rnsc_cu_run();
	tu_suite_fini();
	return rc;
}
