#include "redis/client.h"

#include "redis/hiredis_reply.h"
#include "redis/slot.h"

#include <hiredis/hiredis.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>

namespace floe::redis {

using clock_type = std::chrono::steady_clock;

// ---- errors ----------------------------------------------------------------------------------

namespace {

bool starts_with_word(std::string_view text, std::string_view word) {
    return text.starts_with(word) && (text.size() == word.size() || text[word.size()] == ' ');
}

// Server answers meaning "not now, the same command may succeed soon": nothing was done.
bool transient_server_error(std::string_view text) {
    for (std::string_view w : {"TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN", "READONLY", "BUSY",
                               "NOREPLICAS", "OOM"})
        if (starts_with_word(text, w)) return true;
    return false;
}

bool function_missing(std::string_view text) {
    return text.find("Function not found") != std::string_view::npos || starts_with_word(text, "NOSCRIPT");
}

// An error reply as an error value: the server's text verbatim (so callers can match their
// own function errors by prefix), the code saying whether a retry may help.
floe::error server_error(std::string_view text) {
    if (transient_server_error(text)) return floe::error(errc::unavailable, std::string(text));
    if (function_missing(text)) return floe::error(errc::not_found, std::string(text));
    return floe::error(errc::invalid_argument, std::string(text));
}

struct redirect {
    bool ask = false;
    uint16_t slot = 0;
    node_address to;
};

std::optional<redirect> parse_redirect(std::string_view text) {
    redirect r;
    if (text.starts_with("MOVED ")) text.remove_prefix(6);
    else if (text.starts_with("ASK ")) {
        r.ask = true;
        text.remove_prefix(4);
    } else return std::nullopt;
    auto sp = text.find(' ');
    if (sp == std::string_view::npos) return std::nullopt;
    int slot = -1;
    auto slot_s = text.substr(0, sp);
    auto [p, ec] = std::from_chars(slot_s.data(), slot_s.data() + slot_s.size(), slot);
    if (ec != std::errc() || slot < 0 || slot >= slot_count) return std::nullopt;
    r.slot = static_cast<uint16_t>(slot);
    auto hostport = text.substr(sp + 1);
    auto colon = hostport.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    int port = 0;
    auto port_s = hostport.substr(colon + 1);
    auto [p2, ec2] = std::from_chars(port_s.data(), port_s.data() + port_s.size(), port);
    if (ec2 != std::errc() || port <= 0 || port > 65535) return std::nullopt;
    auto host = hostport.substr(0, colon);
    if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
    r.to.host = std::string(host);
    r.to.port = static_cast<uint16_t>(port);
    return r;
}

std::string_view error_text_of(const reply& r) { return r.str(); }
std::string_view error_text_of(const raw_reply& r) { return r.error_text(); }

timeval to_timeval(std::chrono::milliseconds ms) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
    return tv;
}

} // namespace

reply from_hiredis(const redisReply* r) {
    switch (r->type) {
    case REDIS_REPLY_STRING: return reply::string(std::string(r->str, r->len));
    case REDIS_REPLY_STATUS: return reply::status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR: return reply::error(std::string(r->str, r->len));
    case REDIS_REPLY_INTEGER: return reply::integer(r->integer);
    case REDIS_REPLY_ARRAY: {
        std::vector<reply> el;
        el.reserve(r->elements);
        for (size_t i = 0; i < r->elements; ++i) el.push_back(from_hiredis(r->element[i]));
        return reply::array(std::move(el));
    }
    default: return reply::nil();
    }
}

bool outcome_unknown(const floe::error& e) {
    if (e.code() != errc::unavailable && e.code() != errc::timeout) return false;
    // The transport failures after a command was written (see pool::exec); "cannot connect",
    // "pooled connections busy" and the server's own "not now" answers are not among them.
    const std::string_view m = e.message();
    for (std::string_view mid_command : {": connection lost", ": no answer within", ": unreadable answer",
                                         "bytes after the last answer"})
        if (m.find(mid_command) != std::string_view::npos) return true;
    return false;
}

bool server_error_is(const floe::error& e, std::string_view prefix) { return e.message().starts_with(prefix); }

result<void> check(const reply& r) {
    if (r.is_error()) return std::unexpected(server_error(r.str()));
    return {};
}

// ---- connections and pools -------------------------------------------------------------------

