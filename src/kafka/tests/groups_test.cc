#include "kafka/groups.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

namespace floe::kafka {
namespace {

using namespace std::chrono_literals;
using clk = group_coordinator::clock;

struct tmpdir {
    std::filesystem::path p;
    tmpdir() {
        p = std::filesystem::temp_directory_path()
            / fmt::format("floe-kafka-groups-{}-{}", ::getpid(), uuid::random().to_string());
        std::filesystem::create_directories(p);
    }
    ~tmpdir() { std::filesystem::remove_all(p); }
};

join_group_request join_req(std::string_view member, const byte_buffer& md) {
    join_group_request r;
    r.group_id = "g";
    r.session_timeout_ms = 10000;
    r.rebalance_timeout_ms = 5000;
    r.member_id = member;
    r.protocol_type = "consumer";
    r.protocols.push_back({"range", md});
    return r;
}

/// A client of the coordinator: keeps what the callbacks of its waiting JoinGroup/SyncGroup
/// deliver, as a connection would.
struct client {
    group_coordinator& gc;
    std::string name;
    std::string id;
    std::optional<std::string> instance;
    byte_buffer md = {1, 2, 3};
    int32_t rebalance_ms = 5000;
    int32_t generation = -1;
    std::optional<join_group_response> joined;  ///< the last JoinGroup answer
    std::optional<sync_group_response> synced;  ///< the last SyncGroup answer
    int join_answers = 0;
    uint64_t ticket = 0;

    client(group_coordinator& g, std::string n) : gc(g), name(std::move(n)) {}

    join_group_request req() const {
        auto r = join_req(id, md);
        r.rebalance_timeout_ms = rebalance_ms;
        if (instance) r.group_instance_id = *instance;
        return r;
    }
    /// Sends JoinGroup; true if answered at once.
    bool join(clk::time_point now) {
        joined.reset();
        auto r = gc.join(req(), name, "/h", now, [this](join_group_response a) {
            ++join_answers;
            on_join(std::move(a));
        });
        ticket = r.ticket;
        if (r.pending) {
            id = r.response.member_id;
            return false;
        }
        ++join_answers;
        on_join(std::move(r.response));
        return true;
    }
    void on_join(join_group_response a) {
        if (a.error_code == 0) {
            id = a.member_id;
            generation = a.generation_id;
        }
        joined = std::move(a);
    }
    /// Sends SyncGroup (with `assignments` when leader); true if answered at once.
    bool sync(clk::time_point now,
              std::vector<std::pair<std::string, byte_buffer>> assignments = {}) {
        synced.reset();
        sync_group_request s;
        s.group_id = "g";
        s.generation_id = generation;
        s.member_id = id;
        if (instance) s.group_instance_id = *instance;
        for (auto& [m, a] : assignments) s.assignments.push_back({m, a});
        auto r = gc.sync(s, now, [this](sync_group_response a) { synced = std::move(a); });
        if (r.pending) return false;
        synced = std::move(r.response);
        return true;
    }
    int16_t heartbeat(clk::time_point now) {
        heartbeat_request h{"g", generation, id, std::nullopt};
        if (instance) h.group_instance_id = *instance;
        return gc.heartbeat(h, now);
    }
    bool leader() const { return joined && joined->leader == id; }
};

TEST(KafkaGroups, TwoMembersJoinSyncAndRebalanceOnLeave) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb");
    ASSERT_FALSE(a.join(t0)); // the initial delay keeps the first generation open
    ASSERT_FALSE(b.join(t0 + 10ms));
    ASSERT_NE(a.id, b.id);
    gc.tick(t0 + 1s); // the answers come through the callbacks
    ASSERT_TRUE(a.joined && b.joined);
    EXPECT_EQ(a.generation, 1);
    EXPECT_EQ(b.generation, 1);
    EXPECT_TRUE(a.leader());
    EXPECT_EQ(a.joined->members.size(), 2u); // leader sees everyone
    EXPECT_TRUE(b.joined->members.empty());
    EXPECT_EQ(*a.joined->protocol_name, "range");

