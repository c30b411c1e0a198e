#include "http/server.h"

#include "base/log.h"

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <mutex>

namespace floe::http {

using asio::ip::tcp;
using namespace asio::experimental::awaitable_operators;
/// Completion token: coroutine results as (error_code, value...) tuples instead of exceptions.
constexpr auto use_tuple = asio::experimental::as_tuple(asio::use_awaitable);

std::optional<std::string> request::param(const std::string& name) const {
    auto it = query.find(name);
    if (it == query.end()) return std::nullopt;
    return it->second;
}

response response::json(int status, std::string body) {
    response r;
    r.status = status;
    r.body = std::move(body);
    return r;
}

response response::error(int status, std::string_view message) {
    return json(status, fmt::format(R"({{"error":{{"status":{},"message":"{}"}}}})", status,
                                    json_escape(message)));
}

std::string_view status_text(int status) {
    switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Unknown";
    }
}

std::string percent_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()
            && std::isxdigit(static_cast<unsigned char>(s[i + 1]))
            && std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
            out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
            i += 2;
        } else if (s[i] == '+') {
            out += ' ';
        } else {
            out += s[i];
        }
    }
    return out;
}

std::multimap<std::string, std::string> parse_query(std::string_view q) {
    std::multimap<std::string, std::string> out;
    while (!q.empty()) {
        auto amp = q.find('&');
        auto part = q.substr(0, amp);
        if (!part.empty()) {
            auto eq = part.find('=');
            out.emplace(percent_decode(part.substr(0, eq)),
                        eq == std::string_view::npos ? "" : percent_decode(part.substr(eq + 1)));
        }
        if (amp == std::string_view::npos) break;
        q.remove_prefix(amp + 1);
    }
    return out;
}

result<request> parse_request_head(std::string_view head) {
    request r;
    auto eol = head.find("\r\n");
    auto line = head.substr(0, eol);
    auto sp1 = line.find(' ');
    auto sp2 = line.rfind(' ');
    if (sp1 == std::string_view::npos || sp2 == sp1)
        return fail(errc::invalid_argument, "malformed request line");
    r.method = std::string(line.substr(0, sp1));
    r.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
    auto version = line.substr(sp2 + 1);
    if (!version.starts_with("HTTP/1.")) return fail(errc::invalid_argument, "not HTTP/1.x");
    if (r.target.empty() || r.target[0] != '/') return fail(errc::invalid_argument, "bad target");
    auto qpos = r.target.find('?');
    r.path = percent_decode(std::string_view(r.target).substr(0, qpos));
    if (qpos != std::string::npos) r.query = parse_query(std::string_view(r.target).substr(qpos + 1));
    if (version == "HTTP/1.0") r.headers["connection"] = "close";
    size_t count = 0;
    while (eol != std::string_view::npos) {
        head.remove_prefix(eol + 2);
        eol = head.find("\r\n");
        auto h = head.substr(0, eol);
        if (h.empty()) break;
        auto colon = h.find(':');
        if (colon == std::string_view::npos || colon == 0) return fail(errc::invalid_argument, "malformed header");
        if (++count > max_request_headers)
            return fail(errc::out_of_range, "more than {} request headers", max_request_headers);
        std::string name(h.substr(0, colon));
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        auto value = h.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
        // A repeated Content-Length or Transfer-Encoding could frame the body two ways.
        if ((name == "content-length" || name == "transfer-encoding") && r.headers.contains(name))
            return fail(errc::invalid_argument, "repeated {} header", name);
        r.headers[name] = std::string(value);
    }
    return r;
}

namespace {

std::string serialize(const response& r, bool keep_alive, bool head_only) {
    if (r.stream) { // the body follows in chunks (serve_connection)
        std::string out = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nTransfer-Encoding: chunked\r\n"
                                      "Cache-Control: no-cache\r\n",
                                      r.status, status_text(r.status), r.content_type);
        for (auto& [k, v] : r.headers) out += fmt::format("{}: {}\r\n", k, v);
        out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
        return out;
    }
    std::string out = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
                                  r.status, status_text(r.status), r.content_type, r.body.size());
    for (auto& [k, v] : r.headers) out += fmt::format("{}: {}\r\n", k, v);
    out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
    if (!head_only) out += r.body;
    return out;
}

} // namespace

