#include "base/auth_backoff.h"

#include <gtest/gtest.h>

namespace floe {
namespace {

using namespace std::chrono_literals;

TEST(AuthBackoff, GrowsPerAddressAndStartsOver) {
    auth_backoff b;
    auto t = auth_backoff::clock::time_point{} + 1h;
    EXPECT_EQ(b.failed("/10.0.0.1", t), 100ms);
    EXPECT_EQ(b.failed("/10.0.0.1", t), 200ms);
    EXPECT_EQ(b.failed("/10.0.0.1", t), 400ms);
    EXPECT_EQ(b.failed("/10.0.0.2", t), 100ms); // another address is not slowed down
    for (int i = 0; i < 20; ++i) b.failed("/10.0.0.1", t);
    EXPECT_EQ(b.failed("/10.0.0.1", t), 5000ms); // capped
    b.succeeded("/10.0.0.1");
    EXPECT_EQ(b.failed("/10.0.0.1", t), 100ms);
    EXPECT_EQ(b.failed("/10.0.0.2", t + 11min), 100ms); // quiet long enough: forgotten
}

TEST(AuthBackoff, BoundedMemory) {
    auth_backoff b({.capacity = 100});
    auto t = auth_backoff::clock::time_point{} + 1h;
    for (int i = 0; i < 1000; ++i) b.failed("/h" + std::to_string(i), t + std::chrono::milliseconds(i));
    // The most recent addresses are still remembered.
    EXPECT_EQ(b.failed("/h999", t + 2s), 200ms);
}

} // namespace
} // namespace floe
