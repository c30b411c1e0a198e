#include "kafka/broker.h"

#include "base/metrics.h"

#include "kafka/groups.h"
#include "kafka/handlers.h"
#include "kafka/messages.h"
#include "log/log_manager.h"

#include <asio.hpp>
#include "kafka/asio_compat.h"
#include <spdlog/spdlog.h>

#include <csignal>
#include <sys/sendfile.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
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

/// Reads the 4-byte big-endian size prefix at `p`.
int32_t read_size(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return int32_t(std::byteswap(v));
}

/// KIP-848's ConsumerGroupHeartbeat. Not served and not advertised: Floe runs the classic
/// JoinGroup/SyncGroup protocol only.
constexpr int16_t k_consumer_group_heartbeat = 68;

/// A client that sends ConsumerGroupHeartbeat anyway (group.protocol=consumer without looking
/// at ApiVersions) gets an answer in that API's own flexible layout, so it can read the
/// UNSUPPORTED_VERSION and the hint instead of failing to parse a bare error code.
void encode_consumer_group_heartbeat_unsupported(byte_buffer& out, request_header h) {
    h.flexible = true; // every version of this API is flexible: response header v1
    size_t start = begin_response(out, h);
    kwriter w(out, true);
    w.i32(0); // throttle_time_ms
    w.i16(int16_t(kerr::unsupported_version));
    w.nstr("Floe does not support the consumer group protocol of KIP-848; "
           "set group.protocol=classic on the consumer");
    w.nstr(std::nullopt); // member_id
    w.i32(-1);            // member_epoch
    w.i32(0);             // heartbeat_interval_ms
    w.i8(-1);             // assignment: null
    w.tags();
    finish_response(out, start);
}

} // namespace

struct broker::impl {
    broker_options opts;
    std::unique_ptr<log::log_manager> logs;
    std::unique_ptr<offset_store> offsets;
    std::unique_ptr<group_coordinator> groups;
    std::unique_ptr<producer_id_allocator> pids;
    std::unique_ptr<request_handler> handler;
    asio::io_context io;
    /// Serialises the acceptor and the tick timer with stop()'s closing of them.
    asio::strand<asio::io_context::executor_type> ctl{asio::make_strand(io)};
    std::optional<tcp::acceptor> acceptor;
    std::optional<asio::steady_timer> tick_timer;
    std::vector<std::thread> threads;
    std::mutex conns_mu;
    std::map<uint64_t, std::weak_ptr<tcp::socket>> conns;
    uint64_t next_conn = 0;
    uint16_t bound_port = 0;
    std::atomic<bool> stopping{false};
    bool started = false;

    explicit impl(broker_options o) : opts(std::move(o)), io(int(threads_wanted(opts))) {}

    static size_t threads_wanted(const broker_options& o) {
        if (o.io_threads) return o.io_threads;
        return std::max<size_t>(2, std::thread::hardware_concurrency());
    }

    asio::awaitable<void> accept_loop();
    asio::awaitable<void> session(std::shared_ptr<tcp::socket> sock, uint64_t id);
    asio::awaitable<void> tick_loop();
};

namespace {
struct conn_metrics {
    metrics::gauge& open;
    metrics::counter& accepted;
};
conn_metrics& connection_metrics() {
    auto& r = metrics::registry::instance();
    static conn_metrics m{r.gauge_family("floe_kafka_connections", "Open Kafka client connections.").with({}),
                          r.counter_family("floe_kafka_connections_accepted_total",
                                           "Kafka client connections accepted.")
                              .with({})};
    return m;
}
} // namespace

asio::awaitable<void> broker::impl::accept_loop() {
    while (!stopping.load()) {
        auto strand = asio::make_strand(io);
        auto sock = std::make_shared<tcp::socket>(strand);
        auto [ec] = co_await acceptor->async_accept(*sock, use_tuple);
        if (ec) {
            if (stopping.load() || ec == asio::error::operation_aborted) co_return;
            spdlog::warn("kafka accept: {}", ec.message());
            // Out of descriptors and similar: back off instead of spinning.
            asio::steady_timer t(io, 50ms);
            co_await t.async_wait(use_tuple);
            continue;
        }
        asio::error_code ignored;
        sock->set_option(tcp::no_delay(true), ignored);
        uint64_t id;
        {
            std::lock_guard lk(conns_mu);
            id = next_conn++;
            conns[id] = sock;
            connection_metrics().open.set(double(conns.size()));
            connection_metrics().accepted.inc();
        }
        asio::co_spawn(strand, session(sock, id), asio::detached);
    }
}

