// KIP-848 consumer groups: the server-side assignors, the reconciliation state machine
// (revoke before assign), static members, session expiry, regex subscriptions, offset-commit
// epochs, and the heartbeat codec.
#include "kafka/consumer_groups.h"
#include "kafka/groups.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace floe::kafka {
namespace {

using namespace std::chrono_literals;
using clk = consumer_group_coordinator::clock;

uuid topic_id(uint8_t n) {
    uuid u;
    u.bytes[15] = n;
    u.bytes[0] = 0x40;
    return u;
}

size_t count(const cg_partitions& a) {
    size_t n = 0;
    for (auto& [_, ps] : a)
        n += ps.size();
    return n;
}

// Every partition of `parts` in exactly one member's assignment.
void expect_each_once(const cg_assignor::assignment& a, const std::map<uuid, int32_t>& parts) {
    std::map<std::pair<uuid, int32_t>, int> seen;
    for (auto& [_, m] : a)
        for (auto& [t, ps] : m)
            for (auto p : ps)
                ++seen[{t, p}];
    size_t total = 0;
    for (auto& [t, n] : parts) {
        total += size_t(n);
        for (int32_t p = 0; p < n; ++p)
            EXPECT_EQ((seen[{t, p}]), 1) << "partition " << p;
    }
    EXPECT_EQ(seen.size(), total);
}

TEST(CgAssignor, UniformSpreadsSixteenPartitionsOverFourMembers) {
    std::vector<cg_assignor::member_spec> ms;
    for (auto id : {"d", "a", "c", "b"})
        ms.push_back({id, {topic_id(1)}});
    std::map<uuid, int32_t> parts{{topic_id(1), 16}};
    auto a = cg_assignor::uniform(ms, parts, {});
    expect_each_once(a, parts);
    for (auto& [id, m] : a)
        EXPECT_EQ(count(m), 4u) << id;
}

TEST(CgAssignor, UniformIsStickyWhenAMemberJoins) {
    std::vector<cg_assignor::member_spec> ms{
        {"a", {topic_id(1)}}, {"b", {topic_id(1)}}, {"c", {topic_id(1)}}};
    std::map<uuid, int32_t> parts{{topic_id(1), 12}};
    auto before = cg_assignor::uniform(ms, parts, {});
    ms.push_back({"d", {topic_id(1)}});
    auto after = cg_assignor::uniform(ms, parts, before);
    expect_each_once(after, parts);
    // Each old member keeps 3 of its 4 partitions: only what the newcomer needs moves.
    for (auto id : {"a", "b", "c"}) {
        EXPECT_EQ(count(after[id]), 3u);
        for (auto& [t, ps] : after[id])
            for (auto p : ps)
                EXPECT_TRUE(before[id][t].contains(p)) << id << " got a new partition " << p;
    }
    EXPECT_EQ(count(after["d"]), 3u);
}

TEST(CgAssignor, UniformRespectsHeterogeneousSubscriptions) {
    std::vector<cg_assignor::member_spec> ms{{"a", {topic_id(1)}},
                                             {"b", {topic_id(1), topic_id(2)}}};
    std::map<uuid, int32_t> parts{{topic_id(1), 4}, {topic_id(2), 4}};
    auto a = cg_assignor::uniform(ms, parts, {});
    expect_each_once(a, parts);
    EXPECT_FALSE(a["a"].contains(topic_id(2)));
    EXPECT_EQ(count(a["a"]), 4u); // all of topic 1: b carries all of topic 2
    EXPECT_EQ(count(a["b"]), 4u);
}

TEST(CgAssignor, RangeGivesContiguousCoPartitionedRanges) {
    std::vector<cg_assignor::member_spec> ms{{"b", {topic_id(1), topic_id(2)}},
                                             {"a", {topic_id(1), topic_id(2)}},
                                             {"c", {topic_id(1), topic_id(2)}}};
    std::map<uuid, int32_t> parts{{topic_id(1), 8}, {topic_id(2), 8}};
    auto a = cg_assignor::range(ms, parts);
    expect_each_once(a, parts);
    EXPECT_EQ(a["a"][topic_id(1)], (std::set<int32_t>{0, 1, 2}));
    EXPECT_EQ(a["b"][topic_id(1)], (std::set<int32_t>{3, 4, 5}));
    EXPECT_EQ(a["c"][topic_id(1)], (std::set<int32_t>{6, 7}));
    for (auto id : {"a", "b", "c"})
        EXPECT_EQ(a[id][topic_id(1)], a[id][topic_id(2)]) << id;
}

// A test member: sends heartbeats like a client that applies every answer at once.
struct client {
    std::string id;
    std::optional<std::string> instance;
    int32_t epoch = 0;
    cg_partitions owned;
    std::vector<std::string> names{"t"};
    std::optional<std::string> regex;
    std::string assignor = "uniform";

