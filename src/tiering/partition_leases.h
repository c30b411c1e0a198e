#pragma once
// Per-partition leases for the storage worker, when several brokers share one local tier
// (Redis): each partition is offloaded by one broker at a time, work spreads over the brokers
// and moves when one dies. Declared here, beside its consumer; the Redis implementation is
// wired in src/app (offload_leases.h) over redis::lease_manager, so tiering never depends on
// redis.

#include "base/result.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace floe::tiering {

/// A partition's lease as held by this worker.
struct partition_lease {
    std::string topic;
    int32_t partition = 0;
    /// The fencing epoch: grows with every new holder. Passed to the local tier with every
    /// marker move and retention trim (log::offload_fence), which refuse a stale one.
    int64_t epoch = 0;
    /// Local steady-clock time until which the holder may act (never later than the lease's
    /// expiry as the lease store sees it).
    std::chrono::steady_clock::time_point valid_until{};
};

/// The leases of one broker. Implementations are thread-safe (offload threads renew their own
/// partitions' leases concurrently).
class partition_leases {
public:
    virtual ~partition_leases() = default;

    /// Whether this broker owns the partition by the cluster's spread rule (rendezvous hashing
    /// over the live brokers): it takes and keeps the leases it owns; the others it takes only
    /// when they have stayed free for a while (an owner that is not working them: its worker
    /// disabled, or stuck), and gives those back after the pass.
    virtual bool owns(std::string_view topic, int32_t partition) = 0;
    /// True when nobody holds the lease (never taken, released or expired).
    virtual result<bool> is_free(std::string_view topic, int32_t partition) = 0;
    /// Takes the lease when free, expired or already this broker's (then renewed, same epoch).
    /// nullopt when another live holder has it.
    virtual result<std::optional<partition_lease>> acquire(std::string_view topic, int32_t partition) = 0;
    /// Extends a lease still held with the same epoch. errc::conflict when it expired or changed
    /// hands: the caller stops the partition's work at once.
    virtual result<partition_lease> renew(const partition_lease& l) = 0;
    /// Gives the lease up (only if still held with this epoch).
    virtual void release(const partition_lease& l) = 0;
    /// How long a lease lasts without renewal (floe.storage.worker.lease-duration).
    virtual std::chrono::milliseconds duration() const = 0;
};

} // namespace floe::tiering
