#include "kafka/broker.h"
#include "kafka/cluster.h"

#include "base/auth_backoff.h"
#include "base/metrics.h"

#include "kafka/acl.h"
#include "kafka/groups.h"
#include "kafka/handlers.h"
#include "kafka/legacy_versions.h"
#include "kafka/txn_coordinator.h"
#include "kafka/messages.h"
#include "kafka/sasl.h"
#include "kafka/tls_principal.h"
#include "kafka/users.h"
#include "log/log_manager.h"

#include <asio.hpp>
#include <asio/ssl.hpp>
#include "kafka/asio_compat.h"
#include <spdlog/spdlog.h>

#include <csignal>
#include <sys/sendfile.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <functional>
#include <thread>

namespace floe::kafka {

namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;

result<std::pair<std::string, uint16_t>> split_host_port(std::string_view s) {
    auto colon = s.rfind(':');
    if (colon == std::string_view::npos)
        return fail(errc::invalid_argument, "'{}' is not host:port", s);
    std::string host(s.substr(0, colon));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    auto ps = s.substr(colon + 1);
    unsigned port = 0;
    auto [p, ec] = std::from_chars(ps.data(), ps.data() + ps.size(), port);
    if (ec != std::errc() || p != ps.data() + ps.size() || port > 65535)
        return fail(errc::invalid_argument, "bad port in '{}'", s);
    return std::pair{host, uint16_t(port)};
}

/// The TLS stream of SSL and SASL_SSL listeners.
using tls_stream = asio::ssl::stream<tcp::socket>;

/// Reads the 4-byte big-endian size prefix at `p`.
int32_t read_size(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return int32_t(std::byteswap(v));
}

/// KIP-848's ConsumerGroupHeartbeat (served in versions 0-1, consumer_groups.h).
constexpr int16_t k_consumer_group_heartbeat = 68;

/// A client that sends a ConsumerGroupHeartbeat version Floe does not serve (without looking at
/// ApiVersions) gets an answer in that API's own flexible layout, so it can read the
/// UNSUPPORTED_VERSION and the hint instead of failing to parse a bare error code.
void encode_consumer_group_heartbeat_unsupported(byte_buffer& out, request_header h) {
    h.flexible = true; // every version of this API is flexible: response header v1
    size_t start = begin_response(out, h);
    kwriter w(out, true);
    w.i32(0); // throttle_time_ms
    w.i16(int16_t(kerr::unsupported_version));
    w.nstr("Floe serves ConsumerGroupHeartbeat versions 0-1 (KIP-848); "
           "use a client that speaks one of them, or group.protocol=classic");
    w.nstr(std::nullopt); // member_id
    w.i32(-1);            // member_epoch
    w.i32(0);             // heartbeat_interval_ms
    w.i8(-1);             // assignment: null
    w.tags();
    finish_response(out, start);
}

} // namespace

std::string_view to_string(security_protocol p) noexcept {
    switch (p) {
    case security_protocol::plaintext: return "PLAINTEXT";
    case security_protocol::ssl: return "SSL";
    case security_protocol::sasl_plaintext: return "SASL_PLAINTEXT";
    case security_protocol::sasl_ssl: return "SASL_SSL";
    }
    return "?";
}

namespace {
/// Splits "NAME://host:port" entries of a comma-separated list.
result<std::vector<std::pair<security_protocol, std::pair<std::string, uint16_t>>>>
parse_listener_list(std::string_view text) {
    std::vector<std::pair<security_protocol, std::pair<std::string, uint16_t>>> out;
    while (!text.empty()) {
        auto comma = text.find(',');
        auto item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        if (item.empty()) continue;
        auto sep = item.find("://");
        if (sep == std::string_view::npos)
            return fail(errc::invalid_argument, "'{}' is not NAME://host:port", item);
        auto name = item.substr(0, sep);
        security_protocol p;
        if (name == "PLAINTEXT") p = security_protocol::plaintext;
        else if (name == "SSL") p = security_protocol::ssl;
        else if (name == "SASL_PLAINTEXT") p = security_protocol::sasl_plaintext;
        else if (name == "SASL_SSL") p = security_protocol::sasl_ssl;
        else
            return fail(errc::invalid_argument,
                        "unknown listener name '{}' (one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)", name);
        for (auto& [q, _] : out)
            if (q == p) return fail(errc::invalid_argument, "listener {} given twice", name);
        auto hp = FLOE_TRY(split_host_port(item.substr(sep + 3)));
        out.emplace_back(p, std::move(hp));
    }
    if (out.empty()) return fail(errc::invalid_argument, "no listener given");
    return out;
}
} // namespace

