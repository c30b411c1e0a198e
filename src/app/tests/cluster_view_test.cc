// The cluster view of brokers sharing Redis, over fixed live-broker lists: which brokers
// Metadata lists to a client of each listener, that leaders and coordinators spread over the
// live brokers and agree between brokers, and what moves when a broker dies.
#include "app/cluster.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace floe;
using namespace floe::app;

namespace {

redis::broker_info info(int32_t id, std::string listeners) { return {id, std::move(listeners), 0}; }

struct fake_registry {
    std::vector<redis::broker_info> live;
    uint64_t gen = 1;
    redis_cluster_view view(int32_t self) {
        return redis_cluster_view(self, [this] { return live; }, [this] { return gen; });
    }
};

} // namespace

TEST(ClusterView, ListenersRoundTrip) {
    std::vector<kafka::advertised_listener> ls{{"PLAINTEXT", "10.0.0.1", 9092}, {"SASL_SSL", "::1", 9093}};
    auto text = format_listeners(ls);
    EXPECT_EQ(text, "PLAINTEXT://10.0.0.1:9092,SASL_SSL://[::1]:9093");
    auto p = listener_endpoint(3, text, "PLAINTEXT");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->node_id, 3);
    EXPECT_EQ(p->host, "10.0.0.1");
    EXPECT_EQ(p->port, 9092);
    auto s = listener_endpoint(3, text, "SASL_SSL");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->host, "::1");
    EXPECT_EQ(s->port, 9093);
    EXPECT_FALSE(listener_endpoint(3, text, "SSL"));
    EXPECT_FALSE(listener_endpoint(3, "PLAINTEXT://nohost", "PLAINTEXT"));
    EXPECT_FALSE(listener_endpoint(3, "PLAINTEXT://h:12x", "PLAINTEXT"));
}

TEST(ClusterView, BrokersPerListener) {
    fake_registry r;
    r.live = {info(0, "PLAINTEXT://a:1,SASL_SSL://a:2"), info(1, "PLAINTEXT://b:1"), info(2, "PLAINTEXT://c:1,SASL_SSL://c:2")};
    auto v = r.view(1);
    // This broker is told as the address the client used; the others by the same listener name.
    auto plain = v.brokers("PLAINTEXT", {1, "me", 7});
    ASSERT_EQ(plain.size(), 3u);
    EXPECT_EQ(plain[0].host, "a");
    EXPECT_EQ(plain[1].host, "me");
    EXPECT_EQ(plain[1].port, 7);
    EXPECT_EQ(plain[2].host, "c");
    auto sasl = r.view(0).brokers("SASL_SSL", {0, "a", 2});
    ASSERT_EQ(sasl.size(), 2u); // broker 1 has no SASL_SSL listener: left out
    EXPECT_EQ(sasl[0].node_id, 0);
    EXPECT_EQ(sasl[1].node_id, 2);
    EXPECT_EQ(sasl[1].port, 2);
    // Our own entry missing (expired while renewing): still listed, in id order.
    r.live = {info(0, "PLAINTEXT://a:1"), info(2, "PLAINTEXT://c:1")};
    auto again = v.brokers("PLAINTEXT", {1, "me", 7});
    ASSERT_EQ(again.size(), 3u);
    EXPECT_EQ(again[1].node_id, 1);
    // Nobody known yet (Redis not read yet): this broker alone leads and coordinates.
    r.live.clear();
    ++r.gen;
    EXPECT_EQ(v.brokers("PLAINTEXT", {1, "me", 7}).size(), 1u);
    EXPECT_EQ(v.partition_leader("t", 0), 1);
    EXPECT_EQ(v.coordinator("g", false), 1);
}

TEST(ClusterView, LeadersAndCoordinatorsSpreadAgreeAndMoveOnlyFromTheDead) {
    fake_registry r;
    r.live = {info(0, "PLAINTEXT://a:1"), info(1, "PLAINTEXT://b:1"), info(2, "PLAINTEXT://c:1")};
    auto v0 = r.view(0), v1 = r.view(1), v2 = r.view(2);
    std::map<int32_t, int> leaders, coordinators;
    std::map<int32_t, int32_t> before;
    for (int32_t p = 0; p < 300; ++p) {
        auto l = v0.partition_leader("orders", p);
        EXPECT_EQ(l, v1.partition_leader("orders", p));
        EXPECT_EQ(l, v2.partition_leader("orders", p));
        ++leaders[l];
        before[p] = l;
        auto g = fmt::format("group-{}", p);
        auto c = v0.coordinator(g, false);
        EXPECT_EQ(c, v2.coordinator(g, false));
        ++coordinators[c];
    }
    ASSERT_EQ(leaders.size(), 3u);
    for (auto& [id, n] : leaders) EXPECT_GT(n, 60) << "broker " << id;
    for (auto& [id, n] : coordinators) EXPECT_GT(n, 60) << "broker " << id;
    // Broker 2 dies: its partitions move, nobody else's; the generation tells the coordinator.
    auto g0 = v0.generation();
    r.live.pop_back();
    ++r.gen;
    EXPECT_NE(v0.generation(), g0);
    int moved = 0;
    for (int32_t p = 0; p < 300; ++p) {
        auto l = v0.partition_leader("orders", p);
        EXPECT_NE(l, 2);
        if (before[p] != 2) EXPECT_EQ(l, before[p]) << p;
        else ++moved;
    }
    EXPECT_EQ(moved, leaders[2]);
}

TEST(ClusterView, SingleBrokerViewIsTodaysBroker) {
    kafka::single_broker_view v(5);
    auto b = v.brokers("PLAINTEXT", {5, "h", 9});
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].host, "h");
    EXPECT_EQ(v.partition_leader("t", 3), 5);
    EXPECT_EQ(v.coordinator("g", true), 5);
}
