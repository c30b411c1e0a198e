#include "base/lru_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace floe {
namespace {

TEST(LruCache, EvictsLeastRecentlyUsedByWeight) {
    lru_cache<std::string, int> c(10);
    c.put("a", 1, 4);
    c.put("b", 2, 4);
    ASSERT_NE(c.get("a"), nullptr); // a is now the most recent
    c.put("c", 3, 4);               // 12 > 10: b (least recent) goes
    EXPECT_EQ(c.get("b"), nullptr);
    ASSERT_NE(c.get("a"), nullptr);
    EXPECT_EQ(*c.get("a"), 1);
    EXPECT_EQ(*c.get("c"), 3);
    EXPECT_EQ(c.weight(), 8u);
    EXPECT_EQ(c.size(), 2u);
}

TEST(LruCache, KeepsTheFirstValueAndRefusesOverweightEntries) {
    lru_cache<std::string, int> c(10);
    c.put("a", 1, 3);
    c.put("a", 9, 3);
    EXPECT_EQ(*c.get("a"), 1);
    EXPECT_EQ(c.weight(), 3u);
    c.put("huge", 5, 11);
    EXPECT_FALSE(c.contains("huge"));
    EXPECT_TRUE(c.contains("a"));
}

TEST(LruCache, CountsEntriesWithUnitWeight) {
    lru_cache<int, int> c(2);
    c.put(1, 1);
    c.put(2, 2);
    c.put(3, 3);
    EXPECT_FALSE(c.contains(1));
    EXPECT_TRUE(c.contains(2));
    EXPECT_TRUE(c.contains(3));
}

} // namespace
} // namespace floe
