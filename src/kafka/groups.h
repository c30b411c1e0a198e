#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "kafka/consumer_groups.h"
#include "kafka/framed_log.h"
#include "kafka/messages.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace floe::kafka {

/// Committed offsets of consumer groups. The interface the coordinator and the handlers use;
/// `open` gives the embedded store (file_offset_store below), the app may give another (the
/// Redis store shared by every broker of a cluster). Implementations are thread-safe.
class offset_store {
public:
    struct committed {
        int64_t offset = -1;
        int32_t leader_epoch = -1;
        std::optional<std::string> metadata;
    };
    using key = std::pair<std::string, int32_t>; ///< topic, partition

    /// The embedded store in <dir>/offsets.log.
    static result<std::unique_ptr<offset_store>> open(const std::filesystem::path& dir);
    virtual ~offset_store() = default;

    /// Who validated a commit, so that a store shared by several brokers refuses one that arrives
    /// after a newer coordinator or generation wrote (a command delayed on its way to Redis).
    /// `unchecked`: no check (transactional offsets, tools); `simple`: a commit outside any
    /// generation (no member; never refused, and it fences every commit validated before it);
    /// `member`: the coordinator epoch claim() gave the group state that validated it, and the
    /// classic generation or KIP-848 member epoch. A store that cannot be written by two
    /// brokers (the embedded one) ignores it.
    struct commit_fence {
        enum class kind : uint8_t { unchecked, simple, member };
        kind what = kind::unchecked;
        int64_t coordinator = 0;
        int32_t generation = -1;
    };

    /// A new coordinator epoch for `group`, higher than every earlier claim: a broker claims a
    /// group when it creates the group's state (starts to coordinate it). 0 for a store that
    /// is not shared (the embedded one).
    virtual result<int64_t> claim(std::string_view group);

    /// Stores every entry of one OffsetCommit request as one durable write. Refused (nothing
    /// written) with errc::conflict when a newer claim of the group exists (the caller's group
    /// state is stale: drop it, the members rejoin), and with errc::invalid_argument when a
    /// partition was written by a newer coordinator epoch and generation.
    virtual result<void> commit(std::string_view group, std::span<const std::pair<key, committed>> entries,
                                const commit_fence& fence) = 0;
    /// Unchecked.
    result<void> commit(std::string_view group, std::span<const std::pair<key, committed>> entries) {
        return commit(group, entries, commit_fence{});
    }
    /// Every committed offset of a group (empty when none); an error when the store cannot be
    /// read (the caller must not take "nothing committed" for an answer then).
    virtual result<std::map<key, committed>> load(std::string_view group) const = 0;
    /// The groups that have committed offsets.
    virtual result<std::vector<std::string>> list() const = 0;
    virtual result<bool> contains(std::string_view group) const = 0;
    virtual result<void> delete_group(std::string_view group) = 0;
    /// OffsetDelete: forgets the group's committed offsets of `keys` (durably first).
    virtual result<void> delete_offsets(std::string_view group, std::span<const key> keys) = 0;

    // Conveniences over the above where an unreadable store may read as empty (logged).
    std::optional<committed> get(std::string_view group, const key& k) const;
    std::map<key, committed> all(std::string_view group) const;
    std::vector<std::string> groups() const;
    bool has_group(std::string_view group) const;
};

/// The embedded offset store: in memory and in an append-only file (<dir>/offsets.log: records
/// [u32 length][u32 crc32c][payload]) that is fsynced before a commit is acknowledged and
/// compacted (rewritten from memory) on open. A torn tail after a crash is cut at the last
/// whole record. Thread-safe (one mutex).
class file_offset_store final : public offset_store {
public:
    static result<std::unique_ptr<file_offset_store>> open(const std::filesystem::path& dir);
    ~file_offset_store() override;

