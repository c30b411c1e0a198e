#pragma once
// State of Kafka consumer groups and producers that every broker of a cluster shares: the
// committed offsets of each group, and producer id allocation. Plain data and Redis keys only;
// the kafka module's interfaces over them are adapted in src/app (redis does not depend on kafka).

#include "base/result.h"
#include "redis/client.h"

#include <atomic>
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
/// atomic step (all entries of a request or none); the set is written before the hash on commit
/// and after it on delete, so it names at least every group that has offsets.
///
/// Fencing (a commit that arrives late must not set offsets back): beside the offsets, in the
/// same slot, the fence hash `<ns>:offsets-fence:{<ns>:g:<group>}` holds `coordinator` (the
/// newest claim's epoch: claim() adds one, so epochs only grow) and, per partition, the
/// `<coordinator>,<generation>` of the commit that wrote it. A member commit carries the epoch
/// its coordinator claimed and its generation (classic) or member epoch (KIP-848); the
/// `floe_groups_commit` function refuses it when a newer claim exists (FLOE_FENCED:
/// errc::conflict) or when a partition was written by a newer (coordinator, generation), compared
/// in that order (FLOE_STALE: errc::invalid_argument). A simple commit (no member) is never
/// refused: it claims a new epoch itself, so every commit validated before it is fenced.
///
/// Stateless apart from the client reference (the client must outlive it) and a flag saying
/// the function library was loaded: thread-safe.
class group_offsets {
public:
    /// Who validated a commit (see above). `unchecked`: a plain HSET, no check and no stamp
    /// (transactional offsets, tools).
    struct fence {
        enum class kind : uint8_t { unchecked, simple, member };
        kind what = kind::unchecked;
        int64_t coordinator = 0; ///< member: what claim() gave the group object that validated it
        int32_t generation = -1; ///< member: classic generation or KIP-848 member epoch
    };

    struct committed {
        int64_t offset = -1;
        int32_t leader_epoch = -1;
        std::optional<std::string> metadata;
        friend bool operator==(const committed&, const committed&) = default;
    };
    using key = std::pair<std::string, int32_t>; ///< topic, partition

    group_offsets(client& c, std::string ns);

    /// A new coordinator epoch for `group` (1, 2, ...): taken by a broker when it starts to
    /// coordinate the group (creates the group's state), before any commit it validates.
    result<int64_t> claim(std::string_view group);
    /// conflict: a newer claim exists (the caller's group state is stale: drop it);
    /// invalid_argument: a partition was written by a newer generation (refuse the commit).
    result<void> commit(std::string_view group, std::span<const std::pair<key, committed>> entries, const fence& f);
    /// Unchecked.
    result<void> commit(std::string_view group, std::span<const std::pair<key, committed>> entries) {
        return commit(group, entries, fence{});
    }
    result<std::map<key, committed>> load(std::string_view group) const;
    result<std::vector<std::string>> groups() const;
    result<bool> contains(std::string_view group) const;
    result<void> delete_group(std::string_view group);
    result<void> delete_offsets(std::string_view group, std::span<const key> keys);

    /// The hash key of a group (tests read it with plain commands).
    std::string group_key(std::string_view group) const;
    /// The fence hash of a group (same slot as group_key).
    std::string fence_key(std::string_view group) const;

private:
    result<void> load_functions();
    client& _client;
    std::string _ns, _groups_key;
    std::atomic<bool> _loaded{false};
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