    // Follower syncs first and waits for the leader's assignment.
    EXPECT_FALSE(b.sync(t0 + 1s));
    byte_buffer asg_a = {0xA}, asg_b = {0xB};
    ASSERT_TRUE(a.sync(t0 + 1s, {{a.id, asg_a}, {b.id, asg_b}}));
    EXPECT_EQ(a.synced->assignment, asg_a);
    ASSERT_TRUE(b.synced);
    EXPECT_EQ(b.synced->assignment, asg_b);

    EXPECT_EQ(a.heartbeat(t0 + 2s), 0);
    // b leaves: a must rejoin.
    leave_group_request l{"g", {{b.id, std::nullopt}}};
    gc.leave(l, 4, t0 + 2s);
    EXPECT_EQ(a.heartbeat(t0 + 2s), int16_t(kerr::rebalance_in_progress));
    // Members may still commit what they processed while the group prepares to rebalance.
    EXPECT_EQ(gc.validate_commit("g", a.id, 1), 0);
    EXPECT_EQ(gc.validate_commit("g", a.id, 0), int16_t(kerr::illegal_generation));
    EXPECT_EQ(gc.validate_commit("g", b.id, 1), int16_t(kerr::unknown_member_id));
    ASSERT_TRUE(a.join(t0 + 2s)); // the only member left: answered at once
    EXPECT_EQ(a.generation, 2);
    EXPECT_EQ(a.joined->members.size(), 1u);
}

TEST(KafkaGroups, SessionTimeoutExpiresMember) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca");
    a.join(t0);
    gc.tick(t0 + 1s);
    ASSERT_TRUE(a.joined);
    gc.tick(t0 + 20s); // no heartbeat for longer than the 10 s session
    EXPECT_EQ(a.heartbeat(t0 + 20s), int16_t(kerr::unknown_member_id));
    EXPECT_EQ(gc.describe("g").state, "Empty");
}

/// Forms a stable generation of `cs` (all joined at t, leader assigns `{id, {i}}`).
void form(group_coordinator& gc, std::vector<client*> cs, clk::time_point t) {
    for (auto* c : cs) c->join(t);
    gc.tick(t + 1s);
    client* leader = nullptr;
    for (auto* c : cs) {
        ASSERT_TRUE(c->joined);
        ASSERT_EQ(c->joined->error_code, 0);
        if (c->leader()) leader = c;
    }
    ASSERT_TRUE(leader);
    for (auto* c : cs) {
        if (c == leader) continue;
        EXPECT_FALSE(c->sync(t + 1s));
    }
    std::vector<std::pair<std::string, byte_buffer>> asg;
    for (size_t i = 0; i < cs.size(); ++i) asg.push_back({cs[i]->id, {uint8_t(i)}});
    ASSERT_TRUE(leader->sync(t + 1s, asg));
    for (size_t i = 0; i < cs.size(); ++i) {
        ASSERT_TRUE(cs[i]->synced);
        EXPECT_EQ(cs[i]->synced->assignment, byte_buffer{uint8_t(i)});
    }
}

// Issue 13 item 1: with cooperative rebalancing a member rejoins (to hand back revoked
// partitions) right after a generation forms, before the others picked up their answers.
// Every computed answer must reach its request, and the rejoin must not strand anyone.
TEST(KafkaGroups, RejoinRightAfterGenerationFormsLosesNoAnswer) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb"), c(gc, "cc");
    form(gc, {&a, &b}, t0);
    // c joins: a and b learn of the rebalance from their heartbeats and rejoin.
    EXPECT_FALSE(c.join(t0 + 2s));
    EXPECT_EQ(a.heartbeat(t0 + 2s), int16_t(kerr::rebalance_in_progress));
    EXPECT_FALSE(a.join(t0 + 2s));
    EXPECT_EQ(b.heartbeat(t0 + 2s), int16_t(kerr::rebalance_in_progress));
    b.md = {9}; // cooperative: owned partitions in the metadata
    ASSERT_TRUE(b.join(t0 + 2s)); // the last one: generation 2 forms now
    ASSERT_TRUE(a.joined && c.joined);
    EXPECT_EQ(a.generation, 2);
    EXPECT_EQ(c.generation, 2);
    // b revoked a partition and rejoins at once with new metadata: generation 3 begins.
    b.md = {8};
    EXPECT_FALSE(b.join(t0 + 2s));
    // a and c got generation 2 anyway; their SyncGroup says rebalance, they rejoin.
    EXPECT_EQ(a.joined->error_code, 0);
    ASSERT_TRUE(c.sync(t0 + 2s));
    EXPECT_EQ(c.synced->error_code, int16_t(kerr::rebalance_in_progress));
    EXPECT_FALSE(a.join(t0 + 2s));
    ASSERT_TRUE(c.join(t0 + 2s)); // b's in-flight join counted: c completes generation 3
    ASSERT_TRUE(a.joined && b.joined);
    EXPECT_EQ(a.generation, 3);
    EXPECT_EQ(b.generation, 3);
    EXPECT_EQ(c.generation, 3);
    EXPECT_EQ(a.join_answers, 3);
    EXPECT_EQ(b.join_answers, 3);
}