result<std::vector<listener_config>> parse_listeners(std::string_view text) {
    std::vector<listener_config> out;
    for (auto& [p, hp] : FLOE_TRY(parse_listener_list(text))) {
        listener_config l;
        l.protocol = p;
        l.host = hp.first;
        l.port = hp.second;
        out.push_back(std::move(l));
    }
    return out;
}

result<void> apply_advertised_listeners(std::vector<listener_config>& listeners, std::string_view text) {
    for (auto& [p, hp] : FLOE_TRY(parse_listener_list(text))) {
        auto it = std::find_if(listeners.begin(), listeners.end(),
                               [p](const listener_config& l) { return l.protocol == p; });
        if (it == listeners.end())
            return fail(errc::invalid_argument, "advertised listener {} is not a listener", to_string(p));
        it->advertised_host = hp.first;
        it->advertised_port = hp.second;
    }
    return {};
}

struct broker::impl {
    broker_options opts;
    std::unique_ptr<log::local_tier> logs;
    std::unique_ptr<offset_store> offsets;
    std::unique_ptr<group_coordinator> groups;
    std::unique_ptr<producer_id_allocator> pids;
    std::unique_ptr<txn_coordinator> txns;
    std::unique_ptr<cluster_view> cluster;
    uint64_t cluster_generation = 0; ///< of `cluster`, as of the last tick (tick strand only)
    std::unique_ptr<request_handler> handler;
    std::unique_ptr<user_store> users;
    std::unique_ptr<acl_store> acls;
    /// Delay of failed SASL answers, growing per client address (slows password guessing).
    auth_backoff failed_auth;
    std::unique_ptr<authorizer> auth;
    asio::io_context io;
    /// Serialises the acceptor and the tick timer with stop()'s closing of them.
    asio::strand<asio::io_context::executor_type> ctl{asio::make_strand(io)};
    /// One bound listener; addresses stable (a deque) for the accept loops.
    struct listener {
        listener_config cfg;
        std::optional<tcp::acceptor> acceptor;
        uint16_t bound_port = 0;
        std::string advertised_host;
        int32_t advertised_port = 0;
    };
    std::deque<listener> listeners;
    /// Set when a listener uses TLS. New connections take the current one; reload_tls swaps in
    /// a new one (SIGHUP) while open connections keep theirs (each SSL holds its SSL_CTX).
    std::shared_ptr<asio::ssl::context> tls;
    std::mutex tls_mu;
    std::shared_ptr<asio::ssl::context> tls_context() {
        std::lock_guard lk(tls_mu);
        return tls;
    }
    std::optional<asio::steady_timer> tick_timer;
    std::vector<std::thread> threads;
    std::mutex conns_mu;
    /// Open connections: how to close each one (posted to its strand) at stop().
    std::map<uint64_t, std::function<void()>> conns;
    uint64_t next_conn = 0;
    std::atomic<bool> stopping{false};
    bool started = false;

    explicit impl(broker_options o) : opts(std::move(o)), io(int(threads_wanted(opts))) {}

    static size_t threads_wanted(const broker_options& o) {
        if (o.io_threads) return o.io_threads;
        return std::max<size_t>(2, std::thread::hardware_concurrency());
    }

    result<void> make_tls_context();
    asio::awaitable<void> accept_loop(listener& l);
    template <class Stream>
    asio::awaitable<void> session(std::shared_ptr<Stream> stream, uint64_t id, const listener& l);
    asio::awaitable<void> tick_loop();
};

namespace {
struct conn_metrics {
    metrics::gauge& open;
    metrics::counter& accepted;
    metrics::counter& tls_failed;
    metrics::counter& sasl_expired;
};
conn_metrics& connection_metrics() {
    auto& r = metrics::registry::instance();
    static conn_metrics m{r.gauge_family("floe_kafka_connections", "Open Kafka client connections.").with({}),
                          r.counter_family("floe_kafka_connections_accepted_total",
                                           "Kafka client connections accepted.")
                              .with({}),
                          r.counter_family("floe_kafka_tls_handshake_failures_total",
                                           "Kafka client connections closed by a failed TLS handshake.")
                              .with({}),
                          r.counter_family("floe_kafka_sasl_sessions_expired_total",
                                           "Kafka connections closed because their SASL session ended without "
                                           "re-authentication (floe.sasl.connections-max-reauth).")
                              .with({})};
    return m;
}
} // namespace