struct server::impl {
    asio::io_context io;
    tcp::acceptor acceptor{io};
    std::vector<std::thread> threads;
    std::atomic<bool> stopped{false};
    /// The TLS context new connections take (each keeps its own reference); swapped by
    /// reload_tls under the mutex.
    std::mutex tls_mu;
    std::shared_ptr<asio::ssl::context> tls;
    std::shared_ptr<asio::ssl::context> tls_context() {
        std::lock_guard lk(tls_mu);
        return tls;
    }
};

namespace {
response error_of(const server_options& opts, int status, std::string_view message) {
    return opts.error_body ? opts.error_body(status, message) : response::error(status, message);
}

result<std::shared_ptr<asio::ssl::context>> make_tls_context(const tls_files& f) {
    auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
    SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
    asio::error_code ec;
    ctx->use_certificate_chain_file(f.cert_file, ec);
    if (ec) return fail(errc::invalid_argument, "certificate {}: {}", f.cert_file, ec.message());
    ctx->use_private_key_file(f.key_file, asio::ssl::context::pem, ec);
    if (ec) return fail(errc::invalid_argument, "private key {}: {}", f.key_file, ec.message());
    if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
        return fail(errc::invalid_argument, "private key {} does not match certificate {}", f.key_file, f.cert_file);
    return ctx;
}
} // namespace

void server::guard_prefix(std::string prefix, guard g) { _guards.emplace_back(std::move(prefix), std::move(g)); }

result<void> server::reload_tls() {
    if (!_opts.tls) return {};
    auto ctx = FLOE_TRY(make_tls_context(*_opts.tls));
    std::lock_guard lk(_impl->tls_mu);
    _impl->tls = std::move(ctx);
    return {};
}

server::server(server_options opts) : _impl(std::make_unique<impl>()), _opts(std::move(opts)) {}

server::~server() { stop(); }

void server::route(std::string method, std::string path, handler h) {
    _routes.push_back({std::move(method), std::move(path), false, std::move(h)});
}
void server::route_prefix(std::string method, std::string prefix, handler h) {
    _routes.push_back({std::move(method), std::move(prefix), true, std::move(h)});
}

response server::dispatch(request r) const {
    const guard* g = nullptr;
    size_t g_len = 0;
    for (auto& [prefix, fn] : _guards)
        if (r.path.starts_with(prefix) && (!g || prefix.size() > g_len)) {
            g = &fn;
            g_len = prefix.size();
        }
    if (g)
        if (auto refused = (*g)(r)) return std::move(*refused);
    const route_entry* best = nullptr;
    bool path_known = false;
    std::string_view method = r.method == "HEAD" ? std::string_view("GET") : std::string_view(r.method);
    for (auto& e : _routes) {
        bool match = e.prefix ? r.path.starts_with(e.path) : r.path == e.path;
        if (!match) continue;
        path_known = true;
        if (e.method != method) continue;
        if (!best || (!e.prefix && best->prefix) || (e.prefix && best->prefix && e.path.size() > best->path.size()))
            best = &e;
    }
    if (!best) {
        if (path_known) return error_of(_opts, 405, fmt::format("method {} not allowed on {}", r.method, r.path));
        return error_of(_opts, 404, fmt::format("no such endpoint: {}", r.path));
    }
    try {
        return best->h(r);
    } catch (const std::exception& e) {
        spdlog::error("http handler for {} failed: {}", r.path, e.what());
        return error_of(_opts, 500, fmt::format("internal error: {}", e.what()));
    }
}