    using offset_store::commit;
    result<void> commit(std::string_view group, std::span<const std::pair<key, committed>> entries,
                        const commit_fence& fence) override;
    result<std::map<key, committed>> load(std::string_view group) const override;
    result<std::vector<std::string>> list() const override;
    result<bool> contains(std::string_view group) const override;
    result<void> delete_group(std::string_view group) override;
    result<void> delete_offsets(std::string_view group, std::span<const key> keys) override;

private:
    file_offset_store() = default;
    result<void> append_record(const byte_buffer& payload);
    mutable std::mutex _mu;
    std::unique_ptr<framed_log> _log;
    std::map<std::string, std::map<key, committed>, std::less<>> _groups;
};

/// Classic (JoinGroup/SyncGroup) consumer group coordinator for a single broker, with static
/// membership (KIP-345).
///
/// State machine per group: Empty -> PreparingRebalance (a member joins or leaves or times
/// out) -> CompletingRebalance (every known member has a JoinGroup in flight, or the
/// rebalance timeout passed; generation bumped, leader chosen) -> Stable (the leader's
/// SyncGroup delivered assignments).
///
/// Waiting requests: JoinGroup and SyncGroup that cannot be answered at once leave a
/// callback with the member (one of each at most; a newer request replaces and answers an
/// older one). The coordinator calls every such callback exactly once, with the answer
/// computed for that very request (generation formed, assignment delivered, or an error:
/// rebalance restarted, member removed or fenced), unless the caller withdrew it first with
/// `cancel_join` / `cancel_sync` (which returns false when the answer was already given). A
/// member whose JoinGroup is in flight counts as joined for the generation being prepared,
/// whenever the rebalance began; members waiting in JoinGroup or SyncGroup do not expire.
/// Callbacks run under the coordinator's mutex, on whichever thread completes the
/// rebalance: they must only hand the answer over (e.g. post it to the connection's strand)
/// and never call back into the coordinator.
///
/// Static members: a JoinGroup with a known `group.instance.id` and no member id replaces
/// the old member id (the old one is fenced: FENCED_INSTANCE_ID on its next request) and,
/// when the group is Stable and its protocol still fits, is answered at once with the
/// current generation, so the member gets its old assignment from SyncGroup without a
/// rebalance.
///
/// Time moves through `tick(now)` (the broker's timer): it completes rebalances whose
/// deadline passed and expires members whose session timed out.
///
/// Thread-safe: one mutex guards everything; callers run on any io thread.
class group_coordinator {
public:
    using clock = std::chrono::steady_clock;

    struct options {
        std::chrono::milliseconds initial_rebalance_delay{300};
        int32_t min_session_timeout_ms = 1000;
        int32_t max_session_timeout_ms = 1800000;
        /// KIP-848 groups (group.consumer.session.timeout.ms, .heartbeat.interval.ms).
        consumer_group_coordinator::options consumer;
    };

    group_coordinator(offset_store& offsets, options opts);
    ~group_coordinator();

    using join_callback = std::function<void(join_group_response)>;
    using sync_callback = std::function<void(sync_group_response)>;

    /// Either an answer now (`pending` false: the callback was dropped unused), or `pending`
    /// with the member id and the ticket that identifies the kept callback.
    struct join_result {
        bool pending = false;
        join_group_response response;
        uint64_t ticket = 0;
    };
    join_result join(const join_group_request& req, std::string_view client_id,
                     std::string_view client_host, clock::time_point now, join_callback cb);
    /// Withdraws a waiting JoinGroup (the request gave up). True if it was still waiting;
    /// false if its callback has already been called (callbacks run under the same mutex, so
    /// the answer is in the caller's hands by then).
    bool cancel_join(std::string_view group, std::string_view member_id, uint64_t ticket,
                     clock::time_point now);

    struct sync_result {
        bool pending = false;
        sync_group_response response;
        uint64_t ticket = 0;
    };
    sync_result sync(const sync_group_request& req, clock::time_point now, sync_callback cb);
    bool cancel_sync(std::string_view group, std::string_view member_id, uint64_t ticket,
                     clock::time_point now);

    int16_t heartbeat(const heartbeat_request& req, clock::time_point now);
    leave_group_response leave(const leave_group_request& req, int16_t version,
                               clock::time_point now);