    consumer_group_heartbeat_response beat(consumer_group_coordinator& c,
                                           std::span<const cg_topic> topics, clk::time_point now,
                                           bool report_owned = true) {
        consumer_group_heartbeat_request r;
        r.group_id = "g";
        r.member_id = id;
        r.member_epoch = epoch;
        if (instance) r.instance_id = *instance;
        r.rebalance_timeout_ms = 5000;
        std::vector<std::string_view> nv(names.begin(), names.end());
        r.subscribed_topic_names = nv;
        if (regex) r.subscribed_topic_regex = *regex;
        r.server_assignor = assignor;
        std::vector<cg_topic_partitions> ow;
        for (auto& [t, ps] : owned)
            ow.push_back({t, {ps.begin(), ps.end()}});
        if (report_owned) r.owned = ow;
        auto resp = c.heartbeat(r, 1, "client", "/127.0.0.1", topics, now);
        if (resp.error_code == 0) {
            epoch = resp.member_epoch;
            if (resp.assignment) {
                owned.clear();
                for (auto& t : *resp.assignment)
                    for (auto p : t.partitions)
                        owned[t.topic_id].insert(p);
            }
        }
        return resp;
    }
};

std::vector<cg_topic> topics16() {
    return {{"t", topic_id(1), 16}};
}

void expect_disjoint(const std::vector<client*>& cs) {
    std::set<std::pair<uuid, int32_t>> seen;
    for (auto* c : cs)
        for (auto& [t, ps] : c->owned)
            for (auto p : ps)
                EXPECT_TRUE(seen.insert({t, p}).second) << "partition " << p << " owned twice";
}

TEST(CgCoordinator, RevokesBeforeAssigning) {
    consumer_group_coordinator co({});
    auto now = clk::now();
    auto topics = topics16();
    client a{"member-a"}, b{"member-b"};
    ASSERT_EQ(a.beat(co, topics, now).error_code, 0);
    EXPECT_EQ(a.epoch, 1);
    EXPECT_EQ(count(a.owned), 16u);

    ASSERT_EQ(b.beat(co, topics, now).error_code, 0); // group epoch 2; a still owns everything
    EXPECT_EQ(b.epoch, 2);
    EXPECT_EQ(count(b.owned), 0u);
    expect_disjoint({&a, &b});

    // a is told to give up half; its epoch stays until it acks.
    auto ra = a.beat(co, topics, now, /*report_owned=*/false);
    ASSERT_TRUE(ra.assignment);
    EXPECT_EQ(a.epoch, 1);
    EXPECT_EQ(count(a.owned), 8u);
    // b still gets nothing: the revoked partitions are not acked yet.
    b.beat(co, topics, now);
    EXPECT_EQ(count(b.owned), 0u);
    // a acks (owned without the revoked ones) and moves to epoch 2.
    a.beat(co, topics, now);
    EXPECT_EQ(a.epoch, 2);
    b.beat(co, topics, now);
    EXPECT_EQ(count(b.owned), 8u);
    expect_disjoint({&a, &b});
}

TEST(CgCoordinator, LeaveAndSessionExpiryHandPartitionsOver) {
    consumer_group_coordinator::options o;
    o.session_timeout = 2000ms;
    consumer_group_coordinator co(o);
    auto now = clk::now();
    auto topics = topics16();
    client a{"a"}, b{"b"}, c{"c"};
    for (int round = 0; round < 4; ++round)
        for (auto* m : {&a, &b, &c})
            m->beat(co, topics, now);
    expect_disjoint({&a, &b, &c});
    EXPECT_EQ(count(a.owned) + count(b.owned) + count(c.owned), 16u);

    // c leaves: its partitions are free at once.
    c.epoch = -1;
    EXPECT_EQ(c.beat(co, topics, now).member_epoch, -1);
    for (int round = 0; round < 3; ++round)
        for (auto* m : {&a, &b})
            m->beat(co, topics, now);
    EXPECT_EQ(count(a.owned) + count(b.owned), 16u);
    EXPECT_EQ(count(a.owned), 8u);

    // b goes silent: after the session timeout a gets everything.
    now += 1500ms;
    a.beat(co, topics, now);
    co.tick(now + 600ms);
    now += 700ms;
    for (int round = 0; round < 3; ++round)
        a.beat(co, topics, now);
    EXPECT_EQ(count(a.owned), 16u);
    EXPECT_EQ(b.beat(co, topics, now).error_code, int16_t(kerr::unknown_member_id));
}

TEST(CgCoordinator, FencesWrongEpochsAndUnknownMembers) {
    consumer_group_coordinator co({});
    auto now = clk::now();
    auto topics = topics16();
    client a{"a"};
    a.beat(co, topics, now);
    client wrong = a;
    wrong.epoch = 7;
    EXPECT_EQ(wrong.beat(co, topics, now).error_code, int16_t(kerr::fenced_member_epoch));
    client stranger{"nobody"};
    stranger.epoch = 3;
    EXPECT_EQ(stranger.beat(co, topics, now).error_code, int16_t(kerr::unknown_member_id));
    client bad{"x"};
    bad.assignor = "cooperative-sticky";
    EXPECT_EQ(bad.beat(co, topics, now).error_code, int16_t(kerr::unsupported_assignor));
    client noid{""};
    EXPECT_EQ(noid.beat(co, topics, now).error_code,
              int16_t(kerr::invalid_request)); // v1: ids from clients
}

TEST(CgCoordinator, StaticMemberComesBackToItsPartitions) {
    consumer_group_coordinator co({});
    auto now = clk::now();
    auto topics = topics16();
    client a{"a1", "inst-a"}, b{"b1", "inst-b"};
    for (int round = 0; round < 4; ++round)
        for (auto* m : {&a, &b})
            m->beat(co, topics, now);
    const auto kept = a.owned;
    const int32_t epoch = a.epoch;
    ASSERT_EQ(count(kept), 8u);
    const int32_t group_epoch = co.group_epoch("g");

    // A second process with the same instance id while the first is alive is refused.
    client twin{"a2", "inst-a"};
    EXPECT_EQ(twin.beat(co, topics, now).error_code, int16_t(kerr::unreleased_instance_id));

    // a leaves as a static member (-2), then a new process (new member id) comes back.
    a.epoch = -2;
    EXPECT_EQ(a.beat(co, topics, now).member_epoch, -2);
    b.beat(co, topics, now);
    EXPECT_EQ(count(b.owned), 8u); // nothing moved to b meanwhile
    client back{"a3", "inst-a"};
    ASSERT_EQ(back.beat(co, topics, now).error_code, 0);
    EXPECT_EQ(back.owned, kept);
    EXPECT_EQ(back.epoch, epoch);
    EXPECT_EQ(co.group_epoch("g"), group_epoch); // no rebalance
}

TEST(CgCoordinator, RegexPicksUpTopicsCreatedLater) {
    consumer_group_coordinator co({});
    auto now = clk::now();
    std::vector<cg_topic> topics{{"orders.eu", topic_id(1), 4}, {"other", topic_id(2), 4}};
    client a{"a"};
    a.names.clear();
    a.regex = "orders\\..*";
    a.beat(co, topics, now);
    EXPECT_EQ(count(a.owned), 4u);
    EXPECT_TRUE(a.owned.contains(topic_id(1)));
    topics.push_back({"orders.us", topic_id(3), 2});
    a.beat(co, topics, now);
    EXPECT_EQ(count(a.owned), 6u);
    EXPECT_FALSE(a.owned.contains(topic_id(2)));
}

TEST(CgCoordinator, RangeAssignorOnRequest) {
    consumer_group_coordinator co({});
    auto now = clk::now();
    auto topics = topics16();
    client a{"a"}, b{"b"};
    a.assignor = b.assignor = "range";
    for (int round = 0; round < 4; ++round)
        for (auto* m : {&a, &b})
            m->beat(co, topics, now);
    std::set<int32_t> lo, hi;
    for (int32_t p = 0; p < 8; ++p)
        lo.insert(p);
    for (int32_t p = 8; p < 16; ++p)
        hi.insert(p);
    EXPECT_EQ(a.owned[topic_id(1)], lo);
    EXPECT_EQ(b.owned[topic_id(1)], hi);
}

TEST(CgCoordinator, OffsetCommitChecksMemberEpochs) {
    consumer_group_coordinator co({});
    auto now = clk::now();
    auto topics = topics16();
    EXPECT_EQ(co.validate_commit("g", "a", 1, 9), std::nullopt); // not a consumer group
    client a{"a"};
    a.beat(co, topics, now);
    EXPECT_EQ(co.validate_commit("g", "a", a.epoch, 9), int16_t(0));
    EXPECT_EQ(co.validate_commit("g", "a", a.epoch - 1, 9), int16_t(kerr::stale_member_epoch));
    EXPECT_EQ(co.validate_commit("g", "zz", a.epoch, 9), int16_t(kerr::unknown_member_id));
    EXPECT_EQ(co.validate_commit("g", "a", a.epoch, 8), int16_t(kerr::unsupported_version));
    EXPECT_EQ(co.validate_commit("g", "", -1, 9),
              int16_t(kerr::unknown_member_id)); // group not empty
    EXPECT_EQ(co.validate_fetch("g", std::string_view("a"), a.epoch - 1),
              int16_t(kerr::stale_member_epoch));
    EXPECT_EQ(co.validate_fetch("g", std::nullopt, -1), int16_t(0));
}

TEST(CgCoordinator, DescribeListAndDelete) {
    consumer_group_coordinator co({});
    auto now = clk::now();
    auto topics = topics16();
    client a{"a", "inst-a"}, b{"b"};
    for (int round = 0; round < 4; ++round)
        for (auto* m : {&a, &b})
            m->beat(co, topics, now);
    auto d = co.describe("g", topics);
    EXPECT_EQ(d.error_code, 0);
    EXPECT_EQ(d.group_state, "Stable");
    EXPECT_EQ(d.assignor_name, "uniform");
    EXPECT_EQ(d.group_epoch, d.assignment_epoch);
    ASSERT_EQ(d.members.size(), 2u);
    EXPECT_EQ(d.members[0].member_id, "a");
    EXPECT_EQ(d.members[0].instance_id, "inst-a");
    EXPECT_EQ(d.members[0].client_id, "client");
    ASSERT_EQ(d.members[0].assignment.size(), 1u);
    EXPECT_EQ(d.members[0].assignment[0].topic_name, "t");
    EXPECT_EQ(d.members[0].assignment[0].partitions.size(), 8u);
    EXPECT_EQ(co.describe("nope", topics).error_code, int16_t(kerr::group_id_not_found));
    EXPECT_EQ(co.list(), (std::vector<std::pair<std::string, std::string>>{{"g", "Stable"}}));
    EXPECT_EQ(co.delete_group("g"), int16_t(kerr::non_empty_group));
    a.epoch = b.epoch = -1;
    a.beat(co, topics, now);
    b.beat(co, topics, now);
    EXPECT_EQ(co.delete_group("g"), 0);
    EXPECT_EQ(co.delete_group("g"), int16_t(kerr::group_id_not_found));
}

struct tmpdir {
    std::filesystem::path p;
    tmpdir() {
        p = std::filesystem::temp_directory_path()
            / fmt::format("floe-kafka-cgroups-{}-{}", ::getpid(), uuid::random().to_string());
        std::filesystem::create_directories(p);
    }
    ~tmpdir() { std::filesystem::remove_all(p); }
};

TEST(CgCoordinator, ClassicJoinRefusedWhileConsumerGroupHasMembers) {
    tmpdir dir;
    auto offsets = offset_store::open(dir.p);
    ASSERT_TRUE(offsets);
    group_coordinator gc(**offsets, {});
    auto topics = topics16();
    client a{"a"};
    a.beat(gc.consumer(), topics, clk::now());
    byte_buffer md{0, 0};
    join_group_request r;
    r.group_id = "g";
    r.session_timeout_ms = 10000;
    r.rebalance_timeout_ms = 5000;
    r.protocol_type = "consumer";
    r.protocols.push_back({"range", md});
    auto res = gc.join(r, "c", "h", clk::now(), [](join_group_response) {});
    EXPECT_FALSE(res.pending);
    EXPECT_EQ(res.response.error_code, int16_t(kerr::inconsistent_group_protocol));
}

TEST(CgCodec, HeartbeatRequestV1AndResponse) {
    byte_buffer buf;
    kwriter w(buf, true);
    w.str("g");
    w.str("m1");
    w.i32(0);
    w.nstr(std::string_view("inst"));
    w.nstr(std::nullopt);
    w.i32(30000);
    w.array_len(1);
    w.str("t");
    w.nstr(std::string_view("^t.*"));
    w.nstr(std::string_view("range"));
    w.array_len(1);
    w.id(topic_id(9));
    w.array_len(2);
    w.i32(3);
    w.i32(5);
    w.tags();
    w.tags();
    kreader r(buf, true);
    auto q = decode_consumer_group_heartbeat(r, 1);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->member_id, "m1");
    EXPECT_EQ(*q->instance_id, "inst");
    EXPECT_FALSE(q->rack_id);
    ASSERT_TRUE(q->subscribed_topic_names);
    EXPECT_EQ(q->subscribed_topic_names->at(0), "t");
    EXPECT_EQ(*q->subscribed_topic_regex, "^t.*");
    EXPECT_EQ(*q->server_assignor, "range");
    ASSERT_TRUE(q->owned);
    EXPECT_EQ(q->owned->at(0).topic_id, topic_id(9));
    EXPECT_EQ(q->owned->at(0).partitions, (std::vector<int32_t>{3, 5}));
    EXPECT_EQ(r.remaining(), 0u);
    // v0 has no regex: the same bytes do not decode to the end.
    kreader r0(buf, true);
    auto q0 = decode_consumer_group_heartbeat(r0, 0);
    EXPECT_TRUE(!q0 || r0.remaining() != 0 || !q0->owned);

