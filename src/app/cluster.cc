#include "app/cluster.h"

#include "base/random.h"
#include "kafka/groups.h"
#include "kafka/handlers.h"
#include "redis/client.h"
#include "redis/group_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <fcntl.h>
#include <fstream>
#include <ranges>
#include <unistd.h>

namespace floe::app {

std::string format_listeners(const std::vector<kafka::advertised_listener>& listeners) {
    std::string out;
    for (auto& l : listeners) {
        if (!out.empty()) out += ',';
        // IPv6 hosts in brackets, so the last ':' always starts the port.
        bool v6 = l.host.find(':') != std::string::npos;
        out += fmt::format("{}://{}{}{}:{}", l.name, v6 ? "[" : "", l.host, v6 ? "]" : "", l.port);
    }
    return out;
}

std::optional<kafka::broker_endpoint> listener_endpoint(int32_t id, std::string_view listeners, std::string_view name) {
    for (auto part : std::views::split(listeners, ',')) {
        std::string_view l(part.begin(), part.end());
        auto sep = l.find("://");
        if (sep == std::string_view::npos || l.substr(0, sep) != name) continue;
        auto hp = l.substr(sep + 3);
        auto colon = hp.rfind(':');
        if (colon == std::string_view::npos) return std::nullopt;
        auto host = hp.substr(0, colon);
        if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
        int32_t port = 0;
        auto ps = hp.substr(colon + 1);
        auto [p, ec] = std::from_chars(ps.data(), ps.data() + ps.size(), port);
        if (ec != std::errc() || p != ps.data() + ps.size() || host.empty()) return std::nullopt;
        return kafka::broker_endpoint{id, std::string(host), port};
    }
    return std::nullopt;
}

// ---------------- redis_cluster_view ----------------

redis_cluster_view::redis_cluster_view(int32_t self, live_fn live, generation_fn generation)
    : _self(self), _live(std::move(live)), _generation(std::move(generation)) {}

redis_cluster_view::redis_cluster_view(int32_t self, std::unique_ptr<redis::broker_registry> registry)
    : _self(self), _registry(std::move(registry)) {
    auto* r = _registry.get();
    _live = [r] { return r->cached_live(); };
    _generation = [r] { return r->generation(); };
}

redis_cluster_view::~redis_cluster_view() {
    if (!_registry) return;
    _registry->stop();
    if (auto l = _registry->leave(); !l)
        spdlog::warn("broker {}: leaving the broker registry: {} (the others drop it within the session timeout)",
                     _self, l.error());
    else
        spdlog::info("broker {}: left the broker registry", _self);
}

std::vector<int32_t> redis_cluster_view::live_ids() const {
    auto gen = _generation();
    std::lock_guard lk(_mu);
    if (gen != _ids_generation || _ids.empty()) {
        _ids.clear();
        for (auto& b : _live()) _ids.push_back(b.id);
        if (_ids.empty()) _ids.push_back(_self); // nobody known yet: serve alone
        _ids_generation = gen;
    }
    return _ids;
}

std::vector<kafka::broker_endpoint> redis_cluster_view::brokers(std::string_view listener,
                                                                const kafka::broker_endpoint& self) const {
    std::vector<kafka::broker_endpoint> out;
    bool has_self = false;
    for (auto& b : _live()) {
        if (b.id == _self) {
            out.push_back(self); // the very address the client used
            has_self = true;
        } else if (auto e = listener_endpoint(b.id, b.listeners, listener)) {
            out.push_back(std::move(*e));
        }
    }
    // The client reached this broker, so it is listed even while its own entry is being renewed.
    if (!has_self) out.insert(std::ranges::upper_bound(out, self.node_id, {}, &kafka::broker_endpoint::node_id), self);
    return out;
}

int32_t redis_cluster_view::partition_leader(std::string_view topic, int32_t partition) const {
    auto ids = live_ids();
    return redis::rendezvous_owner(redis::partition_item(topic, partition), ids);
}

int32_t redis_cluster_view::coordinator(std::string_view key, bool txn) const {
    auto ids = live_ids();
    return redis::rendezvous_owner(txn ? fmt::format("txn:{}", key) : redis::group_item(key), ids);
}

// ---------------- offsets and producer ids ----------------

namespace {

/// kafka::offset_store over redis::group_offsets (the same data, the kafka module's types).
class redis_offset_store final : public kafka::offset_store {
public:
    redis_offset_store(std::shared_ptr<redis::client> c, std::string ns) : _c(std::move(c)), _o(*_c, std::move(ns)) {}