    using topic_partition = std::pair<std::string_view, int32_t>;
    /// Checks that an OffsetCommit of `partitions` may proceed for this member/generation; 0 if
    /// so. A commit under the generation just before the current one is accepted while the
    /// group completes its rebalance, or for partitions the member still owns (see groups.cc).
    /// `claimed` receives the coordinator epoch of the group's state (see claim()).
    int16_t validate_commit(std::string_view group, std::string_view member_id,
                            int32_t generation,
                            std::optional<std::string_view> instance_id = std::nullopt,
                            std::span<const topic_partition> partitions = {},
                            int64_t* claimed = nullptr);

    /// Before this broker creates the state of `group` (classic, or KIP-848 with `consumer`), it
    /// claims the group in the offset store (offset_store::claim: a coordinator epoch above every
    /// earlier one, on any broker) and creates the state with that epoch, which every commit the
    /// state validates then carries: a commit validated by an older coordinator of the group and
    /// delayed on its way to a shared store is refused there. Nothing to do when the state
    /// exists. Claims are serialised (one store round trip, only when a group arrives here).
    /// An error: the store cannot be reached (answer COORDINATOR_NOT_AVAILABLE, retriable).
    result<void> claim(std::string_view group, bool consumer);
    /// The store refused a commit validated by the state holding `claimed` (a newer claim
    /// exists): that state of `group` (classic or KIP-848) is forgotten, as drop_groups() does,
    /// so its members find the coordinator again and rejoin a freshly claimed state. With
    /// nullopt (after a simple commit, which claims too): the group's claimed states without
    /// members (an unclaimed state, of a store that does not claim, is kept).
    size_t drop_claim(std::string_view group, std::optional<int64_t> claimed);

    list_groups_response list(const list_groups_request& req);
    describe_groups_response::group describe(std::string_view group);
    int16_t delete_group(std::string_view group);

    /// Completes due rebalances and expires timed-out members.
    void tick(clock::time_point now);
    /// Forgets the groups for which `moved` is true (their coordinator is now another broker):
    /// waiting JoinGroup/SyncGroup requests are answered NOT_COORDINATOR, so the members find
    /// the new coordinator; committed offsets stay in the store. Returns how many were dropped.
    size_t drop_groups(const std::function<bool(std::string_view)>& moved);

    offset_store& offsets() noexcept { return _offsets; }
    /// The KIP-848 groups. A group id is either a classic group or a consumer group: a classic
    /// JoinGroup is refused (INCONSISTENT_GROUP_PROTOCOL) while a consumer group of that id has
    /// members, and the caller refuses a ConsumerGroupHeartbeat (GROUP_ID_NOT_FOUND) while
    /// `classic_has_members` says so (the two checks take the two mutexes one at a time).
    consumer_group_coordinator& consumer() noexcept { return _consumer; }
    bool classic_has_members(std::string_view group);

private:
    struct member;
    struct group;
    group* find(std::string_view name);
    /// 0, or the error for a request naming this member (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID).
    int16_t check_member(group* g, std::string_view member_id,
                         std::optional<std::string_view> instance_id, member*& out);
    void prepare_rebalance(group& g, clock::time_point now);
    void maybe_complete(group& g, clock::time_point now);
    join_group_response join_answer(const group& g, const member& m, bool with_members) const;
    /// Stores `cb` as the member's waiting JoinGroup (answering an older one, if any).
    uint64_t park_join(member& m, join_callback cb);
    uint64_t park_sync(member& m, sync_callback cb);
    /// Removes the member, answering its waiting requests with `err`.
    /// `id` by value: the member (and its id string) is destroyed on the way.
    void remove_member(group& g, std::string id, clock::time_point now, int16_t err);

    offset_store& _offsets;
    options _opts;
    std::mutex _claim_mu; ///< serialises claim() (taken before _mu, never inside it)
    std::mutex _mu;
    std::map<std::string, std::unique_ptr<group>, std::less<>> _groups;
    uint64_t _tickets = 0;
    consumer_group_coordinator _consumer;
};

std::string_view group_state_name(int state) noexcept;

} // namespace floe::kafka