namespace {

// hiredis builds replies through these callbacks: they build redis::reply values directly,
// instead of a redisReply tree copied afterwards (half the allocations and copies on the read
// path). An array's elements are sized when it is created, so a child's address is stable.
reply* place(const redisReadTask* task, reply&& value) {
    if (task->parent) {
        auto* parent = static_cast<reply*>(task->parent->obj);
        auto& slot = parent->elements()[static_cast<size_t>(task->idx)];
        slot = std::move(value);
        return &slot;
    }
    return new reply(std::move(value));
}

void* create_string(const redisReadTask* task, char* str, size_t len) {
    std::string text(str, len);
    if (task->type == REDIS_REPLY_ERROR) return place(task, reply::error(std::move(text)));
    if (task->type == REDIS_REPLY_STATUS) return place(task, reply::status(std::move(text)));
    return place(task, reply::string(std::move(text)));
}
void* create_array(const redisReadTask* task, int elements) {
    return place(task, reply::array(std::vector<reply>(static_cast<size_t>(std::max(elements, 0)))));
}
void* create_integer(const redisReadTask* task, long long value) { return place(task, reply::integer(value)); }
void* create_nil(const redisReadTask* task) { return place(task, reply::nil()); }
// hiredis frees only root objects (children belong to their array).
void free_object(void* obj) { delete static_cast<reply*>(obj); }

redisReplyObjectFunctions reply_functions = {create_string, create_array, create_integer, create_nil, free_object};

/// One hiredis connection: used by one thread at a time (borrowed from its pool).
struct connection {
    redisContext* ctx = nullptr;
    ~connection() {
        if (!ctx) return;
        // A connection given up mid-command (a timeout, an I/O error) is reset, not closed: a
        // graceful close still delivers what the kernel has not sent yet (retransmissions into
        // a cut network), so a command reported failed could run on the server seconds later and
        // overwrite newer state. Found by the chaos harness: an offset commit that timed out
        // while the broker was cut from Redis landed after newer commits of the group.
        if (ctx->err && ctx->fd >= 0) {
            linger reset{1, 0};
            ::setsockopt(ctx->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
        }
        redisFree(ctx);
    }

    /// False when the server closed the socket (or sent something unasked) since last use.
    bool alive() const {
        if (!ctx || ctx->err) return false;
        char b;
        ssize_t n = ::recv(ctx->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0 || n > 0) return false;
        return errno == EAGAIN || errno == EWOULDBLOCK;
    }
};

using command_args = std::span<const std::string_view>;

/// The bytes of a raw round trip: filled by recv without zeroing first, never moved once
/// handed out (raw replies view it).
class raw_buffer {
public:
    void reserve(size_t cap) {
        if (cap <= _cap) return;
        auto bigger = std::make_unique_for_overwrite<char[]>(cap);
        if (_size) std::memcpy(bigger.get(), _data.get(), _size);
        _data = std::move(bigger);
        _cap = cap;
    }
    void append(std::string_view s) {
        reserve(_size + s.size());
        std::memcpy(_data.get() + _size, s.data(), s.size());
        _size += s.size();
    }
    char* tail() noexcept { return _data.get() + _size; }
    size_t spare() const noexcept { return _cap - _size; }
    void grow(size_t n) noexcept { _size += n; }
    size_t size() const noexcept { return _size; }
    std::string_view view() const noexcept { return {_data.get(), _size}; }

private:
    std::unique_ptr<char[]> _data;
    size_t _size = 0, _cap = 0;
};

} // namespace

class node_pool {
public:
    node_pool(node_address addr, const options& opts, std::atomic<uint64_t>& opened, bool select_db)
        : _addr(std::move(addr)), _name(_addr.to_string()), _opts(opts), _opened(opened), _select_db(select_db) {}
    ~node_pool() = default;

    const node_address& addr() const { return _addr; }
    const std::string& name() const { return _name; }

    /// A connection for one round trip; waits for a free one until `deadline`.
    result<std::unique_ptr<connection>> acquire(clock_type::time_point deadline) {
        std::unique_lock lk(_mu);
        while (true) {
            while (!_idle.empty()) {
                auto c = std::move(_idle.back());
                _idle.pop_back();
                if (c->alive()) return c;
                --_open;
            }
            if (_open < std::max<size_t>(1, _opts.pool_size)) {
                ++_open;
                lk.unlock();
                auto c = open_connection();
                if (!c) {
                    lk.lock();
                    --_open;
                    _cv.notify_one();
                }
                return c;
            }
            if (_cv.wait_until(lk, deadline) == std::cv_status::timeout)
                return fail(errc::timeout, "redis {}: all {} pooled connections busy", _name, _opts.pool_size);
        }
    }

    /// Returns a connection; a broken one (I/O error, timeout, unread replies) is closed.
    void release(std::unique_ptr<connection> c, bool healthy) {
        std::lock_guard lk(_mu);
        if (healthy && c->ctx && !c->ctx->err) _idle.push_back(std::move(c));
        else --_open;
        _cv.notify_one();
    }

    /// Closes the idle connections (after the node failed).
    void drop_idle() {
        std::lock_guard lk(_mu);
        _open -= _idle.size();
        _idle.clear();
        _cv.notify_all();
    }

    /// Sends the commands in one round trip and reads every reply (as `reply` trees, or as
    /// their RESP bytes for raw_reply). An I/O failure or a timeout fails the whole call (and
    /// the connection). `timeout` (when set) replaces command_timeout for this round trip only.
    template <class T>
    result<std::vector<T>> exec(connection& c, std::span<const command_args> cmds,
                                std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
        if (timeout) redisSetTimeout(c.ctx, to_timeval(*timeout));
        auto r = exec_inner<T>(c, cmds, timeout.value_or(_opts.command_timeout));
        if (timeout && r) redisSetTimeout(c.ctx, to_timeval(_opts.command_timeout));
        return r;
    }

private:
    template <class T>
    result<std::vector<T>> exec_inner(connection& c, std::span<const command_args> cmds,
                                      std::chrono::milliseconds timeout) {
        std::vector<const char*> argv;
        std::vector<size_t> argl;
        for (auto args : cmds) {
            argv.clear();
            argl.clear();
            for (auto a : args) {
                argv.push_back(a.data());
                argl.push_back(a.size());
            }
            if (redisAppendCommandArgv(c.ctx, static_cast<int>(argv.size()), argv.data(), argl.data()) != REDIS_OK)
                return fail(errc::internal, "redis {}: cannot encode a command: {}", _name, c.ctx->errstr);
        }
        if constexpr (std::is_same_v<T, raw_reply>) {
            return read_raw(c, cmds.size(), timeout);
        } else {
            std::vector<reply> out;
            out.reserve(cmds.size());
            for (size_t i = 0; i < cmds.size(); ++i) {
                void* raw = nullptr;
                if (redisGetReply(c.ctx, &raw) != REDIS_OK || raw == nullptr) return io_failure(c, timeout);
                std::unique_ptr<reply> r(static_cast<reply*>(raw));
                out.push_back(std::move(*r));
            }
            return out;
        }
    }

