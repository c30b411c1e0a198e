#pragma once
// The storage worker's per-partition leases on Redis (floe.local.type=redis): the adapter from
// tiering::partition_leases to redis::lease_manager, with the lease of each partition kept in
// the partition's own hash slot (redis_tier::offload_lease_key) so the tier's marker and trim
// functions check the fencing epoch atomically with their writes, and ownership by rendezvous
// hashing over the live brokers of a redis::broker_registry.

#include "base/result.h"
#include "redis/client.h"
#include "redis/coordination.h"
#include "tiering/partition_leases.h"

#include <chrono>
#include <memory>
#include <string>

namespace floe::app {

/// Thread-safe (lease_manager is stateless; the registry's cache is read under its lock).
/// The client and the registry (may be nullptr: then this broker owns every partition, and
/// spreading is left to free leases) must outlive it.
class redis_partition_leases final : public tiering::partition_leases {
public:
    /// `holder` names this broker in the lease hashes (keep it stable across restarts of the same
    /// broker: a restarted broker then takes its unexpired leases back at once).
    static result<std::unique_ptr<redis_partition_leases>> create(redis::client& c, std::string ns,
                                                                  const redis::broker_registry* registry,
                                                                  int32_t broker_id, std::string holder,
                                                                  std::chrono::milliseconds duration);

    bool owns(std::string_view topic, int32_t partition) override;
    result<bool> is_free(std::string_view topic, int32_t partition) override;
    result<std::optional<tiering::partition_lease>> acquire(std::string_view topic, int32_t partition) override;
    result<tiering::partition_lease> renew(const tiering::partition_lease& l) override;
    void release(const tiering::partition_lease& l) override;
    std::chrono::milliseconds duration() const override { return _duration; }

private:
    redis_partition_leases(std::unique_ptr<redis::lease_manager> m, std::string ns,
                           const redis::broker_registry* registry, int32_t broker_id, std::string holder,
                           std::chrono::milliseconds duration);
    redis::lease as_redis(const tiering::partition_lease& l) const;

    std::unique_ptr<redis::lease_manager> _leases;
    std::string _ns;
    const redis::broker_registry* _registry;
    int32_t _broker_id;
    std::string _holder;
    std::chrono::milliseconds _duration;
};

} // namespace floe::app