asio::awaitable<void> broker::impl::accept_loop(listener& l) {
    while (!stopping.load()) {
        auto strand = asio::make_strand(io);
        tcp::socket sock(strand);
        auto [ec] = co_await l.acceptor->async_accept(sock, use_tuple);
        if (ec) {
            if (stopping.load() || ec == asio::error::operation_aborted) co_return;
            spdlog::warn("kafka accept: {}", ec.message());
            // Out of descriptors and similar: back off instead of spinning.
            asio::steady_timer t(io, 50ms);
            co_await t.async_wait(use_tuple);
            continue;
        }
        asio::error_code ignored;
        sock.set_option(tcp::no_delay(true), ignored);
        // Registers the connection with a closer for stop() and starts its session.
        auto start = [&]<class Stream>(std::shared_ptr<Stream> s) {
            uint64_t id;
            {
                std::lock_guard lk(conns_mu);
                id = next_conn++;
                conns[id] = [w = std::weak_ptr<Stream>(s)] {
                    if (auto s = w.lock())
                        asio::post(s->get_executor(), [s] {
                            asio::error_code ig;
                            s->lowest_layer().shutdown(tcp::socket::shutdown_both, ig);
                            s->lowest_layer().close(ig);
                        });
                };
                connection_metrics().open.set(double(conns.size()));
                connection_metrics().accepted.inc();
            }
            asio::co_spawn(strand, session(std::move(s), id, l), asio::detached);
        };
        if (uses_tls(l.cfg.protocol))
            start(std::make_shared<tls_stream>(std::move(sock), *tls_context()));
        else
            start(std::make_shared<tcp::socket>(std::move(sock)));
    }
}

asio::awaitable<void> broker::impl::tick_loop() {
    while (!stopping.load()) {
        tick_timer->expires_after(100ms);
        auto [ec] = co_await tick_timer->async_wait(use_tuple);
        if (ec || stopping.load()) co_return;
        groups->tick(std::chrono::steady_clock::now());
        // A broker joined or died: the groups that now hash to another broker move there.
        if (cluster && cluster->generation() != cluster_generation) {
            cluster_generation = cluster->generation();
            const int32_t self = opts.node_id;
            if (auto n = groups->drop_groups(
                    [&](std::string_view g) { return cluster->coordinator(g, false) != self; }))
                spdlog::info("cluster changed: {} group(s) moved to other brokers", n);
        }
        txns->tick(std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count());
    }
}