    /// Flushes the commands and reads `n` replies as RESP bytes straight from the socket into
    /// one buffer (hiredis's reader is bypassed; it holds nothing between round trips).
    result<std::vector<raw_reply>> read_raw(connection& c, size_t n, std::chrono::milliseconds timeout) {
        for (int done = 0; !done;)
            if (redisBufferWrite(c.ctx, &done) != REDIS_OK) return io_failure(c, timeout);
        auto buf = std::make_shared<raw_buffer>();
        size_t want = std::max<size_t>(_raw_hint.load(std::memory_order_relaxed), 16u << 10);
        buf->reserve(want);
        if (redisReader* rd = c.ctx->reader; rd->len > rd->pos) {
            // Bytes hiredis read but did not hand out (never expected: a round trip reads all).
            buf->append(std::string_view(rd->buf + rd->pos, rd->len - rd->pos));
            rd->pos = rd->len;
        }
        std::vector<std::pair<size_t, size_t>> ranges;
        ranges.reserve(n);
        resp_scanner scan;
        size_t start = 0;
        while (ranges.size() < n) {
            auto end = scan.feed(buf->view());
            if (!end) {
                c.ctx->err = REDIS_ERR_PROTOCOL;
                return fail(errc::unavailable, "redis {}: unreadable answer: {}", _name, end.error().message());
            }
            if (*end) {
                ranges.emplace_back(start, **end - start);
                start = **end;
                scan.reset(start);
                continue;
            }
            if (buf->spare() < (4u << 10)) buf->reserve(std::max<size_t>(buf->size() * 2, 64u << 10));
            ssize_t got = ::recv(c.ctx->fd, buf->tail(), buf->spare(), 0);
            if (got > 0) {
                buf->grow(size_t(got));
                continue;
            }
            if (got < 0 && errno == EINTR) continue;
            c.ctx->err = REDIS_ERR_IO;
            if (got == 0) return fail(errc::unavailable, "redis {}: connection lost: closed by server", _name);
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return fail(errc::timeout, "redis {}: no answer within {} ms", _name, timeout.count());
            return fail(errc::unavailable, "redis {}: connection lost: {}", _name, std::strerror(errno));
        }
        if (start != buf->size()) {
            c.ctx->err = REDIS_ERR_PROTOCOL;
            return fail(errc::unavailable, "redis {}: {} bytes after the last answer", _name, buf->size() - start);
        }
        // The next raw round trip starts with room for an answer of this size (up to 4 MiB:
        // a rare huge answer does not make every later one reserve as much).
        _raw_hint.store(std::min<size_t>(buf->size(), 4u << 20), std::memory_order_relaxed);
        std::shared_ptr<const raw_buffer> owner = buf;
        std::vector<raw_reply> out;
        out.reserve(n);
        for (auto [at, len] : ranges) out.emplace_back(owner, owner->view().substr(at, len));
        return out;
    }

    std::unexpected<floe::error> io_failure(connection& c, std::chrono::milliseconds timeout) {
        int err = c.ctx->err;
        std::string text = c.ctx->errstr;
        if (err == REDIS_ERR_IO && (text.find("temporarily unavailable") != std::string::npos
                                    || text.find("timed out") != std::string::npos))
            return fail(errc::timeout, "redis {}: no answer within {} ms", _name, timeout.count());
        if (err == REDIS_ERR_EOF || err == REDIS_ERR_IO)
            return fail(errc::unavailable, "redis {}: connection lost: {}", _name,
                        text.empty() ? std::string("closed by server") : text);
        return fail(errc::unavailable, "redis {}: {}", _name, text);
    }

