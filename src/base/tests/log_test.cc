#include "base/log.h"

#include <gtest/gtest.h>

namespace floe {
namespace {

TEST(Log, ParseFormatAndLevel) {
    EXPECT_EQ(*parse_log_format("json"), log_format::json);
    EXPECT_EQ(*parse_log_format("text"), log_format::text);
    EXPECT_FALSE(parse_log_format("xml"));
    EXPECT_EQ(*parse_log_level("debug"), spdlog::level::debug);
    EXPECT_EQ(*parse_log_level("warning"), spdlog::level::warn);
    auto bad = parse_log_level("loud");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("loud"), std::string::npos);
}

TEST(Log, JsonEscape) {
    EXPECT_EQ(json_escape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
}

} // namespace
} // namespace floe