// One connection: reads frames, answers them strictly in order (Kafka clients pipeline
// requests and match responses by order and correlation id), batches the answers of every
// frame already buffered into one write. A malformed frame, an oversized size prefix or an
// I/O error closes only this connection.
// The same code serves plain and TLS streams; over TLS, Fetch record bytes are copied into
// the answer (sendfile cannot encrypt).
template <class Stream>
asio::awaitable<void> broker::impl::session(std::shared_ptr<Stream> stream, uint64_t id, const listener& l) {
    constexpr bool tls_session = std::is_same_v<Stream, tls_stream>;
    auto& sock = stream->lowest_layer();
    connection_info info;
    info.advertised_host = l.advertised_host;
    info.advertised_port = l.advertised_port;
    info.listener = std::string(to_string(l.cfg.protocol));
    {
        asio::error_code ec;
        auto ep = sock.remote_endpoint(ec);
        if (!ec) info.client_host = "/" + ep.address().to_string();
    }
    auto close_connection = [&] {
        asio::error_code ignored;
        sock.shutdown(tcp::socket::shutdown_both, ignored);
        sock.close(ignored);
        std::lock_guard lk(conns_mu);
        conns.erase(id);
        connection_metrics().open.set(double(conns.size()));
    };
    if constexpr (tls_session) {
        auto [ec] = co_await stream->async_handshake(asio::ssl::stream_base::server, use_tuple);
        if (ec) {
            // A plaintext client on a TLS port, an untrusted or missing client certificate, no
            // common protocol version: only this connection is refused.
            // The certificate check's own reason (expired, untrusted issuer) says more than ec.
            long verify = SSL_get_verify_result(stream->native_handle());
            spdlog::warn("kafka {} listener: TLS handshake with {} failed: {}{}{}", to_string(l.cfg.protocol),
                         info.client_host.empty() ? "?" : info.client_host.substr(1), ec.message(),
                         verify != X509_V_OK ? ": client certificate: " : "",
                         verify != X509_V_OK ? X509_verify_cert_error_string(verify) : "");
            connection_metrics().tls_failed.inc();
            close_connection();
            co_return;
        }
        if (auto p = peer_principal(stream->native_handle())) info.principal = std::move(*p);
    }
    const bool sasl_listener = uses_sasl(l.cfg.protocol);
    sasl_session sasl(sasl_listener ? users.get() : nullptr, opts.sasl_mechanisms, info.client_host,
                      std::chrono::milliseconds(opts.sasl_max_reauth_ms));
    bool auth_failed = false;
    byte_buffer in(64 * 1024);
    size_t begin = 0, end = 0; // unconsumed bytes are in[begin, end)
    byte_buffer out;
    out.reserve(64 * 1024);
    std::vector<file_splice> splices;
    std::vector<file_splice>* splices_ptr = tls_session ? nullptr : &splices;
    const size_t max_frame = opts.max_request_bytes;
    // Writes `out`, with the file ranges in `splices` sent by sendfile(2) at their positions.
    auto flush = [&]() -> asio::awaitable<bool> {
        size_t pos = 0;
        for (auto& sp : splices) {
            if (sp.at > pos) {
                auto [ec, n] = co_await asio::async_write(
                    *stream, asio::buffer(out.data() + pos, sp.at - pos), use_tuple);
                if (ec) co_return false;
                pos = sp.at;
            }
            off_t off = off_t(sp.slice.position);
            size_t left = sp.slice.length;
            while (left > 0) {
                ssize_t n = ::sendfile(sock.native_handle(), sp.slice.fd(), &off, left);
                if (n > 0) {
                    left -= size_t(n);
                } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                    auto [ec] = co_await sock.async_wait(tcp::socket::wait_write, use_tuple);
                    if (ec) co_return false;
                } else {
                    // EOF (file shorter than indexed) or an error: the frame cannot be completed.
                    spdlog::warn("kafka connection {}: sendfile: {}", id,
                                 n == 0 ? "unexpected end of segment" : std::strerror(errno));
                    co_return false;
                }
            }
        }
        splices.clear();
        if (pos < out.size()) {
            auto [ec, n] = co_await asio::async_write(
                *stream, asio::buffer(out.data() + pos, out.size() - pos), use_tuple);
            if (ec) co_return false;
        }
        out.clear();
        if (out.capacity() > (8u << 20)) out.shrink_to_fit();
        co_return true;
    };
    if constexpr (!tls_session) {
        asio::error_code ec;
        sock.native_non_blocking(true, ec); // for sendfile
    }
    for (;;) {
        // Process every complete frame already buffered.
        bool close = false;
        while (end - begin >= 4) {
            int32_t size = read_size(in.data() + begin);
            if (size < 0 || size_t(size) > max_frame) {
                spdlog::warn("kafka connection {}{}: request size {} outside [0, {}]; closing",
                             id, info.client_host, size, max_frame);
                close = true;
                break;
            }
            if (end - begin < 4 + size_t(size)) {
                // Need more bytes: make room for the whole frame.
                if (in.size() - begin < 4 + size_t(size)) {
                    if (begin > 0) {
                        std::memmove(in.data(), in.data() + begin, end - begin);
                        end -= begin;
                        begin = 0;
                    }
                    // Grow with the bytes that actually arrive, not with what the size prefix
                    // claims: a client lying about a huge size cannot make us allocate it.
                    if (in.size() < 4 + size_t(size) && end == in.size())
                        in.resize(std::min<size_t>(4 + size_t(size),
                                                   std::max<size_t>(in.size() * 2, 64 * 1024)));
                }
                break;
            }
            std::span<uint8_t> frame(in.data() + begin + 4, size_t(size));
            if (sasl.expects_raw_token()) {
                // After a SaslHandshake v0 the frame is a bare SASL token.
                if (sasl.handle_raw_token(bytes_view(frame.data(), frame.size()), out) !=
                    sasl_session::outcome::ok) {
                    auth_failed = true;
                    close = true;
                    break;
                }
                if (sasl.authenticated()) {
                    info.principal = sasl.principal();
                    failed_auth.succeeded(info.client_host);
                }
                begin += 4 + size_t(size);
                continue;
            }
            bytes_view body;
            auto hdr = decode_request_header(frame, body);
            if (!hdr) {
                spdlog::debug("kafka connection {}: bad header: {}", id, hdr.error());
                close = true;
                break;
            }
            if (!hdr->supported) {
                // Unknown API or version: answer with UNSUPPORTED_VERSION. ApiVersions gets a
                // full v0 answer listing what is supported, so the client can pick a version.
                spdlog::debug("kafka connection {}: unsupported {} v{}", id,
                              api_name(hdr->api_key), hdr->api_version);
                request_header h = *hdr;
                h.flexible = false;
                legacy_answer legacy = legacy_answer::not_legacy;
                if (h.api_key == k_consumer_group_heartbeat) {
                    encode_consumer_group_heartbeat_unsupported(out, h);
                } else if ((legacy = answer_legacy_request(h, body, out)) != legacy_answer::not_legacy) {
                    spdlog::info("kafka connection {}: {} v{} refused with UNSUPPORTED_VERSION: Floe "
                                 "serves Produce v3+, Fetch v4+ and ListOffsets v1+ (record batches v2); with "
                                 "librdkafka set api.version.request=true and no broker.version.fallback below 0.11",
                                 id, api_name(hdr->api_key), hdr->api_version);
                    if (legacy == legacy_answer::close) {
                        close = true;
                        break;
                    }
                } else {
                    size_t start = begin_response(out, h);
                    kwriter w(out, false);
                    if (h.api_key == int16_t(api_key::api_versions))
                        encode(w, 0, api_versions_response{int16_t(kerr::unsupported_version)});
                    else
                        w.i16(int16_t(kerr::unsupported_version));
                    finish_response(out, start);
                }
            } else if (hdr->api_key == int16_t(api_key::sasl_handshake) ||
                       hdr->api_key == int16_t(api_key::sasl_authenticate)) {
                auto o = sasl.handle(*hdr, body, out);
                if (o == sasl_session::outcome::malformed) {
                    spdlog::debug("kafka connection {}: malformed {}; closing", id, api_name(hdr->api_key));
                    close = true;
                    break;
                }
                if (o == sasl_session::outcome::refused) {
                    // Answer, then close (as Kafka does); a failed authentication is answered
                    // late, which slows down password guessing.
                    auth_failed = hdr->api_key == int16_t(api_key::sasl_authenticate);
                    close = true;
                    begin += 4 + size_t(size);
                    break;
                }
                if (sasl.authenticated()) {
                    info.principal = sasl.principal();
                    failed_auth.succeeded(info.client_host);
                }
            } else if (sasl_listener && sasl.expired(std::chrono::steady_clock::now())) {
                // KIP-368: a session that was not re-authenticated in time ends with its next
                // request; the client reconnects and authenticates again.
                spdlog::info("kafka {} listener: the SASL session of {} from {} ended after {} ms without "
                             "re-authentication (floe.sasl.connections-max-reauth); closing at its {} request",
                             to_string(l.cfg.protocol), sasl.principal(),
                             info.client_host.empty() ? "?" : info.client_host.substr(1),
                             sasl.max_reauth().count(), api_name(hdr->api_key));
                connection_metrics().sasl_expired.inc();
                close = true;
                break;
            } else if (sasl_listener && !sasl.authenticated() && hdr->api_key != int16_t(api_key::api_versions)) {
                spdlog::warn("kafka {} listener: {} from {} before SASL authentication; closing",
                             to_string(l.cfg.protocol), api_name(hdr->api_key),
                             info.client_host.empty() ? "?" : info.client_host.substr(1));
                close = true;
                break;
            } else {
                if (request_handler::may_wait(*hdr, body) && !out.empty())
                    if (!co_await flush()) {
                        close = true;
                        break;
                    }
                size_t body_off = size_t(body.data() - in.data());
                std::span<uint8_t> mbody(in.data() + body_off, body.size());
                bool ok = co_await handler->handle(info, *hdr, mbody, out, splices_ptr);
                if (!ok) {
                    spdlog::debug("kafka connection {}: malformed {} v{}; closing", id,
                                  api_name(hdr->api_key), hdr->api_version);
                    close = true;
                    break;
                }
            }
            begin += 4 + size_t(size);
        }
        if (auth_failed) {
            asio::steady_timer t(stream->get_executor(), failed_auth.failed(info.client_host));
            co_await t.async_wait(use_tuple);
        }
        if (!co_await flush() || close || stopping.load()) break;
        if (begin == end) begin = end = 0;
        if (end == in.size()) {
            if (begin > 0) {
                std::memmove(in.data(), in.data() + begin, end - begin);
                end -= begin;
                begin = 0;
            } else {
                in.resize(std::min(in.size() * 2, max_frame + 4));
            }
        }
        auto [ec, n] = co_await stream->async_read_some(asio::buffer(in.data() + end, in.size() - end),
                                                        use_tuple);
        if (ec) break;
        end += n;
        // Shrink the buffer after a big request so idle connections stay small.
        if (begin == end && in.size() > (1u << 20)) {
            in.resize(64 * 1024);
            in.shrink_to_fit();
            begin = end = 0;
        }
    }
    close_connection();
}