    result<std::unique_ptr<connection>> open_connection() {
        auto c = std::make_unique<connection>();
        c->ctx = redisConnectWithTimeout(_addr.host.c_str(), _addr.port, to_timeval(_opts.connect_timeout));
        if (!c->ctx) return fail(errc::unavailable, "redis {}: cannot allocate a connection", _name);
        if (c->ctx->err) return fail(errc::unavailable, "redis {}: cannot connect: {}", _name, c->ctx->errstr);
        redisSetTimeout(c->ctx, to_timeval(_opts.command_timeout));
        c->ctx->reader->fn = &reply_functions;
        if (_opts.keepalive.count() > 0) {
            int on = 1, idle = static_cast<int>(_opts.keepalive.count());
            int intvl = std::max(1, idle / 3), cnt = 3;
            ::setsockopt(c->ctx->fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
            ::setsockopt(c->ctx->fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
            ::setsockopt(c->ctx->fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
            ::setsockopt(c->ctx->fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
        }
        int nodelay = 1;
        ::setsockopt(c->ctx->fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
        std::vector<std::vector<std::string_view>> setup;
        const std::string db_text = std::to_string(_opts.db);
        if (!_opts.password.empty()) {
            if (_opts.user.empty()) setup.push_back({"AUTH", _opts.password});
            else setup.push_back({"AUTH", _opts.user, _opts.password});
        }
        if (_select_db && _opts.db != 0) {
            setup.push_back({"SELECT", db_text});
        }
        if (!_opts.client_name.empty()) setup.push_back({"CLIENT", "SETNAME", _opts.client_name});
        if (!setup.empty()) {
            std::vector<command_args> spans(setup.begin(), setup.end());
            auto replies = FLOE_TRY(exec<reply>(*c, spans));
            for (size_t i = 0; i < replies.size(); ++i)
                if (replies[i].is_error()) {
                    // AUTH and SELECT failures are configuration errors: say which.
                    return fail(transient_server_error(replies[i].str()) ? errc::unavailable : errc::invalid_argument,
                                "redis {}: {} failed: {}", _name, setup[i][0], replies[i].str());
                }
        }
        _opened.fetch_add(1, std::memory_order_relaxed);
        return c;
    }

    node_address _addr;
    std::string _name;
    const options& _opts;
    std::atomic<uint64_t>& _opened;
    bool _select_db;
    std::atomic<size_t> _raw_hint{0}; // size of the last raw answer read from this node
    std::mutex _mu;
    std::condition_variable _cv;
    std::vector<std::unique_ptr<connection>> _idle;
    size_t _open = 0;
};

// ---- the client ------------------------------------------------------------------------------

class client::impl {
public:
    explicit impl(options opts) : _opts(std::move(opts)), _slots(slot_count) {}

    options _opts;
    std::atomic<bool> _cluster{false};
    std::atomic<bool> _detected{false};
    std::mutex _detect_mu;

    // Topology: nodes by "host:port", the owner of each slot (null: unknown), masters in slot
    // order. Guarded by _topo_mu (shared for routing, exclusive for updates).
    mutable std::shared_mutex _topo_mu;
    std::map<std::string, std::shared_ptr<node_pool>> _nodes;
    std::vector<std::shared_ptr<node_pool>> _slots;
    std::vector<std::shared_ptr<node_pool>> _masters;
    std::shared_ptr<node_pool> _single; // single-Redis mode

    std::mutex _refresh_mu;
    clock_type::time_point _last_refresh{};

    std::mutex _lib_mu;
    struct library {
        std::string name, full_code, version;
    };
    std::vector<library> _libraries;

    std::atomic<uint64_t> _moved{0}, _ask{0}, _retries{0}, _refreshes{0}, _connections{0}, _loads{0};

    std::shared_ptr<node_pool> pool_for(const node_address& a) {
        auto name = a.to_string();
        {
            std::shared_lock lk(_topo_mu);
            if (auto it = _nodes.find(name); it != _nodes.end()) return it->second;
        }
        std::unique_lock lk(_topo_mu);
        auto& p = _nodes[name];
        if (!p) p = std::make_shared<node_pool>(a, _opts, _connections, !_cluster);
        return p;
    }

    std::shared_ptr<node_pool> any_node() const {
        std::shared_lock lk(_topo_mu);
        if (_single) return _single;
        if (!_masters.empty()) return _masters.front();
        if (!_nodes.empty()) return _nodes.begin()->second;
        return nullptr;
    }

    std::shared_ptr<node_pool> route(std::optional<uint16_t> slot) const {
        if (!slot) return any_node();
        std::shared_lock lk(_topo_mu);
        if (_single) return _single;
        if (auto& p = _slots[*slot]) return p;
        if (!_masters.empty()) return _masters.front(); // slot uncovered: the server answers CLUSTERDOWN
        return nullptr;
    }

    // Parses CLUSTER SLOTS: [[start, end, [host, port, id...], replicas...], ...].
    result<void> apply_slots(const reply& r, const node_address& asked) {
        if (!r.is_array()) return fail(errc::unavailable, "CLUSTER SLOTS answered {}", r.debug_string());
        std::vector<std::pair<std::pair<int64_t, int64_t>, node_address>> ranges;
        for (const auto& e : r.elements()) {
            if (!e.is_array() || e.size() < 3 || !e[2].is_array() || e[2].size() < 2)
                return fail(errc::unavailable, "CLUSTER SLOTS: unexpected entry {}", e.debug_string());
            auto lo = FLOE_TRY(e[0].as_integer());
            auto hi = FLOE_TRY(e[1].as_integer());
            auto host = std::string(FLOE_TRY(e[2][0].as_string()));
            auto port = FLOE_TRY(e[2][1].as_integer());
            if (lo < 0 || hi >= slot_count || lo > hi || port <= 0 || port > 65535)
                return fail(errc::unavailable, "CLUSTER SLOTS: bad range {}", e.debug_string());
            if (host.empty() || host == "?") host = asked.host; // the node answering does not know its own name
            ranges.push_back({{lo, hi}, node_address{host, static_cast<uint16_t>(port)}});
        }
        std::sort(ranges.begin(), ranges.end(), [](auto& a, auto& b) { return a.first.first < b.first.first; });
        std::vector<std::shared_ptr<node_pool>> pools;
        for (auto& [range, addr] : ranges) pools.push_back(pool_for(addr));
        std::unique_lock lk(_topo_mu);
        std::fill(_slots.begin(), _slots.end(), nullptr);
        _masters.clear();
        for (size_t i = 0; i < ranges.size(); ++i) {
            auto [lo, hi] = ranges[i].first;
            for (auto s = lo; s <= hi; ++s) _slots[static_cast<size_t>(s)] = pools[i];
            if (std::find(_masters.begin(), _masters.end(), pools[i]) == _masters.end()) _masters.push_back(pools[i]);
        }
        return {};
    }

    /// Reloads the slot map from the first node that answers (known masters, then seeds).
    /// At most one reload at a time; a reload within `min_gap` of the last is skipped.
    result<void> refresh(std::chrono::milliseconds min_gap) {
        if (!_cluster) return {};
        std::lock_guard lk(_refresh_mu);
        auto now = clock_type::now();
        if (now - _last_refresh < min_gap) return {};
        std::vector<node_address> candidates;
        {
            std::shared_lock tl(_topo_mu);
            for (auto& m : _masters) candidates.push_back(m->addr());
            for (auto& [n, p] : _nodes)
                if (std::find(candidates.begin(), candidates.end(), p->addr()) == candidates.end())
                    candidates.push_back(p->addr());
        }
        for (auto& s : _opts.seeds)
            if (std::find(candidates.begin(), candidates.end(), s) == candidates.end()) candidates.push_back(s);
        std::optional<floe::error> last;
        for (auto& a : candidates) {
            auto pool = pool_for(a);
            std::string_view args[] = {"CLUSTER", "SLOTS"};
            auto r = exec_on(*pool, std::span<const command_args>(std::array{command_args(args)}));
            if (!r) {
                last = r.error();
                continue;
            }
            if ((*r)[0].is_error()) {
                last = server_error((*r)[0].str());
                continue;
            }
            if (auto ok = apply_slots((*r)[0], a); !ok) {
                last = ok.error();
                continue;
            }
            _last_refresh = clock_type::now();
            _refreshes.fetch_add(1, std::memory_order_relaxed);
            return {};
        }
        _last_refresh = clock_type::now();
        return fail(errc::unavailable, "no cluster node answered CLUSTER SLOTS{}{}", last ? ": " : "",
                    last ? last->message() : std::string());
    }

    /// One round trip on a pooled connection of `pool`.
    template <class T = reply>
    result<std::vector<T>> exec_on(node_pool& pool, std::span<const command_args> cmds,
                                   std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
        auto deadline = clock_type::now() + _opts.command_timeout;
        auto conn = FLOE_TRY(pool.acquire(deadline));
        auto r = pool.exec<T>(*conn, cmds, timeout);
        pool.release(std::move(conn), r.has_value());
        if (!r && r.error().code() == errc::unavailable) pool.drop_idle();
        return r;
    }

    void backoff(int attempt, clock_type::time_point deadline) {
        auto d = std::chrono::milliseconds(std::min(200, 5 << std::min(attempt, 6)));
        auto until = std::min(deadline, clock_type::now() + d);
        std::this_thread::sleep_until(until);
    }

    /// Runs the commands (all for `slot`, or keyless when no slot) with redirects and retries.
    /// Error replies stay replies. Only a transport failure (or the retry budget) fails it.
    template <class T = reply>
    result<std::vector<T>> run(std::optional<uint16_t> slot, std::span<const command_args> cmds,
                               std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
        FLOE_TRY(ensure_detected());
        auto deadline = clock_type::now() + _opts.retry_budget;
        std::vector<std::optional<T>> results(cmds.size());
        std::vector<size_t> pending(cmds.size());
        for (size_t i = 0; i < cmds.size(); ++i) pending[i] = i;
        std::shared_ptr<node_pool> target = route(slot);
        bool asking = false;
        std::optional<floe::error> last_transient;
        for (int attempt = 0;; ++attempt) {
            if (!target) {
                FLOE_TRY(refresh(std::chrono::milliseconds(0)));
                target = route(slot);
                if (!target) return fail(errc::unavailable, "no redis node known for slot {}", slot.value_or(0));
            }
            std::vector<command_args> batch;
            static constexpr std::string_view asking_args[] = {"ASKING"};
            for (auto i : pending) {
                if (asking) batch.push_back(command_args(asking_args));
                batch.push_back(cmds[i]);
            }
            auto sent = exec_on<T>(*target, batch, timeout);
            if (!sent) {
                // A connection that could not be opened sent nothing: safe to try again after
                // the map is reloaded (the slot may have moved to a promoted replica). A lost
                // connection mid-command is returned: the command may have run.
                bool never_sent = sent.error().message().find("cannot connect") != std::string::npos;
                if (_cluster) (void)refresh(std::chrono::milliseconds(100));
                if (never_sent && clock_type::now() < deadline) {
                    _retries.fetch_add(1, std::memory_order_relaxed);
                    backoff(attempt, deadline);
                    target = route(slot);
                    asking = false;
                    continue;
                }
                return std::unexpected(std::move(sent).error());
            }
            auto& replies = *sent;
            std::vector<size_t> again;
            std::optional<redirect> redir;
            bool transient = false;
            size_t k = 0;
            for (auto i : pending) {
                if (asking) ++k; // the ASKING reply
                auto& r = replies[k++];
                if (r.is_error()) {
                    const std::string_view text = error_text_of(r);
                    if (auto rd = parse_redirect(text)) {
                        if (!redir) redir = rd;
                        again.push_back(i);
                        continue;
                    }
                    if (transient_server_error(text)) {
                        transient = true;
                        last_transient = server_error(text);
                        again.push_back(i);
                        continue;
                    }
                }
                results[i] = std::move(r);
            }
            if (again.empty()) break;
            if (clock_type::now() >= deadline || attempt >= 1000) {
                if (redir)
                    return fail(errc::unavailable, "redis slot {}: still redirected ({} {}) after the retry budget",
                                redir->slot, redir->ask ? "ASK" : "MOVED", redir->to.to_string());
                return std::unexpected(*last_transient);
            }
            pending = std::move(again);
            if (redir) {
                // A first redirect is followed at once; more in a row mean the nodes disagree
                // for a moment (a migration being finished node by node): back off meanwhile.
                if (attempt >= 2) backoff(attempt - 2, deadline);
                target = pool_for(redir->to);
                asking = redir->ask;
                if (redir->ask) _ask.fetch_add(1, std::memory_order_relaxed);
                else {
                    _moved.fetch_add(1, std::memory_order_relaxed);
                    {
                        std::unique_lock lk(_topo_mu);
                        _slots[redir->slot] = target;
                        if (std::find(_masters.begin(), _masters.end(), target) == _masters.end())
                            _masters.push_back(target);
                    }
                    (void)refresh(std::chrono::milliseconds(200));
                }
                continue;
            }
            asking = false;
            _retries.fetch_add(1, std::memory_order_relaxed);
            if (transient && _cluster) (void)refresh(std::chrono::milliseconds(200));
            backoff(attempt, deadline);
            target = route(slot);
        }
        std::vector<T> out;
        out.reserve(results.size());
        for (auto& r : results) out.push_back(std::move(*r));
        return out;
    }

    result<reply> one(std::optional<uint16_t> slot, command_args args,
                      std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
        if (args.empty()) return fail(errc::invalid_argument, "empty redis command");
        auto r = FLOE_TRY(run(slot, std::span<const command_args>(&args, 1), timeout));
        FLOE_TRY(check(r[0]));
        return std::move(r[0]);
    }

    /// One command; an error reply becomes an error value.
    template <class T>
    result<T> one_of(std::optional<uint16_t> slot, command_args args) {
        if (args.empty()) return fail(errc::invalid_argument, "empty redis command");
        auto r = FLOE_TRY(run<T>(slot, std::span<const command_args>(&args, 1)));
        if (r[0].is_error()) return std::unexpected(server_error(error_text_of(r[0])));
        return std::move(r[0]);
    }

    /// FCALL; when the node does not know the function, loads the libraries this client
    /// registered on that node and calls once more.
    template <class T>
    result<T> call_function(std::string_view function, std::span<const std::string_view> keys,
                            std::span<const std::string_view> args) {
        std::string numkeys = std::to_string(keys.size());
        std::vector<std::string_view> argv;
        argv.reserve(3 + keys.size() + args.size());
        argv.push_back("FCALL");
        argv.push_back(function);
        argv.push_back(numkeys);
        argv.insert(argv.end(), keys.begin(), keys.end());
        argv.insert(argv.end(), args.begin(), args.end());
        std::optional<uint16_t> slot;
        if (!keys.empty()) slot = key_slot(keys[0]);
        auto r = one_of<T>(slot, argv);
        if (r || r.error().code() != errc::not_found || !function_missing(r.error().message())) return r;
        // The node lost its functions (restart without persistence, a new master): load what
        // this client registered, then try once more.
        std::vector<library> libs;
        {
            std::lock_guard lk(_lib_mu);
            libs = _libraries;
        }
        if (libs.empty()) return r;
        auto node = route(slot);
        if (!node) return r;
        for (auto& lib : libs) FLOE_TRY(ensure_library(*node, lib));
        return one_of<T>(slot, argv);
    }

    /// Finds a seed that answers and learns the mode (single or cluster) and the slot map.
    /// Until it succeeds every call tries again (Redis down at start-up is not fatal).
    result<void> ensure_detected() {
        if (_detected.load(std::memory_order_acquire)) return {};
        std::lock_guard lk(_detect_mu);
        if (_detected.load(std::memory_order_relaxed)) return {};
        if (_opts.seeds.empty()) return fail(errc::invalid_argument, "redis: no seed address");
        std::optional<floe::error> last;
        for (const auto& seed : _opts.seeds) {
            // Probe with a pool that does not SELECT (a cluster refuses SELECT n>0; the mode is
            // not known yet); the probe pool is dropped afterwards.
            auto probe = std::make_shared<node_pool>(seed, _opts, _connections, false);
            std::string_view args[] = {"CLUSTER", "SLOTS"};
            auto r = exec_on(*probe, std::span<const command_args>(std::array{command_args(args)}));
            if (!r) {
                if (r.error().code() == errc::invalid_argument) return std::unexpected(std::move(r).error());
                last = r.error();
                continue;
            }
            const auto& rep = (*r)[0];
            if (rep.is_error()) {
                if (rep.str().find("cluster support disabled") != std::string::npos) {
                    auto single = std::make_shared<node_pool>(seed, _opts, _connections, true);
                    // Open one connection now so AUTH/SELECT errors show at once.
                    auto c = single->acquire(clock_type::now() + _opts.connect_timeout);
                    if (!c) return std::unexpected(std::move(c).error());
                    single->release(std::move(*c), true);
                    {
                        std::unique_lock tl(_topo_mu);
                        _single = single;
                        _nodes[seed.to_string()] = single;
                    }
                    _cluster.store(false);
                    _detected.store(true, std::memory_order_release);
                    return {};
                }
                // Credentials missing or not allowed to ask: a configuration error, not an outage.
                if (rep.str().starts_with("NOAUTH") || rep.str().starts_with("WRONGPASS")
                    || rep.str().starts_with("NOPERM"))
                    return fail(errc::invalid_argument, "redis {}: CLUSTER SLOTS refused: {}", seed.to_string(),
                                rep.str());
                last = server_error(rep.str());
                continue;
            }
            if (_opts.db != 0)
                return fail(errc::invalid_argument,
                            "redis: database {} asked for, but {} is a Redis Cluster (db 0 only)", _opts.db,
                            seed.to_string());
            _cluster.store(true);
            if (auto ok = apply_slots(rep, seed); !ok) {
                last = ok.error();
                continue;
            }
            _last_refresh = clock_type::now();
            _refreshes.fetch_add(1, std::memory_order_relaxed);
            _detected.store(true, std::memory_order_release);
            return {};
        }
        std::string seeds;
        for (auto& s : _opts.seeds) {
            if (!seeds.empty()) seeds += ", ";
            seeds += s.to_string();
        }
        return fail(errc::unavailable, "redis: no seed answered ({}){}{}", seeds, last ? ": " : "",
                    last ? last->message() : std::string());
    }

    std::vector<std::shared_ptr<node_pool>> master_pools() const {
        std::shared_lock lk(_topo_mu);
        if (_single) return {_single};
        return _masters;
    }

    static std::string full_code(std::string_view name, std::string_view code, std::string_view version) {
        return fmt::format("#!lua name={}\n-- version: {}\n{}", name, version, code);
    }

    /// Loads a library on one node unless that node has it at `version`.
    result<void> ensure_library(node_pool& pool, const library& lib) {
        std::string_view list_args[] = {"FUNCTION", "LIST", "LIBRARYNAME", lib.name, "WITHCODE"};
        auto listed = FLOE_TRY(exec_on(pool, std::span<const command_args>(std::array{command_args(list_args)})));
        FLOE_TRY_CTX(check(listed[0]), "FUNCTION LIST on {}", pool.name());
        std::string want = fmt::format("-- version: {}\n", lib.version);
        for (const auto& l : listed[0].elements()) {
            // RESP2 map as a flat array: name, value, name, value...
            std::string_view lname, code;
            for (size_t i = 0; i + 1 < l.size(); i += 2) {
                if (l[i].str() == "library_name") lname = l[i + 1].str();
                if (l[i].str() == "library_code") code = l[i + 1].str();
            }
            if (lname != lib.name) continue;
            auto nl = code.find('\n');
            if (nl != std::string_view::npos && code.substr(nl + 1).starts_with(want)) return {};
        }
        std::string_view load_args[] = {"FUNCTION", "LOAD", "REPLACE", lib.full_code};
        auto loaded = FLOE_TRY(exec_on(pool, std::span<const command_args>(std::array{command_args(load_args)})));
        FLOE_TRY_CTX(check(loaded[0]), "loading redis function library {} (version {}) on {}", lib.name, lib.version,
                     pool.name());
        _loads.fetch_add(1, std::memory_order_relaxed);
        spdlog::info("redis: loaded function library {} version {} on {}", lib.name, lib.version, pool.name());
        return {};
    }
};

// ---- client ----------------------------------------------------------------------------------

client::client(std::unique_ptr<impl> p) : _impl(std::move(p)) {}
client::~client() = default;

std::unique_ptr<client> client::create(options opts) {
    return std::unique_ptr<client>(new client(std::make_unique<impl>(std::move(opts))));
}

result<std::unique_ptr<client>> client::connect(options opts) {
    auto c = create(std::move(opts));
    FLOE_TRY(c->_impl->ensure_detected());
    return c;
}

namespace {
std::optional<uint16_t> slot_of_args(std::span<const std::string_view> args) {
    if (args.size() < 2) return std::nullopt;
    return key_slot(args[1]);
}
} // namespace

result<reply> client::command(std::span<const std::string_view> args) { return _impl->one(slot_of_args(args), args); }
result<reply> client::command(std::initializer_list<std::string_view> args) {
    return command(std::span<const std::string_view>(args.begin(), args.size()));
}
result<reply> client::command_for(std::string_view slot_key, std::span<const std::string_view> args) {
    return _impl->one(key_slot(slot_key), args);
}
result<reply> client::command_for(std::string_view slot_key, std::initializer_list<std::string_view> args) {
    return command_for(slot_key, std::span<const std::string_view>(args.begin(), args.size()));
}

result<std::vector<reply>> client::pipeline(std::string_view slot_key,
                                            std::span<const std::vector<std::string>> commands) {
    if (commands.empty()) return std::vector<reply>{};
    std::vector<std::vector<std::string_view>> views;
    views.reserve(commands.size());
    for (auto& c : commands) {
        if (c.empty()) return fail(errc::invalid_argument, "empty redis command in a pipeline");
        views.emplace_back(c.begin(), c.end());
    }
    std::vector<command_args> spans(views.begin(), views.end());
    return _impl->run(key_slot(slot_key), spans);
}

result<reply> client::command_blocking(std::string_view slot_key, std::span<const std::string_view> args,
                                       std::chrono::milliseconds block) {
    return _impl->one(key_slot(slot_key), args, block + _impl->_opts.command_timeout);
}

result<std::vector<reply>> client::pipeline(std::string_view slot_key,
                                            std::span<const std::vector<std::string_view>> commands) {
    if (commands.empty()) return std::vector<reply>{};
    std::vector<command_args> spans;
    spans.reserve(commands.size());
    for (auto& c : commands) {
        if (c.empty()) return fail(errc::invalid_argument, "empty redis command in a pipeline");
        spans.emplace_back(c);
    }
    return _impl->run(key_slot(slot_key), spans);
}

result<reply> client::fcall(std::string_view function, std::span<const std::string_view> keys,
                            std::span<const std::string_view> args) {
    return _impl->call_function<reply>(function, keys, args);
}

result<raw_reply> client::fcall_raw(std::string_view function, std::span<const std::string_view> keys,
                                    std::span<const std::string_view> args) {
    return _impl->call_function<raw_reply>(function, keys, args);
}

result<std::vector<raw_reply>> client::pipeline_raw(std::string_view slot_key,
                                                    std::span<const std::vector<std::string_view>> commands) {
    if (commands.empty()) return std::vector<raw_reply>{};
    std::vector<command_args> spans;
    spans.reserve(commands.size());
    for (auto& c : commands) {
        if (c.empty()) return fail(errc::invalid_argument, "empty redis command in a pipeline");
        spans.emplace_back(c);
    }
    return _impl->run<raw_reply>(key_slot(slot_key), spans);
}

result<reply> client::fcall(std::string_view function, std::initializer_list<std::string_view> keys,
                            std::initializer_list<std::string_view> args) {
    return fcall(function, std::span<const std::string_view>(keys.begin(), keys.size()),
                 std::span<const std::string_view>(args.begin(), args.size()));
}

result<void> client::load_library(std::string_view name, std::string_view code, std::string_view version) {
    if (name.empty() || name.find_first_of(" \n\t") != std::string_view::npos)
        return fail(errc::invalid_argument, "redis function library name '{}' is not one word", name);
    if (version.find('\n') != std::string_view::npos)
        return fail(errc::invalid_argument, "redis function library version must be one line");
    impl::library lib{std::string(name), impl::full_code(name, code, version), std::string(version)};
    std::optional<impl::library> previous;
    auto remember = [&](const std::optional<impl::library>& l) {
        std::lock_guard lk(_impl->_lib_mu);
        std::erase_if(_impl->_libraries, [&](auto& x) { return x.name == name; });
        if (l) _impl->_libraries.push_back(*l);
    };
    {
        std::lock_guard lk(_impl->_lib_mu);
        for (auto& l : _impl->_libraries)
            if (l.name == name) previous = l;
    }
    // Remembered first, so that while Redis is down the first fcall after it returns loads it.
    remember(lib);
    FLOE_TRY(_impl->ensure_detected());
    for (auto& pool : _impl->master_pools()) {
        auto loaded = _impl->ensure_library(*pool, lib);
        // Code the server refuses (a Lua error): fcall goes on offering the previous version.
        if (!loaded && !loaded.error().retryable()) remember(previous);
        FLOE_TRY(std::move(loaded));
    }
    return {};
}

result<reply> client::command_on_node(std::string_view node, std::span<const std::string_view> args) {
    if (args.empty()) return fail(errc::invalid_argument, "empty redis command");
    FLOE_TRY(_impl->ensure_detected());
    std::shared_ptr<node_pool> pool;
    {
        std::shared_lock lk(_impl->_topo_mu);
        if (auto it = _impl->_nodes.find(std::string(node)); it != _impl->_nodes.end()) pool = it->second;
    }
    if (!pool) return fail(errc::not_found, "redis node {} is not known to this client", node);
    auto r = FLOE_TRY(_impl->exec_on(*pool, std::span<const command_args>(&args, 1)));
    FLOE_TRY(check(r[0]));
    return std::move(r[0]);
}

result<reply> client::command_on_node(std::string_view node, std::initializer_list<std::string_view> args) {
    return command_on_node(node, std::span<const std::string_view>(args.begin(), args.size()));
}

result<void> client::ping() {
    FLOE_TRY(_impl->ensure_detected());
    auto pools = _impl->master_pools();
    if (pools.empty()) return fail(errc::unavailable, "redis: no node known");
    for (auto& pool : pools) {
        std::string_view args[] = {"PING"};
        auto r = FLOE_TRY(_impl->exec_on(*pool, std::span<const command_args>(std::array{command_args(args)})));
        if (!r[0].is_status() || r[0].str() != "PONG") {
            if (r[0].is_error()) return fail(errc::unavailable, "redis {}: PING: {}", pool->name(), r[0].str());
            return fail(errc::unavailable, "redis {}: PING answered {}", pool->name(), r[0].debug_string());
        }
    }
    return {};
}

bool client::is_cluster() const noexcept { return _impl->_cluster; }

std::vector<std::string> client::masters() const {
    std::vector<std::string> out;
    for (auto& p : _impl->master_pools()) out.push_back(p->name());
    return out;
}

std::string client::node_for(std::string_view key) const {
    auto p = _impl->route(key_slot(key));
    return p ? p->name() : std::string();
}

result<void> client::refresh_topology() {
    FLOE_TRY(_impl->ensure_detected());
    return _impl->refresh(std::chrono::milliseconds(0));
}

client::stats client::counters() const {
    stats s;
    s.moved = _impl->_moved.load();
    s.ask = _impl->_ask.load();
    s.retries = _impl->_retries.load();
    s.refreshes = _impl->_refreshes.load();
    s.connections = _impl->_connections.load();
    s.library_loads = _impl->_loads.load();
    return s;
}

const options& client::opts() const noexcept { return _impl->_opts; }

} // namespace floe::redis