TEST(KafkaGroups, InFlightJoinCountsAndNeverExpires) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb");
    a.rebalance_ms = b.rebalance_ms = 30000; // longer than the 10 s session
    form(gc, {&a, &b}, t0);
    // a rejoins with new metadata and waits; b is slow to rejoin but heartbeats.
    a.md = {7};
    EXPECT_FALSE(a.join(t0 + 2s));
    EXPECT_EQ(b.heartbeat(t0 + 8s), int16_t(kerr::rebalance_in_progress));
    // 11 s after its JoinGroup a's session would have run out had it been silent; its join
    // is in flight, so it neither expires nor stops counting.
    gc.tick(t0 + 13s);
    EXPECT_FALSE(a.joined);
    ASSERT_TRUE(b.join(t0 + 13s));
    ASSERT_TRUE(a.joined);
    EXPECT_EQ(a.joined->error_code, 0);
    EXPECT_EQ(a.generation, 2);
    EXPECT_EQ(b.generation, 2);
    EXPECT_EQ(b.joined->members.size() + a.joined->members.size(), 2u);
}

TEST(KafkaGroups, MembersThatDoNotRejoinAreDroppedAtTheRebalanceTimeout) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb");
    form(gc, {&a, &b}, t0);
    a.md = {7};
    EXPECT_FALSE(a.join(t0 + 2s));
    // b keeps heartbeating but never rejoins; the rebalance timeout (5 s) ends the wait.
    EXPECT_EQ(b.heartbeat(t0 + 4s), int16_t(kerr::rebalance_in_progress));
    gc.tick(t0 + 6s);
    EXPECT_FALSE(a.joined);
    gc.tick(t0 + 7s + 100ms);
    ASSERT_TRUE(a.joined);
    EXPECT_EQ(a.generation, 2);
    EXPECT_EQ(a.joined->members.size(), 1u);
    EXPECT_EQ(b.heartbeat(t0 + 8s), int16_t(kerr::unknown_member_id));
}

TEST(KafkaGroups, CancelledJoinIsNotAnsweredAndStopsCounting) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb");
    form(gc, {&a, &b}, t0);
    a.md = {7};
    EXPECT_FALSE(a.join(t0 + 2s));
    EXPECT_TRUE(gc.cancel_join("g", a.id, a.ticket, t0 + 3s));
    EXPECT_FALSE(gc.cancel_join("g", a.id, a.ticket, t0 + 3s)); // once only
    ASSERT_FALSE(b.join(t0 + 3s)); // a no longer counts as joined
    EXPECT_FALSE(a.joined);
    // A join answered already cannot be cancelled: the request takes the answer.
    ASSERT_TRUE(a.join(t0 + 3s));
    EXPECT_FALSE(gc.cancel_join("g", b.id, b.ticket, t0 + 3s));
    ASSERT_TRUE(b.joined);
    EXPECT_EQ(b.generation, 2);
}

