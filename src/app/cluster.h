#pragma once
// Several `floe serve` processes sharing one Redis (floe.local.type=redis) as one Kafka cluster:
// the adapters between the kafka module's interfaces (cluster_view, offset_store,
// producer_id_allocator) and the Redis pieces (broker_registry, rendezvous hashing,
// group_offsets, producer_ids). The kafka module does not depend on redis; this file does both.

#include "base/result.h"
#include "config/settings.h"
#include "kafka/broker.h"
#include "kafka/cluster.h"
#include "redis/coordination.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace floe::redis {
class client;
}

namespace floe::app {

/// Advertised listeners as the registry stores them: "PLAINTEXT://host:port,SASL_SSL://host:port".
std::string format_listeners(const std::vector<kafka::advertised_listener>& listeners);
/// The address of listener `name` in that form; nullopt when the broker has no such listener.
std::optional<kafka::broker_endpoint> listener_endpoint(int32_t id, std::string_view listeners, std::string_view name);

/// The cluster as the broker registry sees it: the live brokers (from a cache the registry's
/// heartbeat thread refreshes, no round trip), partition leaders and group coordinators by
/// rendezvous hashing over the live ids, so every broker computes the same answer. When the
/// registry knows no broker yet (or Redis was never reached), this broker alone.
/// Thread-safe. Owns the registry when given one: destroying the view stops the heartbeats and
/// leaves the registry (a clean stop; the others take over at once).
class redis_cluster_view final : public kafka::cluster_view {
public:
    using live_fn = std::function<std::vector<redis::broker_info>()>;
    using generation_fn = std::function<uint64_t()>;
    /// For tests: the live brokers and their generation from functions.
    redis_cluster_view(int32_t self, live_fn live, generation_fn generation);
    /// Over a registry that has joined and heartbeats (start()ed).
    redis_cluster_view(int32_t self, std::unique_ptr<redis::broker_registry> registry);
    ~redis_cluster_view() override;

    std::vector<kafka::broker_endpoint> brokers(std::string_view listener,
                                                const kafka::broker_endpoint& self) const override;
    int32_t partition_leader(std::string_view topic, int32_t partition) const override;
    int32_t coordinator(std::string_view key, bool txn) const override;
    uint64_t generation() const override { return _generation(); }
    std::optional<int32_t> self_id() const override { return _self; }

private:
    /// The live ids (sorted), recomputed when the generation moves.
    std::vector<int32_t> live_ids() const;

    int32_t _self;
    std::unique_ptr<redis::broker_registry> _registry;
    live_fn _live;
    generation_fn _generation;
    mutable std::mutex _mu;
    mutable uint64_t _ids_generation = ~uint64_t(0);
    mutable std::vector<int32_t> _ids;
};

/// The random token that identifies this data directory's broker in the registry across
/// restarts (<data-dir>/broker.token, created on first use), so a broker restarted after a
/// crash takes its id back at once.
result<std::string> instance_token(const std::filesystem::path& data_dir);

/// Sets the broker's hooks for a cluster on Redis: group offsets and producer ids in Redis, and
/// joining the registry once the listeners are bound (floe.cluster.session-timeout). With
/// floe.broker.id unset the broker takes the id kept with its data directory's token, else the
/// lowest free one (bo.node_id is then replaced by it); a live broker of another data directory
/// with the asked id, or a live copy of this data directory, stops start-up at once
/// (errc::conflict, the message naming the cause and the way out). `client` is the Redis
/// client of the local tier, filled when the broker opens it (before these hooks run); it must
/// outlive the broker. Once joined, `*joined` points at the registry (owned by the broker's
/// cluster view, so valid until the broker is destroyed): the storage worker's partition leases
/// spread over the same live brokers.
void configure_redis_cluster(const config::settings& s, const std::filesystem::path& data_dir,
                             const std::shared_ptr<redis::client>& client, kafka::broker_options& bo,
                             const redis::broker_registry** joined);

} // namespace floe::app
