// SPDX-License-Identifier: MIT
//
// The echo benchmark's peer: the same server, client, message format and measurement as
// rnsc's bench/echo/echo_run.c, written against Boost.Asio from Debian's libboost-dev.
// The IO models map onto Asio's usual shapes:
//   single   one io_context run by one thread
//   pool     one io_context run by `threads` threads, a strand per connection
//   sharded  `threads` io_contexts with one thread each, connections spread round-robin
//            (TCP) or SO_REUSEPORT sockets (UDP)
// The client is one io_context on the main thread, as in rnsc's implementation.
//
// Usage: asio_echo --one PROTO MODEL THREADS PAYLOAD CLIENTS WINDOW WARMUP MEASURE DRAIN
// Prints one "ECHO impl=asio ..." line (the format of echo_result_print()).
#include <boost/asio.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "echo_msg.h"
}

namespace asio = boost::asio;
using asio::ip::tcp;
using asio::ip::udp;
using reuse_port = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

static uint64_t mono_ns()
{
	return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

struct Opts {
	std::string proto, model;
	unsigned threads = 1;
	size_t payload = 1024;
	unsigned clients = 1, window = 1;
	double warmup = 0.25, measure = 1.0, drain = 2.0;
};

// ---- server ------------------------------------------------------------------------

class TcpSession : public std::enable_shared_from_this<TcpSession> {
public:
	template <class Exec> TcpSession(tcp::socket s, Exec ex) : sock_(std::move(s)), strand_(ex)
	{
	}
	void start() { read(); }

private:
	void read()
	{
		auto self = shared_from_this();
		sock_.async_read_some(asio::buffer(buf_),
				      asio::bind_executor(strand_, [this, self](auto ec, size_t n) {
					      if (ec)
						      return;
					      write(n);
				      }));
	}
	void write(size_t n)
	{
		auto self = shared_from_this();
		asio::async_write(sock_, asio::buffer(buf_, n),
				  asio::bind_executor(strand_, [this, self](auto ec, size_t) {
					  if (!ec)
						  read();
				  }));
	}
	tcp::socket sock_;
	asio::strand<asio::any_io_executor> strand_;
	std::array<uint8_t, 65536> buf_;
};

class UdpEcho : public std::enable_shared_from_this<UdpEcho> {
public:
	explicit UdpEcho(udp::socket s) : sock_(std::move(s)) {}
	void start()
	{
		auto self = shared_from_this();
		sock_.async_receive_from(asio::buffer(buf_), from_, [this, self](auto ec, size_t n) {
			if (ec)
				return;
			sock_.async_send_to(asio::buffer(buf_, n), from_,
					    [this, self](auto, size_t) { start(); });
		});
	}

private:
	udp::socket sock_;
	udp::endpoint from_;
	std::array<uint8_t, 65536> buf_;
};

struct Server {
	std::vector<std::unique_ptr<asio::io_context>> ctxs;
	std::vector<std::thread> threads;
	std::unique_ptr<tcp::acceptor> acceptor;
	std::vector<std::shared_ptr<UdpEcho>> udps;
	std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
	unsigned next = 0;
	uint16_t port = 0;
	bool sharded = false;

	void accept()
	{
		asio::io_context &target = *ctxs[sharded ? next++ % ctxs.size() : 0];
		acceptor->async_accept(target, [this, &target](auto ec, tcp::socket s) {
			if (ec)
				return;
			s.set_option(tcp::no_delay(true));
			std::make_shared<TcpSession>(std::move(s), target.get_executor())->start();
			accept();
		});
	}

	void start(const Opts &o)
	{
		sharded = o.model == "sharded";
		unsigned nctx = sharded ? o.threads : 1;
		unsigned nthr = o.model == "single" ? 1 : o.threads;
		for (unsigned i = 0; i < nctx; i++) {
			ctxs.emplace_back(new asio::io_context(sharded || nthr == 1 ? 1 : (int)nthr));
			guards.emplace_back(asio::make_work_guard(*ctxs.back()));
		}
		auto lo = asio::ip::make_address("127.0.0.1");
		if (o.proto == "tcp") {
			acceptor.reset(new tcp::acceptor(*ctxs[0]));
			tcp::endpoint ep(lo, 0);
			acceptor->open(ep.protocol());
			acceptor->set_option(tcp::acceptor::reuse_address(true));
			acceptor->bind(ep);
			acceptor->listen(512);
			port = acceptor->local_endpoint().port();
			accept();
		} else {
			for (unsigned i = 0; i < nctx; i++) {
				udp::socket s(*ctxs[i]);
				s.open(udp::v4());
				s.set_option(asio::socket_base::reuse_address(true));
				if (nctx > 1)
					s.set_option(reuse_port(true));
				s.set_option(asio::socket_base::receive_buffer_size(4 << 20));
				s.bind(udp::endpoint(lo, port));
				port = s.local_endpoint().port();
				udps.push_back(std::make_shared<UdpEcho>(std::move(s)));
				udps.back()->start();
			}
		}
		if (sharded)
			for (unsigned i = 0; i < nctx; i++)
				threads.emplace_back([this, i] { ctxs[i]->run(); });
		else
			for (unsigned i = 0; i < nthr; i++)
				threads.emplace_back([this] { ctxs[0]->run(); });
	}

	void stop()
	{
		for (auto &c : ctxs)
			c->stop();
		for (auto &t : threads)
			t.join();
	}
};

// ---- client ------------------------------------------------------------------------

struct Result {
	uint64_t echoes = 0;
	uint64_t err[ECHO_ERR_COUNT] = {};
};

struct Client;

struct Conn {
	Client *k;
	uint32_t id;
	std::unique_ptr<tcp::socket> ts;
	std::unique_ptr<udp::socket> us;
	uint64_t send_seq = 0, recv_seq = 0;
	std::vector<uint64_t> sent_ns;
	std::vector<uint8_t> rx, txq, txbusy, udptx;
	bool writing = false, dead = false, in_read = false;
	size_t rx_have = 0;
};

struct Client {
	Opts o;
	asio::io_context ctx{1};
	std::vector<std::unique_ptr<Conn>> conns;
	int phase = ECHO_PHASE_WARMUP;
	uint64_t t0 = 0, t1 = 0, drain_deadline = 0;
	struct rusage ru0 {}, ru1 {};
	Result res;
	echo_reservoir *rsv = nullptr;
	asio::steady_timer timer{ctx};

	void fail(Conn &c, int e)
	{
		res.err[e]++;
		if (!c.dead) {
			c.dead = true;
			boost::system::error_code ig;
			if (c.ts)
				c.ts->cancel(ig);
			if (c.us)
				c.us->cancel(ig);
		}
	}

	void flush(Conn &c)
	{
		if (c.writing || c.txq.empty() || c.dead)
			return;
		c.txbusy.swap(c.txq);
		c.txq.clear();
		c.writing = true;
		asio::async_write(*c.ts, asio::buffer(c.txbusy), [this, &c](auto ec, size_t) {
			c.writing = false;
			if (ec) {
				if (!c.dead)
					fail(c, ECHO_ERR_DISCONNECT);
				return;
			}
			flush(c);
		});
	}

	void send(Conn &c)
	{
		uint64_t seq = c.send_seq++;
		c.sent_ns[seq % o.window] = mono_ns();
		if (c.us) {
			/* slot seq % window stays untouched until that echo is back */
			uint8_t *m = c.udptx.data() + (seq % o.window) * o.payload;
			echo_fill(m, o.payload, c.id, seq, phase);
			c.us->async_send(asio::buffer(m, o.payload), [](auto, size_t) {});
			return;
		}
		size_t at = c.txq.size();
		c.txq.resize(at + o.payload);
		echo_fill(c.txq.data() + at, o.payload, c.id, seq, phase);
		if (!c.in_read)
			flush(c);
	}

	void got(Conn &c, const uint8_t *m, size_t len)
	{
		uint64_t now = mono_ns(), seq;
		if (len != o.payload || echo_check(m, len, c.id, &seq) != 0) {
			fail(c, ECHO_ERR_CONTENT);
			return;
		}
		if (seq != c.recv_seq) {
			fail(c, ECHO_ERR_ORDER);
			return;
		}
		c.recv_seq++;
		if (phase == ECHO_PHASE_MEASURE) {
			res.echoes++;
			echo_reservoir_add(rsv, now - c.sent_ns[seq % o.window]);
		}
		if (phase != ECHO_PHASE_DRAIN)
			send(c);
	}

	void read(Conn &c)
	{
		if (c.dead)
			return;
		if (c.us) {
			c.us->async_receive(asio::buffer(c.rx), [this, &c](auto ec, size_t n) {
				if (ec) {
					if (!c.dead && ec != asio::error::operation_aborted)
						fail(c, ECHO_ERR_DISCONNECT);
					return;
				}
				got(c, c.rx.data(), n);
				read(c);
			});
			return;
		}
		/* as rnsc's client: read whatever arrived (at most window messages are in flight),
		 * answer every complete message, then write once */
		size_t cap = (size_t)o.window * o.payload;
		c.ts->async_read_some(
			asio::buffer(c.rx.data() + c.rx_have, cap - c.rx_have),
			[this, &c](auto ec, size_t n) {
				if (ec) {
					if (!c.dead)
						fail(c, ECHO_ERR_DISCONNECT);
					return;
				}
				c.rx_have += n;
				size_t at = 0;
				c.in_read = true;
				for (; at + o.payload <= c.rx_have && !c.dead; at += o.payload)
					got(c, c.rx.data() + at, o.payload);
				c.in_read = false;
				if (at && at < c.rx_have)
					std::memmove(c.rx.data(), c.rx.data() + at, c.rx_have - at);
				c.rx_have -= at;
				flush(c);
				read(c);
			});
	}

	bool outstanding() const
	{
		for (auto &c : conns)
			if (!c->dead && c->recv_seq != c->send_seq)
				return true;
		return false;
	}

	void tick()
	{
		uint64_t now = mono_ns();
		if (phase == ECHO_PHASE_WARMUP && now >= t0) {
			t0 = now;
			getrusage(RUSAGE_SELF, &ru0);
			phase = ECHO_PHASE_MEASURE;
			t1 = now + (uint64_t)(o.measure * 1e9);
		} else if (phase == ECHO_PHASE_MEASURE && now >= t1) {
			t1 = now;
			getrusage(RUSAGE_SELF, &ru1);
			phase = ECHO_PHASE_DRAIN;
			drain_deadline = now + (uint64_t)(o.drain * 1e9);
		}
		if (o.proto == "udp" && phase != ECHO_PHASE_DRAIN)
			for (auto &c : conns)
				if (!c->dead && c->recv_seq != c->send_seq &&
				    now - c->sent_ns[c->recv_seq % o.window] > 1000000000ull) {
					res.err[ECHO_ERR_LOSS]++;
					c->recv_seq++;
					send(*c);
				}
		if (phase == ECHO_PHASE_DRAIN) {
			if (!outstanding()) {
				ctx.stop();
				return;
			}
			if (now >= drain_deadline) {
				for (auto &c : conns)
					if (!c->dead && c->recv_seq != c->send_seq)
						res.err[ECHO_ERR_DRAIN]++;
				ctx.stop();
				return;
			}
		}
		timer.expires_after(std::chrono::milliseconds(1));
		timer.async_wait([this](auto ec) {
			if (!ec)
				tick();
		});
	}

	void run(uint16_t port)
	{
		auto lo = asio::ip::make_address("127.0.0.1");
		for (unsigned i = 0; i < o.clients; i++) {
			auto c = std::make_unique<Conn>();
			c->k = this, c->id = i;
			c->sent_ns.assign(o.window, 0);
			c->rx.resize(std::max<size_t>((size_t)o.window * o.payload, ECHO_MAX_PAYLOAD));
			if (o.proto == "tcp") {
				c->ts.reset(new tcp::socket(ctx));
				c->ts->connect(tcp::endpoint(lo, port));
				c->ts->set_option(tcp::no_delay(true));
			} else {
				c->us.reset(new udp::socket(ctx));
				c->udptx.resize((size_t)o.window * o.payload);
				c->us->connect(udp::endpoint(lo, port));
			}
			conns.push_back(std::move(c));
		}
		t0 = mono_ns() + (uint64_t)(o.warmup * 1e9);
		for (auto &c : conns) {
			read(*c);
			for (unsigned j = 0; j < o.window; j++)
				send(*c);
		}
		tick();
		ctx.run();
	}
};

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6; }

