#include "app/offload_leases.h"

#include "redis_tier/redis_tier.h"

#include <spdlog/spdlog.h>

#include <algorithm>

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

} // namespace floe::app
