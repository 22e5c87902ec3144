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
// Protocols: tcp, udp; tls over asio::ssl (OpenSSL, TLS 1.3 only, no session cache or
// tickets: the settings of rnsc's tls_io.c); websocket and wss over Boost.Beast's
// websocket::stream (auto-fragmentation off so a message is one frame, as rnsc sends it);
// http and https over Beast's HTTP/1.1 (keep-alive POST, the body echoed in a 200). TLS
// certificate and key come from RNSC_ECHO_CERT / RNSC_ECHO_KEY (rnsc bench echo makes a
// throw-away pair with the openssl CLI); the client checks the chain and "localhost".
//
// Usage: asio_echo --one PROTO MODEL THREADS PAYLOAD CLIENTS WINDOW WARMUP MEASURE DRAIN
// Prints one "ECHO impl=asio ..." line (the format of echo_result_print()).
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "echo_msg.h"
}

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
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

// ---- stream protocols: tls (asio::ssl), websocket and wss (Beast), http and https (Beast)

using ssl_socket = asio::ssl::stream<tcp::socket>;

// Same TLS 1.3 settings as rnsc's tls_io.c: no session cache, no tickets.
static void tls_ctx_common(asio::ssl::context &ctx)
{
	SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_3_VERSION);
	SSL_CTX_set_max_proto_version(ctx.native_handle(), TLS1_3_VERSION);
	SSL_CTX_set_session_cache_mode(ctx.native_handle(), SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(ctx.native_handle(), SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
}

static const char *env_or_die(const char *name)
{
	const char *v = std::getenv(name);
	if (!v || !*v)
		throw std::runtime_error(std::string(name) +
					 " is not set (rnsc bench echo sets it to a test certificate)");
	return v;
}

// Server TLS handshake, then `next` (plain streams go straight on).
template <class F> static void srv_handshake(tcp::socket &, F next) { next(); }
template <class F> static void srv_handshake(ssl_socket &s, F next)
{
	s.async_handshake(asio::ssl::stream_base::server, [next](auto ec) {
		if (!ec)
			next();
	});
}

// tls: echo whatever arrives, as the tcp session does.
template <class S> class RawSession : public std::enable_shared_from_this<RawSession<S>> {
public:
	template <class... A> explicit RawSession(A &&...a) : st_(std::forward<A>(a)...) {}
	void start()
	{
		auto self = this->shared_from_this();
		srv_handshake(st_, [self] { self->read(); });
	}

private:
	void read()
	{
		auto self = this->shared_from_this();
		st_.async_read_some(asio::buffer(buf_), [self](auto ec, size_t n) {
			if (!ec)
				self->write(n);
		});
	}
	void write(size_t n)
	{
		auto self = this->shared_from_this();
		asio::async_write(st_, asio::buffer(buf_, n), [self](auto ec, size_t) {
			if (!ec)
				self->read();
		});
	}
	S st_;
	std::array<uint8_t, 65536> buf_;
};

template <class S> class WsSession : public std::enable_shared_from_this<WsSession<S>> {
public:
	template <class... A> explicit WsSession(A &&...a) : ws_(std::forward<A>(a)...)
	{
		ws_.auto_fragment(false);
		ws_.read_message_max(ECHO_MAX_PAYLOAD);
	}
	void start()
	{
		auto self = this->shared_from_this();
		srv_handshake(ws_.next_layer(), [self] {
			self->ws_.async_accept([self](auto ec) {
				if (!ec)
					self->read();
			});
		});
	}

private:
	void read()
	{
		auto self = this->shared_from_this();
		ws_.async_read(buf_, [self](auto ec, size_t) {
			if (ec)
				return;
			self->ws_.binary(self->ws_.got_binary());
			self->ws_.async_write(self->buf_.data(), [self](auto ec2, size_t) {
				if (ec2)
					return;
				self->buf_.consume(self->buf_.size());
				self->read();
			});
		});
	}
	websocket::stream<S> ws_;
	beast::flat_buffer buf_;
};

template <class S> class HttpSession : public std::enable_shared_from_this<HttpSession<S>> {
public:
	template <class... A> explicit HttpSession(A &&...a) : st_(std::forward<A>(a)...) {}
	void start()
	{
		auto self = this->shared_from_this();
		srv_handshake(st_, [self] { self->read(); });
	}

private:
	void read()
	{
		auto self = this->shared_from_this();
		req_ = {};
		http::async_read(st_, buf_, req_, [self](auto ec, size_t) {
			if (ec)
				return;
			auto &res = self->res_;
			res = {};
			res.version(11);
			res.result(http::status::ok);
			res.body() = std::move(self->req_.body());
			res.keep_alive(self->req_.keep_alive());
			res.prepare_payload();
			http::async_write(self->st_, res, [self](auto ec2, size_t) {
				if (!ec2)
					self->read();
			});
		});
	}
	S st_;
	beast::flat_buffer buf_;
	http::request<http::vector_body<uint8_t>> req_;
	http::response<http::vector_body<uint8_t>> res_;
};

struct Server {
	std::vector<std::unique_ptr<asio::io_context>> ctxs;
	std::vector<std::thread> threads;
	std::unique_ptr<tcp::acceptor> acceptor;
	std::vector<std::shared_ptr<UdpEcho>> udps;
	std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
	unsigned next = 0;
	uint16_t port = 0;
	bool sharded = false, pool = false;
	std::string proto;
	std::unique_ptr<asio::ssl::context> sctx;

	void start_session(tcp::socket s)
	{
		if (proto == "tls")
			std::make_shared<RawSession<ssl_socket>>(std::move(s), *sctx)->start();
		else if (proto == "websocket")
			std::make_shared<WsSession<tcp::socket>>(std::move(s))->start();
		else if (proto == "wss")
			std::make_shared<WsSession<ssl_socket>>(std::move(s), *sctx)->start();
		else if (proto == "http")
			std::make_shared<HttpSession<tcp::socket>>(std::move(s))->start();
		else
			std::make_shared<HttpSession<ssl_socket>>(std::move(s), *sctx)->start();
	}

	void accept()
	{
		if (proto != "tcp") {
			/* pool: every connection's handlers on its own strand */
			asio::io_context &t = *ctxs[sharded ? next++ % ctxs.size() : 0];
			asio::any_io_executor ex = pool ? asio::any_io_executor(asio::make_strand(t))
							: asio::any_io_executor(t.get_executor());
			acceptor->async_accept(ex, [this](auto ec, tcp::socket s) {
				if (ec)
					return;
				s.set_option(tcp::no_delay(true));
				start_session(std::move(s));
				accept();
			});
			return;
		}
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
		pool = o.model == "pool";
		proto = o.proto;
		if (proto == "tls" || proto == "wss" || proto == "https") {
			sctx.reset(new asio::ssl::context(asio::ssl::context::tls_server));
			tls_ctx_common(*sctx);
			sctx->use_certificate_chain_file(env_or_die("RNSC_ECHO_CERT"));
			sctx->use_private_key_file(env_or_die("RNSC_ECHO_KEY"), asio::ssl::context::pem);
		}
		unsigned nctx = sharded ? o.threads : 1;
		unsigned nthr = o.model == "single" ? 1 : o.threads;
		for (unsigned i = 0; i < nctx; i++) {
			ctxs.emplace_back(new asio::io_context(sharded || nthr == 1 ? 1 : (int)nthr));
			guards.emplace_back(asio::make_work_guard(*ctxs.back()));
		}
		auto lo = asio::ip::make_address("127.0.0.1");
		if (o.proto != "udp") {
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

// ---- client: stream protocols -------------------------------------------------------
// A driver owns one connection's stream and frames, writes and reads its messages; the
// Client keeps the counting and checking (got()) shared with tcp and udp.

struct Driver {
	virtual ~Driver() = default;
	virtual void frame(uint64_t seq, int phase) = 0; // queue one message
	virtual void flush() = 0;
	virtual void read() = 0; // start the read loop
	virtual void cancel() = 0;
};

static void cli_handshake(ssl_socket &s)
{
	SSL_set_tlsext_host_name(s.native_handle(), "localhost");
	s.set_verify_callback(asio::ssl::host_name_verification("localhost"));
	s.handshake(asio::ssl::stream_base::client);
}

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
	std::unique_ptr<Driver> drv; /* tls, websocket, wss, http, https */
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
			if (c.drv)
				c.drv->cancel();
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
		if (c.drv) {
			c.drv->frame(seq, phase);
			if (!c.in_read)
				c.drv->flush();
			return;
		}
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
		if (c.drv) {
			c.drv->read();
			return;
		}
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

	std::unique_ptr<asio::ssl::context> cctx;
	void run(uint16_t port);
};

// ---- client drivers need the whole Client --------------------------------------------
// ---- client drivers -----------------------------------------------------------------

// tls (raw bytes, fixed-size messages) and http/https (serialised POSTs out, Beast's
// response parser in).
template <class S> struct RawDrv : Driver {
	Client &k;
	Conn &c;
	S st;
	bool http_;
	std::vector<uint8_t> txq, txbusy;
	bool writing = false;
	size_t rx_have = 0;
	beast::flat_buffer fb;
	std::optional<http::response_parser<http::vector_body<uint8_t>>> parser;

	template <class... A>
	RawDrv(Client &k_, Conn &c_, bool h, A &&...a)
		: k(k_), c(c_), st(std::forward<A>(a)...), http_(h)
	{
	}
	void frame(uint64_t seq, int phase) override
	{
		size_t at = txq.size();
		if (http_) {
			char h[128];
			int n = std::snprintf(h, sizeof(h),
					      "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
					      "%zu\r\n\r\n",
					      k.o.payload);
			txq.insert(txq.end(), h, h + n);
			at = txq.size();
		}
		txq.resize(at + k.o.payload);
		echo_fill(txq.data() + at, k.o.payload, c.id, seq, phase);
	}
	void flush() override
	{
		if (writing || txq.empty() || c.dead)
			return;
		txbusy.swap(txq);
		txq.clear();
		writing = true;
		asio::async_write(st, asio::buffer(txbusy), [this](auto ec, size_t) {
			writing = false;
			if (ec) {
				if (!c.dead)
					k.fail(c, ECHO_ERR_DISCONNECT);
				return;
			}
			flush();
		});
	}
	void read() override
	{
		if (c.dead)
			return;
		if (!http_) {
			size_t cap = c.rx.size();
			st.async_read_some(asio::buffer(c.rx.data() + rx_have, cap - rx_have),
					   [this](auto ec, size_t n) {
						   if (ec) {
							   if (!c.dead)
								   k.fail(c, ECHO_ERR_DISCONNECT);
							   return;
						   }
						   chunk(n);
					   });
			return;
		}
		parser.emplace();
		parser->body_limit(ECHO_MAX_PAYLOAD);
		http::async_read(st, fb, *parser, [this](auto ec, size_t) {
			if (ec) {
				if (!c.dead)
					k.fail(c, ECHO_ERR_DISCONNECT);
				return;
			}
			auto &res = parser->get();
			if (res.result() != http::status::ok) {
				k.fail(c, ECHO_ERR_CONTENT);
				return;
			}
			c.in_read = true;
			k.got(c, res.body().data(), res.body().size());
			c.in_read = false;
			flush();
			read();
		});
	}
	void chunk(size_t n)
	{
		rx_have += n;
		size_t at = 0, p = k.o.payload;
		c.in_read = true;
		for (; at + p <= rx_have && !c.dead; at += p)
			k.got(c, c.rx.data() + at, p);
		c.in_read = false;
		if (at && at < rx_have)
			std::memmove(c.rx.data(), c.rx.data() + at, rx_have - at);
		rx_have -= at;
		flush();
		read();
	}
	void cancel() override
	{
		boost::system::error_code ig;
		beast::get_lowest_layer(st).cancel(ig);
	}
};

// websocket and wss: Beast's stream, one binary message per echo message.
template <class S> struct WsDrv : Driver {
	Client &k;
	Conn &c;
	websocket::stream<S> ws;
	std::deque<std::vector<uint8_t>> q;
	std::vector<std::vector<uint8_t>> spare;
	bool writing = false;
	beast::flat_buffer fb;

	template <class... A>
	WsDrv(Client &k_, Conn &c_, A &&...a) : k(k_), c(c_), ws(std::forward<A>(a)...)
	{
		ws.auto_fragment(false);
		ws.binary(true);
		ws.secure_prng(false);
		ws.read_message_max(ECHO_MAX_PAYLOAD);
	}
	void frame(uint64_t seq, int phase) override
	{
		std::vector<uint8_t> m;
		if (!spare.empty()) {
			m = std::move(spare.back());
			spare.pop_back();
		}
		m.resize(k.o.payload);
		echo_fill(m.data(), k.o.payload, c.id, seq, phase);
		q.push_back(std::move(m));
	}
	void flush() override
	{
		if (writing || q.empty() || c.dead)
			return;
		writing = true;
		ws.async_write(asio::buffer(q.front()), [this](auto ec, size_t) {
			writing = false;
			if (ec) {
				if (!c.dead)
					k.fail(c, ECHO_ERR_DISCONNECT);
				return;
			}
			spare.push_back(std::move(q.front()));
			q.pop_front();
			flush();
		});
	}
	void read() override
	{
		if (c.dead)
			return;
		ws.async_read(fb, [this](auto ec, size_t) {
			if (ec) {
				if (!c.dead)
					k.fail(c, ECHO_ERR_DISCONNECT);
				return;
			}
			if (!ws.got_binary()) {
				k.fail(c, ECHO_ERR_CONTENT);
				return;
			}
			auto d = fb.data();
			c.in_read = true;
			k.got(c, static_cast<const uint8_t *>(d.data()), d.size());
			c.in_read = false;
			fb.consume(fb.size());
			flush();
			read();
		});
	}
	void cancel() override
	{
		boost::system::error_code ig;
		beast::get_lowest_layer(ws).cancel(ig);
	}
};

static std::unique_ptr<Driver> make_driver(Client &k, Conn &c, tcp::socket sock,
					   asio::ssl::context *cctx)
{
	const std::string &p = k.o.proto;
	if (p == "tls") {
		auto d = std::make_unique<RawDrv<ssl_socket>>(k, c, false, std::move(sock), *cctx);
		cli_handshake(d->st);
		return d;
	}
	if (p == "http")
		return std::make_unique<RawDrv<tcp::socket>>(k, c, true, std::move(sock));
	if (p == "https") {
		auto d = std::make_unique<RawDrv<ssl_socket>>(k, c, true, std::move(sock), *cctx);
		cli_handshake(d->st);
		return d;
	}
	if (p == "websocket") {
		auto d = std::make_unique<WsDrv<tcp::socket>>(k, c, std::move(sock));
		d->ws.handshake("127.0.0.1", "/echo");
		return d;
	}
	auto d = std::make_unique<WsDrv<ssl_socket>>(k, c, std::move(sock), *cctx);
	cli_handshake(d->ws.next_layer());
	d->ws.handshake("127.0.0.1", "/echo");
	return d;
}


void Client::run(uint16_t port)
{
	auto lo = asio::ip::make_address("127.0.0.1");
	if (o.proto == "tls" || o.proto == "wss" || o.proto == "https") {
		cctx.reset(new asio::ssl::context(asio::ssl::context::tls_client));
		tls_ctx_common(*cctx);
		cctx->load_verify_file(env_or_die("RNSC_ECHO_CERT"));
		cctx->set_verify_mode(asio::ssl::verify_peer);
	}
	for (unsigned i = 0; i < o.clients; i++) {
		auto c = std::make_unique<Conn>();
		c->k = this, c->id = i;
		c->sent_ns.assign(o.window, 0);
		c->rx.resize(std::max<size_t>((size_t)o.window * o.payload, ECHO_MAX_PAYLOAD));
		if (o.proto == "tcp") {
			c->ts.reset(new tcp::socket(ctx));
			c->ts->connect(tcp::endpoint(lo, port));
			c->ts->set_option(tcp::no_delay(true));
		} else if (o.proto != "udp") {
			tcp::socket s(ctx);
			s.connect(tcp::endpoint(lo, port));
			s.set_option(tcp::no_delay(true));
			c->drv = make_driver(*this, *c, std::move(s), cctx.get());
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
	static const char *const protos[] = {"tcp", "udp", "tls", "websocket", "wss", "http", "https"};
	if (std::find(std::begin(protos), std::end(protos), o.proto) == std::end(protos) ||
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
