#include "base/rate_limit.h"
#include "base/suggest.h"

#include <gtest/gtest.h>

#include <array>

namespace floe {
namespace {

using namespace std::chrono_literals;

TEST(Suggest, EditDistance) {
    EXPECT_EQ(edit_distance("", ""), 0u);
    EXPECT_EQ(edit_distance("serve", "serve"), 0u);
    EXPECT_EQ(edit_distance("serv", "serve"), 1u);
    EXPECT_EQ(edit_distance("sreve", "serve"), 2u);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
    EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(Suggest, NearestName) {
    constexpr std::array<std::string_view, 4> names{"floe.storage.worker.tick-interval", "floe.storage.worker.enabled",
                                                    "floe.kafka.listen", "floe.http.listen"};
    EXPECT_EQ(nearest_name("floe.storage.worker.tick-intervall", names, 3), "floe.storage.worker.tick-interval");
    EXPECT_EQ(nearest_name("floe.kafka.listne", names, 3), "floe.kafka.listen");
    EXPECT_EQ(nearest_name("floe.htp.listen", names, 3), "floe.http.listen");
    EXPECT_EQ(nearest_name("floe.something.else", names, 3), std::nullopt); // nothing near
    EXPECT_EQ(nearest_name("floe.kafka.listen", names, 3), std::nullopt);   // exact: no hint
}

TEST(LogRateLimit, AtMostNPerWindowThenSaysHowManyWereHeldBack) {
    log_rate_limit l({.per_window = 3, .window = 1000ms});
    auto t = log_rate_limit::clock::time_point{} + 1h;
    for (int i = 0; i < 3; ++i) {
        auto v = l.admit(t + std::chrono::milliseconds(i));
        EXPECT_TRUE(v.log);
        EXPECT_EQ(v.suppressed, 0u);
    }
    for (int i = 0; i < 50; ++i) EXPECT_FALSE(l.admit(t + 10ms).log); // a flood: held back
    auto next = l.admit(t + 1001ms);                                    // the next window
    EXPECT_TRUE(next.log);
    EXPECT_EQ(next.suppressed, 50u);
    EXPECT_EQ(l.admit(t + 1002ms).suppressed, 0u); // reported once
    EXPECT_TRUE(l.admit(t + 1003ms).log);
    EXPECT_FALSE(l.admit(t + 1004ms).log); // 3 in this window already
}

} // namespace
} // namespace floe