namespace {

// Parameters by reference into the caller's frame (the caller awaits this coroutine): g++ 12
// mishandles non-trivial temporaries and by-value parameters of nested coroutine calls.
template<typename Stream>
asio::awaitable<void> serve_connection(Stream& sock, const std::string& client_host, const server& srv,
                                       const server_options& opts) {
    auto ex = co_await asio::this_coro::executor;
    asio::steady_timer timer(ex);
    std::string buf;
    for (;;) {
        // Read the head, bounded in size and time.
        timer.expires_after(opts.idle_timeout);
        auto head_read = co_await (
            asio::async_read_until(sock, asio::dynamic_buffer(buf, opts.max_header_bytes), "\r\n\r\n",
                                   use_tuple)
            || timer.async_wait(use_tuple));
        if (head_read.index() == 1) co_return; // idle timeout
        auto [ec, n] = std::get<0>(head_read);
        if (ec == asio::error::not_found) { // head larger than the limit
            auto out = serialize(error_of(opts, 431, "request head too large"), false, false);
            co_await asio::async_write(sock, asio::buffer(out), use_tuple);
            co_return;
        }
        if (ec) co_return;
        auto parsed = parse_request_head(std::string_view(buf).substr(0, n));
        if (!parsed) {
            int status = parsed.error().code() == errc::out_of_range ? 431 : 400;
            auto out = serialize(error_of(opts, status, parsed.error().message()), false, false);
            co_await asio::async_write(sock, asio::buffer(out), use_tuple);
            co_return;
        }
        request req = std::move(*parsed);
        req.client_host = client_host;
        buf.erase(0, n);
        size_t body_len = 0;
        if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
            auto v = it->second;
            if (v.empty() || v.size() > 12 || !std::all_of(v.begin(), v.end(), ::isdigit)) {
                auto out = serialize(error_of(opts, 400, "bad Content-Length"), false, false);
                co_await asio::async_write(sock, asio::buffer(out), use_tuple);
                co_return;
            }
            body_len = std::stoull(v);
        }
        if (req.headers.contains("transfer-encoding")) {
            auto out = serialize(error_of(opts, 400, "chunked request bodies are not supported"), false, false);
            co_await asio::async_write(sock, asio::buffer(out), use_tuple);
            co_return;
        }
        if (body_len > opts.max_body_bytes) {
            auto out = serialize(error_of(opts, 413, "request body too large"), false, false);
            co_await asio::async_write(sock, asio::buffer(out), use_tuple);
            co_return;
        }
        if (buf.size() < body_len) {
            timer.expires_after(opts.idle_timeout);
            auto body_read = co_await (
                asio::async_read(sock, asio::dynamic_buffer(buf), asio::transfer_exactly(body_len - buf.size()),
                                 use_tuple)
                || timer.async_wait(use_tuple));
            if (body_read.index() == 1 || std::get<0>(std::get<0>(body_read))) co_return;
        }
        req.body = buf.substr(0, body_len);
        buf.erase(0, body_len);

        bool keep_alive = req.headers["connection"] != "close";
        auto resp = srv.dispatch(req); // a copy: `keep_alive` and HEAD are read below
        if (resp.delay.count() > 0) { // answered late (authentication backoff)
            timer.expires_after(resp.delay);
            co_await timer.async_wait(use_tuple);
        }
        auto out = serialize(resp, keep_alive, req.method == "HEAD");
        auto [wec, wn] = co_await asio::async_write(sock, asio::buffer(out), use_tuple);
        if (wec) co_return;
        if (resp.stream && req.method != "HEAD") {
            // Chunks as the stream makes them; a pause when it has nothing yet. A failed write
            // (the client left) ends the connection and drops the stream.
            for (;;) {
                std::optional<std::string> chunk = resp.stream();
                std::string frame;
                if (!chunk) frame = "0\r\n\r\n";
                else if (!chunk->empty()) frame = fmt::format("{:x}\r\n{}\r\n", chunk->size(), *chunk);
                if (!frame.empty()) {
                    auto [cec, cn] = co_await asio::async_write(sock, asio::buffer(frame), use_tuple);
                    if (cec) co_return;
                }
                if (!chunk) break;
                if (chunk->empty()) {
                    timer.expires_after(resp.stream_pause);
                    co_await timer.async_wait(use_tuple);
                }
            }
        }
        if (!keep_alive) co_return;
    }
}

