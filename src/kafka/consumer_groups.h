#pragma once

// KIP-848 consumer groups (group.protocol=consumer): the group coordinator of
// ConsumerGroupHeartbeat / ConsumerGroupDescribe, with server-side assignment.

#include "kafka/messages_cgroup.h"

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace floe::kafka {

/// A topic as the consumer-group coordinator sees it: a snapshot the caller takes of the log.
struct cg_topic {
    std::string name;
    uuid id;
    int32_t partitions = 0;
};

/// Partitions by topic id.
using cg_partitions = std::map<uuid, std::set<int32_t>>;

/// Server-side assignors (`group.remote.assignor`). Pure functions of their input, so unit
/// tests check them alone.
namespace cg_assignor {

struct member_spec {
    std::string id;
    std::set<uuid> topics; ///< the existing topics the member subscribes to
};

/// member id -> its target partitions. Every member of `members` has an entry.
using assignment = std::map<std::string, cg_partitions>;

/// `uniform`: every partition of a subscribed topic to exactly one subscriber, counts as even
/// as the subscriptions allow (homogeneous subscriptions: counts differ by at most one), and
/// sticky: a partition stays with its `previous` owner while that keeps the balance.
assignment uniform(std::span<const member_spec> members, const std::map<uuid, int32_t>& partitions,
                   const assignment& previous);
/// `range`: per topic, its subscribers sorted by member id take contiguous ranges, the first
/// (partitions % subscribers) one partition more (co-partitioned topics line up).
assignment range(std::span<const member_spec> members, const std::map<uuid, int32_t>& partitions);

bool known(std::string_view name) noexcept;

} // namespace cg_assignor

/// The KIP-848 group coordinator for a single broker.
///
/// Per group: a group epoch, bumped whenever membership, a subscription or the metadata of a
/// subscribed topic changes; a target assignment computed by the assignor for that epoch (the
/// assignment epoch). Per member: a member epoch and the partitions it owns. A member moves
/// to the target through incremental reconciliation:
///   - partitions it owns but no longer targets are revoked first: its answer shrinks to the
///     partitions it keeps, its epoch stays, and the revoked ones stay owned by it until a
///     heartbeat reports owned partitions without them (the ack);
///   - then its epoch becomes the assignment epoch, and each target partition is given as
///     soon as no other member owns it (a partition is never owned by two members).
/// A member that does not ack a revocation within its rebalance timeout is removed; one whose
/// heartbeats stop for the session timeout too. Static members (`group.instance.id`) leaving
/// with epoch -2 keep their assignment for the session timeout: a new member id with the same
/// instance id takes it over at once.
///
/// Subscriptions by regex are resolved here against the topics the caller passes in each
/// heartbeat, so a topic created later joins on the next heartbeat.
///
/// Thread-safe: one mutex; the caller must not hold locks this class could wait on.
class consumer_group_coordinator {
public:
    using clock = std::chrono::steady_clock;

    struct options {
        std::chrono::milliseconds session_timeout{45000};
        std::chrono::milliseconds heartbeat_interval{5000};
        std::string default_assignor = "uniform";
        size_t max_size = 1000;
    };

    explicit consumer_group_coordinator(options opts);
    ~consumer_group_coordinator();

    consumer_group_heartbeat_response heartbeat(const consumer_group_heartbeat_request& req,
                                                int16_t version, std::string_view client_id,
                                                std::string_view client_host,
                                                std::span<const cg_topic> topics,
                                                clock::time_point now);

    consumer_group_describe_response::group describe(std::string_view group,
                                                     std::span<const cg_topic> topics);

    /// nullopt when `group` is not a consumer group (the classic checks apply); else 0 or the
    /// error for an OffsetCommit of this member/epoch (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH,
    /// UNSUPPORTED_VERSION below v9).
    /// `claimed` receives the coordinator epoch of the group (see group_coordinator::claim).
    std::optional<int16_t> validate_commit(std::string_view group, std::string_view member_id,
                                           int32_t epoch, int16_t version, int64_t* claimed = nullptr);
    /// The same for OffsetFetch v9+ naming a member (null member id: no check).
    std::optional<int16_t> validate_fetch(std::string_view group,
                                          std::optional<std::string_view> member_id, int32_t epoch);

    /// True when a consumer group of that id has members (a classic JoinGroup is refused).
    bool has_members(std::string_view group);
    /// Every consumer group with its state name.
    std::vector<std::pair<std::string, std::string>> list();
    /// GROUP_ID_NOT_FOUND (no such consumer group), NON_EMPTY_GROUP, or 0 (forgotten).
    int16_t delete_group(std::string_view group);

    /// The coordinator epoch the group was created with; nullopt when there is no such group.
    std::optional<int64_t> claimed(std::string_view group);
    /// Creates an empty group holding the coordinator epoch `claimed` (nothing if it exists).
    void create(std::string_view group, int64_t claimed);
    /// Forgets the group if it holds `claimed` (nullopt: if it has no member and a claimed
    /// epoch above 0); true if it did.
    /// Its members' next heartbeats are answered UNKNOWN_MEMBER_ID and they join again.
    bool drop(std::string_view group, std::optional<int64_t> claimed);

    /// Expires members whose session or revocation timed out.
    void tick(clock::time_point now);

    /// The target assignment of a member (tests).
    cg_partitions target_of(std::string_view group, std::string_view member_id);
    int32_t group_epoch(std::string_view group);

private:
    struct member;
    struct group;
    group* find(std::string_view name);
    void remove_member(group& g, const std::string& id);
    void resolve_and_assign(group& g, std::span<const cg_topic> topics, bool bump);
    void reconcile(group& g, member& m);
    static std::string state_name(group& g);
    options _opts;
    std::mutex _mu;
    std::map<std::string, std::unique_ptr<group>, std::less<>> _groups;
};

} // namespace floe::kafka