int main(int argc, char **argv)
{
	if (argc != 11 || std::strcmp(argv[1], "--one") != 0) {
		std::fprintf(stderr,
			     "usage: %s --one PROTO MODEL THREADS PAYLOAD CLIENTS WINDOW WARMUP "
			     "MEASURE DRAIN\n",
			     argv[0]);
		return 2;
	}
	Opts o;
	o.proto = argv[2], o.model = argv[3];
	o.threads = (unsigned)std::atoi(argv[4]);
	o.payload = (size_t)std::atol(argv[5]);
	o.clients = (unsigned)std::atoi(argv[6]);
	o.window = (unsigned)std::atoi(argv[7]);
	o.warmup = std::atof(argv[8]), o.measure = std::atof(argv[9]), o.drain = std::atof(argv[10]);
	if ((o.proto != "tcp" && o.proto != "udp") ||
	    (o.model != "single" && o.model != "pool" && o.model != "sharded") || !o.threads ||
	    o.threads > 256 || o.payload < ECHO_MIN_PAYLOAD || o.payload > ECHO_MAX_PAYLOAD ||
	    !o.clients || !o.window) {
		std::fprintf(stderr, "asio_echo: bad options\n");
		return 2;
	}
	if (o.model == "single")
		o.threads = 1;
	Server srv;
	Client k;
	k.o = o;
	std::unique_ptr<echo_reservoir> rsv(new echo_reservoir);
	echo_reservoir_init(rsv.get(), 0x5eed);
	k.rsv = rsv.get();
	try {
		srv.start(o);
		k.run(srv.port);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "asio_echo: %s\n", e.what());
		srv.stop();
		return 3;
	}
	srv.stop();
	double elapsed = (double)(k.t1 - k.t0) * 1e-9;
	double rt = elapsed > 0 ? (double)k.res.echoes / elapsed : 0;
	double mib = elapsed > 0 ? 2.0 * (double)o.payload * (double)k.res.echoes / elapsed /
					   (1024.0 * 1024.0)
				 : 0;
	double cpu = tv_s(k.ru1.ru_utime) + tv_s(k.ru1.ru_stime) - tv_s(k.ru0.ru_utime) -
		     tv_s(k.ru0.ru_stime);
	std::sort(rsv->us, rsv->us + rsv->n);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	std::printf("ECHO impl=asio proto=%s model=%s threads=%u payload=%zu clients=%u window=%u "
		    "echoes=%llu elapsed_s=%.6f rt_per_s=%.1f mib_per_s=%.3f p50_us=%.1f "
		    "p95_us=%.1f p99_us=%.1f cpu_pct=%.1f rss_kib=%ld",
		    o.proto.c_str(), o.model.c_str(), o.threads, o.payload, o.clients, o.window,
		    (unsigned long long)k.res.echoes, elapsed, rt, mib,
		    echo_percentile(rsv->us, rsv->n, 50), echo_percentile(rsv->us, rsv->n, 95),
		    echo_percentile(rsv->us, rsv->n, 99), elapsed > 0 ? 100.0 * cpu / elapsed : 0,
		    ru.ru_maxrss);
	for (int e = 0; e < ECHO_ERR_COUNT; e++)
		std::printf(" err_%s=%llu", echo_err_names[e], (unsigned long long)k.res.err[e]);
	std::printf("\n");
	return 0;
}