TEST(KafkaGroups, SyncWaitersGetRebalanceInProgressWhenANewRebalanceStarts) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb"), c(gc, "cc");
    a.join(t0);
    b.join(t0);
    gc.tick(t0 + 1s);
    client& follower = a.leader() ? b : a;
    EXPECT_FALSE(follower.sync(t0 + 1s));
    EXPECT_FALSE(c.join(t0 + 1s)); // before the leader's SyncGroup
    ASSERT_TRUE(follower.synced);
    EXPECT_EQ(follower.synced->error_code, int16_t(kerr::rebalance_in_progress));
}

TEST(KafkaGroups, ResentJoinWithSameMetadataIsAnsweredWithoutRebalance) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb");
    form(gc, {&a, &b}, t0);
    client& follower = a.leader() ? b : a;
    ASSERT_TRUE(follower.join(t0 + 2s));
    EXPECT_EQ(follower.generation, 1);
    EXPECT_EQ(gc.describe("g").state, "Stable");
}

TEST(KafkaGroups, StaticMemberRestartKeepsAssignmentWithoutRebalance) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb");
    a.instance = "ia";
    b.instance = "ib";
    form(gc, {&a, &b}, t0);
    byte_buffer b_asg = b.synced->assignment;
    std::string old_b = b.id, leader = a.leader() ? a.id : b.id;
    // b restarts (no LeaveGroup: static members do not leave) and rejoins without a member id.
    client b2(gc, "cb");
    b2.instance = "ib";
    ASSERT_TRUE(b2.join(t0 + 3s)); // answered at once: no rebalance
    EXPECT_EQ(b2.joined->error_code, 0);
    EXPECT_NE(b2.id, old_b);
    EXPECT_EQ(b2.generation, 1);
    EXPECT_EQ(b2.joined->leader, leader); // the old leader id, so b2 does not assign
    EXPECT_TRUE(b2.joined->members.empty());
    ASSERT_TRUE(b2.sync(t0 + 3s));
    EXPECT_EQ(b2.synced->error_code, 0);
    EXPECT_EQ(b2.synced->assignment, b_asg);
    EXPECT_EQ(gc.describe("g").state, "Stable");
    EXPECT_EQ(a.heartbeat(t0 + 3s), 0); // a sees no rebalance
    // The old process is fenced on every request that names its instance id.
    EXPECT_EQ(b.heartbeat(t0 + 3s), int16_t(kerr::fenced_instance_id));
    ASSERT_TRUE(b.sync(t0 + 3s));
    EXPECT_EQ(b.synced->error_code, int16_t(kerr::fenced_instance_id));
    EXPECT_EQ(gc.validate_commit("g", old_b, 1, "ib"), int16_t(kerr::fenced_instance_id));
    EXPECT_EQ(gc.validate_commit("g", b2.id, 1, "ib"), 0);
    auto fenced_join = gc.join(b.req(), "cb", "/h", t0 + 3s, [](join_group_response) {});
    EXPECT_EQ(fenced_join.response.error_code, int16_t(kerr::fenced_instance_id));
    EXPECT_EQ(b2.heartbeat(t0 + 4s), 0);
}

TEST(KafkaGroups, StaticLeaderRestartDoesNotReassign) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb");
    a.instance = "ia";
    b.instance = "ib";
    form(gc, {&a, &b}, t0);
    client& lead = a.leader() ? a : b;
    client& other = a.leader() ? b : a;
    client l2(gc, "cl");
    l2.instance = lead.instance;
    ASSERT_TRUE(l2.join(t0 + 3s));
    EXPECT_NE(l2.joined->leader, l2.id); // does not see itself as leader
    ASSERT_TRUE(l2.sync(t0 + 3s));
    EXPECT_EQ(l2.synced->assignment, lead.synced->assignment);
    EXPECT_EQ(other.heartbeat(t0 + 3s), 0);
    EXPECT_EQ(gc.describe("g").state, "Stable");
    // The group now leads with l2: a later rebalance makes it the leader.
    other.md = {5};
    EXPECT_FALSE(other.join(t0 + 4s));
    ASSERT_TRUE(l2.join(t0 + 4s));
    EXPECT_TRUE(l2.leader());
}

