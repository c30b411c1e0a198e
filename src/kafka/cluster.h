#pragma once
// Who serves what when several brokers share one local tier: the brokers Metadata lists, the
// "leader" it names for each partition, and the coordinator of each group. Declared here, beside
// its consumer (the request handlers), so the kafka module does not depend on how the brokers
// find each other (the Redis registry lives in src/redis, the adapter in src/app).

#include "kafka/messages.h"

#include <cstdint>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

namespace floe::kafka {

/// The cluster as one broker sees it. Every broker accepts Produce, Fetch and ListOffsets for
/// every partition (offsets are assigned inside the shared local tier), so the partition
/// leader is only where clients are sent; a group, though, is served by exactly one broker
/// (its coordinator keeps the members in memory): the others answer NOT_COORDINATOR.
///
/// Implementations are thread-safe and answer from memory (they are asked on every Metadata
/// and every group request, on the io threads).
class cluster_view {
public:
    virtual ~cluster_view() = default;

    /// The live brokers as told to a client that connected through listener `listener` (a
    /// security protocol name, e.g. "PLAINTEXT"); this broker's own entry is `self`, the
    /// address of that very listener. Brokers without such a listener are left out. Never empty.
    virtual std::vector<broker_endpoint> brokers(std::string_view listener, const broker_endpoint& self) const = 0;
    /// The broker named leader of a partition.
    virtual int32_t partition_leader(std::string_view topic, int32_t partition) const = 0;
    /// The coordinator of a consumer group (`txn` false) or a transactional id (`txn` true).
    virtual int32_t coordinator(std::string_view key, bool txn) const = 0;
    /// Increases whenever the answers above may have changed (a broker joined or died).
    virtual uint64_t generation() const = 0;
    /// This broker's id when the cluster chose it at join time (it then replaces
    /// broker_options::node_id); nullopt: the configured node_id.
    virtual std::optional<int32_t> self_id() const { return std::nullopt; }
};

/// One broker alone: it lists itself, leads every partition and coordinates every group.
class single_broker_view final : public cluster_view {
public:
    explicit single_broker_view(int32_t id) : _id(id) {}
    std::vector<broker_endpoint> brokers(std::string_view, const broker_endpoint& self) const override {
        return {self};
    }
    int32_t partition_leader(std::string_view, int32_t) const override { return _id; }
    int32_t coordinator(std::string_view, bool) const override { return _id; }
    uint64_t generation() const override { return 0; }

private:
    int32_t _id;
};

} // namespace floe::kafka
