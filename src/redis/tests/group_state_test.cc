// Committed group offsets and producer ids in Redis, against a real redis-server and a real
// three-master Redis Cluster: what one broker's client commits another's reads, nothing is lost
// across a new client (a broker restart), and producer ids never repeat across brokers.
#include "redis/group_state.h"
#include "redis/testing/server.h"
#include "redis/tests/connect.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

using namespace floe;
using namespace floe::redis;
namespace fs = std::filesystem;

namespace {

using fixture::connect_to;

using entry = std::pair<group_offsets::key, group_offsets::committed>;

/// Two brokers (two clients) sharing the offsets of several groups.
void offsets_are_shared(const std::string& uris) {
    auto c0 = connect_to(uris), c1 = connect_to(uris);
    group_offsets a(*c0, "ns"), b(*c1, "ns");
    // Metadata with the separators of the encoding, an empty one, a null one, binary bytes.
    std::vector<entry> e{{{"orders", 0}, {10, -1, std::nullopt}},
                         {{"orders", 1}, {20, 3, std::string("a,b:c")}},
                         {{"we:ird.topic", 7}, {0, 0, std::string()}},
                         {{"bin", 2}, {5, 1, std::string("\0\xff+-", 4)}}};
    ASSERT_TRUE(a.commit("g1", e));
    ASSERT_TRUE(a.commit("g{2}", std::vector<entry>{{{"orders", 0}, {99, -1, std::nullopt}}}));
    auto got = b.load("g1");
    ASSERT_TRUE(got) << got.error();
    ASSERT_EQ(got->size(), 4u);
    for (auto& [k, c] : e) EXPECT_EQ(got->at(k), c) << k.first << "/" << k.second;
    // A later commit replaces only its own partitions.
    ASSERT_TRUE(b.commit("g1", std::vector<entry>{{{"orders", 1}, {21, 4, std::nullopt}}}));
    got = a.load("g1");
    ASSERT_TRUE(got);
    EXPECT_EQ(got->at({"orders", 1}).offset, 21);
    EXPECT_EQ(got->at({"orders", 0}).offset, 10);
    EXPECT_EQ(a.groups().value(), (std::vector<std::string>{"g1", "g{2}"}));
    EXPECT_TRUE(b.contains("g{2}").value());
    EXPECT_FALSE(b.contains("nobody").value());
    EXPECT_TRUE(b.load("nobody").value().empty());
    // OffsetDelete of some partitions, then of the last one: the group is gone from the list.
    std::vector<group_offsets::key> doomed{{"orders", 0}, {"orders", 1}, {"we:ird.topic", 7}};
    ASSERT_TRUE(b.delete_offsets("g1", doomed));
    EXPECT_EQ(a.load("g1").value().size(), 1u);
    ASSERT_TRUE(b.delete_offsets("g1", std::vector<group_offsets::key>{{"bin", 2}}));
    EXPECT_EQ(a.groups().value(), (std::vector<std::string>{"g{2}"}));
    // A broker restarting (a new client) reads what was committed before.
    c0.reset();
    auto c2 = connect_to(uris);
    group_offsets again(*c2, "ns");
    EXPECT_EQ(again.load("g{2}").value().at({"orders", 0}).offset, 99);
    ASSERT_TRUE(again.delete_group("g{2}"));
    EXPECT_FALSE(b.contains("g{2}").value());
    EXPECT_TRUE(b.groups().value().empty());
    // A corrupt value is an error, not "nothing committed".
    ASSERT_TRUE(c1->command({"HSET", a.group_key("bad"), "0:t", "not a value"}));
    EXPECT_FALSE(b.load("bad"));
}

/// Producer ids taken by several brokers at once never repeat.
void producer_ids_are_unique(const std::string& uris) {
    std::vector<std::unique_ptr<client>> clients;
    for (int i = 0; i < 3; ++i) clients.push_back(connect_to(uris));
    std::vector<std::vector<int64_t>> got(3);
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
        threads.emplace_back([&, i] {
            producer_ids ids(*clients[size_t(i)], "ns", 7); // small blocks: many INCRBYs
            for (int k = 0; k < 200; ++k) {
                auto id = ids.next();
                ASSERT_TRUE(id) << id.error();
                got[size_t(i)].push_back(*id);
            }
        });
    for (auto& t : threads) t.join();
    std::set<int64_t> all;
    for (auto& v : got)
        for (auto id : v) {
            EXPECT_GE(id, 1000);
            EXPECT_TRUE(all.insert(id).second) << "producer id " << id << " given twice";
        }
    EXPECT_EQ(all.size(), 600u);
    // A restarted broker (a new allocator) continues above every id given so far.
    producer_ids later(*clients[0], "ns", 7);
    EXPECT_GT(later.next().value(), *all.rbegin());
}

} // namespace

TEST(redis_group_state, offsets_and_producer_ids_on_one_redis) {
    auto dir = fixture::fresh_dir("group-state-single");
    auto s = fixture::server::start(dir);
    ASSERT_TRUE(s) << s.error();
    offsets_are_shared(s->uri());
    producer_ids_are_unique(s->uri());
    fs::remove_all(dir);
}

TEST(redis_group_state_cluster, offsets_and_producer_ids_on_a_cluster) {
    auto dir = fixture::fresh_dir("group-state-cluster");
    auto cl = fixture::cluster::start(dir);
    ASSERT_TRUE(cl) << cl.error();
    auto c = connect_to(cl->uris());
    ASSERT_TRUE(c->is_cluster());
    // Groups spread over the masters (one slot per group).
    group_offsets o(*c, "ns");
    std::set<std::string> nodes;
    for (int g = 0; g < 20; ++g) nodes.insert(c->node_for(o.group_key(fmt::format("group-{}", g))));
    EXPECT_GT(nodes.size(), 1u);
    offsets_are_shared(cl->uris());
    producer_ids_are_unique(cl->uris());
    fs::remove_all(dir);
}