TEST(KafkaGroups, StaticMemberRestartDuringRebalanceFencesTheOldJoin) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb");
    a.instance = "ia";
    b.instance = "ib";
    form(gc, {&a, &b}, t0);
    a.md = {4};
    EXPECT_FALSE(a.join(t0 + 2s)); // rebalance begins
    ASSERT_TRUE(b.join(t0 + 2s)); // both joined: generation 2 forms
    // Restart a while the group is CompletingRebalance.
    ASSERT_TRUE(a.joined && b.joined);
    client a2(gc, "ca");
    a2.instance = "ia";
    EXPECT_FALSE(a2.join(t0 + 3s)); // CompletingRebalance: a new rebalance, a2 waits
    EXPECT_EQ(gc.describe("g").state, "PreparingRebalance");
    ASSERT_TRUE(b.sync(t0 + 3s));
    EXPECT_EQ(b.synced->error_code, int16_t(kerr::rebalance_in_progress));
    ASSERT_TRUE(b.join(t0 + 3s));
    ASSERT_TRUE(a2.joined);
    EXPECT_EQ(a2.joined->error_code, 0);
    EXPECT_EQ(a2.generation, 3);
    EXPECT_EQ(a.heartbeat(t0 + 3s), int16_t(kerr::fenced_instance_id));
}

TEST(KafkaGroups, StaticMemberLeavesByInstanceId) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb");
    a.instance = "ia";
    b.instance = "ib";
    form(gc, {&a, &b}, t0);
    leave_group_request bad{"g", {{"not-b", std::string_view("ib")}, {"", std::string_view("ix")}}};
    auto r = gc.leave(bad, 3, t0 + 2s);
    ASSERT_EQ(r.members.size(), 2u);
    EXPECT_EQ(r.members[0].error_code, int16_t(kerr::fenced_instance_id));
    EXPECT_EQ(r.members[1].error_code, int16_t(kerr::unknown_member_id));
    EXPECT_EQ(gc.describe("g").state, "Stable");
    leave_group_request ok{"g", {{"", std::string_view("ib")}}};
    r = gc.leave(ok, 4, t0 + 2s);
    EXPECT_EQ(r.members[0].error_code, 0);
    EXPECT_EQ(gc.describe("g").members.size(), 1u);
    EXPECT_EQ(a.heartbeat(t0 + 2s), int16_t(kerr::rebalance_in_progress));
}

TEST(KafkaGroups, LeaveAnswersTheLeaversWaitingJoin) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb");
    form(gc, {&a, &b}, t0);
    a.md = {3};
    EXPECT_FALSE(a.join(t0 + 2s));
    leave_group_request l{"g", {{a.id, std::nullopt}}};
    gc.leave(l, 2, t0 + 2s);
    ASSERT_TRUE(a.joined);
    EXPECT_EQ(a.joined->error_code, int16_t(kerr::unknown_member_id));
    ASSERT_TRUE(b.join(t0 + 2s)); // alone now: generation 2 at once
    EXPECT_EQ(b.generation, 2);
}

/// A "consumer" protocol assignment: version 0, one topic, these partitions, no user data.
byte_buffer consumer_assignment(std::string_view topic, std::vector<int32_t> parts) {
    byte_buffer b;
    kwriter w(b, false);
    w.i16(0);
    w.i32(1);
    w.str(topic);
    w.i32(int32_t(parts.size()));
    for (auto p : parts) w.i32(p);
    w.i32(-1);
    return b;
}

