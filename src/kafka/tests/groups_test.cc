#include "kafka/groups.h"

#include <gtest/gtest.h>

#include <filesystem>

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

TEST(KafkaGroups, TwoMembersJoinSyncAndRebalanceOnLeave) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    byte_buffer md = {1, 2, 3};
    auto t0 = clk::now();
    auto a = gc.join(join_req("", md), "ca", "/h", t0);
    ASSERT_TRUE(a.pending); // the initial delay keeps the first generation open
    auto b = gc.join(join_req("", md), "cb", "/h", t0 + 10ms);
    ASSERT_TRUE(b.pending);
    std::string ida = a.response.member_id, idb = b.response.member_id;
    ASSERT_NE(ida, idb);
    gc.tick(t0 + 1s);
    auto ra = gc.poll_join("g", ida, t0 + 1s);
    auto rb = gc.poll_join("g", idb, t0 + 1s);
    ASSERT_FALSE(ra.pending);
    ASSERT_FALSE(rb.pending);
    EXPECT_EQ(ra.response.generation_id, 1);
    EXPECT_EQ(ra.response.leader, ida);
    EXPECT_EQ(ra.response.members.size(), 2u); // leader sees everyone
    EXPECT_TRUE(rb.response.members.empty());
    EXPECT_EQ(*ra.response.protocol_name, "range");

    // Follower syncs first and waits for the leader's assignment.
    sync_group_request sb{"g", 1, idb};
    auto sbr = gc.sync(sb, t0 + 1s);
    EXPECT_TRUE(sbr.pending);
    sync_group_request sa{"g", 1, ida};
    byte_buffer asg_a = {0xA}, asg_b = {0xB};
    sa.assignments.push_back({ida, asg_a});
    sa.assignments.push_back({idb, asg_b});
    auto sar = gc.sync(sa, t0 + 1s);
    ASSERT_FALSE(sar.pending);
    EXPECT_EQ(sar.response.assignment, asg_a);
    sbr = gc.poll_sync("g", idb, 1, t0 + 1s);
    ASSERT_FALSE(sbr.pending);
    EXPECT_EQ(sbr.response.assignment, asg_b);

    EXPECT_EQ(gc.heartbeat({"g", 1, ida}, t0 + 2s), 0);
    // b leaves: a must rejoin.
    leave_group_request l{"g", {{idb, std::nullopt}}};
    gc.leave(l, 4, t0 + 2s);
    EXPECT_EQ(gc.heartbeat({"g", 1, ida}, t0 + 2s), int16_t(kerr::rebalance_in_progress));
    // Members may still commit what they processed while the group prepares to rebalance.
    EXPECT_EQ(gc.validate_commit("g", ida, 1), 0);
    EXPECT_EQ(gc.validate_commit("g", ida, 0), int16_t(kerr::illegal_generation));
    EXPECT_EQ(gc.validate_commit("g", idb, 1), int16_t(kerr::unknown_member_id));
    auto again = gc.join(join_req(ida, md), "ca", "/h", t0 + 2s);
    ASSERT_FALSE(again.pending);
    EXPECT_EQ(again.response.generation_id, 2);
    EXPECT_EQ(again.response.members.size(), 1u);
}

TEST(KafkaGroups, SessionTimeoutExpiresMember) {
    tmpdir d;
    auto store = offset_store::open(d.p).value();
    group_coordinator gc(*store, {});
    byte_buffer md = {1};
    auto t0 = clk::now();
    auto a = gc.join(join_req("", md), "ca", "/h", t0);
    gc.tick(t0 + 1s);
    auto ra = gc.poll_join("g", a.response.member_id, t0 + 1s);
    ASSERT_FALSE(ra.pending);
    gc.tick(t0 + 20s); // no heartbeat for longer than the 10 s session
    EXPECT_EQ(gc.heartbeat({"g", 1, a.response.member_id}, t0 + 20s),
              int16_t(kerr::unknown_member_id));
    EXPECT_EQ(gc.describe("g").state, "Empty");
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
