#include "redis/coordination.h"

#include <gtest/gtest.h>

#include <map>

using namespace floe::redis;

TEST(redis_rendezvous, deterministic_and_independent_of_order) {
    std::vector<int32_t> a = {1, 2, 3, 4}, b = {4, 2, 1, 3};
    for (int p = 0; p < 100; ++p) {
        auto item = partition_item("orders", p);
        EXPECT_EQ(rendezvous_owner(item, a), rendezvous_owner(item, b));
    }
    // Fixed values: the mapping must not change between builds (brokers of different
    // versions must agree).
    EXPECT_EQ(rendezvous_score("orders/0", 1), rendezvous_score("orders/0", 1));
    EXPECT_EQ(partition_item("t", 3), "t/3");
    EXPECT_EQ(group_item("g1"), "group:g1");
    EXPECT_EQ(rendezvous_owner("x", std::vector<int32_t>{}), -1);
}

TEST(redis_rendezvous, spreads_evenly_and_moves_only_a_dead_brokers_items) {
    std::vector<int32_t> brokers = {0, 1, 2};
    std::map<int32_t, int> count;
    std::map<std::string, int32_t> before;
    const int n = 3000;
    for (int p = 0; p < n; ++p) {
        auto item = partition_item("t", p);
        auto o = rendezvous_owner(item, brokers);
        before[item] = o;
        ++count[o];
    }
    for (auto b : brokers) {
        EXPECT_GT(count[b], n / 3 - n / 20) << b;
        EXPECT_LT(count[b], n / 3 + n / 20) << b;
    }
    // Broker 1 dies: its items spread over 0 and 2; nobody else's item moves.
    std::vector<int32_t> after = {0, 2};
    int moved_from_1_to_0 = 0;
    for (auto& [item, o] : before) {
        auto now = rendezvous_owner(item, after);
        if (o != 1) EXPECT_EQ(now, o) << item;
        else moved_from_1_to_0 += now == 0;
    }
    EXPECT_GT(moved_from_1_to_0, count[1] / 3);
    EXPECT_LT(moved_from_1_to_0, count[1] * 2 / 3);
    // A new broker takes about a quarter, only from the others.
    std::vector<int32_t> grown = {0, 1, 2, 3};
    int taken = 0;
    for (auto& [item, o] : before) {
        auto now = rendezvous_owner(item, grown);
        if (now != o) {
            EXPECT_EQ(now, 3);
            ++taken;
        }
    }
    EXPECT_GT(taken, n / 4 - n / 20);
    EXPECT_LT(taken, n / 4 + n / 20);
}

TEST(redis_rendezvous, order_starts_with_owner) {
    std::vector<int32_t> brokers = {5, 6, 7, 8};
    for (int p = 0; p < 50; ++p) {
        auto item = group_item(std::to_string(p));
        auto order = rendezvous_order(item, brokers, 3);
        ASSERT_EQ(order.size(), 3u);
        EXPECT_EQ(order[0], rendezvous_owner(item, brokers));
        EXPECT_NE(order[0], order[1]);
        EXPECT_NE(order[1], order[2]);
    }
}
