#include "testkit/datagen.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace floe::testkit {
namespace {

TEST(Datagen, DeterministicForASeed) {
    datagen a({.seed = 7}), b({.seed = 7}), c({.seed = 8});
    bool differs = false;
    for (int i = 0; i < 1000; ++i) {
        auto x = a.next(), y = b.next(), z = c.next();
        EXPECT_EQ(x.key, y.key);
        EXPECT_EQ(x.value, y.value);
        EXPECT_EQ(x.timestamp_ms, y.timestamp_ms);
        ASSERT_EQ(x.headers.size(), y.headers.size());
        differs |= x.value != z.value;
    }
    EXPECT_TRUE(differs);
}

TEST(Datagen, ShapeMatchesTheContract) {
    for (size_t size : {size_t{100}, size_t{1024}}) {
        datagen g({.seed = 1, .value_size = size});
        size_t null_keys = 0, tombstones = 0, with_dup_header = 0, total_len = 0, values = 0;
        std::set<std::string> keys;
        std::map<size_t, size_t> header_counts;
        int64_t last_ts = 0;
        for (int i = 0; i < 20000; ++i) {
            auto r = g.next();
            EXPECT_GE(r.timestamp_ms, last_ts);
            last_ts = r.timestamp_ms;
            if (!r.key) ++null_keys;
            else keys.insert(*r.key);
            if (!r.value) ++tombstones;
            else {
                total_len += r.value->size();
                ++values;
                EXPECT_EQ(r.value->front(), '{');
                EXPECT_EQ(r.value->back(), '}');
            }
            ++header_counts[r.headers.size()];
            std::set<std::string> names;
            for (auto& h : r.headers)
                if (!names.insert(h.key).second) ++with_dup_header;
        }
        EXPECT_GT(null_keys, 0u);
        EXPECT_GT(tombstones, 0u);
        EXPECT_GT(with_dup_header, 0u);
        EXPECT_EQ(header_counts.size(), 4u); // 0, 1, 2 and 3 headers all occur
        EXPECT_GT(keys.size(), 10000u);      // keys spread over the 100k ids
        double avg = double(total_len) / double(values);
        EXPECT_NEAR(avg, double(size), double(size) * 0.15);
    }
}

TEST(Datagen, ValuesAreNotRepetitive) {
    datagen g({.seed = 3, .value_size = 1024});
    auto v = *g.next().value;
    std::set<char> distinct(v.begin(), v.end());
    EXPECT_GT(distinct.size(), 25u);
    // No run of the same character longer than a few bytes.
    size_t run = 1, longest = 1;
    for (size_t i = 1; i < v.size(); ++i) {
        run = v[i] == v[i - 1] ? run + 1 : 1;
        longest = std::max(longest, run);
    }
    EXPECT_LT(longest, 6u);
}

} // namespace
} // namespace floe::testkit
