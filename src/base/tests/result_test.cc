#include "base/ids.h"
#include "base/result.h"

#include <gtest/gtest.h>

namespace floe {
namespace {

result<int> parse_positive(int v) {
    if (v <= 0) return fail(errc::invalid_argument, "{} is not positive", v);
    return v;
}

result<int> doubled(int v) {
    int x = FLOE_TRY(parse_positive(v));
    return x * 2;
}

result<void> check(int v) {
    FLOE_TRY_CTX(parse_positive(v), "checking item {}", 7);
    return {};
}

result<int> after_void(int v) {
    FLOE_TRY(check(v));
    return 1;
}

TEST(Result, TryPropagatesValueAndError) {
    EXPECT_EQ(*doubled(4), 8);
    auto e = doubled(-1);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().code(), errc::invalid_argument);
    EXPECT_EQ(e.error().message(), "-1 is not positive");
}

TEST(Result, ContextIsPrefixed) {
    auto e = after_void(0);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message(), "checking item 7: 0 is not positive");
    EXPECT_EQ(fmt::format("{}", e.error()), "checking item 7: 0 is not positive (invalid_argument)");
    EXPECT_EQ(*after_void(3), 1);
}

TEST(Result, RetryableCodes) {
    EXPECT_TRUE(is_retryable(errc::io_error));
    EXPECT_TRUE(is_retryable(errc::conflict));
    EXPECT_FALSE(is_retryable(errc::corrupt));
    EXPECT_FALSE(is_retryable(errc::invalid_argument));
}

TEST(StrongIds, DistinctTypes) {
    kafka_offset o(5);
    segment_id s(5);
    static_assert(!std::is_convertible_v<kafka_offset, segment_id>);
    static_assert(!std::is_convertible_v<int64_t, kafka_offset>);
    EXPECT_EQ(o(), s());
    EXPECT_LT(o, o + 1);
    EXPECT_EQ(fmt::format("{}", o), "5");
}

TEST(AssertDeathTest, AbortsWithMessage) {
    EXPECT_DEATH(FLOE_ASSERT(1 + 1 == 3, "arithmetic broke"), "arithmetic broke");
}

} // namespace
} // namespace floe