asio::awaitable<void> serve_plain(tcp::socket sock, const server& srv, server_options opts) {
    asio::error_code ec;
    auto ep = sock.remote_endpoint(ec);
    const std::string host = ec ? std::string() : ep.address().to_string();
    co_await serve_connection(sock, host, srv, opts);
}

/// A TLS connection: the handshake bounded by the idle timeout, then the same loop. A failed
/// handshake (plaintext client, untrusted peer) closes this connection only.
asio::awaitable<void> serve_tls(tcp::socket sock, std::shared_ptr<asio::ssl::context> ctx, const server& srv,
                                server_options opts) {
    asio::error_code ec;
    auto ep = sock.remote_endpoint(ec);
    std::string host = ec ? std::string() : ep.address().to_string();
    asio::ssl::stream<tcp::socket> stream(std::move(sock), *ctx);
    asio::steady_timer timer(co_await asio::this_coro::executor);
    timer.expires_after(opts.idle_timeout);
    auto hs = co_await (stream.async_handshake(asio::ssl::stream_base::server, use_tuple) || timer.async_wait(use_tuple));
    if (hs.index() == 1 || std::get<0>(std::get<0>(hs))) {
        spdlog::warn("http TLS handshake with {} failed: {}", host,
                     hs.index() == 1 ? std::string("timed out") : std::get<0>(std::get<0>(hs)).message());
        co_return;
    }
    co_await serve_connection(stream, host, srv, opts);
    // close_notify, bounded: a peer that neither answers nor closes must not hold the socket.
    timer.expires_after(std::chrono::seconds(2));
    co_await (stream.async_shutdown(use_tuple) || timer.async_wait(use_tuple));
}

asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, const server& srv, server_options opts,
                                  std::function<std::shared_ptr<asio::ssl::context>()> tls) {
    for (;;) {
        auto [ec, sock] = co_await acceptor.async_accept(use_tuple);
        if (ec) {
            if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
            spdlog::warn("http accept failed: {}", ec.message());
            continue;
        }
        // Each response goes out in one write: no reason to wait for the client's ACK.
        asio::error_code nec;
        sock.set_option(tcp::no_delay(true), nec);
        if (auto ctx = tls ? tls() : nullptr)
            asio::co_spawn(acceptor.get_executor(), serve_tls(std::move(sock), std::move(ctx), srv, opts),
                           asio::detached);
        else
            asio::co_spawn(acceptor.get_executor(), serve_plain(std::move(sock), srv, opts), asio::detached);
    }
}

} // namespace

result<void> server::start() {
    if (_opts.tls && !_impl->tls_context()) FLOE_TRY_CTX(reload_tls(), "HTTP TLS");
    asio::error_code ec;
    auto addr = asio::ip::make_address(_opts.host, ec);
    if (ec) return fail(errc::invalid_argument, "http listen host '{}' is not an IP address", _opts.host);
    tcp::endpoint ep(addr, _opts.port);
    auto& a = _impl->acceptor;
    a.open(ep.protocol(), ec);
    if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) a.bind(ep, ec);
    if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
        return fail(ec == asio::error::address_in_use ? errc::already_exists : errc::unavailable,
                    "cannot listen for HTTP on {}:{}: {}", _opts.host, _opts.port, ec.message());
    _port = a.local_endpoint().port();
    std::function<std::shared_ptr<asio::ssl::context>()> tls;
    if (_opts.tls) tls = [this] { return _impl->tls_context(); };
    asio::co_spawn(_impl->io, accept_loop(a, *this, _opts, std::move(tls)), asio::detached);
    for (size_t i = 0; i < std::max<size_t>(1, _opts.threads); ++i)
        _impl->threads.emplace_back([this] { _impl->io.run(); });
    return {};
}

void server::stop() {
    if (!_impl || _impl->stopped.exchange(true)) return;
    asio::post(_impl->io, [this] {
        asio::error_code ec;
        _impl->acceptor.close(ec);
    });
    _impl->io.stop();
    for (auto& t : _impl->threads) t.join();
    _impl->threads.clear();
}

} // namespace floe::http