broker::broker(broker_options opts) : _impl(std::make_unique<impl>(std::move(opts))) {}

broker::~broker() { stop(); }

uint16_t broker::port() const noexcept { return port(0); }

uint16_t broker::port(size_t i) const noexcept {
    return i < _impl->listeners.size() ? _impl->listeners[i].bound_port : 0;
}

log::local_tier* broker::logs() noexcept { return _impl->logs.get(); }
authorizer* broker::acl_authorizer() noexcept { return _impl->auth.get(); }
group_coordinator* broker::groups() noexcept { return _impl->groups.get(); }
int32_t broker::node_id() const noexcept { return _impl->opts.node_id; }

std::vector<broker_endpoint> broker::cluster_brokers() const {
    if (_impl->listeners.empty()) return {};
    auto& first = _impl->listeners.front();
    broker_endpoint self{_impl->opts.node_id, first.advertised_host, first.advertised_port};
    if (!_impl->cluster) return {self};
    return _impl->cluster->brokers(to_string(first.cfg.protocol), self);
}

result<void> broker::impl::make_tls_context() {
    auto& t = opts.tls;
    if (t.cert_file.empty()) return fail(errc::invalid_argument, "floe.tls.cert-file: a TLS listener needs a certificate");
    if (t.key_file.empty()) return fail(errc::invalid_argument, "floe.tls.key-file: a TLS listener needs a private key");
    if (t.auth != tls_options::client_auth::none && t.ca_file.empty())
        return fail(errc::invalid_argument, "floe.tls.ca-file: client authentication needs the CAs to trust");
    auto fresh = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
    auto& ctx = *fresh;
    asio::error_code ec;
    ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                        asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                        asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use,
                    ec);
    SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
    auto ssl_error = [](const asio::error_code& e) {
        if (e.category() == asio::error::get_ssl_category())
            if (const char* r = ERR_reason_error_string(static_cast<unsigned long>(e.value()))) return std::string(r);
        return e.message();
    };
    ctx.use_certificate_chain_file(t.cert_file, ec);
    if (ec) return fail(errc::invalid_argument, "floe.tls.cert-file {}: {}", t.cert_file, ssl_error(ec));
    ctx.use_private_key_file(t.key_file, asio::ssl::context::pem, ec);
    if (ec) return fail(errc::invalid_argument, "floe.tls.key-file {}: {}", t.key_file, ssl_error(ec));
    if (SSL_CTX_check_private_key(ctx.native_handle()) != 1)
        return fail(errc::invalid_argument, "floe.tls.key-file {} does not match floe.tls.cert-file {}", t.key_file,
                    t.cert_file);
    if (!t.ca_file.empty()) {
        ctx.load_verify_file(t.ca_file, ec);
        if (ec) return fail(errc::invalid_argument, "floe.tls.ca-file {}: {}", t.ca_file, ssl_error(ec));
    }
    switch (t.auth) {
    case tls_options::client_auth::none: ctx.set_verify_mode(asio::ssl::verify_none, ec); break;
    case tls_options::client_auth::requested: ctx.set_verify_mode(asio::ssl::verify_peer, ec); break;
    case tls_options::client_auth::required:
        ctx.set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert, ec);
        break;
    }
    std::lock_guard lk(tls_mu);
    tls = std::move(fresh);
    return {};
}

