#include "http/time_order.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace floe::http {
namespace {

struct rec {
    int64_t timestamp;
    int32_t partition;
    int64_t offset;
};

TEST(TimeCursor, RoundTrips) {
    for (time_position p : {time_position{1700000000000, 2, 17}, time_position{-1, 0, 0},
                            time_position{0, 31, INT64_MAX}}) {
        auto back = parse_cursor(format_cursor(p));
        ASSERT_TRUE(back) << back.error().message();
        EXPECT_EQ(*back, p);
    }
    EXPECT_EQ(format_cursor({1700000000000, 2, 17}), "1700000000000.2.17");
}

TEST(TimeCursor, RejectsAnythingElse) {
    for (std::string_view bad : {"", "1", "1.2", "1.2.", "1.2.3.4", "a.b.c", "1.-2.3", "1.2.-3",
                                 "1..2", " 1.2.3", "1.2.3 ", "1.2.3x"}) {
        auto p = parse_cursor(bad);
        ASSERT_FALSE(p) << bad;
        EXPECT_NE(p.error().message().find("'after'"), std::string::npos);
    }
}

std::vector<time_position> positions(std::vector<rec> v) {
    std::vector<time_position> out;
    for (auto& r : v)
        out.push_back({r.timestamp, r.partition, r.offset});
    return out;
}

TEST(TimePage, MergesPartitionsByTimeThenPartitionThenOffset) {
    time_page<rec> page(10, 0, 100, std::nullopt);
    // Partition 0 out of time order within itself, ties across partitions at 20.
    for (rec r : {rec{30, 0, 0}, rec{10, 0, 1}, rec{20, 0, 2}, rec{20, 1, 0}, rec{5, 1, 1},
                  rec{20, 2, 0}, rec{200, 2, 1}})
        page.offer(std::move(r));
    EXPECT_FALSE(page.more());
    EXPECT_EQ(positions(page.take()),
              (std::vector<time_position>{
                  {5, 1, 1}, {10, 0, 1}, {20, 0, 2}, {20, 1, 0}, {20, 2, 0}, {30, 0, 0}}));
}

TEST(TimePage, KeepsTheFirstLimitAndSaysThereIsMore) {
    time_page<rec> page(2, 0, 100, std::nullopt);
    for (rec r : {rec{50, 0, 0}, rec{40, 0, 1}, rec{30, 1, 0}, rec{60, 1, 1}})
        page.offer(std::move(r));
    EXPECT_TRUE(page.more());
    EXPECT_EQ(positions(page.take()), (std::vector<time_position>{{30, 1, 0}, {40, 0, 1}}));
}

TEST(TimePage, StartsAfterTheCursorAndHonoursTheRange) {
    time_page<rec> page(10, 15, 40, time_position{20, 1, 0});
    EXPECT_EQ(page.lower_timestamp(), 20);
    for (rec r : {rec{10, 0, 0}, rec{20, 0, 1}, rec{20, 1, 0}, rec{20, 1, 1}, rec{20, 2, 0},
                  rec{40, 0, 2}, rec{41, 0, 3}})
        page.offer(std::move(r));
    EXPECT_FALSE(page.more());
    EXPECT_EQ(positions(page.take()),
              (std::vector<time_position>{{20, 1, 1}, {20, 2, 0}, {40, 0, 2}}));
}

// Paging with the cursor through random records (timestamps not growing with offsets, many
// ties) returns every record in range exactly once, in order.
TEST(TimePage, PagingVisitsEveryRecordOnceInOrder) {
    std::mt19937 rng(7);
    std::vector<rec> all;
    for (int32_t p = 0; p < 3; ++p)
        for (int64_t o = 0; o < 200; ++o)
            all.push_back({int64_t(rng() % 50), p, o});
    const int64_t from = 5, to = 44;
    for (size_t limit : {1u, 7u, 50u, 1000u}) {
        std::vector<time_position> seen;
        std::optional<time_position> after;
        for (int pages = 0; pages < 1000; ++pages) {
            time_page<rec> page(limit, from, to, after);
            for (auto r : all) // offered partition by partition, as the lookup reads them
                if (r.timestamp >= page.lower_timestamp()) page.offer(std::move(r));
            bool more = page.more();
            auto got = positions(page.take());
            ASSERT_LE(got.size(), limit);
            seen.insert(seen.end(), got.begin(), got.end());
            if (!more) break;
            after = got.back();
        }
        std::vector<time_position> want;
        for (auto& r : all)
            if (r.timestamp >= from && r.timestamp <= to)
                want.push_back({r.timestamp, r.partition, r.offset});
        std::sort(want.begin(), want.end());
        EXPECT_EQ(seen, want) << "limit " << limit;
    }
}

} // namespace
} // namespace floe::http