asio::awaitable<void> broker::impl::tick_loop() {
    while (!stopping.load()) {
        tick_timer->expires_after(100ms);
        auto [ec] = co_await tick_timer->async_wait(use_tuple);
        if (ec || stopping.load()) co_return;
        groups->tick(std::chrono::steady_clock::now());
    }
}

// One connection: reads frames, answers them strictly in order (Kafka clients pipeline
// requests and match responses by order and correlation id), batches the answers of every
// frame already buffered into one write. A malformed frame, an oversized size prefix or an
// I/O error closes only this connection.
asio::awaitable<void> broker::impl::session(std::shared_ptr<tcp::socket> sock, uint64_t id) {
    connection_info info;
    {
        asio::error_code ec;
        auto ep = sock->remote_endpoint(ec);
        if (!ec) info.client_host = "/" + ep.address().to_string();
    }
    byte_buffer in(64 * 1024);
    size_t begin = 0, end = 0; // unconsumed bytes are in[begin, end)
    byte_buffer out;
    out.reserve(64 * 1024);
    std::vector<file_splice> splices;
    const size_t max_frame = opts.max_request_bytes;
    // Writes `out`, with the file ranges in `splices` sent by sendfile(2) at their positions.
    auto flush = [&]() -> asio::awaitable<bool> {
        size_t pos = 0;
        for (auto& sp : splices) {
            if (sp.at > pos) {
                auto [ec, n] = co_await asio::async_write(
                    *sock, asio::buffer(out.data() + pos, sp.at - pos), use_tuple);
                if (ec) co_return false;
                pos = sp.at;
            }
            off_t off = off_t(sp.slice.position);
            size_t left = sp.slice.length;
            while (left > 0) {
                ssize_t n = ::sendfile(sock->native_handle(), sp.slice.fd(), &off, left);
                if (n > 0) {
                    left -= size_t(n);
                } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                    auto [ec] = co_await sock->async_wait(tcp::socket::wait_write, use_tuple);
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
                *sock, asio::buffer(out.data() + pos, out.size() - pos), use_tuple);
            if (ec) co_return false;
        }
        out.clear();
        if (out.capacity() > (8u << 20)) out.shrink_to_fit();
        co_return true;
    };
    {
        asio::error_code ec;
        sock->native_non_blocking(true, ec);
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
                if (h.api_key == k_consumer_group_heartbeat) {
                    encode_consumer_group_heartbeat_unsupported(out, h);
                } else {
                    size_t start = begin_response(out, h);
                    kwriter w(out, false);
                    if (h.api_key == int16_t(api_key::api_versions))
                        encode(w, 0, api_versions_response{int16_t(kerr::unsupported_version)});
                    else
                        w.i16(int16_t(kerr::unsupported_version));
                    finish_response(out, start);
                }
            } else {
                if (request_handler::may_wait(*hdr, body) && !out.empty())
                    if (!co_await flush()) co_return;
                size_t body_off = size_t(body.data() - in.data());
                std::span<uint8_t> mbody(in.data() + body_off, body.size());
                bool ok = co_await handler->handle(info, *hdr, mbody, out, &splices);
                if (!ok) {
                    spdlog::debug("kafka connection {}: malformed {} v{}; closing", id,
                                  api_name(hdr->api_key), hdr->api_version);
                    close = true;
                    break;
                }
            }
            begin += 4 + size_t(size);
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
        auto [ec, n] = co_await sock->async_read_some(asio::buffer(in.data() + end, in.size() - end),
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
    asio::error_code ignored;
    sock->shutdown(tcp::socket::shutdown_both, ignored);
    sock->close(ignored);
    std::lock_guard lk(conns_mu);
    conns.erase(id);
    connection_metrics().open.set(double(conns.size()));
}

broker::broker(broker_options opts) : _impl(std::make_unique<impl>(std::move(opts))) {}

broker::~broker() { stop(); }

uint16_t broker::port() const noexcept { return _impl->bound_port; }

log::log_manager* broker::logs() noexcept { return _impl->logs.get(); }

result<void> broker::start() {
    auto& m = *_impl;
    if (m.started) return fail(errc::invalid_argument, "broker already started");
    // sendfile(2) has no MSG_NOSIGNAL: a consumer closing mid-answer must not kill the process.
    ::signal(SIGPIPE, SIG_IGN);
    auto [lhost, lport] = FLOE_TRY_CTX(split_host_port(m.opts.listen), "floe.kafka.listen");

    log::log_manager_options lo;
    lo.data_dir = m.opts.data_dir;
    for (auto& [k, v] : m.opts.topic_defaults) lo.topic_defaults[k] = v;
    lo.default_partitions = m.opts.default_partitions;
    lo.auto_create_topics = m.opts.auto_create_topics;
    lo.flush_interval_ms = m.opts.flush_interval_ms;
    m.logs = FLOE_TRY_CTX(log::log_manager::open(lo), "opening the local log");
    m.offsets = FLOE_TRY_CTX(offset_store::open(m.opts.data_dir / "kafka"), "group offsets");
    group_coordinator::options go;
    go.initial_rebalance_delay = std::chrono::milliseconds(m.opts.group_initial_rebalance_delay_ms);
    m.groups = std::make_unique<group_coordinator>(*m.offsets, go);
    m.pids = FLOE_TRY_CTX(producer_id_allocator::open(m.opts.data_dir / "kafka"), "producer ids");

    asio::error_code ec;
    auto addr = asio::ip::make_address(lhost, ec);
    if (ec) {
        tcp::resolver res(m.io);
        auto r = res.resolve(lhost, std::to_string(lport), ec);
        if (ec || r.empty())
            return fail(errc::invalid_argument, "cannot resolve listen host '{}': {}", lhost,
                        ec.message());
        addr = r.begin()->endpoint().address();
    }
    tcp::endpoint ep(addr, lport);
    m.acceptor.emplace(m.ctl);
    m.acceptor->open(ep.protocol(), ec);
    if (!ec) m.acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) m.acceptor->bind(ep, ec);
    if (!ec) m.acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
        m.acceptor.reset();
        (void)m.logs->close();
        // already_exists: the address is taken (often another floe), which start-up reports
        // naming floe.kafka.listen.
        return fail(ec == asio::error::address_in_use ? errc::already_exists : errc::unavailable,
                    "kafka listener {}: {}", m.opts.listen, ec.message());
    }
    m.bound_port = m.acceptor->local_endpoint().port();

    std::string ahost = lhost;
    int32_t aport = m.bound_port;
    if (!m.opts.advertised.empty()) {
        auto [h, p] = FLOE_TRY_CTX(split_host_port(m.opts.advertised),
                                   "floe.kafka.advertised-listener");
        ahost = h;
        aport = p == 0 ? m.bound_port : p;
    }
    if (ahost == "0.0.0.0" || ahost == "::" || ahost.empty()) ahost = "127.0.0.1";
    m.handler = std::make_unique<request_handler>(m.opts, ahost, aport, *m.logs, *m.groups, *m.pids);

    m.tick_timer.emplace(m.ctl);
    asio::co_spawn(m.ctl, m.accept_loop(), asio::detached);
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
    spdlog::info("kafka broker listening on {}:{} (advertised {}:{}), data in {}", lhost,
                 m.bound_port, ahost, aport, m.opts.data_dir.string());
    return {};
}

void broker::stop() {
    auto& m = *_impl;
    if (!m.started) return;
    m.started = false;
    m.stopping = true;
    asio::post(m.ctl, [&m] {
        asio::error_code ignored;
        if (m.acceptor) m.acceptor->close(ignored);
        if (m.tick_timer) m.tick_timer->cancel();
        std::lock_guard lk(m.conns_mu);
        for (auto& [id, w] : m.conns)
            if (auto s = w.lock())
                asio::post(s->get_executor(), [s] {
                    asio::error_code ig;
                    s->shutdown(tcp::socket::shutdown_both, ig);
                    s->close(ig);
                });
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
    if (m.logs) {
        if (auto c = m.logs->close(); !c) spdlog::error("closing the local log: {}", c.error());
    }
    spdlog::info("kafka broker stopped");
}

} // namespace floe::kafka