    consumer_group_heartbeat_response resp;
    resp.member_id = "m1";
    resp.member_epoch = 4;
    resp.heartbeat_interval_ms = 500;
    resp.assignment = std::vector<cg_topic_partitions>{{topic_id(9), {1, 2}}};
    byte_buffer out;
    kwriter ow(out, true);
    encode(ow, 1, resp);
    kreader rr(out, true);
    EXPECT_EQ(*rr.i32(), 0);
    EXPECT_EQ(*rr.i16(), 0);
    EXPECT_FALSE(*rr.nstr());
    EXPECT_EQ(**rr.nstr(), "m1");
    EXPECT_EQ(*rr.i32(), 4);
    EXPECT_EQ(*rr.i32(), 500);
    EXPECT_EQ(*rr.i8(), 1);
    EXPECT_EQ(*rr.array_len(), 1);
    EXPECT_EQ(*rr.id(), topic_id(9));
    EXPECT_EQ(*rr.array_len(), 2);
    EXPECT_EQ(*rr.i32(), 1);
    EXPECT_EQ(*rr.i32(), 2);
    EXPECT_TRUE(rr.tags());
    EXPECT_TRUE(rr.tags());
    EXPECT_TRUE(rr.tags());
    EXPECT_EQ(rr.remaining(), 0u);
}

} // namespace
} // namespace floe::kafka