    result<int64_t> claim(std::string_view group) override { return _o.claim(group); }
    using kafka::offset_store::commit;
    result<void> commit(std::string_view group, std::span<const std::pair<key, committed>> entries,
                        const commit_fence& fence) override {
        std::vector<std::pair<redis::group_offsets::key, redis::group_offsets::committed>> v;
        v.reserve(entries.size());
        for (auto& [k, c] : entries) v.push_back({k, {c.offset, c.leader_epoch, c.metadata}});
        using kind = redis::group_offsets::fence::kind;
        const kind what = fence.what == commit_fence::kind::member   ? kind::member
                          : fence.what == commit_fence::kind::simple ? kind::simple
                                                                     : kind::unchecked;
        return _o.commit(group, v, {what, fence.coordinator, fence.generation});
    }
    result<std::map<key, committed>> load(std::string_view group) const override {
        std::map<key, committed> out;
        for (auto& [k, c] : FLOE_TRY(_o.load(group))) out.emplace(k, committed{c.offset, c.leader_epoch, c.metadata});
        return out;
    }
    result<std::vector<std::string>> list() const override { return _o.groups(); }
    result<bool> contains(std::string_view group) const override { return _o.contains(group); }
    result<void> delete_group(std::string_view group) override { return _o.delete_group(group); }
    result<void> delete_offsets(std::string_view group, std::span<const key> keys) override {
        return _o.delete_offsets(group, keys);
    }

private:
    std::shared_ptr<redis::client> _c;
    redis::group_offsets _o;
};

class redis_producer_ids final : public kafka::producer_id_allocator {
public:
    redis_producer_ids(std::shared_ptr<redis::client> c, std::string ns) : _c(std::move(c)), _ids(*_c, std::move(ns)) {}
    result<int64_t> next() override { return _ids.next(); }

private:
    std::shared_ptr<redis::client> _c;
    redis::producer_ids _ids;
};

} // namespace

result<std::string> instance_token(const std::filesystem::path& data_dir) {
    auto path = data_dir / "broker.token";
    {
        std::ifstream in(path);
        std::string t;
        if (in && std::getline(in, t) && t.size() >= 16) return t;
    }
    uint64_t a = os_random64(), b = os_random64();
    auto t = fmt::format("{:016x}{:016x}", a, b);
    auto tmp = data_dir / "broker.token.tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return fail(errc::io_error, "cannot write {}: {}", tmp.string(), std::strerror(errno));
    auto line = t + "\n";
    bool ok = ::write(fd, line.data(), line.size()) == ssize_t(line.size()) && ::fsync(fd) == 0;
    ::close(fd);
    std::error_code ec;
    if (ok) std::filesystem::rename(tmp, path, ec);
    if (!ok || ec) return fail(errc::io_error, "cannot write {}", path.string());
    return t;
}

void configure_redis_cluster(const config::settings& s, const std::filesystem::path& data_dir,
                             const std::shared_ptr<redis::client>& client, kafka::broker_options& bo,
                             const redis::broker_registry** joined) {
    auto ns = s.get_string("floe.namespace");
    auto ttl = s.get_duration("floe.cluster.session-timeout");
    bo.open_offset_store = [&client, ns]() -> result<std::unique_ptr<kafka::offset_store>> {
        if (!client) return fail(errc::internal, "the Redis client is not open");
        return std::unique_ptr<kafka::offset_store>(std::make_unique<redis_offset_store>(client, ns));
    };
    bo.open_producer_ids = [&client, ns]() -> result<std::unique_ptr<kafka::producer_id_allocator>> {
        if (!client) return fail(errc::internal, "the Redis client is not open");
        return std::unique_ptr<kafka::producer_id_allocator>(std::make_unique<redis_producer_ids>(client, ns));
    };
    // floe.broker.id unset: the registry chooses (and keeps the id with the data directory).
    std::optional<int32_t> asked;
    if (auto t = s.get_optional("floe.broker.id")) asked = static_cast<int32_t>(std::stoll(*t));
    bo.join_cluster = [&client, ns, ttl, asked, data_dir, joined](const std::vector<kafka::advertised_listener>& listeners)
        -> result<std::unique_ptr<kafka::cluster_view>> {
        if (!client) return fail(errc::internal, "the Redis client is not open");
        auto token = FLOE_TRY_CTX(instance_token(data_dir), "floe.data-dir");
        auto ads = format_listeners(listeners);
        // serve holds the data directory's lock: a live entry of this token from this host and
        // path is this broker before a crash (taken over at once), not a copy.
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) != 0) host[0] = 0;
        std::error_code ec;
        auto where = std::filesystem::weakly_canonical(data_dir, ec);
        auto place = fmt::format("{}:{}", host, (ec ? data_dir : where).string());
        auto reg = redis::broker_registry::register_broker(*client, ns, {asked, token, ads, ttl, place});
        if (!reg) {
            const auto code = reg.error().code();
            if (code != errc::already_exists && code != errc::conflict)
                return fail(std::move(reg).error().with_context("joining the broker registry in Redis"));
            // Refused: the message names the cause and the way out, nothing else.
            if (code == errc::already_exists)
                return fail(errc::conflict,
                            "floe.broker.id={}: {}; give this broker an id no live broker of namespace '{}' has, or "
                            "leave floe.broker.id unset to take the lowest free one",
                            asked.value_or(-1), reg.error().message(), ns);
            return fail(errc::conflict,
                        "{}: {}; stop the other process, or delete {} in the copy so that it joins as a new broker",
                        (data_dir / "broker.token").string(), reg.error().message(),
                        (data_dir / "broker.token").string());
        }
        auto registry = std::move(*reg);
        const int32_t id = registry->id();
        if (auto l = registry->live(); !l) spdlog::warn("broker {}: reading the live brokers: {}", id, l.error());
        registry->start(std::max<std::chrono::milliseconds>(ttl / 3, std::chrono::milliseconds(100)));
        auto live = registry->cached_live();
        spdlog::info("broker {} joined the cluster ({}session timeout {} ms, advertised {}): {} live broker(s)", id,
                     asked ? "" : "id kept with this data directory, ", ttl.count(), ads, live.size());
        if (joined) *joined = registry.get();
        return std::unique_ptr<kafka::cluster_view>(std::make_unique<redis_cluster_view>(id, std::move(registry)));
    };
}

} // namespace floe::app