// A commit sent under generation N before the member saw its generation N+1 JoinGroup answer
// is judged after that answer (requests on a connection are served in order): it is valid
// while N+1 completes, and afterwards for partitions the member still owns.
TEST(KafkaGroups, PreviousGenerationCommitAcceptedWhileOwnershipHolds) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    auto t0 = clk::now();
    client a(gc, "ca"), b(gc, "cb");
    a.join(t0);
    b.join(t0);
    gc.tick(t0 + 1s);
    client& lead = a.leader() ? a : b;
    client& other = a.leader() ? b : a;
    std::vector<std::pair<std::string, byte_buffer>> asg = {
        {lead.id, consumer_assignment("t", {0, 1})}, {other.id, consumer_assignment("t", {2, 3})}};
    EXPECT_FALSE(other.sync(t0 + 1s));
    ASSERT_TRUE(lead.sync(t0 + 1s, asg));
    // other rejoins with new metadata: generation 2.
    other.md = {4};
    EXPECT_FALSE(other.join(t0 + 2s));
    ASSERT_TRUE(lead.join(t0 + 2s));
    ASSERT_TRUE(other.joined);
    std::vector<group_coordinator::topic_partition> p2 = {{"t", 2}}, p0 = {{"t", 0}};
    // CompletingRebalance: a generation 1 commit still stands; a generation 2 one is early.
    EXPECT_EQ(gc.validate_commit("g", other.id, 1, std::nullopt, p2), 0);
    EXPECT_EQ(gc.validate_commit("g", other.id, 2, std::nullopt, p2),
              int16_t(kerr::rebalance_in_progress));
    // Stable: other keeps partition 2 but gave partition 3 away.
    asg = {{lead.id, consumer_assignment("t", {0, 1, 3})}, {other.id, consumer_assignment("t", {2})}};
    EXPECT_FALSE(other.sync(t0 + 2s));
    ASSERT_TRUE(lead.sync(t0 + 2s, asg));
    std::vector<group_coordinator::topic_partition> p3 = {{"t", 3}}, p23 = {{"t", 2}, {"t", 3}};
    EXPECT_EQ(gc.validate_commit("g", other.id, 1, std::nullopt, p2), 0);
    EXPECT_EQ(gc.validate_commit("g", other.id, 1, std::nullopt, p3),
              int16_t(kerr::illegal_generation));
    EXPECT_EQ(gc.validate_commit("g", other.id, 1, std::nullopt, p23),
              int16_t(kerr::illegal_generation));
    EXPECT_EQ(gc.validate_commit("g", other.id, 0, std::nullopt, p2),
              int16_t(kerr::illegal_generation));
    EXPECT_EQ(gc.validate_commit("g", other.id, 2, std::nullopt, p3), 0);
}

/// The embedded store, with claims numbered as a shared store numbers them (for the coordinator's
/// side of the fence; the store's side is tested against Redis in redis_group_state.*).
struct claiming_store final : offset_store {
    std::unique_ptr<offset_store> inner;
    std::atomic<int64_t> claims{0};
    explicit claiming_store(const std::filesystem::path& dir) : inner(offset_store::open(dir).value()) {}
    result<int64_t> claim(std::string_view) override { return ++claims; }
    using offset_store::commit;
    result<void> commit(std::string_view g, std::span<const std::pair<key, committed>> e,
                        const commit_fence& f) override {
        return inner->commit(g, e, f);
    }
    result<std::map<key, committed>> load(std::string_view g) const override { return inner->load(g); }
    result<std::vector<std::string>> list() const override { return inner->list(); }
    result<bool> contains(std::string_view g) const override { return inner->contains(g); }
    result<void> delete_group(std::string_view g) override { return inner->delete_group(g); }
    result<void> delete_offsets(std::string_view g, std::span<const key> k) override { return inner->delete_offsets(g, k); }
};

