#pragma once
// State of Kafka consumer groups and producers that every broker of a cluster shares: the
// committed offsets of each group, and producer id allocation. Plain data and Redis keys only;
// the kafka module's interfaces over them are adapted in src/app (redis does not depend on kafka).

#include "base/result.h"
#include "redis/client.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace floe::redis {

/// Committed offsets of consumer groups in Redis.
///
/// Keys: one hash per group, `<ns>:offsets:{<ns>:g:<group>}` (the hash tag puts each group in a
/// slot of its own, so groups spread over a Redis Cluster), field `<partition>:<topic>` →
/// `<offset>,<leader epoch>,<metadata>` where metadata is `-` (null) or `+` followed by its bytes;
/// and the set `{<ns>}:groups` naming the groups that have committed offsets. One commit is one
/// HSET (atomic: all entries of a request or none); the set is written before the hash on commit
/// and after it on delete, so it names at least every group that has offsets.
///
/// Stateless apart from the client reference (the client must outlive it): thread-safe.
class group_offsets {
public:
    struct committed {
        int64_t offset = -1;
        int32_t leader_epoch = -1;
        std::optional<std::string> metadata;
        friend bool operator==(const committed&, const committed&) = default;
    };
    using key = std::pair<std::string, int32_t>; ///< topic, partition

    group_offsets(client& c, std::string ns);

    result<void> commit(std::string_view group, std::span<const std::pair<key, committed>> entries);
    result<std::map<key, committed>> load(std::string_view group) const;
    result<std::vector<std::string>> groups() const;
    result<bool> contains(std::string_view group) const;
    result<void> delete_group(std::string_view group);
    result<void> delete_offsets(std::string_view group, std::span<const key> keys);

    /// The hash key of a group (tests read it with plain commands).
    std::string group_key(std::string_view group) const;

private:
    client& _client;
    std::string _ns, _groups_key;
};

/// Producer ids unique across every broker and restart: each broker takes blocks of `block` ids
/// with one INCRBY of `{<ns>}:producer-ids` and hands them out locally. Ids start above 1000
/// (below are never given, as by the embedded allocator). Thread-safe.
class producer_ids {
public:
    producer_ids(client& c, std::string ns, int64_t block = 1000);
    result<int64_t> next();

private:
    client& _client;
    std::string _key;
    int64_t _block;
    std::mutex _mu;
    int64_t _next = 0, _limit = 0;
};

} // namespace floe::redis