result<void> broker::reload_tls() {
    auto& m = *_impl;
    if (!m.tls_context()) return {};
    return m.make_tls_context();
}

result<void> broker::start() {
    auto& m = *_impl;
    if (m.started) return fail(errc::invalid_argument, "broker already started");
    // sendfile(2) has no MSG_NOSIGNAL: a consumer closing mid-answer must not kill the process.
    ::signal(SIGPIPE, SIG_IGN);
    std::vector<listener_config> configs = m.opts.listeners;
    if (configs.empty()) {
        // The single floe.kafka.listen: one PLAINTEXT listener.
        listener_config l;
        std::tie(l.host, l.port) = FLOE_TRY_CTX(split_host_port(m.opts.listen), "floe.kafka.listen");
        if (!m.opts.advertised.empty()) {
            auto [h, p] = FLOE_TRY_CTX(split_host_port(m.opts.advertised), "floe.kafka.advertised-listener");
            l.advertised_host = h;
            l.advertised_port = p;
        }
        configs.push_back(std::move(l));
    }
    if (m.opts.sasl_mechanisms.empty()) return fail(errc::invalid_argument, "floe.sasl.mechanisms: none given");
    m.users = std::make_unique<user_store>(m.opts.data_dir / "security");
    m.acls = std::make_unique<acl_store>(m.opts.data_dir / "security");
    // With a listener that authenticates, no matching ACL means no access (see authorizer).
    const bool strict = std::ranges::any_of(configs, [](auto& c) { return c.protocol != security_protocol::plaintext; });
    m.auth = std::make_unique<authorizer>(*m.acls, m.opts.super_users, strict);
    if (auto r = m.acls->list(); !r) return fail(std::move(r).error().with_context("floe.data-dir's ACLs"));
    if (std::ranges::any_of(configs, [](auto& c) { return uses_tls(c.protocol); })) FLOE_TRY(m.make_tls_context());

    if (m.opts.open_local_tier) {
        m.logs = FLOE_TRY_CTX(m.opts.open_local_tier(), "opening the local tier");
    } else {
        log::log_manager_options lo;
        lo.data_dir = m.opts.data_dir;
        for (auto& [k, v] : m.opts.topic_defaults) lo.topic_defaults[k] = v;
        lo.default_partitions = m.opts.default_partitions;
        lo.capabilities = m.opts.topic_capabilities;
        lo.auto_create_topics = m.opts.auto_create_topics;
        lo.flush_interval_ms = m.opts.flush_interval_ms;
        lo.cleaner_interval_ms = m.opts.cleaner_interval_ms;
        lo.cleaner_io_max_bytes_per_second = m.opts.cleaner_io_max_bytes_per_second;
        m.logs = FLOE_TRY_CTX(log::log_manager::open(lo), "opening the local log");
    }
    if (m.opts.open_offset_store)
        m.offsets = FLOE_TRY_CTX(m.opts.open_offset_store(), "group offsets");
    else
        m.offsets = FLOE_TRY_CTX(offset_store::open(m.opts.data_dir / "kafka"), "group offsets");
    group_coordinator::options go;
    go.initial_rebalance_delay = std::chrono::milliseconds(m.opts.group_initial_rebalance_delay_ms);
    go.consumer.session_timeout = std::chrono::milliseconds(m.opts.group_consumer_session_timeout_ms);
    go.consumer.heartbeat_interval = std::chrono::milliseconds(m.opts.group_consumer_heartbeat_interval_ms);
    m.groups = std::make_unique<group_coordinator>(*m.offsets, go);
    if (m.opts.open_producer_ids)
        m.pids = FLOE_TRY_CTX(m.opts.open_producer_ids(), "producer ids");
    else
        m.pids = FLOE_TRY_CTX(producer_id_allocator::open(m.opts.data_dir / "kafka"), "producer ids");
    m.txns = FLOE_TRY_CTX(txn_coordinator::open({.dir = m.opts.data_dir / "kafka"}, *m.logs, *m.offsets, *m.pids),
                          "transaction coordinator");

    for (auto& c : configs) {
        auto& l = m.listeners.emplace_back();
        l.cfg = c;
        asio::error_code ec;
        auto addr = asio::ip::make_address(c.host, ec);
        if (ec) {
            tcp::resolver res(m.io);
            auto r = res.resolve(c.host, std::to_string(c.port), ec);
            if (ec || r.empty()) {
                m.listeners.clear();
                (void)m.logs->close();
                return fail(errc::invalid_argument, "cannot resolve listen host '{}': {}", c.host, ec.message());
            }
            addr = r.begin()->endpoint().address();
        }
        tcp::endpoint ep(addr, c.port);
        l.acceptor.emplace(m.ctl);
        l.acceptor->open(ep.protocol(), ec);
        if (!ec) l.acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
        if (!ec) l.acceptor->bind(ep, ec);
        if (!ec) l.acceptor->listen(asio::socket_base::max_listen_connections, ec);
        if (ec) {
            m.listeners.clear();
            (void)m.logs->close();
            // already_exists: the address is taken (often another floe), which start-up reports
            // naming the listener setting.
            return fail(ec == asio::error::address_in_use ? errc::already_exists : errc::unavailable,
                        "kafka {} listener {}:{}: {}", to_string(c.protocol), c.host, c.port, ec.message());
        }
        l.bound_port = l.acceptor->local_endpoint().port();
        l.advertised_host = c.advertised_host.empty() ? c.host : c.advertised_host;
        if (l.advertised_host == "0.0.0.0" || l.advertised_host == "::" || l.advertised_host.empty())
            l.advertised_host = "127.0.0.1";
        l.advertised_port = c.advertised_port == 0 ? l.bound_port : c.advertised_port;
    }
    if (m.opts.join_cluster) {
        std::vector<advertised_listener> ads;
        for (auto& l : m.listeners)
            ads.push_back({std::string(to_string(l.cfg.protocol)), l.advertised_host, l.advertised_port});
        auto joined = m.opts.join_cluster(ads);
        if (!joined) {
            m.listeners.clear();
            (void)m.logs->close();
            return fail(std::move(joined).error());
        }
        m.cluster = std::move(*joined);
        m.cluster_generation = m.cluster->generation();
        if (auto id = m.cluster->self_id()) m.opts.node_id = *id; // chosen when joining
    }
    auto& first = m.listeners.front();
    m.handler = std::make_unique<request_handler>(m.opts, first.advertised_host, first.advertised_port, *m.logs,
                                                  *m.groups, *m.pids);
    m.handler->set_user_store(m.users.get());
    m.handler->set_authorizer(m.auth.get());
    m.handler->set_txn_coordinator(m.txns.get());
    m.handler->set_cluster(m.cluster.get());

    m.tick_timer.emplace(m.ctl);
    for (auto& l : m.listeners) asio::co_spawn(m.ctl, m.accept_loop(l), asio::detached);
    asio::co_spawn(m.ctl, m.tick_loop(), asio::detached);
    size_t n = impl::threads_wanted(m.opts);
    for (size_t i = 0; i < n; ++i)
        m.threads.emplace_back([&m] {
            for (;;) {
                try {
                    m.io.run();
                    return;
                } catch (const std::exception& e) {
                    // A library threw out of a handler: log it and keep serving others.
                    spdlog::error("kafka io thread: {}", e.what());
                }
            }
        });
    m.started = true;
    for (auto& l : m.listeners)
        spdlog::info("kafka {} listener on {}:{} (advertised {}:{})", to_string(l.cfg.protocol), l.cfg.host,
                     l.bound_port, l.advertised_host, l.advertised_port);
    spdlog::info("kafka broker serving data in {}", m.opts.data_dir.string());
    return {};
}

void broker::stop() {
    auto& m = *_impl;
    if (!m.started) return;
    m.started = false;
    m.stopping = true;
    asio::post(m.ctl, [&m] {
        asio::error_code ignored;
        for (auto& l : m.listeners)
            if (l.acceptor) l.acceptor->close(ignored);
        if (m.tick_timer) m.tick_timer->cancel();
        std::lock_guard lk(m.conns_mu);
        for (auto& [id, close] : m.conns) close();
    });
    // Give sessions a moment to finish the request in hand, then stop the loop.
    for (int i = 0; i < 200; ++i) {
        {
            std::lock_guard lk(m.conns_mu);
            if (m.conns.empty()) break;
        }
        std::this_thread::sleep_for(10ms);
    }
    m.io.stop();
    for (auto& t : m.threads) t.join();
    m.threads.clear();
    m.cluster.reset(); // leaves the cluster: the others take over its partitions and groups
    if (m.logs) {
        if (auto c = m.logs->close(); !c) spdlog::error("closing the local log: {}", c.error());
    }
    spdlog::info("kafka broker stopped");
}

} // namespace floe::kafka
