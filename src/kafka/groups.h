#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "kafka/messages.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace floe::kafka {

/// Committed offsets of consumer groups, kept in memory and in an append-only file
/// (<dir>/offsets.log: records [u32 length][u32 crc32c][payload]) that is fsynced before a
/// commit is acknowledged and compacted (rewritten from memory) on open. A torn tail after a
/// crash is cut at the last whole record. Thread-safe (one mutex).
class offset_store {
public:
    struct committed {
        int64_t offset = -1;
        int32_t leader_epoch = -1;
        std::optional<std::string> metadata;
    };
    using key = std::pair<std::string, int32_t>; ///< topic, partition

    static result<std::unique_ptr<offset_store>> open(const std::filesystem::path& dir);
    ~offset_store();

    /// Stores and fsyncs every entry of one OffsetCommit request as one write.
    result<void> commit(std::string_view group,
                        std::span<const std::pair<key, committed>> entries);
    std::optional<committed> get(std::string_view group, const key& k) const;
    std::map<key, committed> all(std::string_view group) const;
    std::vector<std::string> groups() const;
    bool has_group(std::string_view group) const;
    result<void> delete_group(std::string_view group);

private:
    offset_store() = default;
    result<void> append_record(const byte_buffer& payload);
    mutable std::mutex _mu;
    int _fd = -1;
    std::map<std::string, std::map<key, committed>, std::less<>> _groups;
};

/// Classic (JoinGroup/SyncGroup) consumer group coordinator for a single broker.
///
/// State machine per group: Empty -> PreparingRebalance (a member joins or leaves or times
/// out) -> CompletingRebalance (every known member rejoined, or the rebalance timeout passed;
/// generation bumped, leader chosen) -> Stable (the leader's SyncGroup delivered assignments).
/// Requests never block inside the coordinator: JoinGroup and SyncGroup return `pending` and
/// the connection polls (`poll_join` / `poll_sync`) until an answer is ready. Time moves through
/// `tick(now)`, called by the broker's timer and by polling connections: it completes
/// rebalances and expires members whose session timed out.
///
/// Thread-safe: one mutex guards everything; callers run on any io thread.
class group_coordinator {
public:
    using clock = std::chrono::steady_clock;

    struct options {
        std::chrono::milliseconds initial_rebalance_delay{300};
        int32_t min_session_timeout_ms = 1000;
        int32_t max_session_timeout_ms = 1800000;
    };

    group_coordinator(offset_store& offsets, options opts);
    ~group_coordinator();

    struct join_result {
        bool pending = false;
        join_group_response response;
    };
    join_result join(const join_group_request& req, std::string_view client_id,
                     std::string_view client_host, clock::time_point now);
    /// The answer for a member waiting in JoinGroup, or pending.
    join_result poll_join(std::string_view group, std::string_view member_id,
                          clock::time_point now);

    struct sync_result {
        bool pending = false;
        sync_group_response response;
    };
    sync_result sync(const sync_group_request& req, clock::time_point now);
    sync_result poll_sync(std::string_view group, std::string_view member_id, int32_t generation,
                          clock::time_point now);

    int16_t heartbeat(const heartbeat_request& req, clock::time_point now);
    leave_group_response leave(const leave_group_request& req, int16_t version,
                               clock::time_point now);

    /// Checks that an OffsetCommit may proceed for this member/generation; 0 if so.
    int16_t validate_commit(std::string_view group, std::string_view member_id,
                            int32_t generation);

    list_groups_response list(const list_groups_request& req);
    describe_groups_response::group describe(std::string_view group);
    int16_t delete_group(std::string_view group);

    /// Completes due rebalances and expires timed-out members.
    void tick(clock::time_point now);

    offset_store& offsets() noexcept { return _offsets; }

private:
    struct member;
    struct group;
    group* find(std::string_view name);
    void prepare_rebalance(group& g, clock::time_point now);
    void maybe_complete(group& g, clock::time_point now);
    /// `id` by value: the member (and its id string) is destroyed on the way.
    void remove_member(group& g, std::string id, clock::time_point now);

    offset_store& _offsets;
    options _opts;
    std::mutex _mu;
    std::map<std::string, std::unique_ptr<group>, std::less<>> _groups;
};

std::string_view group_state_name(int state) noexcept;

} // namespace floe::kafka