// A broker claims a group once when it creates its state (classic or KIP-848), and each commit it
// validates reports that epoch; a refusal from the store drops only the state holding the refused
// epoch, answering its waiting members NOT_COORDINATOR; a later JoinGroup claims anew.
TEST(KafkaGroups, ClaimedEpochIsCarriedByCommitsAndARefusedClaimDropsTheState) {
    tmpdir d;
    claiming_store store(d.p);
    group_coordinator gc(store, {});
    auto t0 = clk::now();
    // Many JoinGroups of a new group at once: one claim.
    std::vector<std::thread> joiners;
    for (int i = 0; i < 8; ++i) joiners.emplace_back([&] { ASSERT_TRUE(gc.claim("g", false)); });
    for (auto& t : joiners) t.join();
    EXPECT_EQ(store.claims.load(), 1);
    client a(gc, "ca");
    ASSERT_FALSE(a.join(t0));
    gc.tick(t0 + 1s);
    ASSERT_TRUE(a.joined && a.leader());
    ASSERT_TRUE(a.sync(t0 + 1s, {{a.id, byte_buffer{1}}}));
    int64_t claimed = -1;
    EXPECT_EQ(gc.validate_commit("g", a.id, a.generation, std::nullopt, {}, &claimed), 0);
    EXPECT_EQ(claimed, 1);
    ASSERT_TRUE(gc.claim("g", false)); // the state exists: no new claim
    EXPECT_EQ(store.claims.load(), 1);
    // A KIP-848 state of the same group id is claimed apart.
    ASSERT_TRUE(gc.claim("g", true));
    EXPECT_EQ(store.claims.load(), 2);
    EXPECT_EQ(gc.consumer().claimed("g"), 2);
    // A refusal of an epoch this broker's state does not hold changes nothing.
    EXPECT_EQ(gc.drop_claim("g", 7), 0u);
    EXPECT_EQ(gc.validate_commit("g", a.id, a.generation), 0);
    // The store refused epoch 1 (another broker claimed the group): that state goes, the waiting
    // JoinGroup of b is answered NOT_COORDINATOR, a's commits are unknown here now.
    client b(gc, "cb");
    ASSERT_FALSE(b.join(t0 + 2s)); // waits for a to rejoin
    EXPECT_EQ(gc.drop_claim("g", 1), 1u);
    ASSERT_TRUE(b.joined);
    EXPECT_EQ(b.joined->error_code, int16_t(kerr::not_coordinator));
    EXPECT_EQ(gc.validate_commit("g", a.id, a.generation), int16_t(kerr::unknown_member_id));
    EXPECT_EQ(gc.consumer().claimed("g"), 2); // the KIP-848 state held another epoch
    // After a simple commit (which claims too) the member-less states go: here the KIP-848 one.
    EXPECT_EQ(gc.drop_claim("g", std::nullopt), 1u);
    EXPECT_FALSE(gc.consumer().claimed("g"));
    // The members come back: a new state, a new claim.
    ASSERT_TRUE(gc.claim("g", false));
    EXPECT_EQ(store.claims.load(), 3);
    client c(gc, "cc");
    ASSERT_FALSE(c.join(t0 + 3s));
    gc.tick(t0 + 5s);
    ASSERT_TRUE(c.joined);
    EXPECT_EQ(c.joined->error_code, 0);
    ASSERT_TRUE(c.sync(t0 + 5s, {{c.id, byte_buffer{1}}}));
    EXPECT_EQ(gc.validate_commit("g", c.id, c.generation, std::nullopt, {}, &claimed), 0);
    EXPECT_EQ(claimed, 3);
}

TEST(KafkaGroups, OffsetsSurviveReopenAndTornTail) {
    tmpdir d;
    {
        auto s = offset_store::open(d.p).value();
        std::vector<std::pair<offset_store::key, offset_store::committed>> e = {
            {{"t", 0}, {10, -1, "m"}}, {{"t", 1}, {20, -1, std::nullopt}}};
        ASSERT_TRUE(s->commit("g", e));
        std::vector<std::pair<offset_store::key, offset_store::committed>> e2 = {
            {{"t", 0}, {15, 3, std::nullopt}}};
        ASSERT_TRUE(s->commit("g", e2));
    }
    // Append garbage: a torn record after a crash.
    {
        FILE* f = std::fopen((d.p / "offsets.log").c_str(), "ab");
        std::fwrite("\x00\x00\x00\x30garbage", 1, 11, f);
        std::fclose(f);
    }
    auto s = offset_store::open(d.p).value();
    auto c0 = s->get("g", {"t", 0});
    ASSERT_TRUE(c0);
    EXPECT_EQ(c0->offset, 15);
    EXPECT_EQ(c0->leader_epoch, 3);
    EXPECT_EQ(s->get("g", {"t", 1})->offset, 20);
    ASSERT_TRUE(s->delete_group("g"));
    auto s2 = offset_store::open(d.p).value();
    EXPECT_FALSE(s2->get("g", {"t", 0}));
}

} // namespace
} // namespace floe::kafka
