#include "app/offload_leases.h"

#include "base/random.h"
#include "redis_tier/redis_tier.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>

namespace floe::app {

redis_partition_leases::redis_partition_leases(std::unique_ptr<redis::lease_manager> m, std::string ns,
                                               const redis::broker_registry* registry, int32_t broker_id,
                                               std::string holder, std::chrono::milliseconds duration)
    : _leases(std::move(m)), _ns(std::move(ns)), _registry(registry), _broker_id(broker_id),
      _holder(std::move(holder)), _duration(duration) {}

result<std::unique_ptr<redis_partition_leases>> redis_partition_leases::create(
    redis::client& c, std::string ns, const redis::broker_registry* registry, int32_t broker_id, std::string holder,
    std::chrono::milliseconds duration) {
    if (holder.empty()) return fail(errc::invalid_argument, "a lease holder name is required");
    auto m = FLOE_TRY_CTX(redis::lease_manager::create(c), "loading the lease functions");
    return std::unique_ptr<redis_partition_leases>(new redis_partition_leases(
        std::move(m), std::move(ns), registry, broker_id, std::move(holder), duration));
}

bool redis_partition_leases::owns(std::string_view topic, int32_t partition) {
    if (!_registry) return true;
    auto live = _registry->cached_live();
    std::vector<int32_t> ids;
    ids.reserve(live.size() + 1);
    for (auto& b : live) ids.push_back(b.id);
    // Before the first listing (or while Redis cannot list): this broker alone.
    if (std::find(ids.begin(), ids.end(), _broker_id) == ids.end()) ids.push_back(_broker_id);
    return redis::rendezvous_owner(redis::partition_item(topic, partition), ids) == _broker_id;
}

result<bool> redis_partition_leases::is_free(std::string_view topic, int32_t partition) {
    auto st = FLOE_TRY(_leases->get(redis_tier::offload_lease_key(_ns, topic, partition)));
    return !st.held();
}

result<std::optional<tiering::partition_lease>> redis_partition_leases::acquire(std::string_view topic,
                                                                                int32_t partition) {
    auto key = redis_tier::offload_lease_key(_ns, topic, partition);
    auto l = FLOE_TRY(_leases->try_acquire(key, _holder, _duration));
    if (!l) return std::optional<tiering::partition_lease>{};
    tiering::partition_lease out;
    out.topic = std::string(topic);
    out.partition = partition;
    out.epoch = l->epoch;
    out.valid_until = l->valid_until;
    return std::optional<tiering::partition_lease>(std::move(out));
}

redis::lease redis_partition_leases::as_redis(const tiering::partition_lease& l) const {
    redis::lease r;
    r.key = redis_tier::offload_lease_key(_ns, l.topic, l.partition);
    r.holder = _holder;
    r.epoch = l.epoch;
    return r;
}

result<tiering::partition_lease> redis_partition_leases::renew(const tiering::partition_lease& l) {
    auto r = FLOE_TRY(_leases->renew(as_redis(l), _duration));
    tiering::partition_lease out = l;
    out.valid_until = r.valid_until;
    return out;
}

void redis_partition_leases::release(const tiering::partition_lease& l) {
    if (auto r = _leases->release(as_redis(l)); !r)
        spdlog::warn("storage worker: cannot release the lease of {}-{} (it expires by itself): {}", l.topic,
                     l.partition, r.error().message());
}

namespace {

/// The token in `path`, or a new random one written there first.
result<std::string> load_or_create_token(const std::filesystem::path& path) {
    if (path.empty()) return std::string();
    {
        std::ifstream in(path);
        std::string t;
        if (in >> t && !t.empty()) return t;
    }
    auto t = fmt::format("{:016x}{:016x}", os_random64(), os_random64());
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    auto tmp = path.string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << t << '\n';
        if (!out.flush()) return fail(errc::io_error, "cannot write {}", tmp);
    }
    std::filesystem::rename(tmp, path, ec);
    if (ec) return fail(errc::io_error, "cannot install {}: {}", path.string(), ec.message());
    return t;
}

} // namespace

result<redis_offload_wiring> wire_redis_offload(redis::client& c, const std::string& ns, int32_t broker_id,
                                                const std::string& listeners, const std::string& holder,
                                                std::chrono::milliseconds lease_duration,
                                                const std::filesystem::path& token_file) {
    // A dead broker leaves the live set within the ttl; its leases expire within the lease
    // duration. The ttl is kept at most half the lease duration so that ownership has moved by
    // the time the leases are free.
    auto ttl = std::clamp<std::chrono::milliseconds>(lease_duration / 2, std::chrono::seconds(1),
                                                     std::chrono::seconds(10));
    redis_offload_wiring w;
    auto token = FLOE_TRY_CTX(load_or_create_token(token_file), "the broker's registry token");
    w.registry = FLOE_TRY_CTX(redis::broker_registry::create(c, ns, broker_id, listeners, ttl, token),
                              "floe.broker.id: registering broker {}", broker_id);
    FLOE_TRY_CTX(w.registry->join(ttl + std::chrono::seconds(1)), "floe.broker.id: registering broker {}",
                 broker_id);
    w.registry->start(ttl / 3);
    w.leases = FLOE_TRY(redis_partition_leases::create(c, ns, w.registry.get(), broker_id, holder, lease_duration));
    return w;
}

} // namespace floe::app
